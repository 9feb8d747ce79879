"""Lab 02 — the interconnect wall: the declaration (staff only: keys and hidden domains).

Source lab: `source_lab` below (Vol II Lab 02, The Interconnect Wall); every departure from it is in docs/errata/lab02_interconnect.md.
Every number a student sees is computed here from reference/ (or is a cited constant or a stated
scenario input below); no key letter is typed: keys come from `letters(...)` over computed indices.
"""
from __future__ import annotations

import math
from functools import partial

from hypothesis import strategies as st

from reference import constants as C
from reference import interconnect as ref
from reference.collectives import comm_fraction, compute_time, ring_allreduce_time, ring_bytes_per_rank, \
    training_step_flops

from autograder.engine.spec import Answer, Assignment, Code, Example, FunctionGrades, FunctionItem, Markdown, Property, \
    Question, letters
from labs.authoring import public_properties, range_key
from labs.lab02_interconnect import properties as public
from labs.lab02_interconnect.properties import PROPERTIES
from labs.lab02_interconnect.misconceptions import MISCONCEPTIONS

# --- Scenario inputs (the lab's stories; each stated in the notebook) ---------------------------
PARAMS = 70e9                    # the stories' 70B model
GPUS = C.GPUS_PER_DGX_H100       # 8 GPUs: one DGX H100, or 8 PCIe servers
TOKENS_PER_GPU_STEP = 2048       # one 2048-token sequence per GPU per step (the lab's math-peek seq_len);
                                 # the lab's K_COMP implied 139-token samples at sparse TFLOPS (errata)
MFU = 0.45                       # the lab's model-FLOP utilisation
PCIE_DISCOUNT = 0.40             # the architect's "40% cheaper" (a stakeholder's statement)
BUDGET_MONTHS = 6                # the lead's schedule (a stakeholder's statement)
NDR_GBIT = 400                   # an InfiniBand NDR port's rating, Gb/s
HDR_GBIT = 200                   # an InfiniBand HDR port's rating, Gb/s (a worked example)
FP32_BYTES = 4                   # a worked example: the gradient in FP32
SMALL_MESSAGE_BYTES = 1e6        # a worked example: one 1 MB message, where latency shows
TIGHT_RATIO = 0.25               # a worked example: a target NVLink alone cannot meet
STORY_NODES = 16                 # Act II: 1 -> 16 DGX nodes
MAX_NODES = 64                   # the lab's node slider range 1..64
STORY_LINKS = 1                  # the lab's default: one IB link per node
LINK_CHOICES = (1, 2, 4, 8)      # link counts plotted (the lab's slider is 1..8)
MAX_LINKS = C.IB_NICS_PER_DGX_H100
DESIGN_NODES = (2, STORY_NODES, MAX_NODES)   # node counts the design readout prints
DANGER_RATIO = 1.0               # communication longer than compute

# --- Act I: one 8-GPU ring over three interconnects ------------------------------------------
MESSAGE_BYTES = ref.gradient_bytes(PARAMS, C.FP16_BYTES)
STEP_FLOP = training_step_flops(PARAMS, TOKENS_PER_GPU_STEP)
COMPUTE_S = compute_time(STEP_FLOP, 1, C.H100_PEAK_FLOPS_BF16, MFU)
LINK_BW = ref.gbit_to_bytes_per_s(NDR_GBIT)
assert math.isclose(LINK_BW, C.IB_NDR400_BANDWIDTH)
assert math.isclose(ref.gbit_to_bytes_per_s(HDR_GBIT), C.IB_HDR200_BANDWIDTH)
FLOPS_PER_PARAM_TOKEN = training_step_flops(1, 1)      # the 6 of 6 x params x tokens

