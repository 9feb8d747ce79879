"""Lab 09 questions: options and per-option explanations formatted from scenario values and computed
keys; each question's prompt and hint are in questions.md beside this file. Offsets are chosen so the
keys differ and none is "A"."""
from __future__ import annotations

from labs.authoring import Option, letters, questions, range_key
from labs.lab09_performance import scenario
from labs.lab09_performance.measurements import GPT3_PARAMS, MEGATRON_FLOPS_PER_TOKEN, MEGATRON_HFU, MEGATRON_MFU
from labs.lab09_performance.scenario import (A1_CEILING, A1_HOT, A1_HOT_CUT, A1_NAIVE_CUT, A1_RANGES, A1_SHARE,
                                             A1_TIME_CUT, A2_ORDER, ACT1_KERNEL_FACTOR, ACT1_PROFILE, ACT1_TARGET,
                                             ACT2_PROFILE, BEST, COSTS, FACTORS, GAINS)
from reference.collectives import training_step_flops

_k = f"{ACT1_KERNEL_FACTOR:g}x"
_r = [f"{100 * high:g} %" for _, high in A1_RANGES[:3]]
_cut = f"{A1_SHARE:.0%} x (1 - 1/{ACT1_KERNEL_FACTOR:g}) = {A1_TIME_CUT:.1%}"
_act1 = letters([
    Option(f"Less than {_r[0]}: a faster kernel on one part barely shows in the step at all.",
           f"Nothing else changed: {_cut} of the step is what the kernel alone removes."),
    Option(f"Between {_r[0]} and {_r[1]}: the other {1 - A1_SHARE:.0%} of the step did not change at all.",
           f"Right: Amdahl gives f(1 - 1/k) = {_cut}. The kernel works; it sped up a small share of the step."),
    Option(f"Between {_r[1]} and {_r[2]}: a {_k} kernel should remove most of attention's share.",
           f"It removes {1 - 1 / ACT1_KERNEL_FACTOR:.0%} of a {A1_SHARE:.0%} share, {A1_TIME_CUT:.1%} of the step; even an infinitely "
           f"fast kernel removes only {A1_SHARE:.0%} (ceiling {A1_CEILING:.3f}x)."),
    Option(f"{_r[2]} or more: a {_k} faster kernel should make the whole step nearly {_k} faster.",
           f"Only if attention were the whole step (time {-A1_NAIVE_CUT:.0%}); it is {A1_SHARE:.0%} of it."),
], range_key(A1_TIME_CUT, A1_RANGES), offset=0)   # ranges stay in ascending order

_hot = f"{A1_HOT} ({ACT1_PROFILE[A1_HOT]:.0%})"
_act1_refl = letters([
    Option("Profile the step, then optimise its largest share, not the familiar code.",
           f"Right: the profile puts {_hot} first; the same {_k} there would cut the step by {A1_HOT_CUT:.0%}."),
    Option("Rewrite the hot loops in C++/CUDA for maximum low-level control.",
           f"That is what the team did, on {A1_SHARE:.0%} of the step, without knowing where the time went."),
    Option("Increase the batch size to amortise per-step overhead over more samples.",
           "A technique, not a first step: it pays off only if per-step overhead is where the time goes."),
    Option("Reduce the model size so that each step has less computation to do.",
           "It changes the model being trained, and still says nothing about where the step's time goes."),
], 0, offset=1)   # conceptual: index 0 (profile first); premise: the team did not optimise the hotspot
assert A1_HOT != ACT1_TARGET


def _return(name: str) -> str:
    gain = GAINS[name]
    return (f"{100 * gain:+.1f} MFU points for {COSTS[name]:g} engineer-weeks: "
            f"{100 * gain / COSTS[name]:.2f} points per week")


_a2_texts = {
    "allreduce": "the largest share a lever can speed up gains the most.",
    "pipeline_bubble": "more micro-batches in the same pipeline schedule.",
    "data_loading": "the smallest part, sped up with extra prefetch workers.",
    "compute": "the largest share must be the primary bottleneck.",
}
_a2_heads = {"allreduce": "Fix AllReduce", "pipeline_bubble": "Fix the pipeline bubble",
             "data_loading": "Fix data loading", "compute": "Fix compute"}
_a2_labels = {"allreduce": "AllReduce", "pipeline_bubble": "pipeline-bubble", "data_loading": "data-loading",
              "compute": "compute"}
_act2 = letters([
    Option(f"{_a2_heads[n]} ({ACT2_PROFILE[n]:.0%}): {_a2_texts[n]}",
           ("Right: " if n == BEST else "") + _return(n) +
           ("; no other fix returns as much per week." if n == BEST else
            f", less than the {_a2_labels[BEST]} fix's {100 * GAINS[BEST] / COSTS[BEST]:.2f}."))
    for n in A2_ORDER
], A2_ORDER.index(BEST), offset=3)

