"""Model vs measurement: YOUR functions at a published setup, beside what was measured there.

Shipped with every lab (you do not need to edit it). The notebook's "Model vs measurement" cell
lists published setups; `compare` evaluates your functions at each, prints the published figure
and its source beside your value, and their ratio (your model / published). A function you have
not written yet is named instead of a value ("Implement ... to see this"), as the instruments do.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from _instruments import _calls_returning, explain

__all__ = ["Row", "compare"]


class Row(NamedTuple):
    quantity: str                  # what is compared, and where
    model: Callable[[], Any]       # your functions at the published setup (a lambda)
    published: Any                 # the published figure (the middle of a range), in SI units; or a text
    published_text: str            # as the source gives it: "365-370 GB/s"
    scale: float                   # shown in units of `scale`: 1e9 for GB/s
    unit: str
    source: str                    # where it is published


def _shown(value: Any, row: Row) -> str:
    if isinstance(value, str):
        return value
    return f"{value / row.scale:.3g} {row.unit}"


def line(row: Row) -> str:
    """One row: your value, the published one, the ratio; or what to implement or fix."""
    try:
        value = row.model()
    except Exception as exc:  # the stub's NotImplementedError, or a bug: name it, as an instrument does
        message, _ = explain(exc, f"the published setup of {row.quantity!r}",
                             lambda: _calls_returning(row.model, (), {}))
        return f"{row.quantity}\n  {message.replace(' this instrument', ' this')}"
    if isinstance(row.published, str) or isinstance(value, str):
        verdict = "the same" if str(value).lower() == str(row.published).lower() else "different"
        compared = f"{verdict} ({value!r} against {row.published!r})"
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and row.published:
        compared = f"your model / published = {value / row.published:.2f}"
    else:
        nones = [name for name, returned in _calls_returning(row.model, (), {}) if returned is None]
        if nones:
            return f"{row.quantity}\n  {nones[0]} returned None: it must return its result (is a `return` missing?)"
        return f"{row.quantity}\n  your functions returned {value!r}: a number was expected"
    return (f"{row.quantity}\n  your model: {_shown(value, row)}   published: {row.published_text} "
            f"({row.source})\n  {compared}")


def compare(*rows: Row) -> None:
    print("\n\n".join(line(row) for row in rows))