NVLINK, IB, PCIE = "NVLink 4 (one DGX H100)", "InfiniBand NDR (1 port per GPU)", f"PCIe Gen4 x16 ({GPUS} servers)"
ACT1_LINKS = {NVLINK: C.NVLINK4_BANDWIDTH, IB: LINK_BW, PCIE: C.PCIE_GEN4_X16_BANDWIDTH}
ACT1_COMM_S = {name: ref.intra_node_allreduce_time(MESSAGE_BYTES, GPUS, bw) for name, bw in ACT1_LINKS.items()}
ACT1_RATIO = {name: ref.comm_overhead_ratio(c, COMPUTE_S) for name, c in ACT1_COMM_S.items()}
ACT1_STEP_S = {name: COMPUTE_S + c for name, c in ACT1_COMM_S.items()}
ACT1_EFFICIENCY = {name: 1 - comm_fraction(c, COMPUTE_S) for name, c in ACT1_COMM_S.items()}
PCIE_SLOWDOWN = ref.speedup(ACT1_STEP_S[PCIE], ACT1_STEP_S[NVLINK])       # the throughput ratio
CLIFF = ref.transfer_time(MESSAGE_BYTES, C.PCIE_GEN4_X16_BANDWIDTH) / ref.transfer_time(MESSAGE_BYTES, C.NVLINK4_BANDWIDTH)
BYTES_SENT_PER_GPU = ring_bytes_per_rank(MESSAGE_BYTES, GPUS)
RING_FACTOR = BYTES_SENT_PER_GPU / MESSAGE_BYTES
RING_FACTOR_LIMIT = round(ring_bytes_per_rank(1.0, 10**9))   # 2(n-1)/n as the ring grows: 2


# --- Act II: hierarchical AllReduce over 1..64 DGX nodes --------------------------------------
def act2_comm_s(nodes: int, links: int) -> float:
    return ref.hierarchical_allreduce_time(MESSAGE_BYTES, GPUS, nodes, C.NVLINK4_BANDWIDTH, links * LINK_BW)


def act2_speedup(nodes: int, links: int) -> float:
    """Throughput speedup over one node: the work of `nodes` one-node steps, done in one step."""
    return ref.speedup(nodes * (COMPUTE_S + act2_comm_s(1, links)), COMPUTE_S + act2_comm_s(nodes, links))


STORY_COMM_S = act2_comm_s(STORY_NODES, STORY_LINKS)
STORY_INTER_S = STORY_COMM_S - act2_comm_s(1, STORY_LINKS)
STORY_RATIO = ref.comm_overhead_ratio(STORY_COMM_S, COMPUTE_S)
STORY_SPEEDUP = act2_speedup(STORY_NODES, STORY_LINKS)
STORY_EFFICIENCY = ref.scaling_efficiency(STORY_SPEEDUP, STORY_NODES)
SHORTFALL = 1 / STORY_EFFICIENCY
STORY_LATENCY_S = ring_allreduce_time(0.0, STORY_NODES, C.IB_ALPHA_S, LINK_BW)  # 2(k-1) messages' alpha


def links_needed(nodes: int, max_ratio: float = DANGER_RATIO) -> int:
    return ref.min_ib_links(MESSAGE_BYTES, GPUS, nodes, C.NVLINK4_BANDWIDTH, LINK_BW, COMPUTE_S,
                            max_ratio, MAX_LINKS)


LINKS_AT_MAX = links_needed(MAX_NODES)
assert STORY_RATIO > DANGER_RATIO, "the Act II story is the danger state"


# --- Small helpers ------------------------------------------------------------------------------
def _gb(x: float) -> str:
    return f"{x / 1e9:g} GB"


def _gbs(x: float) -> str:
    return f"{x / 1e9:g} GB/s"


_f = public._f  # floats without subnormals


# --- Questions ----------------------------------------------------------------------------------
_Q1_RANGES = [(1.0, 1.5), (1.5, 3.0), (3.0, 5.0), (math.inf, math.inf)]  # the lab's option buckets
_r = _Q1_RANGES
_q1_options, _q1_key = letters([
    f"Barely any difference (under {_r[0][1]:g}×) — gradient compression will fix the bandwidth gap",
    f"Noticeably slower ({_r[1][0]:g}× to {_r[1][1]:g}×) — PCIe is slower but still practical for production",
    f"Several times slower ({_r[2][0]:g}× to {_r[2][1]:g}×) — PCIe communication overhead dominates training",
    "PCIe makes training impossible — infinite overhead, it cannot converge",
], range_key(PCIE_SLOWDOWN, _Q1_RANGES), offset=0)

