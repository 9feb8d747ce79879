"""Public properties of Lab 02 (interconnect.py): shipped to students as the public property checks.

Standalone on purpose (stdlib + hypothesis + the property kit shipped beside it): it runs with plain
`pytest` in the released folder, where neither the reference nor the autograder exists. Each check is
declared with the graded function it tests (`item`) and the keyword arguments it draws (`strategy`);
its docstring says in one sentence what must hold (the meaning), and it calls f with keyword arguments
only. Units: bytes, seconds, bytes/s per direction.
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from labs.property_kit import PublicProperties, kwargs, zero_when

REL = 1e-9   # the assignment's float tolerance: algebraically equal forms differ in the last bits
ABS = 1e-12


def _close(a, b, rel=REL) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=ABS)


def _f(lo, hi):
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


BYTES = _f(1e3, 1e12)            # up to a 500B-parameter FP16 gradient
BANDWIDTH = _f(1e9, 1e12)        # 1 GB/s .. 1 TB/s per direction
SECONDS = _f(1e-3, 1e3)
GPUS = st.integers(1, 16)
NODES = st.integers(1, 64)


def _hier(f, d, **over):
    args = dict(message_bytes=d["message_bytes"], gpus_per_node=d["gpus_per_node"], nodes=d["nodes"],
                intra_bandwidth=d["intra_bandwidth"], inter_bandwidth_per_node=d["inter_bandwidth_per_node"])
    args.update(over)
    return f(**args)


def _links(f, d, **over):
    args = dict(d)
    args.update(over)
    return f(**args)


LINK_ARGS = kwargs(
    message_bytes=_f(1e9, 4e11), gpus_per_node=st.integers(1, 8), nodes=NODES,
    intra_bandwidth=_f(1e11, 1e12), link_bandwidth=_f(1e10, 1e11), compute_s=_f(0.1, 20.0),
    max_overhead_ratio=_f(0.25, 2.0), max_links=st.integers(1, 8),
)
HIER_ARGS = kwargs(
    message_bytes=_f(1e6, 1e12), gpus_per_node=st.integers(1, 8), nodes=NODES,
    intra_bandwidth=_f(1e10, 1e12), inter_bandwidth_per_node=_f(1e10, 1e12),
)


PROPERTIES = PublicProperties()
public_property = PROPERTIES.declare


# --- gbit_to_bytes_per_s --------------------------------------------------------------------------

@public_property("gbit_to_bytes_per_s", kwargs(gbit_per_s=_f(0.1, 3200.0)), name="eight bits per byte")
def _eight_bits(f, d):
    """A link of x Gb/s moves x * 1e9 bits, i.e. x * 1e9 / 8 bytes, per second."""
    got = f(gbit_per_s=d["gbit_per_s"])
    assert _close(got * 8, d["gbit_per_s"] * 1e9), \
        f"{d['gbit_per_s']} Gb/s gave {got} bytes/s; times 8 bits that is {got * 8} bit/s"


@public_property("gbit_to_bytes_per_s", kwargs(gbit_per_s=_f(0.1, 3200.0)), name="proportional")
def _proportional_gbit(f, d):
    """Twice the Gb/s is twice the bytes/s."""
    one, two = f(gbit_per_s=d["gbit_per_s"]), f(gbit_per_s=2 * d["gbit_per_s"])
    assert _close(two, 2 * one), f"doubling {d['gbit_per_s']} Gb/s gave {two}, not 2 x {one}"


# --- gradient_bytes -------------------------------------------------------------------------------

@public_property("gradient_bytes", kwargs(params=_f(1e6, 2e12)), name="FP32 is twice FP16")
def _fp32_twice_fp16(f, d):
    """4 bytes per value is twice the bytes of 2 bytes per value."""
    fp16, fp32 = f(params=d["params"], bytes_per_value=2), f(params=d["params"], bytes_per_value=4)
    assert _close(fp32, 2 * fp16), f"params={d['params']}: FP32 gave {fp32}, FP16 gave {fp16}"


@public_property("gradient_bytes", kwargs(params=_f(0.0, 2e12)), name="one byte per value")
def _one_byte_per_value(f, d):
    """At 1 byte per value the gradient has as many bytes as the model has parameters."""
    got = f(params=d["params"], bytes_per_value=1)
    assert _close(got, d["params"]), f"params={d['params']} at 1 byte each gave {got} bytes"


@public_property("gradient_bytes",
                 kwargs(a=_f(0.0, 1e12), b=_f(0.0, 1e12), bytes_per_value=st.sampled_from([1, 2, 4])),
                 name="additive in parameters")
def _linear_in_params(f, d):
    """Two halves of a model have gradients that add up to the whole model's."""
    a, b, w = d["a"], d["b"], d["bytes_per_value"]
    whole = f(params=a + b, bytes_per_value=w)
    parts = f(params=a, bytes_per_value=w) + f(params=b, bytes_per_value=w)
    assert _close(whole, parts), f"{a}+{b} params gave {whole}, the parts sum to {parts}"


