"""Lab 05's design challenge (labs/lab05_parallelism/challenges.py): every layout is measured with
reference/parallelism.py; both valid layouts get full marks, each violated constraint loses its
share, and malformed layouts score 0 with a reason."""
import pytest

from autograder.engine.challenges import design_source, grade_answer
from labs.authoring import fmt_bytes
from labs.lab05_parallelism import ASSIGNMENT
from labs.lab05_parallelism.scenario import ACT2
from labs.lab05_parallelism.challenges import LAB05_LAYOUT as C, measure
from reference import parallelism as ref

SHARE = C.points / len(C.constraints)


def _grade(**design):
    return grade_answer(C, design_source(C, design))


def test_wired_into_the_lab():
    assert ASSIGNMENT.challenges == [C] and C.id in ASSIGNMENT.item_ids


@pytest.mark.parametrize("design", [C.reference_answer, dict(tp=8, pp=32, microbatches=384)])
def test_valid_layouts_get_full_marks(design):
    grade = _grade(**design)
    assert grade.score == C.points, grade.feedback


@pytest.mark.parametrize("design, missed", [
    (dict(tp=8, pp=4, microbatches=48), [0]),            # the source lab's keyed layout: out of memory
    (dict(tp=16, pp=8, microbatches=192), [1]),          # fits, small bubble, TP across two nodes
    (dict(tp=1, pp=2, microbatches=1), [0, 2]),
    (dict(tp=16, pp=1, microbatches=1), [0, 1]),
    (dict(tp=16, pp=2, microbatches=1), [0, 1, 2]),
    # No layout of this scenario misses the bubble alone: fewer micro-batches mean more sequences
    # in each, whose activations overflow memory first.
])
def test_each_violated_constraint_loses_its_share(design, missed):
    grade = _grade(**design)
    assert grade.score == pytest.approx(C.points - SHARE * len(missed)), grade.feedback
    assert [i for i, line in enumerate(grade.feedback.splitlines()[1:]) if "MISSED" in line] == missed


def test_feedback_numbers_are_the_references():
    lay = measure(8, 4, 48)
    expected = ref.peak_memory_bytes_per_gpu(ACT2["params"], ACT2["layers"], ACT2["seq_len"], 1, ACT2["hidden"],
                                             ACT2["heads"], 8, 4, 32, 48)
    assert lay["memory"] == pytest.approx(expected)
    assert f"{fmt_bytes(expected)} on the busiest GPU" in _grade(tp=8, pp=4, microbatches=48).feedback


@pytest.mark.parametrize("design, reason", [
    (dict(tp=8, pp=5, microbatches=48), "does not split the 1,024 GPUs"),
    (dict(tp=1, pp=128, microbatches=4), "pp must be a whole number from 1 to 96"),
    (dict(tp=64, pp=2, microbatches=48), "does not divide the 96 attention heads"),
    (dict(tp=8, pp=64, microbatches=48), "does not divide the 96 layers"),
    (dict(tp=8, pp=16, microbatches=5), "does not divide the global batch"),
    (dict(tp=8.5, pp=16, microbatches=192), "tp must be a whole number"),
    (dict(tp=-8, pp=16, microbatches=192), "tp must be a whole number from 1 to 1024"),
    (dict(tp=10 ** 30, pp=16, microbatches=192), "tp must be a whole number from 1 to 1024"),
    (dict(tp="8", pp=16, microbatches=192), "tp must be a number literal"),
])
def test_malformed_layouts_score_zero_with_a_reason(design, reason):
    grade = _grade(**design)
    assert grade.score == 0.0 and reason in grade.feedback, grade.feedback
