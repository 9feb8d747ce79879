"""Input-domain checks shared by every lab module (shipped to students as a provided helper).

Each check raises ValueError naming the offending parameter, so a bad call says what is wrong
instead of returning a silent nonsense number. NaN fails every check (comparisons with NaN are
False), and bool is rejected where a number is expected (True is an int in Python).
"""
from __future__ import annotations

import math
from numbers import Integral, Real


def _real(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return float(value)


def check_count(name: str, value, minimum: int = 1) -> int:
    """A whole count (GPUs, ranks, stages, microbatches) of at least `minimum`."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        if isinstance(value, Real) and not isinstance(value, bool) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be a whole number, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def check_nonneg(name: str, value) -> float:
    """A finite quantity that may be zero (bytes, seconds, FLOP, USD)."""
    x = _real(name, value)
    if x < 0 or math.isinf(x):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return x


def check_positive(name: str, value) -> float:
    """A finite quantity that must be > 0 (bandwidth, peak FLOP/s, a speedup factor)."""
    x = _real(name, value)
    if x <= 0 or math.isinf(x):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return x


def check_fraction(name: str, value, *, open_low: bool = False, open_high: bool = False) -> float:
    """A fraction in [0, 1] (never percent); `open_low`/`open_high` exclude 0 or 1."""
    x = _real(name, value)
    low_ok = x > 0 if open_low else x >= 0
    high_ok = x < 1 if open_high else x <= 1
    if not (low_ok and high_ok):
        lo = "(0" if open_low else "[0"
        hi = "1)" if open_high else "1]"
        raise ValueError(f"{name} must be a fraction in {lo}, {hi} (not percent), got {value!r}")
    return x
