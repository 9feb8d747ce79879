"""How a function item's points are split over its checks.

Shares: worked examples 30 %, the hidden differential check 40 %, properties 30 %. A component
with no checks gives its share to the others in proportion (renormalised); within a share the
points split equally over its checks. Each check is pass/fail, so an item earns partial credit
by passing some checks.

Credit only for physics: the example and property shares of an item count only when the student's
function matches the reference on at least MIN_HIDDEN_SHARE of the hidden check's inputs and is not
a constant where the reference varies (`physics_gate`). A constant (properties such as "zero for a
single rank" hold for 0.0), a lookup table of the public worked examples or a module that only
raises therefore earns nothing, while a function right on most inputs keeps that credit.
"""
from __future__ import annotations

SHARES = {"example": 0.30, "hidden": 0.40, "property": 0.30}
DIGITS = 6  # scores are rounded to micro-points so the JSON sums exactly
MIN_HIDDEN_SHARE = 0.5  # share of hidden inputs matched before example/property points count
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


def physics_gate(hidden_passed: bool, matched: int | None, total: int | None, constant: bool) -> str | None:
    """None when the item's example/property points count, else the reason they do not.

    matched/total: hidden inputs where the function matches the reference (None: not measured,
    e.g. the item aborted first; a hidden check that passed without inputs opens the gate)."""
    if total is None:
        return None if hidden_passed else "the hidden check could not measure the function"
    if constant:
        return "the function returns one value for every hidden input, while the reference's values vary"
    if matched < MIN_HIDDEN_SHARE * total:
        return (f"the function matches the reference on {matched} of {total} hidden inputs "
                f"(at least {MIN_HIDDEN_SHARE:.0%} are needed)")
    return None
