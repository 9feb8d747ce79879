"""The misconception coupling: every function of a lab test's wrong implementation
(tests/labs/<lab>/impls/wrong_a.py, wrong_b.py) that returns numbers should compute one of the lab's
declared wrong models (labs/<lab>/misconceptions.py), so the feedback can name it. Compared here in the
grader's process on the worked examples and inputs sampled from the item's hidden domain; the lab
tests then check the engine names exactly these (tests/labs/test_misconceptions.py).
"""
from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType

from autograder.engine.checks import normalise, values_match
from autograder.engine.draw import sample_inputs


def impl_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def inputs(item) -> list[dict]:
    return [dict(ex.kwargs) for ex in item.examples] + sample_inputs(item.domain, seed=15, max_examples=30)


def same(fn_a, fn_b, kwargs_list, item) -> bool | None:
    """True when both give the same numbers on every input both accept; None when none is numeric."""
    seen = 0
    for kwargs in kwargs_list:
        try:
            a = normalise(fn_a(**kwargs))
        except Exception:
            continue
        if isinstance(a, bool) or not isinstance(a, (int, float)):
            return None
        try:
            b = normalise(fn_b(**kwargs))
        except Exception:
            return False
        if not values_match(b, a, item.rel_tol, item.abs_tol) and not (math.isinf(a) and a == b):
            return False
        seen += 1
    return seen > 0 or None


def expected_names(assignment, module: ModuleType) -> dict[str, str | None]:
    """function -> the first declared model the module's function computes (None: none does; absent:
    the function does not return numbers, or returns the reference's)."""
    out: dict[str, str | None] = {}
    for item in assignment.functions:
        points = inputs(item)
        wrong = getattr(module, item.name)
        if same(wrong, getattr(assignment.reference, item.name), points, item) is None:
            continue
        out[item.name] = next((m.name for m in assignment.misconceptions.get(item.name, ())
                               if same(wrong, m.model, points, item)), None)
    return out