_q2_options, _q2_key = letters([
    "You send weights forward and gradients backward — two passes across the network",
    f"Reduce-scatter sends (n−1)/n of the gradient and all-gather sends it again: 2(n−1)/n, "
    f"{RING_FACTOR:g}× at n = {GPUS}, approaching {RING_FACTOR_LIMIT}× as the ring grows",
    f"FP16 precision requires {RING_FACTOR_LIMIT}× more data than FP32 for the same gradient accuracy",
    "Gradient accumulation over multiple micro-batches doubles the sync volume",
], 1, offset=2)  # conceptual reflection: index 1 (the ring's two phases) is the documented choice

# Act II prediction: the key is the suspect with the most modelled seconds per step. The model has no
# framework overhead and an ideal non-blocking fabric (0 s each); the latency of the inter-node ring
# and its bandwidth term (hierarchical_allreduce_time is latency-free) come from the reference.
_Q3_SECONDS = [0.0, STORY_LATENCY_S, STORY_INTER_S, 0.0]
_q3_options, _q3_key = letters([
    "Software bugs — distributed PyTorch has framework overhead that scales badly with node count",
    f"InfiniBand latency — each message adds about {C.IB_ALPHA_S * 1e6:g} µs, compounding at "
    f"{STORY_NODES * GPUS} GPUs",
    "The node boundary creates a bandwidth cliff — inter-node AllReduce is bottlenecked by InfiniBand",
    f"{STORY_NODES * GPUS} GPUs exceed the fat-tree topology's bisection bandwidth capacity",
], max(range(len(_Q3_SECONDS)), key=_Q3_SECONDS.__getitem__), offset=1)

_Q4_COUNTS = [2, 4, MAX_LINKS, 0]      # 0: min_ib_links' "none suffices"
_c = _Q4_COUNTS
_q4_options, _q4_key = letters([
    f"{_c[0]} links per node ({_gbs(_c[0] * LINK_BW)}): doubling the bandwidth is enough",
    f"{_c[1]} links per node ({_gbs(_c[1] * LINK_BW)})",
    f"{_c[2]} links per node ({_gbs(_c[2] * LINK_BW)}): every GPU needs its own port",
    f"No count up to {MAX_LINKS}: the inter-node traffic grows with the number of nodes, so links never catch up",
], _Q4_COUNTS.index(LINKS_AT_MAX), offset=3)  # reads "none", 2, 4, 8

