"""Lab 06 questions: prompts, options and hints formatted from scenario values; keys computed.

Offsets of the four questions are chosen so the keys differ and none is "A": the notebook's answer
prompt shows `<qid> = "X"` as its format example.
"""
from __future__ import annotations

import math

from autograder.engine.spec import Question, letters
from labs.authoring import fmt_bytes, range_key
from labs.lab06_collectives.scenario import (ACT1_MESSAGE_BYTES, ACT1_RANGES, ACT1_RATIO, ACT2, ALPHA_S,
                                             CRITICAL_BYTES, CROSSOVER_BYTES, DISTRACTOR_GPUS, N_GPUS, NDR,
                                             WORKLOADS)
from reference import collectives as ref

_act1_options, _act1_key = letters([
    f"between {ACT1_RANGES[0][0]}× and {ACT1_RANGES[0][1]}× — naive AllReduce isn't that inefficient",
    f"between {ACT1_RANGES[1][0]}× and {ACT1_RANGES[1][1]}× — the master bottleneck is real but manageable",
    f"between {ACT1_RANGES[2][0]}× and {ACT1_RANGES[2][1]}× — the master's receive and send overlap, "
    f"so it carries about n/2 = {N_GPUS // 2} times a ring rank's bytes",
    f"between {ACT1_RANGES[3][0]}× and {ACT1_RANGES[3][1]}× — ring spreads the traffic evenly over all "
    "links; naive concentrates it on the master",
], range_key(ACT1_RATIO, ACT1_RANGES), offset=0)   # ranges stay in ascending order

ACT1_PREDICTION = Question(
    id="act1_prediction", kind="prediction", points=2,
    prompt=(f"**Prediction.** At n = {N_GPUS} GPUs, one AllReduce of the {fmt_bytes(ACT1_MESSAGE_BYTES)} "
            "gradient: how many times more bytes cross the naive master's link than one ring rank sends "
            "(bytes through the master ÷ bytes sent per ring rank)?"),
    options=_act1_options, key=_act1_key,
    hint=("Count what crosses the master's link: what it receives from each other rank plus what it "
          "sends back to each (it sends nothing to itself). Then count what one ring rank sends: "
          "n-1 reduce-scatter steps and n-1 all-gather steps, an M/n chunk per step. Divide at "
          f"n = {N_GPUS}; the message size cancels."),
)

_act1_refl_options, _act1_refl_key = letters([
    "Ring uses a faster network protocol than naive AllReduce",
    "Every rank sends and receives at the same time, so the traffic is spread evenly over all n links",
    "Ring compresses gradients during communication to reduce the data volume",
    "Ring uses asynchronous updates, so ranks don't need to synchronise",
], 1, offset=3)   # conceptual: index 1 (all links busy at once); premise: the master carries ~n x a ring rank
assert ACT1_RATIO > N_GPUS / 2

ACT1_REFLECTION = Question(
    id="act1_reflection", kind="reflection", points=1,
    prompt=("**Reflection.** Each ring rank sends 2(n-1)/n · M bytes, the least any AllReduce can send per "
            "rank (Patarasuk & Yuan 2009). Why does ring AllReduce reach that bound while naive AllReduce "
            "is n times worse?"),
    options=_act1_refl_options, key=_act1_refl_key,
    hint=("Picture one step of the ring: which links are busy, and how many bytes does each carry? "
          "Then picture the naive scheme: which single link carries everything?"),
)

_act2_choices = (("ring", "ring", "ring"), ("ring", "ring", "tree"), ("tree", "tree", "tree"),
                 ("ring", "tree", "tree"))
_act2_picks = tuple(numbers["best"] for _, _, _, numbers in ACT2)
_act2_options, _act2_key = letters([
    "Ring for all three — ring is always fastest",
    f"Ring for the {fmt_bytes(WORKLOADS[0][2])} and {fmt_bytes(WORKLOADS[1][2])} gradients, tree for the "
    f"{fmt_bytes(WORKLOADS[2][2])} update",
    "Tree for all three — fewer latency steps always matter",
    f"Ring for the {fmt_bytes(WORKLOADS[0][2])} gradient, tree for the {fmt_bytes(WORKLOADS[1][2])} gradient "
    f"and the {fmt_bytes(WORKLOADS[2][2])} update",
], _act2_choices.index(_act2_picks), offset=0)

ACT2_PREDICTION = Question(
    id="act2_prediction", kind="prediction", points=2,
    prompt=(f"**Prediction.** On the same cluster (n = {N_GPUS}, InfiniBand NDR), which AllReduce does the "
            "α-β model pick for each workload, ring or binary tree?"),
    options=_act2_options, key=_act2_key,
    hint=("Write ring and tree time as latency steps plus bytes over bandwidth. The tree sends the whole "
          "message at each of its 2·ceil(log2 n) hops, the ring 2(n-1)/n · M in 2(n-1) steps: find the "
          f"message size where they meet at n = {N_GPUS} and place each workload above or below it."),
)

_act2_refl_options, _act2_refl_key = letters([
    f"The number of GPUs alone — ring above {DISTRACTOR_GPUS} GPUs, tree below",
    "The message size relative to the ring–tree crossover, which depends on α, β and n",
    "The message size relative to the critical size α·β alone, whatever the number of GPUs",
    "Whether gradients are FP16 or FP32 — ring only works with FP32",
], 1, offset=2)   # conceptual: index 1; premise: the crossover is not α·β and moves with n
assert not math.isclose(CROSSOVER_BYTES, CRITICAL_BYTES) and \
    not math.isclose(CROSSOVER_BYTES, ref.ring_tree_crossover_bytes(2 * N_GPUS, ALPHA_S, NDR))

ACT2_REFLECTION = Question(
    id="act2_reflection", kind="reflection", points=1,
    prompt="**Reflection.** What decides whether ring or tree AllReduce is faster on a given cluster?",
    options=_act2_refl_options, key=_act2_refl_key,
    hint=("Set the two times equal and solve for the message size. Then check: at n = "
          f"{N_GPUS} on NDR does the switch happen at α·β = {fmt_bytes(CRITICAL_BYTES)}, or somewhere else?"),
)

QUESTIONS = (ACT1_PREDICTION, ACT1_REFLECTION, ACT2_PREDICTION, ACT2_REFLECTION)
# the options the readouts echo (the student's own choice, never the key)
ACT1_OPTIONS = dict(ACT1_PREDICTION.options)
ACT2_OPTIONS = dict(ACT2_PREDICTION.options)
