"""The grade of record's late columns and what a TA reads of lateness (autograder.classroom.record,
gradebook, batch, cli): the penalty is a share of the grade of record (a manual override and extra credit
included), hours are hours, a time that cannot be used takes nothing; the summary's late-work line and
the reason a student's lateness alone is recorded again. No grading here (the doors:
tests/doors/test_late_work_doors.py)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from autograder.classroom.batch import why_reassess
from autograder.classroom.deadlines import Lateness
from autograder.classroom.gradebook import BookLate, CellGrade
from autograder.classroom.record import Row
from autograder.cli import late_summary

DUE = "2026-11-10T23:59:00-08:00"
LATE = Lateness("late", DUE, DUE, submitted_at="2026-11-12T01:59:00-08:00", source="t", late_by_s=26 * 3600.0,
                penalty_percent=20.0, policy="10 % per started day late, at most 30 %")


def row(late=None, book_late=None) -> Row:
    """bob: the engine gave 1 + 3; a TA set `a` to 2 by hand: the grade of record is 5."""
    return Row("bob", {"a": 2.0, "b": 3.0}, {"a": 1.0, "b": 3.0}, 10.0, ["a"], late=late, book_late=book_late)


def test_the_penalty_is_a_share_of_the_grade_of_record_not_the_engines_score():
    late = row(LATE)
    assert (late.score, late.engine_score) == (5.0, 4.0)
    assert late.late_penalty == 1.0 and late.final_score == 4.0       # 20 % of 5, not of 4
    assert late.late_by_hours == 26.0 and late.submitted_at == LATE.submitted_at


def test_a_time_that_cannot_be_used_or_on_time_takes_nothing():
    unknown = row(replace(LATE, status="unknown", submitted_at="", late_by_s=0.0, penalty_percent=0.0))
    assert unknown.late_by_hours == "" and unknown.late_penalty == 0 and unknown.final_score == 5.0
    on_time = row(replace(LATE, status="on_time", late_by_s=300.0, penalty_percent=0.0, note="within the grace period"))
    assert on_time.late_by_hours == pytest.approx(300 / 3600, abs=1e-3) and on_time.late_penalty == 0
    none = row()
    assert (none.submitted_at, none.late_by_hours, none.late_penalty, none.final_score) == ("", "", 0.0, 5.0)


def test_nbgraders_penalty_of_a_student_only_the_gradebook_holds_never_exceeds_the_score():
    book = row(book_late=BookLate("2026-11-12T09:59:00+00:00", DUE, 7200.0, 9.0))
    assert book.late_by_hours == 2.0 and book.late_penalty == 5.0 and book.final_score == 0.0


def test_a_cells_grade_is_the_manual_score_where_set_plus_extra_credit():
    assert CellGrade(1.0, None, None).score == 1.0
    assert CellGrade(1.0, None, 0.5).score == 1.5
    assert CellGrade(1.0, 2.0, 0.5).score == 2.5
    assert CellGrade(None, None, None).score == 0.0


def test_the_summary_line_counts_each_kind_of_lateness():
    late = {"ann": LATE, "bo": replace(LATE, status="on_time", due="2026-11-12T23:59:00-08:00"),
            "cy": replace(LATE, status="unknown"), "di": LATE, "ed": replace(LATE, status="on_time")}
    assert late_summary(late) == ("late work: 2 on time, 2 late (ann, di), 1 with an extension, "
                                  "1 with no usable submission time")
    many = {f"s{i}": LATE for i in range(7)}
    assert late_summary(many).startswith("late work: 0 on time, 7 late (s0, s1, s2, s3, s4, ...), 0 with")


@pytest.mark.parametrize("now, why", [
    (None, "the lab's due date was removed"),
    (replace(LATE, lab_due="2026-11-11T23:59:00-08:00", due="2026-11-11T23:59:00-08:00"), "the lab's due date changed"),
    (replace(LATE, due="2026-11-13T23:59:00-08:00"), "their extension changed"),
    (replace(LATE, policy="a late submission scores 0"), "the late policy changed"),
    (replace(LATE, submitted_at="2026-11-12T02:59:00-08:00"), "their submission time changed"),
    (replace(LATE, penalty_percent=30.0), "their lateness changed"),
    (LATE, None)])
def test_why_a_students_lateness_alone_is_recorded_again(now, why):
    """The reason the summary prints (`regraded 1: <why> (student)`) when a result stands and its lateness moves."""
    assert why_reassess({"scalelabs": {"late": LATE.to_json()}}, now) == why
    if now is not None:
        assert why_reassess({"scalelabs": {}}, now) == "the lab's due date was set"


def test_grades_csv_names_an_override_to_zero_and_a_time_that_needs_a_person():
    """What a TA reads in grades.csv: ann's `a`, set to 0 by hand in formgrader, is in her overridden
    column (an override to nothing is still an override); cy's submission time cannot be used, so her
    row says she needs a person, and why; bob, graded and untouched, has neither."""
    import csv
    import io
    from types import SimpleNamespace

    from autograder.classroom.record import grades_csv, record_rows

    lab = SimpleNamespace(id="lab", item_ids=["a", "b"], total_points=10.0)
    unusable = replace(LATE, status="unknown", submitted_at="", late_by_s=0.0, penalty_percent=0.0,
                       note="timestamp.txt gives 2026-11-10 10:00:00 without a time zone")
    results = {s: {"scalelabs": {"late": (unusable if s == "cy" else LATE).to_json()}} for s in ("ann", "bob", "cy")}
    book = {"ann": {"a": CellGrade(1.0, 0.0, None), "b": CellGrade(3.0, None, None)},
            "bob": {"a": CellGrade(1.0, None, None), "b": CellGrade(3.0, None, None)}}
    rows = record_rows(lab, results, book, scores={s: {"a": 1.0, "b": 3.0} for s in results})
    table = {r["student"]: r for r in csv.DictReader(io.StringIO(grades_csv(lab, rows)))}
    assert (table["ann"]["overridden"], table["ann"]["raw_score"], table["ann"]["engine_score"]) == ("a", "3.0", "4.0")
    assert "the submission time cannot be used (timestamp.txt gives 2026-11-10 10:00:00 without a time zone)" \
        in table["cy"]["needs_attention"]
    assert (table["bob"]["overridden"], table["bob"]["needs_attention"], table["ann"]["needs_attention"]) == ("", "", "")
