"""How a function item's points are split over its checks.

Shares: worked examples 30 %, the hidden differential check 40 %, properties 30 %. A component
with no checks gives its share to the others in proportion (renormalised); within a share the
points split equally over its checks. Each check is pass/fail, so an item earns partial credit
by passing some checks.
"""
from __future__ import annotations

SHARES = {"example": 0.30, "hidden": 0.40, "property": 0.30}
DIGITS = 6  # scores are rounded to micro-points so the JSON sums exactly


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
