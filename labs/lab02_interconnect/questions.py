"""Lab 02 questions: options (each with why it is right or wrong) formatted from scenario values and
computed keys; each question's prompt and hint are in questions.md beside this file. Offsets keep the
keys apart and none on "A" (the notebook's answer prompt shows `<qid> = "A"` as its format example).
"""
from __future__ import annotations

import math

from labs.authoring import Option, fmt_bytes, fmt_seconds, letters, questions, range_key
from labs.lab02_interconnect import scenario
from labs.lab02_interconnect.measurements import MEASUREMENTS
from labs.lab02_interconnect.scenario import (ACT1_COMM_S, ALPHA_S, CLIFF, COMPUTE_S, DANGER_RATIO, FP16_BYTES,
                                              DESIGN_LINK_BW, DESIGN_NIC_EFFICIENCY, LINKS_AT_LINE_RATE, RATIO_AT_MAX,
                                              RATIO_ONE_FEWER, RATIO_ONE_FEWER_LINE_RATE,
                                              GPUS, LINK_BW, LINKS_AT_MAX, MAX_LINKS, MAX_NODES, NVLINK, PCIE,
                                              PCIE_SLOWDOWN, RING_FACTOR, RING_FACTOR_LIMIT, STORY_INTER_S,
                                              STORY_LATENCY_S, STORY_LINKS, STORY_NODES, STORY_RATIO,
                                              links_needed)


def _gbs(bandwidth: float) -> str:
    return f"{fmt_bytes(bandwidth)}/s"


# --- Act I prediction: the throughput cost of PCIe -------------------------------------------------------
ACT1_RANGES = ((1.0, 1.5), (1.5, 3.0), (3.0, 5.0), (math.inf, math.inf))   # the lab's option buckets
_r = ACT1_RANGES
_diluted = (f"the {CLIFF:.1f}× bandwidth cliff is diluted by the {fmt_seconds(COMPUTE_S)} of compute both systems share: "
            f"step times differ {PCIE_SLOWDOWN:.2f}×")
_act1 = letters([
    Option(f"Barely any difference (under {_r[0][1]:g}×): gradient compression will fix the gap",
           f"The PCIe AllReduce alone takes {fmt_seconds(ACT1_COMM_S[PCIE])}, longer than the {fmt_seconds(COMPUTE_S)} of "
           "compute; compression would have to remove most of it, and none is modelled."),
    Option(f"Noticeably slower ({_r[1][0]:g}× to {_r[1][1]:g}×): slower, but practical for production",
           f"Too optimistic: {_diluted}."),
    Option(f"Several times slower ({_r[2][0]:g}× to {_r[2][1]:g}×): PCIe communication dominates the step",
           f"Right: {_diluted}."),
    Option("Training becomes impossible: infinite overhead, it cannot converge",
           "The step only gets longer; training still converges, step by slower step."),
], range_key(PCIE_SLOWDOWN, ACT1_RANGES), offset=0)

# --- Act I reflection: where the ring's factor comes from -------------------------------------------------
_act1_refl = letters([
    Option("Weights travel forward and gradients backward: two passes across the network",
           "Only gradients are synchronised; the weights never leave the GPU in data parallelism."),
    Option("Reduce-scatter and all-gather each send (n−1)/n of the gradient",
           f"Right: 2(n−1)/n = {RING_FACTOR:g} at n = {GPUS}, approaching {RING_FACTOR_LIMIT} as the ring grows."),
    Option("FP16 needs twice the bytes of FP32 for the same gradient accuracy",
           f"FP16 is {FP16_BYTES} bytes per value, half of FP32, and that is already in the message size."),
    Option("Gradient accumulation over several micro-batches doubles the sync volume",
           "Accumulated gradients are summed locally; one AllReduce still moves one gradient."),
], 1, offset=2)  # conceptual: index 1 (the ring's two phases) is the documented choice

# --- Act II prediction: the key is the suspect with the most modelled seconds per step -------------------
# The model has no framework overhead and an ideal non-blocking fabric (0 s each); the latency of the
# inter-node ring and its bandwidth term (hierarchical_allreduce_time is latency-free) come from reference/.
_ACT2_SECONDS = (0.0, STORY_LATENCY_S, STORY_INTER_S, 0.0)
_modelled = "The model has none, and the cluster still falls short."
_act2 = letters([
    Option("Software bugs: distributed PyTorch has overhead that scales badly with nodes",
           f"{_modelled} Blaming the framework hides the physics."),
    Option(f"InfiniBand latency: each message adds about {ALPHA_S * 1e6:g} µs, compounding at "
           f"{STORY_NODES * GPUS} GPUs",
           f"{2 * (STORY_NODES - 1)} messages cost {STORY_LATENCY_S * 1e6:.0f} µs per step, "
           f"against {fmt_seconds(STORY_INTER_S)} of inter-node transfer."),
    Option("The node boundary is a bandwidth cliff: the AllReduce waits on InfiniBand",
           f"Right: moving the gradient over {STORY_LINKS} NDR link per node takes {fmt_seconds(STORY_INTER_S)} "
           f"per step, {STORY_RATIO:.1f}× the compute in all."),
    Option(f"{STORY_NODES * GPUS} GPUs exceed the fat-tree topology's bisection bandwidth capacity",
           f"The analysis models an ideal non-blocking fabric. {_modelled}"),
], max(range(len(_ACT2_SECONDS)), key=_ACT2_SECONDS.__getitem__), offset=1)

