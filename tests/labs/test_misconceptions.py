"""Named misconceptions on every lab's test implementations, through the engine (bubblewrap).

For each lab the wrong implementations (impls/wrong_a.py, wrong_b.py) are graded, and each function
is compared HERE, in-process, with the lab's declared wrong models on the worked examples and inputs
sampled from the item's hidden domain: the first model that computes the same numbers is what the
feedback must name (its name, explanation and section, and the record's `misconception`); a function
no model reproduces must get none. Every numeric wrong function of the lab tests has a declared model
(so dropping one fails here). The reference and impls/alt_correct.py never get a misconception.
"""
from __future__ import annotations

import importlib.util
import json
import math
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

import labs
from autograder.build.leakscan import scan_text, secrets_for
from autograder.build.notebook import write_notebook
from autograder.build.stubgen import flat_imports
from autograder.engine.checks import normalise, values_match
from autograder.engine.draw import sample_inputs
from autograder.engine.grade import grade_submission
from autograder.engine.results import Result

REPO = Path(__file__).resolve().parents[2]
LABS = sorted(labs.all_assignments())
IMPLS = ("reference", "alt_correct", "wrong_a", "wrong_b")


def _source(lab: str, impl: str) -> str:
    assignment = labs.load(lab)
    if impl == "reference":
        return flat_imports((REPO / "reference" / f"{assignment.module}.py").read_text(encoding="utf-8"))
    return (REPO / "tests" / "labs" / lab / "impls" / f"{impl}.py").read_text(encoding="utf-8")


def _grade(lab: str, impl: str, folder: Path) -> dict:
    assignment = labs.load(lab)
    folder.mkdir(parents=True)
    (folder / f"{assignment.module}.py").write_text(_source(lab, impl), encoding="utf-8")
    for name in assignment.provided:
        (folder / f"{name}.py").write_text((REPO / "reference" / f"{name}.py").read_text(encoding="utf-8"))
    write_notebook(assignment, folder / f"{assignment.id}.ipynb")
    # through the JSON a TA's results/<student>.json holds, so the record is what is tested
    return json.loads(json.dumps(grade_submission(assignment, folder, student_id=f"mis-{impl}").to_gradescope()))


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[tuple[str, str], Result]:
    root = tmp_path_factory.mktemp("misconceptions")
    with ProcessPoolExecutor(max_workers=2) as pool:
        futures = {(lab, impl): pool.submit(_grade, lab, impl, root / lab / impl) for lab in LABS for impl in IMPLS}
        return {key: Result.from_gradescope(f.result()) for key, f in futures.items()}


def _impl_module(lab: str, impl: str):
    spec = importlib.util.spec_from_file_location(f"{lab}_{impl}", REPO / "tests" / "labs" / lab / "impls" / f"{impl}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _inputs(item) -> list[dict]:
    return [dict(ex.kwargs) for ex in item.examples] + sample_inputs(item.domain, seed=15, max_examples=30)


def _same(fn_a, fn_b, kwargs_list, item) -> bool | None:
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


def _expected_names(lab: str, impl: str) -> dict[str, str | None]:
    """function -> the first declared model the wrong function computes (None: none does; absent:
    the function does not return numbers)."""
    assignment, module = labs.load(lab), _impl_module(lab, impl)
    out: dict[str, str | None] = {}
    for item in assignment.functions:
        inputs = _inputs(item)
        wrong = getattr(module, item.name)
        if _same(wrong, getattr(assignment.reference, item.name), inputs, item) is None:
            continue
        out[item.name] = next((m.name for m in assignment.misconceptions.get(item.name, ())
                               if _same(wrong, m.model, inputs, item)), None)
    return out


@pytest.mark.parametrize("lab", LABS)
def test_each_misconception_is_short_and_points_at_a_section_of_the_notebook(lab):
    from autograder.engine.spec import Markdown

    assignment = labs.load(lab)
    story = "\n".join(cell.text for cell in assignment.notebook if isinstance(cell, Markdown))
    assert assignment.misconceptions
    for function, declared in assignment.misconceptions.items():
        names = [m.name for m in declared]
        assert len(set(names)) == len(names), function
        for m in declared:
            assert m.name and len(m.name) <= 60, m.name
            assert 1 <= len(m.explanation.splitlines()) <= 2, m.name
            assert m.where.removeprefix("the ") in story, (function, m.where)


def _named(result: Result) -> dict[str, str]:
    return {t.item: t.misconception for t in result.tests if t.misconception}


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("impl", ["wrong_a", "wrong_b"])
def test_every_matching_wrong_function_is_named(graded, lab, impl):
    expected = _expected_names(lab, impl)
    undeclared = sorted(name for name, m in expected.items() if m is None)
    assert not undeclared, f"{lab} {impl}: numeric wrong functions with no matching declared model: {undeclared}"
    assert _named(graded[lab, impl]) == expected


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("impl", ["wrong_a", "wrong_b"])
def test_the_feedback_says_what_and_where(graded, lab, impl):
    assignment = labs.load(lab)
    result = graded[lab, impl]
    tagged = [t for t in result.tests if t.misconception]
    assert tagged
    for t in tagged:
        declared = {m.name: m for m in assignment.misconceptions[t.item]}
        m = declared[t.misconception]
        assert t.score < t.max_score, "only a failing check carries the diagnosis"
        assert f"Likely misconception: {m.name}." in t.output
        assert m.explanation in t.output and m.where in t.output
    assert sum(1 for t in tagged) == len({t.item for t in tagged}), "one diagnosis per item"
    # what the explanations add to a feedback page gives away no solution line of the lab
    assert not scan_text(impl, "\n".join(t.output for t in tagged), secrets_for([assignment]), keys=False)


@pytest.mark.parametrize("lab", LABS)
@pytest.mark.parametrize("impl", ["reference", "alt_correct"])
def test_a_correct_function_never_gets_one(graded, lab, impl):
    result = graded[lab, impl]
    assert not _named(result)
    assert not any("misconception" in t.output.lower() for t in result.tests)
