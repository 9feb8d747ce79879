"""Lab 09's design challenge (labs/lab09_performance/challenges.py): a plan of the lab's three levers
measured with reference/performance.py under the lab's cost model; several plans near the cheapest
that reaches the target get full marks,
each violated constraint loses its share, malformed plans score 0 with a reason."""
import pytest

from autograder.engine.challenges import design_source, grade_answer
import tomllib

from autograder.classroom import samples
from labs import lab_folder
from labs.lab09_performance import ASSIGNMENT
from labs.lab09_performance.scenario import ACT2_PROFILE, BASE_MFU, BUDGET_WEEKS, MFU_TARGET
from labs.lab09_performance.challenges import (COST_BAND, LAB09_PLAN as C, LEAST_WEEKS, lever_factors,
                                                plan_mfu_and_cost, valid_plans)
from reference import performance as ref

NAMES = ("microbatches", "compression", "prefetch_workers")




def _plan(*levers) -> str:
    return design_source(C, dict(zip(NAMES, levers)))


def test_wired_into_the_lab():
    assert ASSIGNMENT.challenges == [C] and C.id in ASSIGNMENT.item_ids


def test_many_plans_are_right_and_the_sources_worked_numbers_hold():
    """Several slider plans cost within the band above the cheapest that reaches the target, which is
    no grid plan's (its ratio r is any number), and no valid plan costs less than it."""
    plans = valid_plans()
    assert len(plans) > 10
    assert all(LEAST_WEEKS <= weeks <= (1 + COST_BAND) * LEAST_WEEKS for _, weeks in plans)
    assert all(grade_answer(C, _plan(*p)).score == C.points for p, _ in plans)
    assert (tuple(C.reference_answer.values()), plan_mfu_and_cost(*C.reference_answer.values())[1]) in plans
    # the source lab's analysis: m=13, r=3 is the cheapest >= 50 % at 6.4 weeks, 50.28 %
    mfu, weeks = plan_mfu_and_cost(13, 3.0, 4)
    assert (round(100 * mfu, 2), round(weeks, 2)) == (50.28, 6.4)


@pytest.mark.parametrize("levers", [(13, 3.0, 4), (12, 3.0, 4), (13, 2.9, 4)])
def test_several_valid_plans_get_full_marks(levers):
    grade = grade_answer(C, _plan(*levers))
    assert grade.score == C.points, grade.feedback


@pytest.mark.parametrize("levers, missed", [
    ((32, 4.0, 16), [0]),          # 58.9 % MFU for 13.8 weeks
    ((16, 3.0, 4), [0]),           # 50.9 % for 6.7 weeks: 8 % above the cheapest plan that reaches 50 %
    ((14, 4.0, 1), [0]),           # 52.4 % for the whole 8-week budget
    ((18, 2.5, 4), [0, 1]),        # 6.15 weeks, under the cheapest that reaches 50 %: 49.8 %
    ((8, 3.0, 4), [0, 1]),         # within budget, 48.3 %: cheaper than any plan that reaches the target
    ((8, 2.0, 16), [0, 1]),        # the lead's plan: 8.4 weeks, 48.3 %
    ((1, 1.0, 4), [0, 1]),         # fewer micro-batches: cheap, and slower than today
])
def test_each_violated_constraint_loses_its_share(levers, missed):
    grade = grade_answer(C, _plan(*levers))
    assert grade.score == pytest.approx(C.points * (1 - len(missed) / len(C.constraints))), grade.feedback
    assert [i for i, line in enumerate(grade.feedback.splitlines()[1:]) if "MISSED" in line] == missed


def test_feedback_numbers_are_the_references():
    mfu = BASE_MFU * ref.multi_component_speedup(ACT2_PROFILE, lever_factors(8, 3.0, 4))
    grade = grade_answer(C, _plan(8, 3.0, 4))
    assert mfu < MFU_TARGET and f"MFU {mfu:.1%}" in grade.feedback and f"of {BUDGET_WEEKS:g}" in grade.feedback


@pytest.mark.parametrize("source, reason", [
    (_plan(4, 1.0, 4), "moves no lever"),
    (_plan(4, 1.0, 2), "moves no lever"),
    (_plan(33, 2.0, 4), "microbatches must be a whole number from 1 to 32"),
    (_plan(8, 4.5, 4), "compression must be a number from 1 to 4"),
    (_plan(8, 0.5, 4), "compression must be a number from 1 to 4"),
    (_plan(8, 2.0, 4.5), "prefetch_workers must be a whole number"),
    (_plan(-8, 2.0, 4), "microbatches must be a whole number from 1 to 32"),
    (f"{C.id} = dict(microbatches=8, compression='2x', prefetch_workers=4)", "compression must be a number literal"),
    (f"{C.id} = dict(microbatches=8, compression=2.0)", "lacks prefetch_workers"),
])
def test_malformed_plans_score_zero_with_a_reason(source, reason):
    grade = grade_answer(C, source)
    assert grade.score == 0.0 and reason in grade.feedback, grade.feedback


def test_sample_class_plans_score_their_declared_share():
    """correct: its version's reference plan; partly_wrong: every lever at its maximum but prefetch, over
    budget (1 of 2 constraints); wrong_predictions: a lever missing (0); each graded in its own version."""
    declared = tomllib.loads((lab_folder(ASSIGNMENT.id) / "samples.toml").read_text(encoding="utf-8"))
    share = {"correct": 1, "partly_wrong": 1 / 2, "wrong_predictions": 0}
    for student, fraction in share.items():
        mine = samples.version(ASSIGNMENT, student).challenge(C.id)
        answer = declared[student]["answers"][C.id]
        source = answer.get("source") or design_source(mine, mine.reference_answer)
        assert grade_answer(mine, source).score == pytest.approx(fraction * C.points), student
    assert declared["correct"]["answers"][C.id] == {"design": "reference"}
    assert all(C.id not in declared[s]["answers"] for s in ("broken", "untouched"))