QUESTIONS = [
    Question(
        id="act1_prediction", kind="prediction", points=1.25,
        prompt=(f"**Commit to your prediction before running the instruments.** Training the "
                f"{PARAMS / 1e9:g}B model on {GPUS} H100s (compute {COMPUTE_S:.2f} s per step), how many "
                f"times lower is the training throughput on the {GPUS} PCIe servers than on one NVLink "
                f"DGX H100 node? (Nothing overlaps: a step is compute, then the AllReduce.)"),
        options=_q1_options, key=_q1_key,
        hint=(f"Throughput is set by the whole step, compute plus AllReduce, not by the AllReduce alone: "
              f"the {CLIFF:.1f}× bandwidth cliff is diluted by the {COMPUTE_S:.2f} s of compute both "
              f"systems share. Compare the two step times with speedup(t_pcie, t_nvlink).")),
    Question(
        id="act1_reflection", kind="reflection", points=1.25,
        prompt=(f"**Reflection.** In the {GPUS}-GPU ring each GPU sends {_gb(BYTES_SENT_PER_GPU)} per "
                f"synchronisation for a {_gb(MESSAGE_BYTES)} gradient: {RING_FACTOR:g}× the gradient "
                f"(the original lab said \"exactly {RING_FACTOR_LIMIT}×\"). Where does this factor come from?"),
        options=_q2_options, key=_q2_key,
        hint=("Follow one GPU through the ring: the buffer is cut into n shards; in each phase the GPU "
              "passes on n−1 of them, one per step. Only gradients travel, and their byte count per "
              "value is already in the message size.")),
    Question(
        id="act2_prediction", kind="prediction", points=1.25,
        prompt=(f"**Commit to your prediction.** The team observed only {STORY_SPEEDUP:.1f}× throughput "
                f"on {STORY_NODES * GPUS} GPUs ({STORY_NODES} nodes) versus {GPUS} GPUs (1 node). The "
                f"expectation was {STORY_NODES}×. What is the primary cause of this {SHORTFALL:.1f}× "
                f"shortfall?"),
        options=_q3_options, key=_q3_key,
        hint=(f"Put a number on each suspect. Across {STORY_NODES} nodes a ring AllReduce sends "
              f"2(k−1) = {STORY_LATENCY_S / C.IB_ALPHA_S:.0f} messages, {STORY_LATENCY_S * 1e6:.0f} µs of latency in all; "
              f"the same AllReduce moves the {_gb(MESSAGE_BYTES)} gradient through each node's "
              f"{_gbs(STORY_LINKS * LINK_BW)} of InfiniBand, {STORY_INTER_S:.2f} s. The analysis models "
              f"an ideal non-blocking fabric and no framework overhead, and still falls short.")),
    Question(
        id="act2_reflection", kind="reflection", points=1.25,
        prompt=(f"**Design.** The lead will grow to {MAX_NODES} nodes and can fit up to {MAX_LINKS} NDR "
                f"links per node (a DGX H100 has one {NDR_GBIT} Gb/s port per GPU). What is the fewest "
                f"links per node that keeps the cluster out of the danger state (communication at most "
                f"compute, comm_overhead_ratio ≤ {DANGER_RATIO:g}) at {MAX_NODES} nodes?"),
        options=_q4_options, key=_q4_key,
        hint=("Each node's links carry 2(k−1)/k × M per synchronisation, k the number of nodes: the "
              f"factor stays below {RING_FACTOR_LIMIT} however many nodes join. Compute must cover the NVLink stages plus "
              f"that inter-node term at links × {_gbs(LINK_BW)} per node; min_ib_links searches the "
              "counts for you.")),
]
assert len({q.key for q in QUESTIONS}) > 1, "the keys must not all be one letter"
# The notebook builder shows `e.g. <qid> = "A"` under every prompt; the leak scan counts that as a key
# when a key is A, so the offsets keep A free of keys.
assert "A" not in {q.key for q in QUESTIONS}


# --- Function items -----------------------------------------------------------------------------
_public = partial(public_properties, PROPERTIES)


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
    """Hidden: the inter-node term halves when the node's InfiniBand bandwidth doubles."""
    base = dict(d, nodes=1)
    term = lambda bw: f(**dict(d, inter_bandwidth_per_node=bw)) - f(**dict(base, inter_bandwidth_per_node=bw))
    one, two = term(d["inter_bandwidth_per_node"]), term(2 * d["inter_bandwidth_per_node"])
    assert math.isclose(one, 2 * two, rel_tol=1e-6, abs_tol=1e-12), \
        f"inter-node term {one} s at B, {two} s at 2B"


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
                                  intra_bandwidth=C.NVLINK4_BANDWIDTH, inter_bandwidth_per_node=links * LINK_BW)
_design = lambda nodes, ratio=DANGER_RATIO: dict(
    message_bytes=MESSAGE_BYTES, gpus_per_node=GPUS, nodes=nodes, intra_bandwidth=C.NVLINK4_BANDWIDTH,
    link_bandwidth=LINK_BW, compute_s=COMPUTE_S, max_overhead_ratio=ratio, max_links=MAX_LINKS)

