"""How a function item's points are split over its checks.

Shares: worked examples 30 %, the hidden differential check 40 %, properties 30 %. A component
with no checks gives its share to the others in proportion (renormalised); within a share the
points split equally over its checks. Each check is pass/fail, so an item earns partial credit
by passing some checks.

Credit only for physics: the example and property shares of an item count only when the student's
function does clearly better on the hidden check's inputs than any answer that ignores the physics
(`physics_gate`). Such an input-blind answer is the reference's most common value on those inputs,
or the best fixed threshold on one argument (two values, one each side: "ring" above 3 MB, else
"tree"), whichever matches more of them (`input_blind_matches`, fitted on those very inputs, so no
fixed rule a student writes does better). The student's function must match the reference on at
least half of the inputs, and on at least as many as that blind answer plus MARGIN of the rest. For
a function of many values the blind answer matches almost nothing and this is "match at least
half"; for a function of few values ("ring" or "tree", True or False, a count of links) it asks for
a third of what no threshold gets right. Every input
drawn counts, whatever the function returned or raised. A constant (properties such as "zero for a
single rank" hold for 0.0), a lookup table of the public worked examples, a module that answers them
and raises elsewhere, or a fixed threshold therefore earns nothing, while a function right on most
inputs keeps that credit.
"""
from __future__ import annotations

import math
from collections import Counter
from numbers import Real
from typing import Any, Sequence

SHARES = {"example": 0.30, "hidden": 0.40, "property": 0.30}
DIGITS = 6  # scores are rounded to micro-points so the JSON sums exactly
MIN_HIDDEN_SHARE = 0.5   # of the hidden inputs, the share a function must match
MARGIN = 1 / 3           # of those an input-blind answer misses, the share a function must also match
GATED_KINDS = ("example", "property")


def check_points(points: float, kinds: list[str]) -> list[float]:
    """Points of each check, given each check's kind ("example", "hidden" or "property").

    The last check absorbs rounding so the checks' points sum to exactly `points`.
    """
    if not kinds:
        return []
    counts = {k: kinds.count(k) for k in SHARES}
    total_share = sum(share for k, share in SHARES.items() if counts[k])
    raw = [points * SHARES[k] / total_share / counts[k] for k in kinds]
    rounded = [round(x, DIGITS) for x in raw[:-1]]
    return rounded + [round(points - sum(rounded), DIGITS)]


def total(scores) -> float:
    return round(sum(scores), DIGITS)


def input_blind_matches(inputs: Sequence[dict], expected: Sequence[Any]) -> int:
    """How many of the reference's values `expected` (on `inputs`, keyword dicts) the best answer that
    ignores the physics matches: the most common value, or the best rule "one value while argument a
    is at most t, another above", over every numeric argument a (a number, or a number inside a dict
    argument) and threshold t, fitted to these very values."""
    labels = [repr(value) for value in expected]
    if not labels:
        return 0
    best = Counter(labels).most_common(1)[0][1]
    for feature in _numeric_features(inputs):
        order = sorted(range(len(labels)), key=lambda i: feature[i])
        left, right = Counter(), Counter(labels)
        for rank, i in enumerate(order[:-1]):
            left[labels[i]] += 1
            right[labels[i]] -= 1
            if feature[order[rank + 1]] != feature[i]:      # a threshold between two distinct values
                best = max(best, left.most_common(1)[0][1] + right.most_common(1)[0][1])
    return best


def _numeric_features(inputs: Sequence[dict]) -> list[list[float]]:
    """Each argument that is a number in every input, and each key of a dict argument whose value is a
    number in every input, as one column of floats."""
    if not inputs or not all(isinstance(kw, dict) for kw in inputs):
        return []
    number = lambda v: isinstance(v, Real) and not isinstance(v, bool)  # noqa: E731
    columns = []
    for name, first in inputs[0].items():
        if all(number(kw.get(name)) for kw in inputs):
            columns.append([float(kw[name]) for kw in inputs])
        elif isinstance(first, dict):
            for key in first:
                if all(isinstance(kw.get(name), dict) and number(kw[name].get(key)) for kw in inputs):
                    columns.append([float(kw[name][key]) for kw in inputs])
    return columns


def physics_gate(hidden_passed: bool, matched: int | None, total: int | None, constant: bool,
                 blind: int = 0) -> str | None:
    """None when the item's example/property points count, else the reason they do not.

    matched/total: hidden inputs where the function matches the reference, of all drawn (None: not
    measured, e.g. the item aborted first; a hidden check that passed without inputs opens the gate);
    blind: how many an input-blind answer matches (`input_blind_matches`)."""
    if total is None:
        return None if hidden_passed else "the hidden check could not measure the function"
    if constant:
        return "the function returns one value for every hidden input, while the reference's values vary"
    needed = needed_matches(total, blind)
    if matched < needed:
        if blind * 2 > total:
            return (f"the function matches the reference on {matched} of {total} hidden inputs, and an answer "
                    f"that ignores the physics (always the most common answer, or a fixed threshold on one "
                    f"argument) matches {blind} of them: at least {needed} are needed")
        return f"the function matches the reference on {matched} of {total} hidden inputs (at least {needed} are needed)"
    return None


def needed_matches(total: int, blind: int) -> int:
    """Matches needed of `total` hidden inputs when an input-blind answer matches `blind`: half of
    them, and no fewer than the blind answer's plus MARGIN of the rest."""
    blind = min(max(blind, 0), total)
    return math.ceil(max(MIN_HIDDEN_SHARE * total, blind + MARGIN * (total - blind)) - 1e-9)
