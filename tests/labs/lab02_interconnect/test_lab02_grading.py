"""Lab 02 grading power, through the engine: each wrong implementation loses points on every item
it gets wrong, a differently written correct one gets full marks, the reference gets full marks
(questions answered with the computed keys), the untouched stub gets 0.

Five gradings in all, shared through module-scope fixtures.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.engine.grade import grade_submission
from labs.lab02_interconnect import ASSIGNMENT
from autograder.build.notebook import build_notebook
from autograder.classroom.samples import reference_answers, write_answers
from autograder.build.stubgen import generate_stub
from autograder.build.stubgen import flat_imports as _flat

ROOT = Path(__file__).resolve().parents[3]
REFERENCE = ROOT / "reference"
IMPLS = Path(__file__).with_name("impls")
FUNCTIONS = [f.name for f in ASSIGNMENT.functions]

# Which items each wrong implementation gets wrong (wrong_a: the lab's own formulas; wrong_b: others).
WRONG = {"wrong_a": FUNCTIONS, "wrong_b": FUNCTIONS}


def _folder(tmp: Path, name: str) -> Path:
    folder = tmp / name
    folder.mkdir()
    for provided in ASSIGNMENT.provided:
        shutil.copyfile(REFERENCE / f"{provided}.py", folder / f"{provided}.py")
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab02_submissions")
    results = {}
    # The reference: its own module plus the Lab 06/Lab 01 modules it imports, and a notebook
    # answered with the computed keys and the challenge's reference design.
    folder = _folder(tmp, "reference")
    for module in ("collectives", "scaling", "interconnect"):
        (folder / f"{module}.py").write_text(_flat((REFERENCE / f"{module}.py").read_text()))
    notebook = folder / f"{ASSIGNMENT.id}.ipynb"
    nbformat.write(build_notebook(ASSIGNMENT), str(notebook))
    write_answers(ASSIGNMENT, notebook, reference_answers(ASSIGNMENT))   # the keys and a valid design
    results["reference"] = grade_submission(ASSIGNMENT, folder, "reference")
    for name in ("alt_correct", "wrong_a", "wrong_b"):
        folder = _folder(tmp, name)
        shutil.copyfile(IMPLS / f"{name}.py", folder / "interconnect.py")
        results[name] = grade_submission(ASSIGNMENT, folder, name)
    folder = _folder(tmp, "stub")
    (folder / "interconnect.py").write_text(generate_stub(REFERENCE / "interconnect.py"))
    results["stub"] = grade_submission(ASSIGNMENT, folder, "stub")
    return {name: r.item_scores() for name, r in results.items()}


def test_reference_full_marks(graded):
    for item, (score, max_score) in graded["reference"].items():
        assert score == max_score, item


def test_alt_correct_full_marks_on_every_function(graded):
    for item in FUNCTIONS:
        score, max_score = graded["alt_correct"][item]
        assert score == max_score, item


@pytest.mark.parametrize("impl", sorted(WRONG))
def test_wrong_implementations_lose_points(graded, impl):
    lost = [item for item in WRONG[impl] if graded[impl][item][0] >= graded[impl][item][1]]
    assert not lost, f"{impl} kept full marks on {lost}"


def test_untouched_stub_scores_zero(graded):
    assert all(score == 0 for score, _ in graded["stub"].values())
