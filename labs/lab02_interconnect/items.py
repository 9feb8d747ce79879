"""Lab 02 graded items: worked examples at the scenario's inputs, hidden domains and hidden properties.

Expected values are never typed: the engine computes them from reference/ at grading time.
"""
from __future__ import annotations

import math
from functools import partial

from hypothesis import strategies as st

from autograder.engine.spec import Example, FunctionItem, Property
from labs.authoring import fmt_bytes, public_properties
from labs.lab02_interconnect import properties as public
from labs.lab02_interconnect.scenario import (ACT1_COMM_S, ACT1_LINKS, ACT1_STEP_S, ALPHA_S, COMPUTE_S, DANGER_RATIO,
                                              FP16_BYTES, FP32_BYTES, GPUS, HDR_GBIT, LINK_BW, LINKS_AT_MAX,
                                              MAX_LINKS, MAX_NODES, MESSAGE_BYTES, NDR_GBIT, NVLINK, NVLINK_BW,
                                              PARAMS, PCIE, PCIE_BW, SMALL_MESSAGE_BYTES, STORY_COMM_S,
                                              STORY_LINKS, STORY_NODES, STORY_SPEEDUP, TIGHT_RATIO, act2_comm_s,
                                              act2_speedup)
from reference import interconnect as ref

_f = public._f  # floats without subnormals


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


_LINK_DOMAIN = st.fixed_dictionaries({
    "message_bytes": _f(1e9, 4e11), "gpus_per_node": st.integers(1, 8), "nodes": st.integers(1, 64),
    "intra_bandwidth": _f(1e11, 1e12), "link_bandwidth": _f(1e10, 1e11), "compute_s": _f(0.1, 20.0),
    "max_overhead_ratio": _f(0.25, 2.0), "max_links": st.integers(1, 8),
})
_HIER_DOMAIN = st.fixed_dictionaries({
    "message_bytes": _f(1e6, 1e12), "gpus_per_node": st.integers(1, 8), "nodes": st.integers(1, 64),
    "intra_bandwidth": _f(1e10, 1e12), "inter_bandwidth_per_node": _f(1e10, 1e12),
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
        domain=st.fixed_dictionaries({"gbit_per_s": _f(0.1, 3200.0)}),
        properties=_public("gbit_to_bytes_per_s")),
    FunctionItem(
        name="gradient_bytes", points=1,
        examples=[Example(f"the {PARAMS / 1e9:g}B model in FP16", {"params": PARAMS, "bytes_per_value": FP16_BYTES}),
                  Example(f"the {PARAMS / 1e9:g}B model in FP32", {"params": PARAMS, "bytes_per_value": FP32_BYTES})],
        domain=st.fixed_dictionaries({"params": _f(0.0, 2e12), "bytes_per_value": st.sampled_from([1, 2, 4])
                                      | _f(0.5, 8.0)}),
        properties=_public("gradient_bytes")),
    FunctionItem(
        name="transfer_time", points=1.5,
        examples=[Example("the FP16 gradient over one PCIe Gen4 x16 link",
                          {"num_bytes": MESSAGE_BYTES, "bandwidth": PCIE_BW, "latency_s": 0.0}),
                  Example(f"one {SMALL_MESSAGE_BYTES / 1e6:g} MB message over NDR InfiniBand with its latency",
                          {"num_bytes": SMALL_MESSAGE_BYTES, "bandwidth": LINK_BW, "latency_s": ALPHA_S})],
        domain=st.fixed_dictionaries({"num_bytes": _f(0.0, 1e12), "bandwidth": _f(1e9, 1e12),
                                      "latency_s": _f(0.0, 1e-4)}),
        properties=_public("transfer_time")),
    FunctionItem(
        name="intra_node_allreduce_time", points=2.5,
        examples=[Example(f"Act I: {fmt_bytes(MESSAGE_BYTES)} over {GPUS} GPUs, {name}", _act1(name)) for name in ACT1_LINKS],
        domain=st.fixed_dictionaries({"message_bytes": _f(0.0, 1e12), "gpus": st.integers(1, 16),
                                      "bandwidth": _f(1e9, 1e12)}),
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
                             strategy=_HIER_DOMAIN.filter(lambda d: d["nodes"] >= 2), check=_inter_inverse_in_bandwidth,
                             public=False)]),
    FunctionItem(
        name="comm_overhead_ratio", points=1,
        examples=[Example(f"Act I: {name}", {"comm_s": ACT1_COMM_S[name], "compute_s": COMPUTE_S})
                  for name in (NVLINK, PCIE)]
                 + [Example(f"Act II: {STORY_NODES} nodes, {STORY_LINKS} link each",
                            {"comm_s": STORY_COMM_S, "compute_s": COMPUTE_S})],
        domain=st.fixed_dictionaries({"comm_s": _f(0.0, 1e3), "compute_s": _f(1e-3, 1e3)}),
        properties=_public("comm_overhead_ratio")),
    FunctionItem(
        name="speedup", points=1,
        examples=[Example("Act I: PCIe step time over NVLink step time",
                          {"t_1": ACT1_STEP_S[PCIE], "t_n": ACT1_STEP_S[NVLINK]}),
                  Example(f"Act II: {STORY_NODES} one-node steps vs one {STORY_NODES}-node step",
                          {"t_1": STORY_NODES * (COMPUTE_S + act2_comm_s(1, STORY_LINKS)),
                           "t_n": COMPUTE_S + STORY_COMM_S})],
        domain=st.fixed_dictionaries({"t_1": _f(1e-3, 1e4), "t_n": _f(1e-3, 1e4)}),
        properties=_public("speedup")),
    FunctionItem(
        name="scaling_efficiency", points=1,
        examples=[Example(f"Act II: {STORY_NODES} nodes, {STORY_LINKS} link each",
                          {"speedup": STORY_SPEEDUP, "n": STORY_NODES}),
                  Example(f"Act II: {MAX_NODES} nodes, {LINKS_AT_MAX} links each",
                          {"speedup": act2_speedup(MAX_NODES, LINKS_AT_MAX), "n": MAX_NODES})],
        domain=st.fixed_dictionaries({"speedup": _f(0.01, 1024.0), "n": st.integers(1, 1024)}),
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
