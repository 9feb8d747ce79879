"""The student-facing contract of ../shared/spec/PHYSICS.md holds in reference/ and in every declaration:
each required function exists in its lab's module with exactly the parameter names and order the
spec gives, and is a graded item of that lab. Parsed from the spec itself, not restated here."""
from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

import pytest

from autograder.labs import all_assignments

SPEC = Path(__file__).resolve().parents[2] / "shared" / "spec" / "PHYSICS.md"
SECTION = re.compile(r"^## Lab \d+ .*`(\w+)\.py`", re.M)
ROW = re.compile(r"^\| `(\w+)\((.*?)\)` \|", re.M)


def required_functions() -> list[tuple[str, str, list[str] | None]]:
    """(module, function, parameter names or None where the spec says 'you define the signature')."""
    text = SPEC.read_text(encoding="utf-8")
    sections = list(SECTION.finditer(text))
    found = []
    for i, section in enumerate(sections):
        body = text[section.end(): sections[i + 1].start() if i + 1 < len(sections) else len(text)]
        for row in ROW.finditer(body):
            args = row.group(2).strip()
            params = None if args == "..." else [a.split("=")[0].strip() for a in args.split(",") if a.strip()]
            found.append((section.group(1), row.group(1), params))
    return found


REQUIRED = required_functions()


def test_the_spec_was_parsed():
    modules = {m for m, _, _ in REQUIRED}
    assert modules == {"collectives", "interconnect", "parallelism", "scaling", "performance"}
    assert len(REQUIRED) >= 45


@pytest.mark.parametrize("module, name, params", REQUIRED, ids=[f"{m}.{n}" for m, n, _ in REQUIRED])
def test_reference_has_the_required_signature(module, name, params):
    function = getattr(importlib.import_module(f"reference.{module}"), name, None)
    assert callable(function), f"reference/{module}.py lacks {name}"
    if params is not None:
        actual = list(inspect.signature(function).parameters)
        assert actual[: len(params)] == params, f"{name}{tuple(actual)}: the spec says {tuple(params)}"
        extra = inspect.signature(function).parameters
        assert all(extra[p].default is not inspect.Parameter.empty for p in actual[len(params):]), \
            "parameters beyond the spec's must be optional"


@pytest.mark.parametrize("module, name, params", REQUIRED, ids=[f"{m}.{n}" for m, n, _ in REQUIRED])
def test_required_function_is_a_graded_item(module, name, params):
    labs = [a for a in all_assignments().values() if a.module == module]
    assert len(labs) == 1, f"exactly one lab edits {module}.py"
    graded = {f.name: f.points for f in labs[0].functions}
    assert graded.get(name, 0) > 0, f"{name} is not a graded item of {labs[0].id}"
