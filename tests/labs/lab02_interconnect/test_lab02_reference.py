"""Lab 02 reference (reference/interconnect.py): anchors against independent published values,
hypothesis properties, and input validation that names the bad parameter."""
from __future__ import annotations

import inspect
import math
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference import collectives, constants as C, interconnect as ic

FAST = settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
close = lambda a, b, rel=1e-9: math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)
floats = lambda lo, hi: st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)

def test_transfer_and_defaults():
    assert inspect.signature(ic.transfer_time).parameters["latency_s"].default == 0.0
    assert inspect.signature(ic.gradient_bytes).parameters["bytes_per_value"].default == 2


# --- Anchors: independent published values -------------------------------------------------------

def test_anchor_gbit_ndr_and_hdr_ports():
    # NVIDIA ConnectX-7 / InfiniBand NDR: 400 Gb/s = 50 GB/s; HDR 200 Gb/s = 25 GB/s (constants.py).
    assert close(ic.gbit_to_bytes_per_s(400), C.IB_NDR400_BANDWIDTH)
    assert close(ic.gbit_to_bytes_per_s(200), C.IB_HDR200_BANDWIDTH)


def test_anchor_gradient_bytes():
    # The lab's "70B model (140 GB FP16)" (L225) and docs/physics.md's "350 GB (175B params, FP16)".
    assert ic.gradient_bytes(70e9) == 140e9
    assert ic.gradient_bytes(175e9, 2) == 350e9
    assert ic.gradient_bytes(70e9, 4) == 280e9


def test_anchor_transfer_time():
    # the project's alpha-beta worked example: 1e9 B at 100e9 B/s plus alpha = 5 us.
    assert close(ic.transfer_time(1e9, 100e9, 5e-6), 0.010005)
    # The lab's own (correct) division: 280 GB over 50 GB/s is 5.6 s.
    assert close(ic.transfer_time(280e9, 50e9), 5.6)
    assert close(ic.transfer_time(1e9, 100e9), collectives.p2p_time(1e9, 0.0, 100e9))


def test_anchor_intra_node_nccl_worked_value():
    # anchors section E.1: n = 8, S = 1e9 B, B = 100e9 B/s, bandwidth term 0.0175 s; busbw = B.
    t = ic.intra_node_allreduce_time(1e9, 8, 100e9)
    assert close(t, 0.0175)
    assert close(collectives.bus_bandwidth(1e9, t, 8), 100e9)


def test_anchor_intra_node_lab_volume():
    # The lab's Act II ring volume 2 x 7/8 x 140 GB = 245 GB per GPU (analysis section 4, F3).
    # 245 GB per GPU at NVLink 4's 450 GB/s per direction: 0.544 s (the time itself, not the time
    # multiplied back by the bandwidth it was divided by, which any bandwidth would pass)
    t = ic.intra_node_allreduce_time(140e9, 8, C.NVLINK4_BANDWIDTH)
    assert C.NVLINK4_BANDWIDTH == 450e9
    assert close(t, 245e9 / 450e9)


def test_anchor_hierarchical():
    # One node: only the NVLink ring (the worked example's value); one GPU per node: only the node ring.
    assert close(ic.hierarchical_allreduce_time(1e9, 8, 1, 100e9, 1.0), 0.0175)
    assert close(ic.hierarchical_allreduce_time(1e9, 1, 8, 1.0, 100e9), 0.0175)
    # Worked by hand: the slower of 245 GB / 450 GB/s = 0.5444 s and 2 x 15/16 x 140 GB / 50 GB/s = 5.25 s.
    t = ic.hierarchical_allreduce_time(140e9, 8, 16, 450e9, 50e9)
    assert close(t, float(max(Fraction(245, 450), Fraction(2 * 15 * 140, 16 * 50))))
    # nccl-tests#309's 2- and 4-node runs (16 GiB, 8 GPUs and 8 NDR NICs per node) as bus bandwidth:
    # 482 and 498 GB/s pipelined, between the stages-added 293 / 254 and above the measured 470 / 365.84.
    m = 16 * 2**30
    for nodes, busbw in ((2, 482.4e9), (4, 498.2e9)):
        n = 8 * nodes
        got = m / ic.hierarchical_allreduce_time(m, 8, nodes, 450e9, 400e9) * 2 * (n - 1) / n
        assert math.isclose(got, busbw, rel_tol=1e-3)


def test_anchor_comm_overhead_ratio_lab_values():
    # The lab's PCIe overhead 5.6 s / 2.1 s = 266.67 % and NVLink 0.3111 / 2.1 = 14.81 % (analysis s. 7).
    assert close(ic.comm_overhead_ratio(5.6, 2.1), 2.6666666666666665)
    assert close(ic.comm_overhead_ratio(280 / 900, 2.1), 0.14814814814814814)


