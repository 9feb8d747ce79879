"""Grading power of lab05_parallelism through the engine: the reference and a differently written
correct module (impls/alt_correct.py) get full marks; every function of two wrong modules
(impls/wrong_a.py, mostly the source lab's own formulas; impls/wrong_b.py, other slips) loses
points on its item; the untouched stub gets 0.

Five gradings in all, shared by module-scope fixtures.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from autograder.engine.grade import grade_submission
from labs.lab05_parallelism import ASSIGNMENT
from autograder.build.notebook import write_notebook
from autograder.classroom.samples import reference_answers, write_answers
from autograder.build.stubgen import generate_stub
from autograder.build.stubgen import flat_imports as _flat

HERE = Path(__file__).parent
REFERENCE = HERE.parents[2] / "reference"
FUNCTIONS = [f.name for f in ASSIGNMENT.functions]
QUESTIONS = [q.id for q in ASSIGNMENT.questions]


def _submission(root: Path, module_text: str, answers: str | None, extra=()) -> Path:
    """A folder shaped like release/lab05_parallelism/: module, provided files, the notebook."""
    root.mkdir()
    (root / "parallelism.py").write_text(module_text)
    for provided in (*ASSIGNMENT.provided, *extra):
        (root / f"{provided}.py").write_text(_flat((REFERENCE / f"{provided}.py").read_text()))
    notebook = write_notebook(ASSIGNMENT, root / f"{ASSIGNMENT.id}.ipynb")
    if answers:
        # "@key": every question's key and each challenge's reference design
        write_answers(ASSIGNMENT, notebook, reference_answers(ASSIGNMENT) if answers == "@key"
                      else {q: answers for q in QUESTIONS})
    return root


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab05")
    # The reference imports the Lab 06 formulas it reuses, so its flat copy brings collectives.py.
    subs = {
        "reference": (_flat((REFERENCE / "parallelism.py").read_text()), "@key", ("collectives",)),
        "alt_correct": ((HERE / "impls" / "alt_correct.py").read_text(), "@key", ()),
        "wrong_a": ((HERE / "impls" / "wrong_a.py").read_text(), "@wrong", ()),
        "wrong_b": ((HERE / "impls" / "wrong_b.py").read_text(), "@wrong", ()),
        "stub": (generate_stub(REFERENCE / "parallelism.py"), None, ()),
    }
    return {name: grade_submission(ASSIGNMENT, _submission(tmp / name, text, answers, extra), name)
            for name, (text, answers, extra) in subs.items()}


def _lost(result, item):
    score, maximum = result.item_scores()[item]
    return maximum - score


def test_reference_gets_full_marks(graded):
    result = graded["reference"]
    failed = [(t.name, t.output) for t in result.tests if t.score < t.max_score]
    assert not failed
    assert result.score == pytest.approx(ASSIGNMENT.total_points)


def test_alt_correct_gets_full_marks_on_every_function(graded):
    scores = graded["alt_correct"].item_scores()
    assert {f: scores[f] for f in FUNCTIONS} == {f: (f_.points, f_.points) for f, f_ in
                                                 ((f_.name, f_) for f_ in ASSIGNMENT.functions)}


@pytest.mark.parametrize("wrong", ["wrong_a", "wrong_b"])
@pytest.mark.parametrize("item", FUNCTIONS)
def test_each_wrong_function_loses_points(graded, wrong, item):
    assert _lost(graded[wrong], item) > 0, f"{wrong}.{item} kept full marks"


@pytest.mark.parametrize("wrong", ["wrong_a", "wrong_b"])
def test_wrong_answers_score_zero(graded, wrong):
    for q in QUESTIONS:
        assert graded[wrong].item_scores()[q][0] == 0


def test_untouched_stub_scores_zero(graded):
    assert graded["stub"].score == 0