FUNCTIONS = [
    FunctionItem(
        name="gbit_to_bytes_per_s", points=1,
        examples=[Example(f"an InfiniBand NDR port, {NDR_GBIT} Gb/s", {"gbit_per_s": NDR_GBIT}),
                  Example(f"an InfiniBand HDR port, {HDR_GBIT} Gb/s", {"gbit_per_s": HDR_GBIT})],
        domain=st.fixed_dictionaries({"gbit_per_s": _f(0.1, 3200.0)}),
        properties=_public("gbit_to_bytes_per_s")),
    FunctionItem(
        name="gradient_bytes", points=1,
        examples=[Example(f"the {PARAMS / 1e9:g}B model in FP16", {"params": PARAMS, "bytes_per_value": C.FP16_BYTES}),
                  Example(f"the {PARAMS / 1e9:g}B model in FP32", {"params": PARAMS, "bytes_per_value": FP32_BYTES})],
        domain=st.fixed_dictionaries({"params": _f(0.0, 2e12), "bytes_per_value": st.sampled_from([1, 2, 4])
                                      | _f(0.5, 8.0)}),
        properties=_public("gradient_bytes")),
    FunctionItem(
        name="transfer_time", points=1.5,
        examples=[Example("the FP16 gradient over one PCIe Gen4 x16 link",
                          {"num_bytes": MESSAGE_BYTES, "bandwidth": C.PCIE_GEN4_X16_BANDWIDTH, "latency_s": 0.0}),
                  Example(f"one {SMALL_MESSAGE_BYTES / 1e6:g} MB message over NDR InfiniBand with its latency",
                          {"num_bytes": SMALL_MESSAGE_BYTES, "bandwidth": LINK_BW, "latency_s": C.IB_ALPHA_S})],
        domain=st.fixed_dictionaries({"num_bytes": _f(0.0, 1e12), "bandwidth": _f(1e9, 1e12),
                                      "latency_s": _f(0.0, 1e-4)}),
        properties=_public("transfer_time")),
    FunctionItem(
        name="intra_node_allreduce_time", points=2.5,
        examples=[Example(f"Act I: {_gb(MESSAGE_BYTES)} over {GPUS} GPUs, {name}", _act1(name)) for name in ACT1_LINKS],
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
                             meaning="Doubling a node's InfiniBand bandwidth halves the time spent crossing nodes.",
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
]
assert ref.min_ib_links(**_design(STORY_NODES, TIGHT_RATIO)) == 0


# --- The notebook -------------------------------------------------------------------------------
_ACT1_STORY = f"""# Lab 02 — The Interconnect Wall

## Act I — The interconnect cliff

**Infrastructure Architect:** *"We need to gradient-sync a {PARAMS / 1e9:g}B model ({_gb(MESSAGE_BYTES)} FP16) across
{GPUS} GPUs. We have two options: a single NVLink DGX H100 node, or {GPUS} separate PCIe servers. The PCIe
option is {PCIE_DISCOUNT:.0%} cheaper. My manager is asking whether the bandwidth difference actually matters
in practice. Can you model this out before we sign the purchase order?"*

Every bandwidth here is **per direction**, the rate a ring AllReduce runs at:

| link | per GPU, per direction |
|---|---|
| NVLink 4 inside a DGX H100 ("{_gbs(2 * C.NVLINK4_BANDWIDTH)}" is both directions added) | {_gbs(C.NVLINK4_BANDWIDTH)} |
| InfiniBand NDR port, {NDR_GBIT} Gb/s = {NDR_GBIT} × 1e9 / 8 bytes/s (not "{NDR_GBIT} GB/s") | {_gbs(LINK_BW)} |
| PCIe Gen4 x16 slot: every byte a PCIe server's GPU sends crosses it, even on the way to a network card | {_gbs(C.PCIE_GEN4_X16_BANDWIDTH)} |

NVLink to PCIe is a {CLIFF:.1f}× cliff. Each step every GPU computes on one {TOKENS_PER_GPU_STEP}-token sequence,
{FLOPS_PER_PARAM_TOKEN:g} × params × tokens = {STEP_FLOP:.3g} FLOP at {C.H100_PEAK_FLOPS_BF16 / 1e12:g} TFLOP/s (dense BF16) and {MFU:.0%} MFU:
**{COMPUTE_S:.2f} s of compute**. Then the {GPUS} GPUs AllReduce the {_gb(MESSAGE_BYTES)} gradient in a ring
(reduce-scatter, then all-gather), and nothing overlaps.

Implement `gradient_bytes`, `gbit_to_bytes_per_s`, `transfer_time`, `intra_node_allreduce_time` and
`comm_overhead_ratio` in `interconnect.py` (run `pytest` in this folder to check them), then predict.
"""

_ACT1_INSTRUMENT = f"""\
# Instrument: one training step per interconnect, computed with YOUR functions.
message_bytes = interconnect.gradient_bytes({PARAMS!r}, {C.FP16_BYTES!r})
compute_s = {COMPUTE_S!r}  # {FLOPS_PER_PARAM_TOKEN:g} * params * tokens / (peak * MFU), stated above
links = {ACT1_LINKS!r}
names = list(links)
comm_s = [interconnect.intra_node_allreduce_time(message_bytes, {GPUS}, bw) for bw in links.values()]
fig, ax = plt.subplots(figsize=(8, 3.8))
ax.bar(names, [compute_s] * len(names), label="compute")
ax.bar(names, comm_s, bottom=[compute_s] * len(names), label="AllReduce (communication)")
ax.set_xticks(range(len(names)), [n.replace(" (", "\\n(") for n in names])
ax.set_ylabel("seconds per training step")
ax.set_title("Act I: the same {GPUS} GPUs, three interconnects")
ax.legend()
plt.show()
for name, c in zip(names, comm_s):
    ratio = interconnect.comm_overhead_ratio(c, compute_s)
    flag = "   <- communication exceeds compute" if ratio > {DANGER_RATIO!r} else ""
    print(f"{{name:34s}} AllReduce {{c:6.3f}} s   comm/compute {{ratio:5.2f}}{{flag}}")
"""

_ACT1_REALITY = f"""\
# Prediction vs reality (your functions; run the instrument cell first).
step_s = {{name: compute_s + c for name, c in zip(names, comm_s)}}
slowdown = interconnect.speedup(step_s[{PCIE!r}], step_s[{NVLINK!r}])
for name in names:
    share = compute_s / step_s[name]
    print(f"{{name:34s}} step {{step_s[name]:6.3f}} s, computing {{share:.0%}} of the time")
print(f"Your functions: the PCIe servers train {{slowdown:.2f}}x slower than the NVLink node.")
print(f"You predicted act1_prediction = {{act1_prediction!r}}; check which option's range holds {{slowdown:.2f}}x.")
"""

_ACT2_STORY = f"""## Act II — The multi-node scaling wall

**ML Infrastructure Lead:** *"We're scaling from 1 DGX H100 node ({GPUS} GPUs, NVLink) to {STORY_NODES} nodes
({STORY_NODES * GPUS} GPUs, InfiniBand, {STORY_LINKS} NDR link per node). We expected {STORY_NODES}× more throughput — we
budgeted {BUDGET_MONTHS} months to hit this target. First week of benchmarking shows we're only getting {STORY_SPEEDUP:.1f}× throughput
on {STORY_NODES * GPUS} GPUs versus 1 DGX node. The engineering team is pointing at software bugs in distributed
PyTorch. But I'm not convinced. What is actually happening?"*

Each node keeps its {TOKENS_PER_GPU_STEP}-token sequence per GPU ({COMPUTE_S:.2f} s of compute), so {STORY_NODES} nodes do
{STORY_NODES}× the work per step. The gradient is reduced **hierarchically**: a reduce-scatter over NVLink inside each
node, an AllReduce of each GPU's 1/{GPUS} shard across the nodes over InfiniBand (each node's links carry
2(k−1)/k of the gradient, k nodes), and an all-gather over NVLink. A single node has no inter-node stage.
When communication takes longer than compute (`comm_overhead_ratio` > {DANGER_RATIO:g}) the cluster is in the
**danger state**: it spends more time waiting on the network than training.

Implement `hierarchical_allreduce_time`, `speedup`, `scaling_efficiency` and `min_ib_links`, then predict.
"""

_ACT2_INSTRUMENT = f"""\
# Instrument: scaling from 1 to {MAX_NODES} nodes, computed with YOUR functions.
message_bytes = interconnect.gradient_bytes({PARAMS!r}, {C.FP16_BYTES!r})
compute_s = {COMPUTE_S!r}
nvlink, link = {C.NVLINK4_BANDWIDTH!r}, {LINK_BW!r}  # bytes/s per direction: per GPU / per NDR link
nodes = np.arange(1, {MAX_NODES + 1})
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
top = 0.0
ax1.plot(nodes, nodes, "k--", label="ideal")
for links in {LINK_CHOICES!r}:
    def step(k):
        return compute_s + interconnect.hierarchical_allreduce_time(message_bytes, {GPUS}, int(k), nvlink, links * link)
    speedups = [interconnect.speedup(k * step(1), step(k)) for k in nodes]
    ratios = [interconnect.comm_overhead_ratio(step(k) - compute_s, compute_s) for k in nodes]
    ax1.plot(nodes, speedups, label=f"{{links}} NDR link(s) per node")
    ax2.plot(nodes, ratios, label=f"{{links}} link(s)")
    top = max(top, max(ratios))
ax2.axhline({DANGER_RATIO!r}, color="red", linestyle=":", label="danger: comm > compute")
ax1.set_xlabel("nodes ({GPUS} GPUs each)"); ax1.set_ylabel("throughput speedup over 1 node"); ax1.legend()
ax2.set_ylim(0, 1.6 * top)  # room for the legend above the curves
ax2.set_xlabel("nodes"); ax2.set_ylabel("comm / compute"); ax2.legend(loc="upper right", ncol=2)
plt.show()
"""

_ACT2_REALITY = f"""\
# Prediction vs reality at the story's {STORY_NODES} nodes, {STORY_LINKS} link each (your functions).
nodes_story, links_story = {STORY_NODES}, {STORY_LINKS}
one_node_s = compute_s + interconnect.hierarchical_allreduce_time(message_bytes, {GPUS}, 1, nvlink, links_story * link)
comm_story = interconnect.hierarchical_allreduce_time(message_bytes, {GPUS}, nodes_story, nvlink, links_story * link)
gain = interconnect.speedup(nodes_story * one_node_s, compute_s + comm_story)
ratio = interconnect.comm_overhead_ratio(comm_story, compute_s)
print(f"speedup {{gain:.2f}}x of an ideal {{nodes_story}}x, efficiency {{interconnect.scaling_efficiency(gain, nodes_story):.0%}}")
print(f"AllReduce {{comm_story:.2f}} s vs compute {{compute_s:.2f}} s: comm/compute {{ratio:.2f}}"
      + ("  -> DANGER: communication exceeds compute" if ratio > {DANGER_RATIO!r} else ""))
print(f"You predicted act2_prediction = {{act2_prediction!r}}.")
"""

_DESIGN = f"""\
# Design: the fewest NDR links per node that keep comm/compute <= {DANGER_RATIO:g} (your min_ib_links).
for k in {DESIGN_NODES!r}:
    need = interconnect.min_ib_links(message_bytes, {GPUS}, k, nvlink, link, compute_s, {DANGER_RATIO!r}, {MAX_LINKS})
    print(f"{{k:3d}} nodes: " + (f"{{need}} link(s) per node" if need else "no count up to {MAX_LINKS} suffices"))
print(f"You answered act2_reflection = {{act2_reflection!r}}.")
"""

NOTEBOOK = [
    Markdown(_ACT1_STORY),
    Answer("act1_prediction"),
    Code(_ACT1_INSTRUMENT, requires=("act1_prediction",)),
    Code(_ACT1_REALITY, requires=("act1_prediction",)),
    Markdown("Every GPU in the ring sends the same number of bytes whatever the interconnect; "
             "only how long they take changes. Now look at how many bytes that is."),
    Answer("act1_reflection"),
    Markdown(_ACT2_STORY),
    Answer("act2_prediction"),
    Code(_ACT2_INSTRUMENT, requires=("act2_prediction",)),
    Code(_ACT2_REALITY, requires=("act2_prediction",)),
    Answer("act2_reflection"),
    Code(_DESIGN, requires=("act2_reflection",)),
    Markdown("## Your functions\n\nEach function below is graded on the worked examples, hidden inputs "
             "compared with the reference, and the named properties (run `pytest` here to see the public ones)."),
    FunctionGrades(),
]

from labs.lab02_interconnect.challenges import CHALLENGES  # noqa: E402 (it reads the scenario above)

ASSIGNMENT = Assignment(
    id="lab02_interconnect",
    title="Lab 02 — The Interconnect Wall",
    module="interconnect",
    reference=ref,
    functions=FUNCTIONS,
    questions=QUESTIONS,
    notebook=NOTEBOOK,
    source_lab=("Vol II Lab 02, The Interconnect Wall: "
                "labs/vol2/lab_02_compute_infra.py of https://github.com/harvard-edge/cs249r_book"),
    misconceptions=MISCONCEPTIONS,
    challenges=CHALLENGES,
)
