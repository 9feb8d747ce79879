"""reference/collectives.py against independent published values, properties and its input checks.

Anchors: nccl-tests doc/PERFORMANCE.md (bus bandwidth), Thakur, Rabenseifner & Gropp 2005 (ring and
Rabenseifner), Kaplan et al. 2020 / Hoffmann et al. 2022 (6ND), and the worked values of
docs/physics.md, Lab 06, recomputed by hand (labs/lab06_collectives/errata.md).
"""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from labs.lab06_collectives import properties as public
from reference import collectives as c
from reference import constants as k

# The source lab's alpha (1.5 us): the analysis's hand values below use it. The assignment's constants
# are NCCL's per-step latencies since issue 30 (k.IB_ALPHA_S = 2.7 us), checked in their own test.
NDR, ALPHA = k.IB_NDR400_BANDWIDTH, 1.5e-6
FEW = settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def close(x, y, rel=1e-9):
    return math.isclose(x, y, rel_tol=rel, abs_tol=1e-12)


# --- anchors: independent values -------------------------------------------------------------------

def test_the_labs_own_worked_example():
    # anchors E.1: n = 8, S = 1e9 B, B = 100e9 B/s, alpha = 5 us -> 7.0e-5 + 0.0175 = 0.01757 s
    assert close(c.ring_allreduce_time(1e9, 8, 5e-6, 100e9), 0.01757)
    ideal = c.ring_allreduce_time(1e9, 8, 0.0, 100e9)
    assert close(1e9 / ideal, 57.142857142857e9, rel=1e-12)          # algbw 57.14 GB/s
    assert close(c.bus_bandwidth(1e9, ideal, 8), 100e9)                # busbw = link bandwidth


def test_p2p_one_megabyte_over_ndr():
    # the lab's "~20 us to transfer" 1 MB at 50 GB/s, plus its 1.5 us latency
    assert close(c.p2p_time(1e6, ALPHA, NDR), 21.5e-6)


def test_act1_volumes_and_ratio_is_exactly_n():
    m = 140e9
    assert close(c.ring_bytes_per_rank(m, 128), 277.8125e9)           # analysis sec. 7
    assert close(c.naive_master_bytes(m, 128), 254 * m)               # 35,560 GB, not the lab's 35,700
    assert close(c.naive_master_bytes(m, 128) / c.ring_bytes_per_rank(m, 128), 128.0)   # not 127.5
    assert close(c.naive_allreduce_time(m, 128, 0.0, NDR), 711.2)     # 254 x 2.8 s


@pytest.mark.parametrize("m, ring_s, tree_s, rab_s, half_unit", [
    # analysis sec. 7 "comparison with standard models", quoted to 3 decimals of ms / 4 and 1 of s
    (1e6, 0.421e-3, 0.301e-3, 0.061e-3, 0.0005e-3),
    (280e9, 11.1129, 78.4, 11.1125, 0.05),
])
def test_analysis_standard_models_at_128(m, ring_s, tree_s, rab_s, half_unit):
    assert math.isclose(c.ring_allreduce_time(m, 128, ALPHA, NDR), ring_s, abs_tol=half_unit)
    assert math.isclose(c.tree_allreduce_time(m, 128, ALPHA, NDR), tree_s, abs_tol=half_unit)
    assert math.isclose(c.rabenseifner_allreduce_time(m, 128, ALPHA, NDR), rab_s, abs_tol=half_unit)


def test_critical_message_sizes():
    assert close(c.critical_message_size(ALPHA, NDR), 75_000)          # the lab's n* = 75 KB (L1003)
    assert close(c.critical_message_size(ALPHA, k.IB_HDR200_BANDWIDTH), 37_500)


def test_crossover_and_selection_checked_values():
    # the source lab's cluster: ring-tree crossover ~1.5 MB at n = 128 on NDR (by hand: 1.498 MB)
    assert math.isclose(c.ring_tree_crossover_bytes(128, ALPHA, NDR), 1.498e6, rel_tol=1e-3)
    assert c.best_allreduce_algorithm(350e9, 128, ALPHA, NDR) == "ring"   # 175B FP16 gradient
    assert c.best_allreduce_algorithm(0.5e6, 128, ALPHA, NDR) == "tree"   # a sub-MB update
    # docs/physics.md: on the DGX H100 cluster's ring link (alpha 0.848 us, 400 GB/s per rank) 6.78 MB, by
    # hand: alpha * B * (127 - 7) / (7 - 127/128), alpha = (30 x 2.7 + 224 x 0.6) / 254 us
    alpha = (30 * 2.7e-6 + 224 * 0.6e-6) / 254
    assert math.isclose(c.ring_tree_crossover_bytes(128, alpha, 400e9), alpha * 400e9 * 120 / (7 - 127 / 128))
    assert math.isclose(c.ring_tree_crossover_bytes(128, alpha, 400e9), 6.775e6, rel_tol=1e-3)


def test_alphas_are_nccls_ring_ll_step_latencies():
    # NCCL src/graph/tuning.cc hwLatencies, ring, LL: NVLink 0.6 us, network 2.7 us; baseLatencies ring LL 6.6 us
    assert (k.NVLINK_ALPHA_S, k.IB_ALPHA_S, k.NCCL_RING_BASE_LATENCY_S) == (0.6e-6, 2.7e-6, 6.6e-6)