# --- transfer_time --------------------------------------------------------------------------------

@public_property("transfer_time", kwargs(bandwidth=BANDWIDTH, latency_s=_f(0.0, 1e-3)),
                 name="an empty message costs the latency")
def _empty_message_costs_latency(f, d):
    """Sending 0 bytes takes exactly the per-message latency."""
    got = f(num_bytes=0.0, bandwidth=d["bandwidth"], latency_s=d["latency_s"])
    assert _close(got, d["latency_s"]), f"0 bytes with latency {d['latency_s']} s took {got} s"


@public_property("transfer_time", kwargs(num_bytes=BYTES, bandwidth=BANDWIDTH), name="time x bandwidth = bytes")
def _time_times_bandwidth(f, d):
    """Without latency, the time multiplied by the bandwidth (bytes/s) gives back the bytes."""
    got = f(num_bytes=d["num_bytes"], bandwidth=d["bandwidth"], latency_s=0.0)
    assert _close(got * d["bandwidth"], d["num_bytes"]), \
        f"{d['num_bytes']} B at {d['bandwidth']} B/s took {got} s; that moves {got * d['bandwidth']} B"


@public_property("transfer_time", kwargs(num_bytes=_f(0.0, 1e9), bandwidth=BANDWIDTH, latency_s=_f(1e-6, 1e-3)),
                 name="latency adds")
def _latency_adds(f, d):
    """The latency adds to the transfer time once per message, whatever the size."""
    with_latency = f(num_bytes=d["num_bytes"], bandwidth=d["bandwidth"], latency_s=d["latency_s"])
    without = f(num_bytes=d["num_bytes"], bandwidth=d["bandwidth"], latency_s=0.0)
    # rel 1e-6: the difference of two nearby floats keeps about ten significant digits here
    assert math.isclose(with_latency - without, d["latency_s"], rel_tol=1e-6), \
        f"latency {d['latency_s']} s changed the time by {with_latency - without} s"


# --- intra_node_allreduce_time --------------------------------------------------------------------

public_property("intra_node_allreduce_time", kwargs(message_bytes=BYTES, bandwidth=BANDWIDTH),
                name="zero for a single GPU", meaning="With one GPU there is nothing to reduce, so the time is 0.")(
    zero_when("one GPU has nothing to reduce, got {got} s", abs_tol=ABS, gpus=1))


@public_property("intra_node_allreduce_time",
                 kwargs(message_bytes=BYTES, gpus=st.integers(2, 16), bandwidth=BANDWIDTH),
                 name="ring factor in [1, 2)")
def _ring_factor_bounds(f, d):
    """For 2 or more GPUs each GPU sends 2(g-1)/g times the message: at least once, never twice."""
    m, g, bw = d["message_bytes"], d["gpus"], d["bandwidth"]
    factor = f(message_bytes=m, gpus=g, bandwidth=bw) * bw / m
    assert 1 - 1e-9 <= factor < 2, \
        f"gpus={g}: each GPU sent {factor:.6g} x the message; a ring sends 2(g-1)/g, in [1, 2)"


@public_property("intra_node_allreduce_time", kwargs(message_bytes=BYTES, gpus=GPUS, bandwidth=BANDWIDTH),
                 name="more GPUs never faster")