# --- Act II reflection: the fewest links at the largest cluster, NICs planned below line rate -------------
# The counts: the answer at line rate (the trap), the answer at the planned efficiency (the key), every GPU's
# port, none. 0: min_ib_links' "none suffices".
ACT2_COUNTS = (LINKS_AT_LINE_RATE, LINKS_AT_MAX, MAX_LINKS, 0)
_c = ACT2_COUNTS
_planned = f"{DESIGN_NIC_EFFICIENCY:.0%} of line rate"


def _count_why(links: int) -> str:
    if links == LINKS_AT_MAX:
        return (f"Right: at {_planned} {links} links keep comm/compute at {RATIO_AT_MAX:.2f} at {MAX_NODES} nodes, "
                f"{links - 1} give {RATIO_ONE_FEWER:.2f}.")
    if links == 0:
        return (f"Each node's links carry 2(k−1)/k of the gradient, under {RING_FACTOR_LIMIT}× however many "
                f"nodes join, so a fixed count does catch up: {LINKS_AT_MAX} suffice.")
    if links < LINKS_AT_MAX:
        return (f"Enough only at the rated {_gbs(LINK_BW)} per NIC (ratio {RATIO_ONE_FEWER_LINE_RATE:.2f}); at {_planned} "
                f"the ratio is {RATIO_ONE_FEWER:.2f}, the danger state.")
    return f"Enough, but not the fewest: {LINKS_AT_MAX} already suffice."


_act2_refl = letters([
    Option(f"{_c[0]} links per node ({_gbs(_c[0] * LINK_BW)} at line rate): the rated bandwidth is enough",
           _count_why(_c[0])),
    Option(f"{_c[1]} links per node ({_gbs(_c[1] * DESIGN_LINK_BW)} at {_planned}): half the GPUs get a port",
           _count_why(_c[1])),
    Option(f"{_c[2]} links per node ({_gbs(_c[2] * LINK_BW)} at line rate): every GPU needs its own port",
           _count_why(_c[2])),
    Option(f"No count up to {MAX_LINKS}: inter-node traffic grows with the number of nodes", _count_why(_c[3])),
], ACT2_COUNTS.index(LINKS_AT_MAX), offset=3)  # reads "none", 3, 4, 8
assert links_needed(MAX_NODES) == LINKS_AT_MAX

# --- Model vs measurement (measurements.py): the measured multi-node AllReduce between the two models -----
_rows = {m.id: m for m in MEASUREMENTS}
_gbs_of = lambda row_id: _rows[row_id].reference_value() / 1e9
PIPELINED_GBS = (_gbs_of("hierarchical_two_nodes"), _gbs_of("hierarchical_four_nodes"))
ADDED_GBS = (_gbs_of("added_two_nodes"), _gbs_of("added_four_nodes"))
MEASURED_GBS = tuple(_rows[r].published_value / 1e9 for r in ("hierarchical_two_nodes", "hierarchical_four_nodes"))
_between = " and ".join(f"{lo:.0f} < {m:.0f} <= {hi:.0f} GB/s" for lo, m, hi in zip(ADDED_GBS, MEASURED_GBS,
                                                                                   PIPELINED_GBS))
_measured = letters([
    Option("NCCL overlaps the NVLink and network stages, though not perfectly, and its NICs run below line rate",
           f"Right: each measurement lies between the added and the pipelined model ({_between}): the stages "
           "overlap, imperfectly, on NICs that deliver 46-48 of their 50 GB/s."),
    Option("The added model is the right one, and the two clusters measured were simply misconfigured",
           f"Both measurements beat the added model ({ADDED_GBS[0]:.0f} and {ADDED_GBS[1]:.0f} GB/s), which no "
           "configuration error can do: the stages do overlap."),
    Option("Both models are off by one constant factor, which a better NVLink bandwidth figure would remove",
           f"The pipelined model is {PIPELINED_GBS[0] / MEASURED_GBS[0]:.2f}x the measurement at 2 nodes and "
           f"{PIPELINED_GBS[1] / MEASURED_GBS[1]:.2f}x at 4: not one factor."),
    Option("Every byte crosses every NIC of every node, so the network stage grows with the number of nodes",
           "Each node's links carry 2(k-1)/k of the message, under 2x however many nodes join."),
], 0, offset=1)   # conceptual: index 0; premises below
assert all(lo < m <= hi for lo, m, hi in zip(ADDED_GBS, MEASURED_GBS, PIPELINED_GBS))
assert abs(PIPELINED_GBS[0] / MEASURED_GBS[0] - PIPELINED_GBS[1] / MEASURED_GBS[1]) > 0.1

QUESTIONS = questions(__file__, vars(scenario) | vars(), {   # id: (kind, points, letters(...)) in order
    "act1_prediction": ("prediction", 1.25, _act1), "act1_reflection": ("reflection", 1.25, _act1_refl),
    "act2_prediction": ("prediction", 1.25, _act2), "act2_reflection": ("reflection", 1.25, _act2_refl),
    "measurement_reflection": ("reflection", 1.0, _measured)})
ACT1_PREDICTION, ACT1_REFLECTION, ACT2_PREDICTION, ACT2_REFLECTION, MEASUREMENT_REFLECTION = QUESTIONS
assert len({q.key for q in QUESTIONS}) > 1 and "A" not in {q.key for q in QUESTIONS}
# what the readouts echo: the student's own choice, never the key
ACT1_OPTIONS, ACT2_OPTIONS = (dict(q.options) for q in (ACT1_PREDICTION, ACT2_PREDICTION))
NVLINK_NAME, PCIE_NAME = NVLINK, PCIE


# Background words the story must use (its algorithm, its table), not counted as the key's wording by the
# released-notebook give-away check (tests/labs/giveaways.py).
STORY_WORDS = {"act1_reflection": ("reduce-scatter", "all-gather")}
