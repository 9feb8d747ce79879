"""Lab 07's design challenge (labs/lab07_fault_tolerance/challenges.py): several designs get full marks,
each violated constraint loses its share, a malformed design scores 0 with a reason."""
from __future__ import annotations

import pytest

from autograder.engine.challenges import design_source, grade_answer
from labs.lab07_fault_tolerance import ASSIGNMENT
from labs.lab07_fault_tolerance.challenges import DESIGN as C


def _grade(**design):
    return grade_answer(C, design_source(C, design))


def test_wired_into_the_lab():
    assert list(ASSIGNMENT.challenges) == [C] and C.id in ASSIGNMENT.item_ids


@pytest.mark.parametrize("ports", [3, 4, 8])
def test_several_designs_get_full_marks(ports):
    grade = _grade(ports=ports)
    assert grade.score == C.points, grade.feedback


@pytest.mark.parametrize("ports, missed", [(2, [0]), (9, [1])])
def test_each_violated_constraint_loses_its_share(ports, missed):
    grade = _grade(ports=ports)
    assert grade.score == pytest.approx(C.points * (1 - len(missed) / len(C.constraints))), grade.feedback
    assert [i for i, line in enumerate(grade.feedback.splitlines()[1:]) if "MISSED" in line] == missed


def test_a_design_outside_its_range_scores_zero_with_a_reason():
    grade = grade_answer(C, f"{C.id} = dict(ports=0)")
    assert grade.score == 0 and "ports" in grade.feedback