_biggest_gain = max(GAINS, key=GAINS.get)
_biggest_share = max(ACT2_PROFILE, key=ACT2_PROFILE.get)
_fastest = max(FACTORS, key=FACTORS.get)
_act2_refl = letters([
    Option("Gain alone: the fix that adds the most MFU points also returns the most per week.",
           f"The {_a2_labels[_biggest_gain]} fix adds the most ({_return(_biggest_gain)}), yet ranks below "
           f"the {_a2_labels[BEST]} fix ({_return(BEST)})."),
    Option("Gain over cost: MFU points divided by engineer-weeks, whatever part a fix speeds up.",
           f"Right: the {_a2_labels[BEST]} fix gains less than the {_a2_labels[_biggest_gain]} fix but costs "
           f"{COSTS[BEST]:g} weeks instead of {COSTS[_biggest_gain]:g}: the bubble's time goes as (p - 1)/m, so "
           "more micro-batches shrink it by a configuration change."),
    Option("Share alone: the part with the largest share of the step returns the most per week.",
           f"The {_a2_labels[_biggest_share]} part has the largest share, but its fix returns "
           f"{_return(_biggest_share)}."),
    Option("Speedup alone: the fix that makes its part the most times faster returns the most.",
           "Several fixes speed their part up equally; how much of the step that part takes, and what the fix "
           "costs, decide the return."),
], 1, offset=0)   # conceptual: index 1; premises asserted below
assert GAINS[BEST] < GAINS[_biggest_gain] and _biggest_share != BEST
assert GAINS[BEST] / COSTS[BEST] > GAINS[_biggest_gain] / COSTS[_biggest_gain]
assert sum(FACTORS[n] == FACTORS[_fastest] for n in FACTORS) > 1

# --- Model vs measurement (measurements.py): Megatron's "44%" against the student's mfu --------------------
MEGATRON_MODEL_MFU = MEGATRON_MFU.reference_value()
MEGATRON_PUBLISHED_MFU = MEGATRON_MFU.published
MEGATRON_COUNTED_MFU = MEGATRON_HFU.reference_value()             # the same run, Megatron's FLOP count
RECOMPUTE_FACTOR = MEGATRON_FLOPS_PER_TOKEN / training_step_flops(GPT3_PARAMS, 1)
_measured = letters([
    Option("Megatron counts the forward pass it recomputes for activation checkpointing as work done",
           f"Right: with recomputation counted ({RECOMPUTE_FACTOR:.2f}x the 6N FLOP per token) the same run is "
           f"{MEGATRON_COUNTED_MFU:.1%}: a hardware-FLOP utilization. By PaLM's definition it is "
           f"{MEGATRON_MODEL_MFU:.1%}."),
    Option("Megatron divides by the A100's 2:4-sparse peak, which makes its percentage come out higher",
           f"A sparse peak would make the percentage lower; {MEGATRON_PUBLISHED_MFU:.0%} of the dense 312 TFLOP/s "
           "is the 138 TFLOP/s the README reports."),
    Option("The model's MFU counts the pipeline bubble as idle time, which Megatron leaves out of its count",
           "Both divide the FLOP of a step by the same measured 32 s iteration, bubble and all."),
    Option("Megatron's iterations process more tokens than the 1,536 sequences the model assumes per step",
           "The README's global batch is 1,536 sequences of 2,048 tokens, the model's input."),
], 0, offset=1)   # conceptual: index 0; premise: the counted FLOP reproduce the published figure, 6N does not
assert abs(MEGATRON_COUNTED_MFU / MEGATRON_PUBLISHED_MFU - 1) < 0.02 < 1 - MEGATRON_MODEL_MFU / MEGATRON_PUBLISHED_MFU

QUESTIONS = questions(__file__, vars(scenario) | vars(), {   # id: (kind, points, letters(...)) in order
    "act1_prediction": ("prediction", 1, _act1), "act1_reflection": ("reflection", 1, _act1_refl),
    "act2_prediction": ("prediction", 1, _act2), "act2_reflection": ("reflection", 1, _act2_refl),
    "measurement_reflection": ("reflection", 1, _measured)})
ACT1_PREDICTION, ACT1_REFLECTION, ACT2_PREDICTION, ACT2_REFLECTION, MEASUREMENT_REFLECTION = QUESTIONS
# what the readouts echo: the student's own choice, never the key
ACT1_OPTIONS, ACT2_OPTIONS = (dict(q.options) for q in (ACT1_PREDICTION, ACT2_PREDICTION))
KEYED_FIGURES = {   # what no text before a question may state (the give-away guard of tests/labs/test_labs.py)
    "act1_prediction": (f"{A1_TIME_CUT:.1%}", f"{100 * A1_TIME_CUT:.1f} %", "barely moves because"),
    "act2_prediction": (f"best_fix: {BEST}", f"best_fix = {BEST}", f"{_a2_labels[BEST]} fix is the best"),
}


# Background words the story must use (its algorithm, its table), not counted as the key's wording by the
# released-notebook give-away check (tests/labs/giveaways.py).
STORY_WORDS = {"act2_prediction": ("pipeline bubble", "micro-batches", "15%")}
