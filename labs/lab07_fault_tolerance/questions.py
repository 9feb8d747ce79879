"""Lab 07 questions: options (each with why it is right or wrong) formatted from scenario values and
computed keys; each question's prompt and hint are in questions.md beside this file.

Offsets are chosen so the keys differ where they can and none is "A". Options are of comparable length:
the key must not stand out as the long, careful one (the give-away guard, `scalelabs lint`).
"""
from __future__ import annotations

from labs.authoring import Option, fmt_bytes, fmt_percent, fmt_seconds, letters, questions, range_key
from labs.lab07_fault_tolerance import scenario
from labs.lab07_fault_tolerance.measurements import LLAMA3_AT_200_H, LLAMA3_AT_50000_H
from labs.lab07_fault_tolerance.scenario import (ACT1_CHECKPOINT_S, ACT1_INTERVAL_S, ACT1_RANGES, ACT1_RATIO,
                                                 ACT1_SCALE, ACT1_SCALED_FACTOR, ACT1_STALL_NOW, ACT1_VERDICTS,
                                                 ACT1_MTBF_S, ACT1_WASTE_BEST, ACT1_WASTE_NOW, ACT1_YOUNG_S,
                                                 ACT2_CHECKPOINT_BYTES, ACT2_GPUS,
                                                 ACT2_MTBF_S, ACT2_RANGES, ACT2_SNAPSHOT_S, ACT2_WRITE_S, ACT2_YOUNG_S,
                                                 HOUR_S, LAB_MTBF_S, MINUTE_S)


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min"


_LOSS = (f"30-minute intervals lose {fmt_percent(ACT1_WASTE_NOW)} of the run, Young's {minutes(ACT1_YOUNG_S)} "
         f"intervals {fmt_percent(ACT1_WASTE_BEST)}")
_act1_choices = ("rare", "frequent", "optimal", "irrelevant")
_SHORT_S = 10 * MINUTE_S     # the "too rare" option's interval


def _span(seconds: float) -> str:
    """An option's interval as a person says it: "5 minutes", "2 hours"."""
    return f"{seconds / HOUR_S:g} hours" if seconds >= HOUR_S else f"{seconds / MINUTE_S:g} minutes"


_act1 = letters([
    Option(f"Too rare: with a failure every {_span(ACT1_MTBF_S)}, checkpoint every {_span(_SHORT_S)}",
           f"Intervals of {_span(_SHORT_S)} stall training {fmt_percent(ACT1_CHECKPOINT_S / _SHORT_S)} of the time to save "
           f"little rework; {_LOSS}."),
    Option(f"Too often: the interval that loses least is about {minutes(ACT1_YOUNG_S)}",
           f"Right: √(2·C·M) = {minutes(ACT1_YOUNG_S)} for C = {minutes(ACT1_CHECKPOINT_S)}, "
           f"M = {_span(ACT1_MTBF_S)}; {_LOSS}."),
    Option(f"About right: {_span(ACT1_INTERVAL_S)} is already near the least-loss interval",
           f"30 minutes is {ACT1_RATIO:.2f} of the least-loss interval, {minutes(ACT1_YOUNG_S)}; {_LOSS}."),
    Option("It barely matters: the interval changes little of the time lost",
           f"The stalls alone are {fmt_percent(ACT1_STALL_NOW)} of the time at 30 minutes; {_LOSS}."),
], _act1_choices.index(ACT1_VERDICTS[range_key(ACT1_RATIO, ACT1_RANGES)]), offset=0)

_act1_refl = letters([
    Option(f"It shrinks {ACT1_SCALED_FACTOR:.0f}×: failures come {ACT1_SCALE}× as often, T* goes as 1/√n",
           f"Right: the cluster's MTBF is the GPU's over n, and T* = √(2CM), so {ACT1_SCALE}× the GPUs shrink it "
           f"√{ACT1_SCALE} = {ACT1_SCALED_FACTOR:.0f} times."),
    Option("It stays the same: one GPU fails no more often in a bigger cluster",
           "Each GPU is as reliable, but any one of them stops the job: the job's failure rate is their sum."),
    Option("It grows: the bigger run's checkpoints take longer to write",
           "The checkpoint is the model's, not the cluster's: the same model on more GPUs writes the same bytes."),
    Option(f"It shrinks {ACT1_SCALE}×: the best interval is proportional to the MTBF",
           f"T* grows as the square root of the MTBF, so {ACT1_SCALE}× the failures shrink it {ACT1_SCALED_FACTOR:.0f}×."),
], 0, offset=2)   # conceptual: index 0 (the square root of the failure rate)

_WHY2 = (f"the cluster fails every {ACT2_MTBF_S / 3600:.2f} h and a checkpoint of {fmt_bytes(ACT2_CHECKPOINT_BYTES)} "
         f"stalls it {fmt_seconds(ACT2_WRITE_S)}: √(2CM) = {minutes(ACT2_YOUNG_S)}")
