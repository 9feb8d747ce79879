"""The lab02_interconnect sample class behaves as its folder names say (graded through the engine).

The submissions are materialised over a freshly built source folder (stub, provided files, public
checks, notebook), so the test does not depend on release/ having been regenerated.
"""
from __future__ import annotations


import pytest

from labs.lab02_interconnect import ASSIGNMENT
from autograder.classroom.samples import grade_class

FUNCTIONS = [f.name for f in ASSIGNMENT.functions]
QUESTIONS = [q.id for q in ASSIGNMENT.questions]


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    return grade_class(ASSIGNMENT, tmp_path_factory.mktemp("class"))


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
             "min_ib_links", "act1_reflection", "act2_reflection", "lab02_pipeline"}
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


def test_design_challenge_scores_what_each_sample_wrote(scores):
    """correct: a 4-stage cut (not the reference's); partly_wrong: 16 stages with 16 micro-batches,
    whose bubble puts it in the danger state (1 of 3 constraints); wrong_predictions: 2.5 stages (0);
    broken and untouched: unanswered (0)."""
    challenge = ASSIGNMENT.challenges[0]
    share = {"correct": 1, "partly_wrong": 1 / 3, "wrong_predictions": 0, "broken": 0, "untouched": 0}
    for student, fraction in share.items():
        assert scores[student][challenge.id] == pytest.approx((fraction * challenge.points, challenge.points)), student