def _more_gpus_never_faster(f, d):
    """Adding a GPU to the ring never shortens the AllReduce of the same message."""
    m, g, bw = d["message_bytes"], d["gpus"], d["bandwidth"]
    fewer, more = f(message_bytes=m, gpus=g, bandwidth=bw), f(message_bytes=m, gpus=g + 1, bandwidth=bw)
    assert more >= fewer * (1 - REL), f"{g} GPUs took {fewer} s but {g + 1} GPUs took {more} s"


# --- hierarchical_allreduce_time ------------------------------------------------------------------

@public_property("hierarchical_allreduce_time", HIER_ARGS, name="one node has no inter-node term")
def _one_node_no_network(f, d):
    """A single node sends nothing over InfiniBand, so its bandwidth cannot matter."""
    slow = _hier(f, d, nodes=1)
    fast = _hier(f, d, nodes=1, inter_bandwidth_per_node=10 * d["inter_bandwidth_per_node"])
    assert _close(slow, fast), \
        f"one node took {slow} s and {fast} s with 10x the InfiniBand bandwidth; a single node sends nothing over it"


@public_property("hierarchical_allreduce_time", HIER_ARGS, name="one GPU per node has no intra-node term")
def _one_gpu_per_node_no_nvlink(f, d):
    """With one GPU per node nothing crosses NVLink, so its bandwidth cannot matter."""
    slow = _hier(f, d, gpus_per_node=1)
    fast = _hier(f, d, gpus_per_node=1, intra_bandwidth=10 * d["intra_bandwidth"])
    assert _close(slow, fast), f"one GPU per node took {slow} s and {fast} s with 10x the NVLink bandwidth"


@public_property("hierarchical_allreduce_time", HIER_ARGS, name="inter-node factor in [1, 2)")
def _inter_node_factor_bounds(f, d):
    """With one GPU per node only the network stage is left: each node's links carry 2(k-1)/k x M,
    at least once the message and never twice."""
    if d["nodes"] < 2:
        return
    network = _hier(f, d, gpus_per_node=1)
    factor = network * d["inter_bandwidth_per_node"] / d["message_bytes"]
    assert 1 - 1e-6 <= factor < 2, \
        (f"nodes={d['nodes']}, one GPU per node: {network} s, {factor:.6g} x M / B_inter_node; "
         "each node's links carry 2(k-1)/k of the message, in [1, 2)")


@public_property("hierarchical_allreduce_time", HIER_ARGS, name="the slower stage sets the time")
def _slower_stage_sets_the_time(f, d):
    """The NVLink stages and the network stage work at once (the message is pipelined in chunks), so
    the AllReduce takes as long as the slower of the two alone, not their sum."""
    nvlink, network = _hier(f, d, nodes=1), _hier(f, d, gpus_per_node=1)
    both = _hier(f, d)
    assert _close(both, max(nvlink, network)), \
        (f"{both} s with the NVLink stages alone taking {nvlink} s and the network stage alone {network} s: "
         "pipelined, the slower of the two sets the time")


@public_property("hierarchical_allreduce_time", HIER_ARGS, name="more nodes never faster")
def _more_nodes_never_faster(f, d):
    """Adding a node never shortens the AllReduce of the same message."""
    fewer, more = _hier(f, d), _hier(f, d, nodes=d["nodes"] + 1)
    assert more >= fewer * (1 - REL), f"{d['nodes']} nodes took {fewer} s, {d['nodes'] + 1} took {more} s"


# --- comm_overhead_ratio --------------------------------------------------------------------------

public_property("comm_overhead_ratio", kwargs(compute_s=SECONDS), name="no communication, no overhead",
                meaning="With no communication the ratio is 0.")(
    zero_when("no communication gave an overhead ratio of {got}", abs_tol=ABS, comm_s=0.0))


@public_property("comm_overhead_ratio", kwargs(comm_s=_f(0.0, 1e3), compute_s=SECONDS),
                 name="ratio x compute = comm")
def _ratio_times_compute(f, d):
    """The ratio (not a percentage) times the compute time gives back the communication time."""
    got = f(comm_s=d["comm_s"], compute_s=d["compute_s"])
    assert _close(got * d["compute_s"], d["comm_s"]), \
        f"comm {d['comm_s']} s over compute {d['compute_s']} s gave {got} (a ratio, not percent)"


