"""Lab 07's design challenge (labs/lab07_fault_tolerance/challenges.py): several plans get full marks,
each violated constraint loses its share, a malformed plan scores 0 with a reason. At the lab as written
(version 0: a 14 TB checkpoint, 400 GB/s today, a budget of 800 GB/s whose write takes 17.5 s) the best
plan is asynchronous on the budget, checkpointing as each write ends: checkpointing much less often (or
buying much less storage) misses the band though its goodput passes 90 %."""
from __future__ import annotations

import pytest

from autograder.engine.challenges import design_source, grade_answer
from labs.lab07_fault_tolerance import ASSIGNMENT
from labs.lab07_fault_tolerance.challenges import LAB07_PLAN as C


def _grade(interval_s, storage_gb_per_s, asynchronous):
    return grade_answer(C, design_source(C, dict(interval_s=interval_s, storage_gb_per_s=storage_gb_per_s,
                                                 asynchronous=asynchronous)))


def test_wired_into_the_lab():
    assert list(ASSIGNMENT.challenges) == [C] and C.id in ASSIGNMENT.item_ids
    assert all(v.met for v in C.check(C.reference_answer))


@pytest.mark.parametrize("plan", [(18, 800, 1), (20, 800, 1), (21, 700, 1)])
def test_several_asynchronous_plans_get_full_marks(plan):
    grade = _grade(*plan)
    assert grade.score == C.points, grade.feedback


@pytest.mark.parametrize("plan, missed", [
    ((620, 800, 0), [0]),          # synchronous at Young's interval on the budget: under 90 %
    ((1260, 400, 0), [0, 1]),      # the source lab's 21 minutes on today's storage
    ((600, 2000, 0), [0, 1]),      # synchronous on 2 TB/s: 91 %, but Young's is 392 s, and over the budget
    ((15, 800, 1), [0]),           # a 17.5 s write every 15 s
    ((300, 800, 1), [0]),          # every 5 minutes: 94 %, but 17 times the write (too rare)
    ((35, 400, 1), [0, 1]),        # every write on today's storage: half the budget unbought, no interval near the best
    ((18, 1000, 1), [1]),          # near the best, on more storage than the budget
    ((3600, 1000, 1), [0, 1]),     # hourly: 80 %, and over the budget
])
def test_each_violated_constraint_loses_its_share(plan, missed):
    grade = _grade(*plan)
    assert grade.score == pytest.approx(C.points * (1 - len(missed) / len(C.constraints))), grade.feedback
    assert [i for i, line in enumerate(grade.feedback.splitlines()[1:]) if "MISSED" in line] == missed


@pytest.mark.parametrize("source", ["lab07_plan = dict(interval_s=300, storage_gb_per_s=400, asynchronous=2)",
                                    "lab07_plan = dict(interval_s=300, storage_gb_per_s=400)",
                                    "lab07_plan = dict(interval_s='5 min', storage_gb_per_s=400, asynchronous=1)"])
def test_a_malformed_plan_scores_zero_with_a_reason(source):
    grade = grade_answer(C, source)
    assert grade.score == 0 and grade.feedback
