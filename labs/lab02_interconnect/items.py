"""Lab 02 graded items: worked examples at the scenario's inputs, hidden domains and hidden properties.

Expected values are never typed: the engine computes them from reference/ at grading time.
"""
from __future__ import annotations

import math
from functools import partial

from hypothesis import strategies as st

from autograder.engine.spec import Example, FunctionItem, Property
from labs.authoring import anchored, decades, fmt_bytes, public_properties
from labs.lab02_interconnect import properties as public
from labs.lab02_interconnect.scenario import (ACT1_COMM_S, ACT1_LINKS, ACT1_STEP_S, ALPHA_S, COMPUTE_S, DANGER_RATIO,
                                              FP16_BYTES, FP32_BYTES, GPUS, HDR_GBIT, LINK_BW, LINKS_AT_MAX,
                                              MAX_LINKS, MAX_NODES, MESSAGE_BYTES, NDR_GBIT, NVLINK, NVLINK_BW,
                                              PARAMS, PCIE, PCIE_BW, SMALL_MESSAGE_BYTES, STORY_COMM_S,
                                              STORY_LINKS, STORY_NODES, STORY_SPEEDUP, TIGHT_RATIO, act2_comm_s,
                                              act2_speedup)
from reference import interconnect as ref


# --- graded functions -----------------------------------------------------------------------------
_public = partial(public_properties, public.PROPERTIES)

# Graded functions whose stub docstring may state its closed form (issue 29, derive then check): a
# definition or a published count a student is not asked to derive; at most a third of the lab's
# functions (`scalelabs lint`'s derive rule). Every other function's formula is in the reference's
# Formula: paragraph, which the stub leaves out.
DEFINITIONS = ("comm_overhead_ratio", "speedup", "scaling_efficiency")


def _links_meet_target(f, d):
    """Hidden: the returned count meets the target and one fewer link does not (reference physics)."""
    got = f(**d)
    ratio = lambda k: ref.comm_overhead_ratio(ref.hierarchical_allreduce_time(
        d["message_bytes"], d["gpus_per_node"], d["nodes"], d["intra_bandwidth"], k * d["link_bandwidth"]),
        d["compute_s"])
    if got == 0:
        assert ratio(d["max_links"]) > d["max_overhead_ratio"], \
            f"returned 0 (none suffices), yet {d['max_links']} links meet the target"
        return
    assert ratio(got) <= d["max_overhead_ratio"], f"{got} links leave the ratio at {ratio(got)}"
    if got > 1:
        assert ratio(got - 1) > d["max_overhead_ratio"], f"{got - 1} links already meet the target"


def _inter_inverse_in_bandwidth(f, d):
    """Hidden: the network stage (one GPU per node) halves when the node's InfiniBand bandwidth doubles."""
    term = lambda bw: f(**dict(d, gpus_per_node=1, inter_bandwidth_per_node=bw))
    one, two = term(d["inter_bandwidth_per_node"]), term(2 * d["inter_bandwidth_per_node"])
    assert math.isclose(one, 2 * two, rel_tol=1e-6, abs_tol=1e-12), \
        f"network stage {one} s at B, {two} s at 2B"


# --- hidden domains: wider than the released strategies (properties.py) and drawn differently -------
# zero (an empty message, no latency) is an edge, drawn for everyone, and rare in random draws
_BYTES = st.one_of(decades(0, 13), decades(6, 12), st.floats(0.0, 1e12))
_LINK_BW = st.one_of(decades(8, 13), decades(10, 12))

# The design problem's released strategy is LINK_ARGS; this one reaches further (1,024 nodes, 1..16
# GPUs a node, up to 16 links) and draws the answer first: a count k, then a target between the ratio
# k links give and the one k - 1 give (0: a target even max_links miss; 1: any target 1 link meets), so
# every count is as likely as any and no single argument tells the answer (scoring.input_blind_matches).
# Anchors: a target met exactly with one link (returned: at or under the target counts), one node
# whose NVLink alone already misses it (0).
_LINK_BASE = st.fixed_dictionaries({
    "message_bytes": decades(8.5, 12), "gpus_per_node": st.integers(1, 16),
    "nodes": st.one_of(st.integers(2, 16), st.integers(1, 1024)),
    "intra_bandwidth": decades(10.5, 12.5), "link_bandwidth": decades(9.5, 11.5), "compute_s": decades(-1.5, 1.5),
    "max_links": st.integers(1, 16)})
_GAP = 1.02      # consecutive counts' ratios at least 2 % apart: the answer never hangs on the last bit


def _ratio(d: dict, links: int) -> float:
    return ref.comm_overhead_ratio(ref.hierarchical_allreduce_time(
        d["message_bytes"], d["gpus_per_node"], d["nodes"], d["intra_bandwidth"], links * d["link_bandwidth"]),
        d["compute_s"])