@public_property("comm_overhead_ratio", kwargs(compute_s=SECONDS), name="equal times give 1")
def _equal_times_ratio_one(f, d):
    """Communication as long as compute is the danger threshold, a ratio of exactly 1."""
    got = f(comm_s=d["compute_s"], compute_s=d["compute_s"])
    assert _close(got, 1.0), f"communication equal to compute gave {got}, the danger threshold is 1"


# --- speedup --------------------------------------------------------------------------------------

@public_property("speedup", kwargs(t_1=SECONDS), name="same time, speedup 1")
def _same_time_no_speedup(f, d):
    """The same work in the same time is a speedup of 1."""
    got = f(t_1=d["t_1"], t_n=d["t_1"])
    assert _close(got, 1.0), f"the same time {d['t_1']} s gave a speedup of {got}"


@public_property("speedup", kwargs(t_1=SECONDS, t_n=SECONDS), name="halving the time doubles it")
def _halving_time_doubles(f, d):
    """Doing the work in half the time doubles the speedup."""
    one, half = f(t_1=d["t_1"], t_n=d["t_n"]), f(t_1=d["t_1"], t_n=d["t_n"] / 2)
    assert _close(half, 2 * one), f"t_n halved from {d['t_n']} s: speedup went {one} -> {half}"


# --- scaling_efficiency ---------------------------------------------------------------------------

@public_property("scaling_efficiency", kwargs(n=st.integers(1, 1024)), name="linear scaling is 1")
def _linear_is_perfect(f, d):
    """A speedup of n on n workers is perfect scaling, an efficiency of 1 (a fraction, not percent)."""
    got = f(speedup=float(d["n"]), n=d["n"])
    assert _close(got, 1.0), f"a speedup of {d['n']} on {d['n']} workers gave efficiency {got}"


@public_property("scaling_efficiency", kwargs(speedup=_f(0.01, 1024.0), n=st.integers(1, 1024)),
                 name="efficiency x n = speedup")
def _efficiency_times_n(f, d):
    """The efficiency times the number of workers gives back the speedup."""
    got = f(speedup=d["speedup"], n=d["n"])
    assert _close(got * d["n"], d["speedup"]), \
        f"speedup {d['speedup']} on {d['n']}: efficiency {got} (a fraction, not percent)"


# --- min_ib_links ---------------------------------------------------------------------------------

@public_property("min_ib_links", LINK_ARGS, name="a count in range", max_examples=30)
def _in_range(f, d):
    """The answer is a whole number of links from 1 to max_links, or 0 when none suffices."""
    got = _links(f, d)
    assert isinstance(got, int) and not isinstance(got, bool) and 0 <= got <= d["max_links"], \
        f"got {got!r}: the answer is a whole number of links in 1..{d['max_links']}, or 0 for none"


@public_property("min_ib_links", LINK_ARGS, name="one node needs no InfiniBand", max_examples=30)
def _one_node_needs_no_network(f, d):
    """A single node has no inter-node traffic: 1 link is enough, or 0 if NVLink alone is too slow."""
    got = _links(f, d, nodes=1)
    assert got in (0, 1), f"one node has no inter-node traffic, yet it asked for {got} links"


@public_property("min_ib_links", LINK_ARGS, name="consistent with max_links", max_examples=30)
def _ceiling_consistent(f, d):
    """If k links are the fewest that suffice, capping at k still finds k and capping at k-1 finds none (0)."""
    got = _links(f, d)
    if got == 0:
        return
    assert _links(f, d, max_links=got) == got, f"{got} links suffice, but with max_links={got} it said otherwise"
    if got > 1:
        assert _links(f, d, max_links=got - 1) == 0, \
            f"the fewest links is {got}, yet with at most {got - 1} links it found an answer"


@public_property("min_ib_links", LINK_ARGS, name="more compute never needs more links", max_examples=30)
def _more_compute_never_more_links(f, d):
    """Doubling the compute time the communication is compared with never raises the links needed."""
    need = lambda k: math.inf if k == 0 else k
    base = _links(f, d)
    longer = _links(f, d, compute_s=2 * d["compute_s"])
    assert need(longer) <= need(base), \
        f"doubling compute to hide the communication behind raised the links needed from {base} to {longer}"