def test_flops_and_compute_anchors():
    assert close(c.training_step_flops(70e9, 1.4e12), 5.88e23)        # Chinchilla C = 6ND
    # the lab's own step (sparse 1979 TFLOPS, 16 x 2048 tokens) recomputed in analysis sec. 7: 0.27165 s
    lab_s = c.compute_time(c.training_step_flops(175e9, 16 * 2048), 128, 1979e12, 0.5)
    assert math.isclose(lab_s, 0.27165, rel_tol=1e-4)
    assert math.isclose(c.comm_fraction(5.5563, 0.27165), 0.953, rel_tol=1e-3)   # the lab's 95.3 %


# --- identities that need two reference functions (the declared properties: tests/labs/test_labs.py) ---

@FEW
@given(public.ALLREDUCE)
def test_ring_and_naive_grow_with_n(d):
    bigger = {**d, "n": d["n"] + 1}
    assert c.ring_allreduce_time(**bigger) >= c.ring_allreduce_time(**d)
    assert c.naive_allreduce_time(**bigger) >= c.naive_allreduce_time(**d)


@FEW
@given(public.VOLUME_MANY)
def test_traffic_ratio_is_n(d):
    ratio = c.naive_master_bytes(**d) / c.ring_bytes_per_rank(**d)
    assert close(ratio, d["n"])


@FEW
@given(public.RABENSEIFNER)
def test_rabenseifner_never_slower_than_ring_and_equal_bandwidth(d):
    assert c.rabenseifner_allreduce_time(**d) <= c.ring_allreduce_time(**d) * (1 + 1e-12)
    no_latency = {**d, "alpha_s": 0.0}
    assert close(c.rabenseifner_allreduce_time(**no_latency), c.ring_allreduce_time(**no_latency))


@FEW
@given(public.ALLREDUCE_MANY)
def test_busbw_of_ideal_ring_is_the_link(d):
    ideal = c.ring_allreduce_time(**{**d, "alpha_s": 0.0})
    assert close(c.bus_bandwidth(d["message_bytes"], ideal, d["n"]), d["bandwidth"])


@FEW
@given(public.CROSSOVER, st.floats(1.1, 1e3))
def test_crossover_separates_ring_from_tree(d, factor):
    cross = c.ring_tree_crossover_bytes(**d)
    assert close(c.ring_allreduce_time(cross, **d), c.tree_allreduce_time(cross, **d), rel=1e-6)
    if cross > 0:
        assert c.best_allreduce_algorithm(cross / factor, **d) == "tree"
    assert c.best_allreduce_algorithm(max(cross, 1.0) * factor, **d) == "ring"


@FEW
@given(public.FRACTION, st.floats(1.01, 100))
def test_comm_fraction_rises_with_comm_and_falls_with_compute(d, factor):
    base = c.comm_fraction(**d)
    assert c.comm_fraction(d["comm_s"] * factor, d["compute_s"]) > base
    assert c.comm_fraction(d["comm_s"], d["compute_s"] * factor) < base


@FEW
@given(public.FLOPS, st.integers(1, 4096), public.PEAK_FLOPS, public.MFU)
def test_compute_time_of_6nd_is_linear_in_params(d, n, peak, mfu):
    one = c.compute_time(c.training_step_flops(**d), n, peak, mfu)
    two = c.compute_time(c.training_step_flops(2 * d["params"], d["tokens"]), n, peak, mfu)
    assert close(two, 2 * one)


# --- input checks: ValueError naming the parameter -----------------------------------------------------

LINK = dict(message_bytes=1e9, n=8, alpha_s=ALPHA, bandwidth=NDR)
BAD = [   # NaN, infinities, negatives, bools, strings: tests/test_physics_contract.py
    ("ring_allreduce_time", {**LINK, "n": 0}, "n"),
    ("naive_allreduce_time", {**LINK, "bandwidth": 0.0}, "bandwidth"),
    ("tree_allreduce_time", {**LINK, "n": 2.5}, "n"),
    ("rabenseifner_allreduce_time", {**LINK, "n": 24}, "n"),
    ("bus_bandwidth", {"message_bytes": 1e9, "time_s": 0.0, "n": 8}, "time_s"),
    ("ring_tree_crossover_bytes", {"n": 1, "alpha_s": ALPHA, "bandwidth": NDR}, "n"),
    ("compute_time", {"flops": 1e18, "n_gpus": 8, "peak_flops": 989e12, "mfu": 50}, "mfu"),
    ("compute_time", {"flops": 1e18, "n_gpus": 0, "peak_flops": 989e12, "mfu": 0.5}, "n_gpus"),
    ("comm_fraction", {"comm_s": 0.0, "compute_s": 0.0}, "compute_s"),
]


@pytest.mark.parametrize("name, kwargs, param", BAD, ids=[f"{b[0]}-{b[2]}" for b in BAD])
def test_bad_input_names_the_parameter(name, kwargs, param):
    with pytest.raises(ValueError, match=rf"\b{param}\b"):
        getattr(c, name)(**kwargs)