def test_anchor_speedup_and_efficiency_lab_values():
    # The lab's Act II defaults: step_base 2.3722 s, step_multi 7.9722 s at 16 nodes -> 4.761x, 29.76 %.
    s = ic.speedup(16 * (2.1 + 245 / 900), 2.1 + 245 / 900 + 5.6)
    assert math.isclose(s, 4.761, rel_tol=1e-3)
    assert math.isclose(ic.scaling_efficiency(s, 16), 0.2976, rel_tol=1e-3)
    assert ic.speedup(6.0, 1.0) == 6.0                      # the story's "6x" as t_1 / t_n
    assert ic.scaling_efficiency(6.0, 16) == 0.375


def _links_by_hand(m, g, nodes, b_intra, b_link, compute, target=1, max_links=8):
    """Exact rational arithmetic, independent of the reference: the fewest k with comm <= target*compute."""
    m, b_intra, b_link, compute, target = map(Fraction, (m, b_intra, b_link, compute, target))
    intra = 2 * Fraction(g - 1, g) * m / b_intra
    for k in range(1, max_links + 1):
        if max(intra, 2 * Fraction(nodes - 1, nodes) * m / (k * b_link)) <= target * compute:
            return k
    return 0


@pytest.mark.parametrize("nodes", [1, 2, 16, 64])
def test_anchor_min_ib_links_by_hand(nodes):
    compute = 1.9327266599258510
    expect = _links_by_hand(140e9, 8, nodes, 450e9, 50e9, compute)
    assert ic.min_ib_links(140e9, 8, nodes, 450e9, 50e9, compute) == expect
    assert expect == {1: 1, 2: 2, 16: 3, 64: 3}[nodes]


def test_min_ib_links_none_suffices_and_cap():
    # NVLink alone takes 0.544 s: a 0.1 s budget cannot be met by any link count.
    assert ic.min_ib_links(140e9, 8, 16, 450e9, 50e9, 1.0, 0.1) == 0
    assert ic.min_ib_links(140e9, 8, 16, 450e9, 50e9, 1.9327, max_links=2) == 0
    assert ic.min_ib_links(140e9, 8, 1, 450e9, 50e9, 0.5) == 0       # one node, NVLink too slow
    assert isinstance(ic.min_ib_links(140e9, 8, 16, 450e9, 50e9, 1.9327), int)


# --- Properties (hypothesis) ----------------------------------------------------------------------

@FAST
@given(floats(1e-3, 1e4))
def test_gbit_matches_constants_convention(gbit):
    assert close(ic.gbit_to_bytes_per_s(gbit), gbit * 1e9 / 8)
    assert close(ic.gbit_to_bytes_per_s(gbit) / 1e9, gbit / 8)


@FAST
@given(floats(0, 1e12), st.integers(1, 64), floats(1e9, 1e12))
def test_intra_node_is_latency_free_ring(m, g, bw):
    assert close(ic.intra_node_allreduce_time(m, g, bw), collectives.ring_allreduce_time(m, g, 0.0, bw))


@FAST
@given(floats(0, 1e12), st.integers(1, 8), st.integers(1, 64), floats(1e10, 1e12), floats(1e10, 1e12))
def test_hierarchical_is_two_rings(m, g, nodes, b_intra, b_inter):
    t = ic.hierarchical_allreduce_time(m, g, nodes, b_intra, b_inter)
    # two rings, pipelined: the slower sets the time
    assert close(t, max(ic.intra_node_allreduce_time(m, g, b_intra), ic.intra_node_allreduce_time(m, nodes, b_inter)))
    # Flat ring over all g*nodes GPUs on the slow links is never faster than the hierarchy when
    # each GPU has 1/g of the node's inter bandwidth (the reason NCCL goes hierarchical).
    if nodes > 1 and g > 1 and b_inter / g <= b_intra:
        flat = ic.intra_node_allreduce_time(m, g * nodes, b_inter / g)
        assert t <= flat * (1 + 1e-9)


@FAST
@given(floats(0, 1e3), floats(1e-3, 1e3), floats(1e-3, 1e3))
def test_overhead_ratio_and_fraction_agree(comm, compute, other):
    r = ic.comm_overhead_ratio(comm, compute)
    assert close(r / (1 + r), collectives.comm_fraction(comm, compute), rel=1e-9)
    assert (ic.comm_overhead_ratio(comm, compute) > 1) == (comm > compute)


@FAST
@given(floats(1e-3, 1e4), floats(1e-3, 1e4), floats(1e-3, 1e4))
def test_speedup_composes(t1, t2, t3):
    assert close(ic.speedup(t1, t2) * ic.speedup(t2, t3), ic.speedup(t1, t3))


