"""Lab 06 questions: options and per-option explanations formatted from scenario values and computed
keys; each question's prompt and hint are in questions.md beside this file.

Offsets of the four questions are chosen so the keys differ and none is "A": the notebook's answer
prompt shows `<qid> = "X"` as its format example. Options are of comparable length (the lab suite's
give-away guard): the key must not stand out as the long, careful one.
"""
from __future__ import annotations

import math

from labs.authoring import Option, fmt_bytes, fmt_seconds, letters, questions, range_key
from labs.lab06_collectives import scenario
from labs.lab06_collectives.scenario import (ACT1_RANGES, ACT1_RATIO, ACT2, CRITICAL_BYTES, CROSSOVER_BYTES,
                                             DISTRACTOR_GPUS, N_GPUS, WORKLOADS)
from labs.lab06_collectives.measurements import NODE, NODE_BYTES, NODE_GPUS, NVLS_NODE, RING_NODE
from reference import collectives as ref
from reference import constants as C
from reference.cluster import ring_link

_RING_FACTOR = ref.ring_bytes_per_rank(1.0, N_GPUS)          # 2(n-1)/n
_MASTER_FACTOR = ref.naive_master_bytes(1.0, N_GPUS)         # 2(n-1)
_COUNTS = (f"the master's link carries 2(n−1)·M = {_MASTER_FACTOR:.0f}·M, a ring rank sends "
           f"2(n−1)/n·M = {_RING_FACTOR:.3f}·M: {ACT1_RATIO:.0f}× at n = {N_GPUS}")
_act1 = letters([
    Option(f"between {ACT1_RANGES[0][0]}× and {ACT1_RANGES[0][1]}× — both schemes move about 2M per rank",
           f"Too low: the ring rank does send about 2M, but the master does not; {_COUNTS}."),
    Option(f"between {ACT1_RANGES[1][0]}× and {ACT1_RANGES[1][1]}× — a real bottleneck, but a modest one",
           f"Too low: the master's load grows with every rank added; {_COUNTS}."),
    Option(f"between {ACT1_RANGES[2][0]}× and {ACT1_RANGES[2][1]}× — receive and send overlap: about n/2",
           "Overlapping receive and send halves the master's time, not its bytes: the ratio counts bytes; "
           f"{_COUNTS}."),
    Option(f"between {ACT1_RANGES[3][0]}× and {ACT1_RANGES[3][1]}× — the master's share grows with n",
           f"Right: {_COUNTS}. The message size cancels, so the ratio is the rank count."),
], range_key(ACT1_RATIO, ACT1_RANGES), offset=0)   # ranges stay in ascending order

_act1_refl = letters([
    Option("Ring runs over a faster network protocol than the naive scheme",
           "Both run over the same links and protocol; what differs is which links carry the bytes."),
    Option("Every link is busy at once: each rank sends while it receives",
           "Right: every step moves one M/n chunk over every link at the same time, so no link carries "
           "more than 2(n−1)/n·M, while the naive scheme pushes all 2(n−1)·M through the master's link."),
    Option("Ring compresses the gradients on the wire to cut the bytes sent",
           "Ring AllReduce sends the gradients as they are; compression is a separate technique."),
    Option("Ring updates asynchronously, so ranks never wait for each other",
           "Ring AllReduce is synchronous: every step waits for its chunk from the left neighbour."),
], 1, offset=3)   # conceptual: index 1 (all links busy at once); premise: the master carries ~n x a ring rank
assert ACT1_RATIO > N_GPUS / 2


def _times(index: int) -> str:
    """Ring against tree for one workload, from the scenario's numbers."""
    label, _, message, numbers = ACT2[index]
    return (f"the {fmt_bytes(message)} {label.split()[-1]} takes {fmt_seconds(numbers['times']['ring'])} by ring, "
            f"{fmt_seconds(numbers['times']['tree'])} by tree")


_ALL = "; ".join(_times(i) for i in range(len(ACT2)))
_act2_choices = (("ring", "ring", "ring"), ("ring", "ring", "tree"), ("tree", "tree", "tree"),
                 ("ring", "tree", "tree"))
_act2_picks = tuple(numbers["best"] for _, _, _, numbers in ACT2)
_act2 = letters([
    Option("Ring for all three: ring is always the fastest AllReduce",
           f"Not for small messages: ring pays 2(n−1) latencies; {_times(2)}."),
    Option(f"Ring for the {fmt_bytes(WORKLOADS[0][2])} and {fmt_bytes(WORKLOADS[1][2])} gradients, tree for "
           f"the {fmt_bytes(WORKLOADS[2][2])} update",
           f"Right: ring wins above the {fmt_bytes(CROSSOVER_BYTES)} crossover, tree below it; {_ALL}."),
    Option("Tree for all three: its 2·log2 n latency steps always win",
           f"Not for big messages: every tree hop carries the whole message; {_times(0)}."),
    Option(f"Ring for the {fmt_bytes(WORKLOADS[0][2])} gradient, tree for the {fmt_bytes(WORKLOADS[1][2])} one "
           f"and the {fmt_bytes(WORKLOADS[2][2])} update",
           f"The {fmt_bytes(WORKLOADS[1][2])} gradient is far above the {fmt_bytes(CROSSOVER_BYTES)} crossover; "
           f"{_times(1)}."),
], _act2_choices.index(_act2_picks), offset=0)

