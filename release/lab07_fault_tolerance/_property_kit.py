"""What every lab's public properties module shares: `PublicProperties`, whose `declare` decorator
declares a property on its check (docs/adding-a-lab.md shows a module), and the helpers the modules
used to write out each.

Shipped to students next to the lab's `_properties.py` as `_property_kit.py` (its import there is
made flat by autograder/build/publictests.py), so: stdlib + hypothesis only, no reference, no answers.
"""
from __future__ import annotations

import inspect
from numbers import Real
from typing import Any, Callable

from hypothesis import strategies as st

Check = Callable[[Callable[..., Any], Any], None]


def docstring_meaning(check: Check) -> str:
    """A check's docstring as one sentence: its lines joined by single spaces (a docstring wraps like prose)."""
    doc = inspect.getdoc(check)
    if not doc:
        raise ValueError(f"{getattr(check, '__qualname__', check)!r} has no docstring: give the property its "
                         "meaning as the check's docstring or as meaning=")
    return " ".join(line.strip() for line in doc.splitlines())


class PublicProperties(list):
    """A properties module's `PROPERTIES`: one dict per public property (item, name, meaning, strategy,
    check and, where declared, max_examples) in the order the module declares them, as
    labs.authoring.public_properties and the released public tests read them."""

    def declare(self, item: str, strategy: st.SearchStrategy, *, name: str, meaning: str | None = None,
                max_examples: int | None = None) -> Callable[[Check], Check]:
        """Decorator: the check below is the property `name` of graded function `item` over keyword
        arguments drawn from `strategy`. Its meaning (shown to a student whose function fails it) is
        `meaning`, else the check's docstring. The check is returned unchanged."""
        def add(check: Check) -> Check:
            if any(p["item"] == item and p["name"] == name for p in self):
                raise ValueError(f"{item}: public property {name!r} is declared twice")
            entry = dict(item=item, name=name, meaning=docstring_meaning(check) if meaning is None else meaning,
                         strategy=strategy, check=check)
            if max_examples is not None:
                entry["max_examples"] = max_examples
            self.append(entry)
            return check
        return add


def kwargs(**strategies: st.SearchStrategy) -> st.SearchStrategy:
    """A strategy of keyword-argument dicts, one strategy per argument."""
    return st.fixed_dictionaries(strategies)


def number(value) -> float:
    """`value` as a float, failing the property when the student's function returned no real number
    (a bool is not one)."""
    assert isinstance(value, Real) and not isinstance(value, bool), f"expected a number, got {value!r}"
    return float(value)


def zero_when(message: str, /, *, abs_tol: float = 0.0, **changes) -> Check:
    """A check: the function is 0 (|result| <= abs_tol; exactly 0 by default) when called with the
    drawn arguments and `changes` (each a value, or a function of the drawn dict giving one). It fails
    on anything but a number, and otherwise with `message`, a str.format template of `got` (what the
    function returned) and the arguments of the call: `zero_when("n = {n}: got {got!r}", n=1)`."""
    def check(f, d):
        called = {**d, **{key: change(d) if callable(change) else change for key, change in changes.items()}}
        got = f(**called)
        assert abs(number(got)) <= abs_tol, message.format(got=got, **called)
    return check
