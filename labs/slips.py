"""Building blocks for the labs' misconceptions (labs/<lab>/misconceptions.py): a wrong model is a
reference function with a slip applied, so every number it gives comes from reference/.

    scaled(ref.ring_allreduce_time, 2)                  2x the right value (a factor-of-two slip)
    at(ref.p2p_time, alpha_s=0.0)                       the right formula with one input replaced
    at(ref.compute_time, peak_flops=lambda k: 2 * k["peak_flops"])   ... or rescaled
    percent(ref.comm_fraction, where="Act II")          the common "percent, not a fraction" slip
"""
from __future__ import annotations

from typing import Any, Callable

from autograder.engine.spec import Misconception

Model = Callable[..., Any]


def scaled(fn: Model, factor: float) -> Model:
    """factor * fn(**kwargs)."""
    return lambda **k: factor * fn(**k)


def at(fn: Model, **overrides: Any) -> Model:
    """fn with some keyword arguments replaced: a constant, or a callable of all the kwargs."""
    def model(**k: Any) -> Any:
        return fn(**{**k, **{name: v(k) if callable(v) else v for name, v in overrides.items()}})
    return model


def percent(fn: Model, where: str) -> Misconception:
    """A fraction reported as a percentage (100x the value), as the source labs display them."""
    return Misconception(
        "a percentage instead of a fraction",
        "Your values are 100 times too large: you returned a percentage. The functions return plain\n"
        "fractions and ratios (0.25, not 25); format a percentage only when you print it.",
        where, scaled(fn, 100))


def inverted(fn: Model, where: str) -> Misconception:
    """1 / the right value: a ratio taken upside down."""
    return Misconception(
        "the ratio upside down",
        "Your values are the reciprocals of the right ones: numerator and denominator are swapped.\n"
        "Check which quantity the definition divides by which.",
        where, lambda **k: 1 / fn(**k))
