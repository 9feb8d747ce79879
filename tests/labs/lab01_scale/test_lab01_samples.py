"""Lab 01 demo class (samples/lab01_scale/): each sample student scores as its name says.

The samples are materialised over a freshly built source/ folder (stub, provided modules, public
tests, notebook; no nbgrader run needed) so the test does not depend on the committed release/.
"""
import json
from pathlib import Path

import pytest

from autograder.classroom import samples
from labs.lab01_scale import ASSIGNMENT

FUNCTIONS = [f.name for f in ASSIGNMENT.functions]
QUESTIONS = [q.id for q in ASSIGNMENT.questions]
SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "lab01_scale"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return samples.grade_class(ASSIGNMENT, tmp_path_factory.mktemp("lab01_class"), SAMPLES)


def test_the_class(graded):
    assert sorted(graded) == ["broken", "correct", "partly_wrong", "untouched", "wrong_predictions"]


def test_correct_gets_full_marks(graded):
    assert all(s == m for s, m in graded["correct"].values()), graded["correct"]


def test_untouched_stub_gets_zero(graded):
    assert all(s == 0 for s, _ in graded["untouched"].values())


def test_broken_module_scores_zero_on_every_function(graded):
    assert all(graded["broken"][f][0] == 0 for f in FUNCTIONS)


def test_partly_wrong_loses_exactly_on_its_wrong_functions(graded):
    wrong = {"data_parallel_speedup", "on_prem_cost", "breakeven_utilization"}
    # its cheapest_option is right but calls its own wrong on_prem_cost, so hidden inputs near a cost
    # tie pick another option: it loses the hidden share only (its examples and properties hold)
    hidden_share = {"cheapest_option"}
    for f in FUNCTIONS:
        score, max_score = graded["partly_wrong"][f]
        assert (score < max_score) == (f in wrong | hidden_share), f
        if f in hidden_share:
            assert score >= max_score / 2, (f, score)
    answers = json.loads((SAMPLES / "partly_wrong" / "answers.json").read_text())
    for q in QUESTIONS:
        assert (graded["partly_wrong"][q][0] > 0) == (answers[q] == "@key"), q


def test_wrong_predictions_full_code_marks_and_zero_answers(graded):
    assert all(graded["wrong_predictions"][f][0] == graded["wrong_predictions"][f][1] for f in FUNCTIONS)
    assert all(graded["wrong_predictions"][q][0] == 0 for q in QUESTIONS)


def test_design_challenge_scores_what_each_sample_wrote(graded):
    """correct: a valid what-if (not the reference's); partly_wrong: the story's 3 years, whose
    breakeven it computes right but where on-prem does not win (1 of 3 constraints); wrong_predictions:
    a computed value, which is not read (0); broken and untouched: unanswered (0)."""
    challenge = ASSIGNMENT.challenges[0]
    share = {"correct": 1, "partly_wrong": 1 / 3, "wrong_predictions": 0, "broken": 0, "untouched": 0}
    for student, fraction in share.items():
        assert graded[student][challenge.id] == pytest.approx((fraction * challenge.points, challenge.points)), student
