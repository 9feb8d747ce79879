"""The lab02_interconnect sample class behaves as its folder names say (graded through the engine).

The submissions are materialised over a release-shaped folder built here (stub, provided files,
notebook), so the test does not depend on release/ having been regenerated.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.grade import grade_submission
from autograder.labs.lab02_interconnect import ASSIGNMENT
from autograder.notebook import write_notebook
from autograder.samples import materialise, students
from autograder.stubgen import generate_stub

REFERENCE = Path(__file__).parents[3] / "reference"
FUNCTIONS = [f.name for f in ASSIGNMENT.functions]
QUESTIONS = [q.id for q in ASSIGNMENT.questions]


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    release = tmp_path_factory.mktemp("release")
    (release / "interconnect.py").write_text(generate_stub(REFERENCE / "interconnect.py"))
    for provided in ASSIGNMENT.provided:
        shutil.copyfile(REFERENCE / f"{provided}.py", release / f"{provided}.py")
    write_notebook(ASSIGNMENT, release / f"{ASSIGNMENT.id}.ipynb")
    out = {}
    for student in students(ASSIGNMENT.id):
        folder = materialise(ASSIGNMENT.id, student, tmp_path_factory.mktemp(student), release_dir=release)
        out[student] = grade_submission(ASSIGNMENT, folder, student).item_scores()
    return out


def full(s):
    return s[0] == s[1]


def test_class_is_complete(scores):
    assert set(scores) == {"correct", "partly_wrong", "broken", "untouched", "wrong_predictions"}


def test_correct_gets_full_marks(scores):
    assert all(full(s) for s in scores["correct"].values()), scores["correct"]


def test_partly_wrong_loses_on_the_labs_mistakes(scores):
    # the lab's Gb/s-as-GB/s, "exactly 2x" ring and one-node inter-node charge; min_ib_links
    # inherits the last one through the student's own hierarchical_allreduce_time
    wrong = {"gbit_to_bytes_per_s", "intra_node_allreduce_time", "hierarchical_allreduce_time",
             "min_ib_links", "act1_reflection", "act2_reflection"}
    s = scores["partly_wrong"]
    assert {item for item, v in s.items() if not full(v)} == wrong


@pytest.mark.parametrize("student", ["broken", "untouched"])
def test_no_module_scores_zero_on_functions(scores, student):
    assert all(scores[student][f][0] == 0 for f in FUNCTIONS)


def test_broken_keeps_its_answers(scores):
    assert full(scores["broken"]["act1_prediction"]) and full(scores["broken"]["act1_reflection"])


def test_wrong_predictions_full_code_zero_answers(scores):
    s = scores["wrong_predictions"]
    assert all(full(s[f]) for f in FUNCTIONS)
    assert all(s[q][0] == 0 for q in QUESTIONS)
