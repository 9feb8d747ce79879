"""Lab 09 questions: prompts, options and per-option explanations formatted from scenario values;
keys computed. Offsets are chosen so the keys differ and none is "A"."""
from __future__ import annotations

from autograder.engine.spec import Option, Question, letters
from labs.authoring import range_key
from labs.lab09_performance.scenario import (A1_CEILING, A1_HOT, A1_HOT_CUT, A1_NAIVE_CUT, A1_RANGES, A1_SHARE,
                                             A1_SPEEDUP, A1_TIME_CUT, A2_ORDER, ACT1_KERNEL_FACTOR, ACT1_PROFILE,
                                             ACT1_TARGET, ACT2_PROFILE, BEST, BUDGET_WEEKS, COSTS, FACTORS, GAINS)

_k = f"{ACT1_KERNEL_FACTOR:g}x"
_r = [f"{100 * high:g} %" for _, high in A1_RANGES[:3]]
_cut = f"{A1_SHARE:.0%} x (1 - 1/{ACT1_KERNEL_FACTOR:g}) = {A1_TIME_CUT:.1%}"
_a1_options, _a1_key, _a1_why = letters([
    Option(f"Less than {_r[0]}: a faster kernel on one part barely shows in the step at all.",
           f"Nothing else changed: {_cut} of the step is what the kernel alone removes."),
    Option(f"Between {_r[0]} and {_r[1]}: the other {1 - A1_SHARE:.0%} of the step did not change at all.",
           f"Right: Amdahl gives f(1 - 1/k) = {_cut}. The kernel works; it sped up a small share of the step."),
    Option(f"Between {_r[1]} and {_r[2]}: a {_k} kernel should remove most of attention's share.",
           f"It removes two thirds of a {A1_SHARE:.0%} share, {A1_TIME_CUT:.1%} of the step; even an infinitely "
           f"fast kernel removes only {A1_SHARE:.0%} (ceiling {A1_CEILING:.3f}x)."),
    Option(f"{_r[2]} or more: a {_k} faster kernel should make the whole step nearly {_k} faster.",
           f"Only if attention were the whole step (time {-A1_NAIVE_CUT:.0%}); it is {A1_SHARE:.0%} of it."),
], range_key(A1_TIME_CUT, A1_RANGES), offset=0)   # ranges stay in ascending order

ACT1_PREDICTION = Question(
    id="act1_prediction", kind="prediction", points=1, options=_a1_options, key=_a1_key, why=_a1_why,
    prompt=(f"**Prediction.** The profile says {ACT1_TARGET} took {A1_SHARE:.0%} of the step. If the new kernel "
            f"is correct and {_k} faster, by how much should the *step time* fall?"),
    hint=("A part that takes a share f of the step and gets k times faster removes f(1 - 1/k) of the "
          "step time; the other (1 - f) is untouched. Put the profile's share and the kernel's factor "
          "in before deciding that anything is broken."))

_hot = f"{A1_HOT} ({ACT1_PROFILE[A1_HOT]:.0%})"
_r1_options, _r1_key, _r1_why = letters([
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

ACT1_REFLECTION = Question(
    id="act1_reflection", kind="reflection", points=1, options=_r1_options, key=_r1_key, why=_r1_why,
    prompt="**Reflection.** What is the mandatory first step in any optimisation project?",
    hint=("Every technique in the list pays off only on the part of the step that takes the time. "
          "Which option tells you where the time goes before you choose?"))


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
_a2_options, _a2_key, _a2_why = letters([
    Option(f"{_a2_heads[n]} ({ACT2_PROFILE[n]:.0%}): {_a2_texts[n]}",
           ("Right: " if n == BEST else "") + _return(n) +
           ("; no other fix returns as much per week." if n == BEST else
            f", less than the {_a2_labels[BEST]} fix's {100 * GAINS[BEST] / COSTS[BEST]:.2f}."))
    for n in A2_ORDER
], A2_ORDER.index(BEST), offset=3)

ACT2_PREDICTION = Question(
    id="act2_prediction", kind="prediction", points=1, options=_a2_options, key=_a2_key, why=_a2_why,
    prompt=(f"**Prediction.** Which single fix gives the most MFU per engineer-week within the "
            f"{BUDGET_WEEKS:g}-week budget?"),
    hint=("Rank by gain divided by cost, not by gain: a fix's MFU gain is base MFU x (S - 1), S from "
          "Amdahl's law for the part it speeds up, then divide by its engineer-weeks."))

_biggest_gain = max(GAINS, key=GAINS.get)
_biggest_share = max(ACT2_PROFILE, key=ACT2_PROFILE.get)
_fastest = max(FACTORS, key=FACTORS.get)
_r2_options, _r2_key, _r2_why = letters([
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

ACT2_REFLECTION = Question(
    id="act2_reflection", kind="reflection", points=1, options=_r2_options, key=_r2_key, why=_r2_why,
    prompt="**Reflection.** The readout ranks the four fixes by MFU per engineer-week. What decides that ranking?",
    hint=("Compare the order of the fixes by MFU gain alone with their order by MFU gain per engineer-week, "
          "and look at what each fix costs."))

QUESTIONS = (ACT1_PREDICTION, ACT1_REFLECTION, ACT2_PREDICTION, ACT2_REFLECTION)
# the options the readouts echo (the student's own choice, never the key)
ACT1_OPTIONS = dict(ACT1_PREDICTION.options)
ACT2_OPTIONS = dict(ACT2_PREDICTION.options)
# what no text before a question may state (the lab suite's give-away guard): the keyed figure or conclusion
KEYED_FIGURES = {
    "act1_prediction": (f"{A1_TIME_CUT:.1%}", f"{100 * A1_TIME_CUT:.1f} %", "barely moves because"),
    "act2_prediction": (f"best_fix: {BEST}", f"best_fix = {BEST}", f"{_a2_labels[BEST]} fix is the best"),
}