def _with_target(d: dict) -> st.SearchStrategy:
    top = d["max_links"] if d["nodes"] > 1 else 1

    def target(links: int, u: float) -> dict:
        low = _ratio(d, links or d["max_links"])
        if not 0 < low < math.inf:          # no communication at all: any target is met (refused by _clear)
            return {**d, "max_overhead_ratio": 0.0}
        if links == 0:                      # even max_links miss it
            return {**d, "max_overhead_ratio": low * 10 ** -u}
        high = _ratio(d, links - 1) if links > 1 else low * 10
        return {**d, "max_overhead_ratio": low * (high / low) ** u}
    return st.tuples(st.integers(0, top), st.floats(0.1, 0.9)).map(lambda pair: target(*pair)).filter(_clear)


def _clear(d: dict) -> bool:
    """A valid target whose answer k is clear: k - 1 links miss it by at least _GAP."""
    if not 0 < d["max_overhead_ratio"] < math.inf:
        return False
    links = ref.min_ib_links(**d)
    return links < 2 or _ratio(d, links - 1) > _GAP * _ratio(d, links)


_LINK_DOMAIN = anchored(
    _LINK_BASE.flatmap(_with_target),
    dict(message_bytes=2.0 ** 30, gpus_per_node=1, nodes=2, intra_bandwidth=2.0 ** 40, link_bandwidth=2.0 ** 30,
         compute_s=1.0, max_overhead_ratio=1.0, max_links=8),
    dict(message_bytes=2.0 ** 30, gpus_per_node=2, nodes=1, intra_bandwidth=2.0 ** 30, link_bandwidth=2.0 ** 30,
         compute_s=1.0, max_overhead_ratio=0.25, max_links=8))
_HIER_DOMAIN = st.fixed_dictionaries({
    "message_bytes": st.one_of(decades(3, 13), st.floats(0.0, 1e12)), "gpus_per_node": st.integers(1, 16),
    "nodes": st.one_of(st.integers(1, 16), st.integers(1, 1024)),
    "intra_bandwidth": decades(10, 13), "inter_bandwidth_per_node": decades(9, 12.5),
})
# the hidden property keeps the released strategy's range (its check divides two small differences)
_HIER_PROPERTY = st.fixed_dictionaries({
    "message_bytes": st.floats(1e6, 1e12), "gpus_per_node": st.integers(1, 8), "nodes": st.integers(2, 64),
    "intra_bandwidth": st.floats(1e10, 1e12), "inter_bandwidth_per_node": st.floats(1e10, 1e12),
})

_act1 = lambda name: dict(message_bytes=MESSAGE_BYTES, gpus=GPUS, bandwidth=ACT1_LINKS[name])
_act2 = lambda nodes, links: dict(message_bytes=MESSAGE_BYTES, gpus_per_node=GPUS, nodes=nodes,
                                  intra_bandwidth=NVLINK_BW, inter_bandwidth_per_node=links * LINK_BW)
_design = lambda nodes, ratio=DANGER_RATIO: dict(
    message_bytes=MESSAGE_BYTES, gpus_per_node=GPUS, nodes=nodes, intra_bandwidth=NVLINK_BW,
    link_bandwidth=LINK_BW, compute_s=COMPUTE_S, max_overhead_ratio=ratio, max_links=MAX_LINKS)