_OTHER_N = 2 * N_GPUS
_OTHER_CROSSOVER = ref.ring_tree_crossover_bytes(_OTHER_N, **ring_link(_OTHER_N))
_act2_refl = letters([
    Option(f"The number of GPUs alone: ring above {DISTRACTOR_GPUS} GPUs, binary tree below",
           f"At any n a big enough message favours ring and a small one tree: at n = {N_GPUS} they cross "
           f"at {fmt_bytes(CROSSOVER_BYTES)}."),
    Option("The message size against the ring–tree crossover (α, β and n)",
           f"Right: setting the two times equal gives the crossover, {fmt_bytes(CROSSOVER_BYTES)} at "
           f"n = {N_GPUS} and {fmt_bytes(_OTHER_CROSSOVER)} "
           f"at n = {_OTHER_N}."),
    Option("The message size against the critical size α·β, whatever n is",
           f"α·β = {fmt_bytes(CRITICAL_BYTES)} is where one message's latency equals its transfer time; "
           f"ring and tree cross elsewhere ({fmt_bytes(CROSSOVER_BYTES)} at n = {N_GPUS}), and the "
           "crossover moves with n."),
    Option("The gradient precision: ring only works with FP32 gradients",
           "Ring AllReduce sums any number format; precision only changes the message size."),
], 1, offset=2)   # conceptual: index 1; premise: the crossover is not α·β and moves with n
assert not math.isclose(CROSSOVER_BYTES, CRITICAL_BYTES) and \
    not math.isclose(CROSSOVER_BYTES, _OTHER_CROSSOVER)

# --- Model vs measurement (measurements.py): why the ring on one node is above Ring and below NVLS -------
_ring_row, _nvls_row = RING_NODE, NVLS_NODE
_model_busbw = _ring_row.reference_value()                        # the ring's busbw on NVLink: the line rate
_ring_ratio, _nvls_ratio = _ring_row.ratio(_model_busbw), _nvls_row.ratio(_model_busbw)
_latency_share = (ref.ring_allreduce_time(0.0, NODE_GPUS, **NODE)
                  / ref.ring_allreduce_time(NODE_BYTES, NODE_GPUS, **NODE))
MEASURED_RING_GBS = _ring_row.published_value / 1e9              # the middle of the published range
MEASURED_RING_RANGE_GBS = tuple(v / 1e9 for v in _ring_row.published)
MEASURED_NVLS_GBS = _nvls_row.published_value / 1e9
MODEL_BUSBW_GBS = _model_busbw / 1e9
_data_share = MEASURED_RING_GBS * 1e9 / C.NVLINK4_BANDWIDTH       # what NVLink's line rate carries as data
_measured = letters([
    Option(f"Links carry ~{round(_data_share, 1):.0%} of their line rate as data, and NVLink SHARP sums in the switch itself",
           f"Right: the model's B is the {C.NVLINK4_BANDWIDTH / 1e9:.0f} GB/s line rate; packets carry about "
           f"{_data_share:.0%} of it as data (Ring: "
           f"{MEASURED_RING_GBS:.0f} GB/s, the model {_ring_ratio:.2f}x); in-switch reduction is not point to "
           f"point, so its busbw ({MEASURED_NVLS_GBS:.0f} GB/s) passes the bound the ring meets."),
    Option("The latency terms, 2(n-1) steps of alpha, are a large part of an AllReduce of a few gigabytes",
           f"At this size latency is {_latency_share:.2%} of the ring's time: it moves neither number."),
    Option("nccl-tests compute bus bandwidth with a formula other than busbw = (M/t) * 2(n-1)/n",
           "nccl-tests doc/PERFORMANCE.md defines busbw exactly so; your bus_bandwidth is the same formula."),
    Option("The GPUs add the chunks too slowly, which holds every algorithm a little below the link's rate",
           f"NVLS measures {MEASURED_NVLS_GBS:.0f} GB/s, above the 450 GB/s line rate: adding is not what limits it."),
], 0, offset=2)   # conceptual: index 0; premises below
assert _ring_ratio > 1.1 and _nvls_ratio < 1 and MEASURED_NVLS_GBS * 1e9 > C.NVLINK4_BANDWIDTH and _latency_share < 0.01

QUESTIONS = questions(__file__, vars(scenario) | vars(), {   # id: (kind, points, letters(...)) in order
    "act1_prediction": ("prediction", 2, _act1), "act1_reflection": ("reflection", 1, _act1_refl),
    "act2_prediction": ("prediction", 2, _act2), "act2_reflection": ("reflection", 1, _act2_refl),
    "measurement_reflection": ("reflection", 1, _measured)})
ACT1_PREDICTION, ACT1_REFLECTION, ACT2_PREDICTION, ACT2_REFLECTION, MEASUREMENT_REFLECTION = QUESTIONS
# what the readouts echo: the student's own choice, never the key
ACT1_OPTIONS, ACT2_OPTIONS = (dict(q.options) for q in (ACT1_PREDICTION, ACT2_PREDICTION))
# Texts that state a question's keyed figure or conclusion: the lab suite checks that none is readable
# before the question (tests/labs/test_labs.py, the give-away guard).
KEYED_FIGURES = {
    "act1_prediction": (f"{ACT1_RATIO:.0f}×", f"{ACT1_RATIO:.0f}x", f"{ACT1_RATIO:.0f} times", "n times",
                        "exactly n"),
    "act2_prediction": (fmt_bytes(CROSSOVER_BYTES), f"tree for the {fmt_bytes(WORKLOADS[2][2])}"),
}
