"""When a student's value equals the reference's: the tolerance policy every check and the
misconception diagnosis share."""
from __future__ import annotations

import math
from typing import Any


def normalise(value: Any) -> Any:
    """A reference return value in the worker's JSON vocabulary (numpy scalars via .item())."""
    if hasattr(value, "item") and not isinstance(value, (bool, int, float, str)):
        return value.item()
    if isinstance(value, tuple):
        return [normalise(v) for v in value]
    return value


def values_match(expected: Any, got: Any, rel_tol: float, abs_tol: float) -> bool:
    """Equal under the tolerance policy: numbers by math.isclose (inf equals inf of the same sign,
    an int is fine where a float is expected), bool/str/None exactly and by type, lists elementwise."""
    if isinstance(expected, bool) or isinstance(got, bool) or isinstance(expected, str) or expected is None:
        return type(got) is type(expected) and got == expected
    if isinstance(expected, (int, float)):
        if type(got) not in (int, float):
            return False
        try:
            e, g = float(expected), float(got)
        except OverflowError:
            return expected == got
        if math.isnan(e) or math.isnan(g):
            return math.isnan(e) and math.isnan(g)
        return math.isclose(e, g, rel_tol=rel_tol, abs_tol=abs_tol)
    if isinstance(expected, list):
        return (isinstance(got, list) and len(got) == len(expected)
                and all(values_match(e, g, rel_tol, abs_tol) for e, g in zip(expected, got)))
    return False
