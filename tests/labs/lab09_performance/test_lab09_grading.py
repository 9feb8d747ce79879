"""Grading power of lab09_performance through the engine: the reference and a differently written
correct module get full marks, and every function of two wrong modules (several with the source
lab's own mistakes: impls/wrong_a.py, impls/wrong_b.py) loses points on its item.

Four gradings in all, shared by module-scope fixtures.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.build.stubgen import flat_imports
from autograder.engine.grade import grade_submission
from labs.lab09_performance import ASSIGNMENT
from autograder.build.notebook import write_notebook
from autograder.classroom.samples import reference_answers, write_answers

HERE = Path(__file__).parent
REFERENCE = HERE.parents[2] / "reference"
FUNCTIONS = [f.name for f in ASSIGNMENT.functions]


def _submission(root: Path, module_text: str, answers: str) -> Path:
    """A folder shaped like release/lab09_performance/: module, provided files, the notebook."""
    root.mkdir()
    (root / "performance.py").write_text(module_text)
    for provided in ASSIGNMENT.provided:
        shutil.copyfile(REFERENCE / f"{provided}.py", root / f"{provided}.py")
    notebook = write_notebook(ASSIGNMENT, root / f"{ASSIGNMENT.id}.ipynb")
    # "@key": every question's key and each challenge's reference design
    write_answers(ASSIGNMENT, notebook, reference_answers(ASSIGNMENT) if answers == "@key"
                  else {q.id: answers for q in ASSIGNMENT.questions})
    return root


def _flat_reference() -> str:
    return flat_imports((REFERENCE / "performance.py").read_text())


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab09")
    subs = {
        "reference": (_flat_reference(), "@key"),
        "alt_correct": ((HERE / "impls" / "alt_correct.py").read_text(), "@key"),
        "wrong_a": ((HERE / "impls" / "wrong_a.py").read_text(), "@wrong"),
        "wrong_b": ((HERE / "impls" / "wrong_b.py").read_text(), "@wrong"),
    }
    return {name: grade_submission(ASSIGNMENT, _submission(root / name, text, answers), name).item_scores()
            for name, (text, answers) in subs.items()}


@pytest.mark.parametrize("who", ["reference", "alt_correct"])
def test_correct_modules_get_full_marks(scores, who):
    lost = {item: s for item, s in scores[who].items() if s[0] != s[1]}
    assert not lost, f"{who} lost points: {lost}"


@pytest.mark.parametrize("who", ["wrong_a", "wrong_b"])
@pytest.mark.parametrize("function", FUNCTIONS)
def test_wrong_function_loses_points(scores, who, function):
    score, maximum = scores[who][function]
    assert score < maximum, f"{who}.{function} kept full marks"


@pytest.mark.parametrize("who", ["wrong_a", "wrong_b"])
def test_wrong_answers_score_zero(scores, who):
    for q in ASSIGNMENT.questions:
        assert scores[who][q.id] == (0.0, q.points)


def test_every_item_is_graded_at_its_declared_points(scores):
    """Each grading covers every item of the declaration, at the points the declaration gives it
    (a missing item or a wrong maximum would make the grading-power tests above check too little)."""
    points = ({f.name: f.points for f in ASSIGNMENT.functions} | {q.id: q.points for q in ASSIGNMENT.questions}
              | {c.id: c.points for c in ASSIGNMENT.challenges})
    for who, per_item in scores.items():
        assert {item: top for item, (_, top) in per_item.items()} == pytest.approx(points), who
