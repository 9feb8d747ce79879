"""The lab09_performance sample class behaves as its folder names say (graded through the engine).

The submissions are materialised over a freshly built source folder (stub, provided files, public
checks, notebook), so the test does not depend on release/ having been regenerated.
"""
from __future__ import annotations


import pytest

from labs.lab09_performance import ASSIGNMENT
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
    s = scores["partly_wrong"]
    wrong = {"step_time_reduction", "mfu", "best_fix", "act2_prediction", "lab09_plan"}
    assert {item for item, v in s.items() if not full(v)} == wrong


@pytest.mark.parametrize("student", ["broken", "untouched"])
def test_no_module_scores_zero_on_functions(scores, student):
    assert all(scores[student][f][0] == 0 for f in FUNCTIONS)


def test_untouched_has_no_answers(scores):
    assert all(scores["untouched"][q][0] == 0 for q in QUESTIONS)


def test_wrong_predictions(scores):
    s = scores["wrong_predictions"]
    assert all(full(s[f]) for f in FUNCTIONS) and all(s[q][0] == 0 for q in QUESTIONS)


def test_design_challenge_scores_what_each_sample_wrote(scores):
    """correct: m=16 with 3x compression (not the reference's plan); partly_wrong: every lever at its
    maximum but prefetch, over budget (1 of 2 constraints); wrong_predictions: a lever missing (0);
    broken and untouched: unanswered (0)."""
    challenge = ASSIGNMENT.challenges[0]
    share = {"correct": 1, "partly_wrong": 1 / 2, "wrong_predictions": 0, "broken": 0, "untouched": 0}
    for student, fraction in share.items():
        assert scores[student][challenge.id] == pytest.approx((fraction * challenge.points, challenge.points)), student