FUNCTIONS = (
    FunctionItem(
        name="gbit_to_bytes_per_s", points=1,
        examples=[Example(f"an InfiniBand NDR port, {NDR_GBIT} Gb/s", {"gbit_per_s": NDR_GBIT}),
                  Example(f"an InfiniBand HDR port, {HDR_GBIT} Gb/s", {"gbit_per_s": HDR_GBIT})],
        domain=st.fixed_dictionaries({"gbit_per_s": st.one_of(decades(-2, 4), st.floats(1.0, 1600.0))}),
        properties=_public("gbit_to_bytes_per_s")),
    FunctionItem(
        name="gradient_bytes", points=1,
        examples=[Example(f"the {PARAMS / 1e9:g}B model in FP16", {"params": PARAMS, "bytes_per_value": FP16_BYTES}),
                  Example(f"the {PARAMS / 1e9:g}B model in FP32", {"params": PARAMS, "bytes_per_value": FP32_BYTES})],
        domain=st.fixed_dictionaries({"params": st.one_of(decades(3, 13), st.floats(0.0, 2e12)),
                                      "bytes_per_value": st.sampled_from([1, 2, 4]) | st.floats(0.125, 16.0)}),
        properties=_public("gradient_bytes")),
    FunctionItem(
        name="transfer_time", points=1.5,
        examples=[Example("the FP16 gradient over one PCIe Gen4 x16 link",
                          {"num_bytes": MESSAGE_BYTES, "bandwidth": PCIE_BW, "latency_s": 0.0}),
                  Example(f"one {SMALL_MESSAGE_BYTES / 1e6:g} MB message over NDR InfiniBand with its latency",
                          {"num_bytes": SMALL_MESSAGE_BYTES, "bandwidth": LINK_BW, "latency_s": ALPHA_S})],
        domain=st.fixed_dictionaries({"num_bytes": _BYTES, "bandwidth": _LINK_BW,
                                      "latency_s": st.one_of(decades(-8, -3), st.floats(0.0, 1e-4))}),
        properties=_public("transfer_time")),
    FunctionItem(
        name="intra_node_allreduce_time", points=2.5,
        examples=[Example(f"Act I: {fmt_bytes(MESSAGE_BYTES)} over {GPUS} GPUs, {name}", _act1(name)) for name in ACT1_LINKS],
        domain=st.fixed_dictionaries({"message_bytes": _BYTES, "gpus": st.one_of(st.integers(1, 16), st.integers(1, 72)),
                                      "bandwidth": _LINK_BW}),
        properties=_public("intra_node_allreduce_time")),
    FunctionItem(
        name="hierarchical_allreduce_time", points=3,
        examples=[Example(f"Act II: {STORY_NODES} nodes, {STORY_LINKS} NDR link each", _act2(STORY_NODES, STORY_LINKS)),
                  Example("Act II: a single node (no inter-node term)", _act2(1, STORY_LINKS)),
                  Example(f"Act II: {MAX_NODES} nodes, {LINKS_AT_MAX} NDR links each", _act2(MAX_NODES, LINKS_AT_MAX))],
        domain=_HIER_DOMAIN,
        properties=[*_public("hierarchical_allreduce_time"),
                    Property(name="inter-node term inverse in bandwidth",
                             meaning="Doubling a node's InfiniBand bandwidth halves the network stage.",
                             strategy=_HIER_PROPERTY, check=_inter_inverse_in_bandwidth,
                             public=False)]),
    FunctionItem(
        name="comm_overhead_ratio", points=1,
        examples=[Example(f"Act I: {name}", {"comm_s": ACT1_COMM_S[name], "compute_s": COMPUTE_S})
                  for name in (NVLINK, PCIE)]
                 + [Example(f"Act II: {STORY_NODES} nodes, {STORY_LINKS} link each",
                            {"comm_s": STORY_COMM_S, "compute_s": COMPUTE_S})],
        domain=st.fixed_dictionaries({"comm_s": st.one_of(decades(-6, 4), st.floats(0.0, 100.0)), "compute_s": decades(-4, 4)}),
        properties=_public("comm_overhead_ratio")),
    FunctionItem(
        name="speedup", points=1,
        examples=[Example("Act I: PCIe step time over NVLink step time",
                          {"t_1": ACT1_STEP_S[PCIE], "t_n": ACT1_STEP_S[NVLINK]}),
                  Example(f"Act II: {STORY_NODES} one-node steps vs one {STORY_NODES}-node step",
                          {"t_1": STORY_NODES * (COMPUTE_S + act2_comm_s(1, STORY_LINKS)),
                           "t_n": COMPUTE_S + STORY_COMM_S})],
        domain=st.fixed_dictionaries({"t_1": decades(-4, 5), "t_n": st.one_of(decades(-4, 5), st.floats(0.5, 100.0))}),
        properties=_public("speedup")),
    FunctionItem(
        name="scaling_efficiency", points=1,
        examples=[Example(f"Act II: {STORY_NODES} nodes, {STORY_LINKS} link each",
                          {"speedup": STORY_SPEEDUP, "n": STORY_NODES}),
                  Example(f"Act II: {MAX_NODES} nodes, {LINKS_AT_MAX} links each",
                          {"speedup": act2_speedup(MAX_NODES, LINKS_AT_MAX), "n": MAX_NODES})],
        domain=st.fixed_dictionaries({"speedup": decades(-3, 4), "n": st.one_of(st.integers(1, 64), st.integers(1, 100_000))}),
        properties=_public("scaling_efficiency")),
    FunctionItem(
        name="min_ib_links", points=3,
        examples=[Example(f"Act II: {STORY_NODES} nodes, ratio <= {DANGER_RATIO:g}", _design(STORY_NODES)),
                  Example(f"Act II: {MAX_NODES} nodes, ratio <= {DANGER_RATIO:g}", _design(MAX_NODES)),
                  Example(f"Act II: {STORY_NODES} nodes, ratio <= {TIGHT_RATIO:g} (NVLink alone is too slow: 0)",
                          _design(STORY_NODES, TIGHT_RATIO))],
        domain=_LINK_DOMAIN,
        properties=[*_public("min_ib_links"),
                    Property(name="the fewest links that meet the target",
                             meaning="The returned count keeps the overhead ratio at or under the target and one link fewer does not (0: not even max_links does).",
                             strategy=_LINK_DOMAIN, check=_links_meet_target, public=False)]),
)
assert ref.min_ib_links(**_design(STORY_NODES, TIGHT_RATIO)) == 0
