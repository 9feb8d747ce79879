"""docs/physics.md names a source or an explicit assumption for every constant and every story input a
student sees (issue 43). Read from the page (a lab's section is its `labs/<lab>/physics.md`, copied by
`scalelabs docs`) and from the code, not restated here:

- every constant of reference/constants.py has its row in the hardware table, and the row cites a source;
- every number a lab's scenario.py types (a module-level name whose value holds a numeric literal other
  than 0, 1 or 2, leaving out range() bounds, powers and unit divisors such as `/ 1e9`) is listed in its
  lab's inputs table, labelled "source", "source lab", "assumption" (with the range public figures span),
  "story", "design", "worked example" or "unit", with the value the scenario has;
- every name the table lists is one of the scenario's, or of the lab's challenges.py or questions.py;
- every number the lab's challenges.py or questions.py types into a module-level name that a student
  sees (a design challenge's limits and ranges, a question's option ranges: a literal, not a call) is
  listed too (issue 43's review: the done-when says every input a student sees).
"""
from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pytest

import reference.constants
from labs import all_assignments, lab_folder
from physics_doc import PHYSICS_MD, _sections

LABELS = ("source lab", "source", "assumption", "story", "design", "worked example", "unit")
INPUTS_HEADER = "| input | value | where it comes from |"
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")
SOURCE_MARK = re.compile(r"datasheet|et al\.|#\d+|guide|PCI-SIG|IEEE|\.cc\b|convention|ZeRO|stas00|nvidia-smi", re.I)
LABS = {a.id: a for a in all_assignments().values()}


def _typed_numbers(node: ast.AST) -> list[float]:
    skip = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "range":
            skip |= {id(a) for a in ast.walk(n)}
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
            skip |= {id(a) for a in ast.walk(n)}
        elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and isinstance(n.right, ast.Constant) \
                and isinstance(n.right.value, (int, float)) and n.right.value >= 1000 \
                and math.log10(n.right.value).is_integer():
            skip.add(id(n.right))          # a unit conversion: / 1e9
        elif isinstance(n, ast.Subscript):
            skip |= {id(a) for a in ast.walk(n.slice)}
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and type(n.value) in (int, float)
            and id(n) not in skip and n.value not in (0, 1, 2)]


DECLARATIONS = ("scenario", "challenges", "questions")   # where a lab names what its students see


def _declaration(lab: str, name: str):
    """The module of the lab's DECLARATIONS that defines `name` (the scenario first), or None."""
    for part in DECLARATIONS:
        if (lab_folder(lab) / f"{part}.py").exists():
            module = __import__(f"labs.{lab}.{part}", fromlist=["x"])
            if name in vars(module):
                return module
    return None


def scenario_inputs(lab: str, part: str = "scenario", literal_only: bool = False) -> dict[str, object]:
    """name -> value of every module-level name of the lab's `part`.py whose value types a number
    (`literal_only`: and calls nothing, as a limit or a range does; a declaration built by a call is not one)."""
    path = lab_folder(lab) / f"{part}.py"
    if not path.exists():
        return {}
    module = __import__(f"labs.{lab}.{part}", fromlist=["x"])
    names = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if literal_only and isinstance(node, ast.Assign) and any(isinstance(n, (ast.Call, ast.JoinedStr))
                                                                 for n in ast.walk(node.value)):
            continue   # built by a call, or text formatted from computed values: not an input
        if isinstance(node, ast.Assign) and _typed_numbers(node.value):
            for target in node.targets:
                for name in [target] if isinstance(target, ast.Name) else getattr(target, "elts", []):
                    if isinstance(name, ast.Name) and name.id.isupper():
                        names[name.id] = getattr(module, name.id)
    return names


def inputs_table(lab: str) -> dict[str, tuple[str, str]]:
    """name -> (value cell, where-from cell) of the lab's inputs table in docs/physics.md."""
    title = next(t for t in _sections(PHYSICS_MD.read_text(encoding="utf-8"))
                 if t.endswith(f"`{LABS[lab].module}.py`"))
    body = _sections(PHYSICS_MD.read_text(encoding="utf-8"))[title]
    if INPUTS_HEADER not in body:
        return {}
    rows = {}
    for line in body[body.index(INPUTS_HEADER):].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 3, f"{lab}: an inputs row has {len(cells)} cells: {line[:80]!r}"
        for name in re.findall(r"`(\w+)`", cells[0]):
            rows[name] = (cells[1], cells[2])
    return rows


def test_every_constant_cites_a_source():
    body = _sections(PHYSICS_MD.read_text(encoding="utf-8"))["Hardware constants"]
    rows = [line for line in body.splitlines() if line.startswith("| `")]
    cited = {name: bool(SOURCE_MARK.search(line.split(" | ")[-1])) for line in rows
             for name in re.findall(r"`(\w+)`", line.split(" | ")[0])}
    defined = {n for n in vars(reference.constants) if n.isupper()}
    assert defined <= set(cited), f"constants without a row: {defined - set(cited)}"
    assert all(cited.values()), f"rows that cite no source: {[n for n, ok in cited.items() if not ok]}"


@pytest.mark.parametrize("lab", sorted(LABS))
def test_every_story_input_has_a_source_or_an_assumption(lab):
    typed, table = scenario_inputs(lab), inputs_table(lab)
    assert typed, f"{lab}: no typed inputs found in its scenario"
    missing = sorted(set(typed) - set(table))
    assert not missing, f"{lab}: docs/physics.md (labs/{lab}/physics.md) lists no source for {missing}"
    stale = sorted(name for name in table if _declaration(lab, name) is None)
    assert not stale, f"{lab}: the inputs table names what the scenario does not have: {stale}"
    for name, (value, where) in table.items():
        label = next((lab_ for lab_ in LABELS if where.lower().startswith(lab_)), None)
        assert label, f"{lab}.{name}: {where[:40]!r} starts with none of {LABELS}"
        assert len(where) > len(label) + 5, f"{lab}.{name}: the label says nothing more"
        if label == "assumption":
            assert "range" in where, f"{lab}.{name}: an assumption gives the range public figures span"
        actual = getattr(_declaration(lab, name), name)
        if type(actual) in (int, float):
            numbers = [float(n.replace(",", "")) for n in NUMBER.findall(value.replace("$", ""))]
            assert any(math.isclose(n, actual, rel_tol=1e-9) for n in numbers), \
                f"{lab}.{name}: the table says {value!r}, the scenario {actual!r}"


@pytest.mark.parametrize("lab", sorted(LABS))
def test_every_design_number_beyond_the_scenario_is_listed_too(lab):
    """Before: Lab 02's design challenge asked for "at least 10x" less traffic and a bubble "at or below 10%",
    its Act I options cut at 1.5x, 3x and 5x, Lab 01's what-if offered years 1 to 7: numbers a student sees,
    typed in challenges.py and questions.py, which docs/physics.md did not list."""
    table = inputs_table(lab)
    typed = {name for part in DECLARATIONS[1:] for name in scenario_inputs(lab, part, literal_only=True)
             if not name.startswith("_")}
    missing = sorted(typed - set(table))
    assert not missing, f"{lab}: docs/physics.md (labs/{lab}/physics.md) lists no source for {missing}"