@FAST
@given(floats(0.01, 1e3), st.integers(1, 1024))
def test_scaling_efficiency_is_lab01s(s, n):
    from reference import scaling
    assert ic.scaling_efficiency(s, n) == scaling.scaling_efficiency(s, n)
    assert ic.scaling_efficiency(s, n + 1) < ic.scaling_efficiency(s, n)


LINKS = st.fixed_dictionaries({
    "message_bytes": floats(1e9, 4e11), "gpus_per_node": st.integers(1, 8), "nodes": st.integers(1, 64),
    "intra_bandwidth": floats(1e11, 1e12), "link_bandwidth": floats(1e10, 1e11), "compute_s": floats(0.1, 20.0),
    "max_overhead_ratio": floats(0.25, 2.0), "max_links": st.integers(1, 8),
})


@FAST
@given(LINKS)
def test_min_ib_links_matches_exact_search(d):
    assert ic.min_ib_links(**d) == _links_by_hand(
        d["message_bytes"], d["gpus_per_node"], d["nodes"], d["intra_bandwidth"], d["link_bandwidth"],
        d["compute_s"], d["max_overhead_ratio"], d["max_links"])


@FAST
@given(LINKS)
def test_min_ib_links_more_nodes_never_fewer_links(d):
    need = lambda k: math.inf if k == 0 else k
    more = dict(d, nodes=d["nodes"] + 1)
    assert need(ic.min_ib_links(**more)) >= need(ic.min_ib_links(**d))


# --- Validation: ValueError naming the parameter ---------------------------------------------------

BAD = [   # NaN, infinities, negatives, bools, strings: tests/test_physics_contract.py
    (ic.gbit_to_bytes_per_s, dict(gbit_per_s=0), "gbit_per_s"),
    (ic.gradient_bytes, dict(params=1e9, bytes_per_value=0), "bytes_per_value"),
    (ic.transfer_time, dict(num_bytes=1, bandwidth=0), "bandwidth"),
    (ic.intra_node_allreduce_time, dict(message_bytes=1, gpus=0, bandwidth=1e9), "gpus"),
    (ic.intra_node_allreduce_time, dict(message_bytes=1, gpus=2.5, bandwidth=1e9), "gpus"),
    (ic.hierarchical_allreduce_time, dict(message_bytes=1, gpus_per_node=8, nodes=0, intra_bandwidth=1,
                                          inter_bandwidth_per_node=1), "nodes"),
    (ic.hierarchical_allreduce_time, dict(message_bytes=1, gpus_per_node=0, nodes=2, intra_bandwidth=1,
                                          inter_bandwidth_per_node=1), "gpus_per_node"),
    (ic.hierarchical_allreduce_time, dict(message_bytes=1, gpus_per_node=8, nodes=2, intra_bandwidth=0,
                                          inter_bandwidth_per_node=1), "intra_bandwidth"),
    (ic.hierarchical_allreduce_time, dict(message_bytes=1, gpus_per_node=8, nodes=2, intra_bandwidth=1,
                                          inter_bandwidth_per_node=0), "inter_bandwidth_per_node"),
    (ic.comm_overhead_ratio, dict(comm_s=1, compute_s=0), "compute_s"),
    (ic.speedup, dict(t_1=0, t_n=1), "t_1"),
    (ic.scaling_efficiency, dict(speedup=2, n=0), "n"),
    (ic.min_ib_links, dict(message_bytes=1, gpus_per_node=8, nodes=2, intra_bandwidth=1, link_bandwidth=0,
                           compute_s=1), "link_bandwidth"),
    (ic.min_ib_links, dict(message_bytes=1, gpus_per_node=8, nodes=2, intra_bandwidth=1, link_bandwidth=1,
                           compute_s=0), "compute_s"),
    (ic.min_ib_links, dict(message_bytes=1, gpus_per_node=8, nodes=2, intra_bandwidth=1, link_bandwidth=1,
                           compute_s=1, max_overhead_ratio=0), "max_overhead_ratio"),
    (ic.min_ib_links, dict(message_bytes=1, gpus_per_node=8, nodes=2, intra_bandwidth=1, link_bandwidth=1,
                           compute_s=1, max_links=0), "max_links"),
]


@pytest.mark.parametrize("function, kwargs, name", BAD, ids=[f"{f.__name__}-{n}" for f, _, n in BAD])
def test_bad_input_names_the_parameter(function, kwargs, name):
    with pytest.raises(ValueError, match=name):
        function(**kwargs)


def test_float_counts_accepted_as_ints():
    assert ic.intra_node_allreduce_time(1e9, 8.0, 100e9) == ic.intra_node_allreduce_time(1e9, 8, 100e9)
    assert ic.min_ib_links(140e9, 8.0, 16.0, 450e9, 50e9, 1.9327, max_links=8.0) == 3
