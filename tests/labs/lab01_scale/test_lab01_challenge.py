"""Lab 01's design challenge (labs/lab01_scale/challenges.py): a what-if graded by the reference at
the student's own inputs; several what-ifs get full marks (0.57 at 5 years, never at 1 year, in the
story's numbers), each violated constraint loses its share, malformed answers score 0 with a reason."""
import pytest

import reference.scaling as ref
from autograder.engine.challenges import design_source, grade_answer
from labs.lab01_scale import ASSIGNMENT
from labs.lab01_scale.scenario import PLANT, USD_PER_GPU_HOUR
from labs.lab01_scale.challenges import LAB01_WHATIF as C




def _whatif(years, price, discount, capex, breakeven=None) -> str:
    if breakeven is None:   # what a student's correct breakeven_utilization gives, to two decimals
        breakeven = round(ref.breakeven_utilization(years, price, **dict(PLANT, capex_per_gpu=capex)), 2)
    return design_source(C, dict(years=years, usd_per_gpu_hour=price, reserved_discount=discount,
                                 capex_per_gpu=capex, breakeven_utilization=breakeven))


def test_wired_into_the_lab():
    assert ASSIGNMENT.challenges == [C] and C.id in ASSIGNMENT.item_ids


def test_the_sources_what_ifs():
    # 50,000 USD of capex and staff over 5 x 8,760 h at 2.10 - 0.7 kW x 1.4 x 0.10 USD: 0.5702 (rounded
    # to 0.57 the story's number would hide a slip of half a percent)
    assert ref.breakeven_utilization(5, USD_PER_GPU_HOUR, **PLANT) == pytest.approx(
        50_000 / (5 * 8760 * (2.10 - 0.7 * 1.4 * 0.10)), rel=1e-12)
    assert round(ref.breakeven_utilization(5, USD_PER_GPU_HOUR, **PLANT), 2) == 0.57
    assert ref.breakeven_utilization(1, USD_PER_GPU_HOUR, **PLANT) > 1    # never pays off in one year


@pytest.mark.parametrize("whatif", [(5, 2.1, 0.35, 40_000), (4, 2.5, 0.3, 35_000), (7, 1.5, 0.2, 30_000),
                                    (3, 3.0, 0.4, 25_000)])
def test_several_what_ifs_get_full_marks(whatif):
    grade = grade_answer(C, _whatif(*whatif))
    assert grade.score == C.points, grade.feedback


@pytest.mark.parametrize("source, missed", [
    (_whatif(5, 2.1, 0.35, 40_000, breakeven=0.62), [0]),       # the right what-if, a wrong number
    (_whatif(5, 2.1, 0.55, 40_000), [2]),                       # reserved at 55 % off beats owning
    (_whatif(1, 2.1, 0.35, 40_000), [1, 2]),                    # one year: on-prem never pays off
    (_whatif(1, 2.1, 0.35, 40_000, breakeven=0.57), [0, 1, 2]),
])
def test_each_violated_constraint_loses_its_share(source, missed):
    grade = grade_answer(C, source)
    assert grade.score == pytest.approx(C.points * (1 - len(missed) / len(C.constraints))), grade.feedback
    assert [i for i, line in enumerate(grade.feedback.splitlines()[1:]) if "MISSED" in line] == missed


@pytest.mark.parametrize("source, reason", [
    (_whatif(8, 2.1, 0.35, 40_000, 0.5), "years must be a whole number from 1 to 7"),
    (_whatif(2.5, 2.1, 0.35, 40_000, 0.5), "years must be a whole number"),
    (_whatif(5, 2.1, 0.35, -40_000, 0.5), "capex_per_gpu must be a number from 20000 to 60000"),
    (_whatif(5, 2.1, 35, 40_000, 0.5), "reserved_discount must be a number from 0 to 0.6"),
    (f"{C.id} = dict(years=5, usd_per_gpu_hour=2.1, reserved_discount=0.35, capex_per_gpu=40000, "
     "breakeven_utilization=scaling.breakeven_utilization(5, 2.1, 40000, 700, 1.4, 0.1, 2000))",
     "breakeven_utilization must be a number literal"),
    (f"{C.id} = dict(years=5, usd_per_gpu_hour='$2.10', reserved_discount=0.35, capex_per_gpu=40000, "
     "breakeven_utilization=0.57)", "usd_per_gpu_hour must be a number literal"),
])
def test_malformed_what_ifs_score_zero_with_a_reason(source, reason):
    grade = grade_answer(C, source)
    assert grade.score == 0.0 and reason in grade.feedback, grade.feedback


def test_the_reference_breakeven_is_shown_only_where_the_course_shows_expected_values():
    whatif = _whatif(4, 2.5, 0.3, 35_000, breakeven=0.9)     # a wrong breakeven for this what-if
    truth = ref.breakeven_utilization(4, 2.5, **dict(PLANT, capex_per_gpu=35_000))
    shown, hidden = grade_answer(C, whatif, show_expected=True), grade_answer(C, whatif, show_expected=False)
    assert shown.score == hidden.score < C.points
    assert f"{truth:.4f}" in shown.feedback and f"{truth:.3f}" not in hidden.feedback
    assert "$" in shown.feedback and "$" not in hidden.feedback          # the reference's costs
    assert "MISSED" in hidden.feedback and "you wrote 0.9" in hidden.feedback
