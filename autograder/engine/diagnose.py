"""Name the misconception behind a failing function: which declared wrong model the student computes.

A failing item's observed calls -- the worked examples and the hidden check's sampled inputs, with
the values the sandboxed worker returned (`StudentFunction.observed`) -- are replayed through each
`Misconception.model` of the item, here in the grader's process (models are staff code built from
reference/, never student code). A model is named only when it reproduces EVERY numeric value the
student returned, within the item's tolerance, on at least MIN_OBSERVATIONS inputs, and at least
one of those values differs from the reference (the numbers themselves show the mistake). If two
models match, the first declared wins. No extra sandbox call is made.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from autograder.engine.compare import normalise, values_match
from autograder.engine.spec import Misconception

MIN_OBSERVATIONS = 3   # numeric values needed before a wrong model is named


def _numeric(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def diagnose(misconceptions: Sequence[Misconception], observed: Sequence[tuple[dict, Any]],
             reference_fn: Callable, rel_tol: float, abs_tol: float) -> Misconception | None:
    """The first misconception whose model gives every observed numeric value, or None."""
    numeric = [(kwargs, value) for kwargs, value in observed if _numeric(value)]
    if len(numeric) < MIN_OBSERVATIONS or not misconceptions:
        return None

    def computes(fn: Callable, kwargs: dict, value: Any) -> bool:
        try:
            return values_match(normalise(fn(**kwargs)), value, rel_tol, abs_tol)
        except Exception:  # the model (or the reference) has no value here: no evidence for it
            return False

    if all(computes(reference_fn, kwargs, value) for kwargs, value in numeric):
        return None   # the numbers are right: the failure is elsewhere (an error, a property)
    return next((m for m in misconceptions if all(computes(m.model, kw, v) for kw, v in numeric)), None)


def feedback_line(misconception: Misconception) -> str:
    """What the student reads under the failing check."""
    return (f"Likely misconception: {misconception.name}.\n{misconception.explanation}\n"
            f"(The lab discusses it in {misconception.where}.)")
