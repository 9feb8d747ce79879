"""Grading power of lab06_collectives through the engine: four gradings, shared per module.

* the reference (flat imports, a notebook answered with the computed keys): full marks everywhere;
* impls/alt_correct.py (other algebra, numpy, ints): full marks on every function item;
* impls/wrong_a.py (the source lab's own formulas) and impls/wrong_b.py (other slips): every
  function item loses points.
"""
from __future__ import annotations

import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from autograder.build.stubgen import flat_imports
from autograder.engine.grade import grade_submission
from labs.lab06_collectives import ASSIGNMENT
from autograder.build.notebook import write_notebook
from autograder.classroom.samples import write_answers

REPO = Path(__file__).resolve().parents[3]
IMPLS = Path(__file__).parent / "impls"
FUNCTIONS = [f.name for f in ASSIGNMENT.functions]


def submission(tmp: Path, module_text: str, answers: dict | None = None) -> Path:
    """A folder shaped like release/lab06_collectives/: the module, the provided files, a notebook."""
    tmp.mkdir(parents=True)
    (tmp / f"{ASSIGNMENT.module}.py").write_text(module_text, encoding="utf-8")
    for name in ASSIGNMENT.provided:
        shutil.copyfile(REPO / "reference" / f"{name}.py", tmp / f"{name}.py")
    notebook = write_notebook(ASSIGNMENT, tmp / f"{ASSIGNMENT.id}.ipynb")
    if answers:
        write_answers(ASSIGNMENT, notebook, answers)
    return tmp


def flat_reference() -> str:
    return flat_imports((REPO / "reference" / "collectives.py").read_text(encoding="utf-8"))


def _grade(name: str, folder: Path) -> dict[str, tuple[float, float]]:
    return grade_submission(ASSIGNMENT, folder, student_id=f"power-{name}").item_scores()


@pytest.fixture(scope="module")
def scores(tmp_path_factory) -> dict[str, dict[str, tuple[float, float]]]:
    keyed = {q.id: "@key" for q in ASSIGNMENT.questions}
    modules = {"reference": (flat_reference(), keyed)}
    for name in ("alt_correct", "wrong_a", "wrong_b"):
        modules[name] = ((IMPLS / f"{name}.py").read_text(encoding="utf-8"), None)
    folders = {name: submission(tmp_path_factory.mktemp(name) / "sub", text, answers)
               for name, (text, answers) in modules.items()}
    # the four gradings are independent: one process each keeps the suite's wall time down
    with ProcessPoolExecutor(max_workers=len(folders)) as pool:
        futures = {name: pool.submit(_grade, name, folder) for name, folder in folders.items()}
        return {name: future.result() for name, future in futures.items()}


def test_reference_gets_full_marks_everywhere(scores):
    lost = {item: s for item, s in scores["reference"].items() if s[0] != s[1]}
    assert not lost, lost
    assert set(scores["reference"]) == set(ASSIGNMENT.item_ids)


def test_alt_correct_gets_full_marks_on_every_function(scores):
    lost = {item: scores["alt_correct"][item] for item in FUNCTIONS
            if scores["alt_correct"][item][0] != scores["alt_correct"][item][1]}
    assert not lost, lost


@pytest.mark.parametrize("impl", ["wrong_a", "wrong_b"])
def test_every_wrong_function_loses_points(scores, impl):
    kept = {item: scores[impl][item] for item in FUNCTIONS if scores[impl][item][0] >= scores[impl][item][1]}
    assert not kept, f"{impl} kept full marks on {kept}"


@pytest.mark.parametrize("impl", ["wrong_a", "wrong_b"])
def test_wrong_functions_lose_most_of_their_points(scores, impl):
    # a wrong formula must not scrape a pass: at most half of any item survives
    generous = {item: scores[impl][item] for item in FUNCTIONS if scores[impl][item][0] > 0.5 * scores[impl][item][1]}
    assert not generous, f"{impl} keeps more than half of {generous}"


def test_unanswered_questions_score_zero(scores):
    for q in ASSIGNMENT.questions:
        assert scores["alt_correct"][q.id][0] == 0
