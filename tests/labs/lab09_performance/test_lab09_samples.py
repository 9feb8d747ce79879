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
    wrong = {"step_time_reduction", "mfu", "best_fix", "act2_prediction"}
    assert {item for item, v in s.items() if not full(v)} == wrong


@pytest.mark.parametrize("student", ["broken", "untouched"])
def test_no_module_scores_zero_on_functions(scores, student):
    assert all(scores[student][f][0] == 0 for f in FUNCTIONS)


def test_untouched_has_no_answers(scores):
    assert all(scores["untouched"][q][0] == 0 for q in QUESTIONS)


def test_wrong_predictions(scores):
    s = scores["wrong_predictions"]
    assert all(full(s[f]) for f in FUNCTIONS) and all(s[q][0] == 0 for q in QUESTIONS)