_act2 = letters([
    Option(f"under {_span(ACT2_RANGES[0][1])}: a cluster this large fails every few minutes",
           f"The lab's 200-hour GPUs would fail every {fmt_seconds(LAB_MTBF_S)}, not minutes; {_WHY2}."),
    Option(f"{ACT2_RANGES[1][0] / MINUTE_S:g} to {_span(ACT2_RANGES[1][1])}: a write stall against half an interval redone",
           f"Right: {_WHY2}."),
    Option(f"{_span(ACT2_RANGES[2][0])} to {_span(ACT2_RANGES[2][1])}: a multi-terabyte write is too costly to repeat",
           f"The write is costly, but so is redone work: {_WHY2}."),
    Option(f"over {_span(ACT2_RANGES[3][0])}: one checkpoint per expected failure is enough",
           f"A failure then redoes over an hour of {ACT2_GPUS:,} GPUs' work; {_WHY2}."),
], range_key(ACT2_YOUNG_S, ACT2_RANGES), offset=2)   # ranges stay in ascending order: offset 2 wraps them

_act2_refl = letters([
    Option("It compresses the checkpoint on its way to the storage",
           "It writes the same bytes; only when training waits for them changes."),
    Option("Young and Daly's C is the stall; it stalls only for the snapshot",
           f"Right: training waits {fmt_seconds(ACT2_SNAPSHOT_S)} for the copy to host memory instead of "
           f"{fmt_seconds(ACT2_WRITE_S)} for the write, which runs in the background."),
    Option("It skips the tensors that did not change since the last one",
           "That is incremental checkpointing, another technique: it shrinks the bytes, not the stall."),
    Option("It does not change C at all; it only delays the same write",
           "C is the time training stalls, and that is what the snapshot shortens."),
], 1, offset=0)   # conceptual: index 1 (C is the stall, not the write)

# --- Model vs measurement (measurements.py): the same law, two inputs, one record ----------------------
MODEL_INTERRUPTIONS = LLAMA3_AT_50000_H.reference_value()
LAB_INTERRUPTIONS = LLAMA3_AT_200_H.reference_value()
_model_ratio, _lab_ratio = LLAMA3_AT_50000_H.ratio(MODEL_INTERRUPTIONS), LLAMA3_AT_200_H.ratio(LAB_INTERRUPTIONS)
_measured = letters([
    Option("The 1/n law holds; the source lab's per-GPU MTBF is far too short",
           f"Right: the same functions give {MODEL_INTERRUPTIONS:,.0f} at 50,000 hours per GPU "
           f"({_model_ratio:.2f}x the record) and {LAB_INTERRUPTIONS:,.0f} at 200 hours ({_lab_ratio:,.0f}x)."),
    Option("Failures come in bursts, so the 1/n law overcounts them at scale",
           f"At 50,000 hours the law is within {abs(_model_ratio - 1):.0%} of the record: it does not overcount."),
    Option("Most GPU failures leave a synchronous job running, so few are counted",
           "Any GPU's failure stops a synchronous job: the record counts exactly those interruptions."),
    Option("Meta replaced failing GPUs before they failed, hiding most failures",
           f"Whatever the maintenance, 200 hours per GPU would mean a failure every {fmt_seconds(LAB_MTBF_S)}."),
], 0, offset=1)   # conceptual: index 0; premises below
assert 0.9 < _model_ratio < 1.1 and _lab_ratio > 100

QUESTIONS = questions(__file__, vars(scenario) | vars(), {   # id: (kind, points, letters(...)) in order
    "act1_prediction": ("prediction", 2, _act1), "act1_reflection": ("reflection", 1, _act1_refl),
    "act2_prediction": ("prediction", 2, _act2), "act2_reflection": ("reflection", 1, _act2_refl),
    "measurement_reflection": ("reflection", 1, _measured)})
ACT1_PREDICTION, ACT1_REFLECTION, ACT2_PREDICTION, ACT2_REFLECTION, MEASUREMENT_REFLECTION = QUESTIONS
# what the readouts echo: the student's own choice, never the key
ACT1_OPTIONS, ACT2_OPTIONS = (dict(q.options) for q in (ACT1_PREDICTION, ACT2_PREDICTION))
# Texts that state a question's keyed figure or conclusion: none may be readable before the question.
KEYED_FIGURES = {
    "act1_prediction": (minutes(ACT1_YOUNG_S), f"{ACT1_YOUNG_S / 60:.1f} min", f"{ACT1_YOUNG_S / 60:.0f} minutes"),
    "act2_prediction": (minutes(ACT2_YOUNG_S), f"{ACT2_YOUNG_S / 60:.1f} min", fmt_seconds(ACT2_YOUNG_S)),
}
# the premises of the two conceptual keys: T* shrinks as the square root of the GPUs, the snapshot is far
# shorter than the write
assert abs(ACT1_SCALED_FACTOR ** 2 - ACT1_SCALE) < 1e-9 and ACT2_SNAPSHOT_S < ACT2_WRITE_S / 100
