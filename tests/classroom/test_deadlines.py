"""The late policy itself (autograder.classroom.deadlines, submitted_at): what a time, an extension and
each policy make of a submission, and how a time a student controls is weighed; no grading here (the
doors: tests/doors/test_late_work_doors.py)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from autograder.classroom.deadlines import Deadlines, ExtensionsError, SubmissionTime, deadlines_from_table
from autograder.classroom.roster import Submitter
from autograder.classroom.submitted_at import (TimestampsError, class_times, from_timestamp_file, nbgrader_time,
                                               read_timestamps)
from autograder.engine.config import ConfigError

LA = ZoneInfo("America/Los_Angeles")
DUE = datetime(2026, 11, 10, 23, 59, tzinfo=LA)
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)


def course(tmp_path, **lab) -> Deadlines:
    (tmp_path / "extensions.csv").write_text("student,lab,due\nkim,lab,2026-11-12T23:59:00\n")
    table = {"timezone": "America/Los_Angeles", "policy": "per_day", "penalty_percent": 10,
             "max_penalty_percent": 30, "grace_minutes": 10, "extensions": "extensions.csv",
             "lab": {"due": DUE.replace(tzinfo=None), **lab}}
    return deadlines_from_table(table, tmp_path / "scalelabs.toml", {"lab"})


def percent(d: Deadlines, late_by: timedelta, student: str = "ann") -> float:
    return d.assess("lab", student, SubmissionTime(DUE + late_by, "test"), NOW).penalty_percent


@pytest.mark.parametrize("late_by, expected", [
    (timedelta(hours=-1), 0), (timedelta(minutes=9), 0),      # early; within the grace period
    (timedelta(minutes=11), 10), (timedelta(hours=24, minutes=1), 20),   # every started day
    (timedelta(minutes=10), 0),                               # the grace period's last second is on time
    (timedelta(hours=24), 10), (timedelta(hours=48), 20),     # exactly one (two) days late: one (two) started
    (timedelta(days=9), 30)])                                 # capped
def test_per_day_policy_with_grace_and_cap(tmp_path, late_by, expected):
    assert percent(course(tmp_path), late_by) == expected


def test_the_grace_period_is_on_time_to_its_last_second_and_said(tmp_path):
    """docs: "up to this long after the due date a submission is on time": recorded and shown on time,
    not late with a nil penalty; a second past it is late."""
    d = course(tmp_path)
    for late_by in (timedelta(minutes=5), timedelta(minutes=10)):
        late = d.assess("lab", "ann", SubmissionTime(DUE + late_by, "t"), NOW)
        assert (late.status, late.note, late.penalty_percent) == ("on_time", "within the grace period", 0), late_by
        assert late.line(8.0, 10.0).endswith(": on time (within the grace period)."), late.line(8.0, 10.0)
    past = d.assess("lab", "ann", SubmissionTime(DUE + timedelta(minutes=10, seconds=1), "t"), NOW)
    assert past.status == "late" and past.penalty_percent == 10


def test_percents_at_their_documented_bounds(tmp_path):
    """penalty_percent and max_penalty_percent are "between 0 and 100": 100 (the cap's default) is a
    setting, 100.5 is one line naming the key."""
    full = course(tmp_path, penalty_percent=100, max_penalty_percent=100)
    assert percent(full, timedelta(hours=1)) == 100
    with pytest.raises(ConfigError, match=r"\[deadlines.lab\] max_penalty_percent = 100.5: must be a number between 0 and 100"):
        course(tmp_path, max_penalty_percent=100.5)


def test_per_hour_zero_and_none(tmp_path):
    assert percent(course(tmp_path, policy="per_hour", penalty_percent=5), timedelta(hours=2, minutes=30)) == 15
    assert percent(course(tmp_path, policy="zero"), timedelta(hours=1)) == 100
    none = course(tmp_path, policy="none").assess("lab", "ann", SubmissionTime(DUE + timedelta(days=2), "t"), NOW)
    assert none.status == "late" and none.penalty_percent == 0      # the lateness is recorded, nothing taken


def test_an_extension_moves_only_that_students_due_date(tmp_path):
    d = course(tmp_path)
    kim = d.assess("lab", "kim", SubmissionTime(DUE + timedelta(days=1), "t"), NOW)
    ann = d.assess("lab", "ann", SubmissionTime(DUE + timedelta(days=1), "t"), NOW)
    assert kim.status == "on_time" and kim.extended and ann.penalty_percent == 10 and not ann.extended
    late_kim = d.assess("lab", "kim", SubmissionTime(DUE + timedelta(days=2, hours=1), "t"), NOW)
    assert late_kim.penalty_percent == 10        # counted from the extension's due date


def test_penalty_is_a_share_of_the_points_earned(tmp_path):
    late = course(tmp_path).assess("lab", "ann", SubmissionTime(DUE + timedelta(hours=30), "t"), NOW)
    assert late.penalty_points(8.0) == pytest.approx(1.6) and late.penalty_points(0.0) == 0
    assert "final score 6.4 / 10" in late.line(8.0, 10.0)


def test_every_line_a_student_reads_of_late_work(tmp_path):
    """The feedback's late-work paragraph, word for word: the due date (an extension's, and the lab's), the
    time and its source in the course's zone, how late, the policy in words, the penalty in points."""
    d = course(tmp_path)
    late = d.assess("lab", "ann", SubmissionTime(DUE + timedelta(hours=26, minutes=5), "nbgrader timestamp.txt"), NOW)
    said = ("Late work: due 2026-11-10 23:59 -08:00; submitted 2026-11-12 02:04 -08:00 (nbgrader timestamp.txt): "
            "1 d 2 h 5 min late. Policy: 10 % per started day late, at most 30 %, after a 10-minute grace period")
    assert late.line(8.0, 10.0) == said + ": 20 % of the raw score 8 = 1.6 points; final score 6.4 / 10."
    assert late.line() == said + ": a penalty of 20 % of the points earned."
    kim = d.assess("lab", "kim", SubmissionTime(DUE + timedelta(hours=3), "t"), NOW)
    assert kim.line(8.0, 10.0) == ("Late work: due 2026-11-12 23:59 -08:00 (extended from 2026-11-10 23:59 -08:00), "
                                   "extensions.csv; submitted 2026-11-11 02:59 -08:00 (t): on time.")
    unknown = d.assess("lab", "ann", SubmissionTime(None, "nbgrader timestamp.txt", "no timestamp.txt"), NOW)
    assert unknown.line(8.0, 10.0) == ("Late work: due 2026-11-10 23:59 -08:00; the submission time cannot be used "
                                       "(no timestamp.txt), so no late penalty was applied; the course staff will check it.")
    policies = [course(tmp_path, **kw).labs["lab"].policy.describe() for kw in (
        dict(policy="per_hour", penalty_percent=5), dict(policy="zero"), dict(policy="none", grace_minutes=0))]
    assert policies == ["5 % per started hour late, at most 30 %, after a 10-minute grace period",
                        "a late submission scores 0, after a 10-minute grace period", "no penalty (lateness is recorded)"]


def test_times_that_cannot_be_used_take_nothing(tmp_path):
    d = course(tmp_path)
    future = d.assess("lab", "ann", SubmissionTime(NOW + timedelta(hours=1), "t"), NOW)
    missing = d.assess("lab", "ann", SubmissionTime(None, "t", "no timestamp.txt"), NOW)
    for late in (future, missing):
        assert late.status == "unknown" and late.penalty_percent == 0
    assert "after the time of grading" in future.note and "no late penalty was applied" in missing.line(5, 10)


def test_nbgrader_timestamps_as_submit_writes_them():
    assert nbgrader_time("2026-11-11 07:30:00.123456 UTC") == datetime(2026, 11, 11, 7, 30, 0, 123456, timezone.utc)
    assert nbgrader_time("2026-11-10 23:30:00.000001 PST", "America/Los_Angeles").utcoffset() == timedelta(hours=-8)
    with pytest.raises(ValueError, match="has no time zone"):   # nbgrader would call it UTC, whatever it was
        nbgrader_time("2026-11-10 23:30:00")
    with pytest.raises(ValueError, match="names no one instant"):
        nbgrader_time("2026-11-10 23:30:00 XYZ", "America/Los_Angeles")
    # an offset of hours and minutes (India, Newfoundland), after a fraction datetime cannot read itself
    assert nbgrader_time("2026-11-11 05:30:00.12 +05:30") == datetime(2026, 11, 11, 0, 0, 0, 120000, timezone.utc)
    assert nbgrader_time("2026-11-10 20:30:00.5 -0330") == datetime(2026, 11, 11, 0, 0, 0, 500000, timezone.utc)


def test_a_timestamp_file_that_is_a_link_is_not_read(tmp_path):
    (tmp_path / "real.txt").write_text("2026-11-01 00:00:00.000000 UTC")
    (tmp_path / "timestamp.txt").symlink_to(tmp_path / "real.txt")
    found = from_timestamp_file(tmp_path)
    assert found.when is None and "cannot be read" in found.problem


def test_a_tas_csv_names_the_line_at_fault(tmp_path):
    csv_path = tmp_path / "times.csv"
    csv_path.write_text("student,submitted_at\nann,2026-11-11T08:00:00+00:00\nbo,2026-11-11 09:00\n")
    rows = read_timestamps(csv_path, "lab", "America/Los_Angeles")       # bo's time is read in the course's zone
    assert rows["bo"].when == datetime(2026, 11, 11, 9, 0, tzinfo=LA) and rows["ann"].source == "times.csv line 2"
    csv_path.write_text("student,submitted_at\nann,2026-11-11T08:00:00+00:00\nann,2026-11-11T09:00:00+00:00\n")
    with pytest.raises(TimestampsError, match="line 3: ann is listed already"):
        read_timestamps(csv_path, "lab")
    csv_path.write_text("student,submitted_at\nann,2099-01-01T00:00:00+00:00\n")
    with pytest.raises(TimestampsError, match="line 2: submitted_at .* is in the future"):
        read_timestamps(csv_path, "lab")


def test_a_tas_csv_with_a_lab_column_gives_each_lab_its_own_rows(tmp_path):
    """A term's one CSV: this lab's rows (and rows with a blank lab) time this lab; another lab's row never
    does, nor counts as the student listed twice."""
    csv_path = tmp_path / "times.csv"
    csv_path.write_text("student,lab,submitted_at\nann,other,2026-11-09T08:00:00+00:00\n"
                        "ann,lab,2026-11-11T08:00:00+00:00\nbo,other,2026-11-09T09:00:00+00:00\n"
                        "cy,,2026-11-11T10:00:00+00:00\n")
    rows = read_timestamps(csv_path, "lab")
    assert sorted(rows) == ["ann", "cy"], rows        # bo handed in the other lab only
    assert rows["ann"].when == datetime(2026, 11, 11, 8, 0, tzinfo=timezone.utc) and rows["ann"].source == "times.csv line 3"
    assert read_timestamps(csv_path, "other")["ann"].source == "times.csv line 2"


def test_a_groups_time_is_its_earliest_members_row(tmp_path):
    """A TA's CSV of a group submission (one folder, two students): the group handed in when its first
    member did (submitted_at's class_times), whatever order the rows come in; a group with no row says so."""
    csv_path = tmp_path / "times.csv"
    csv_path.write_text("student,submitted_at\nbo,2026-11-12T09:00:00+00:00\nann,2026-11-11T08:00:00+00:00\n")
    group = Submitter(tmp_path / "g1", "g1", ("ann", "bo"))
    nobody = Submitter(tmp_path / "g2", "g2", ("cy", "di"))
    times = class_times(tmp_path, [group, nobody], "lab", "", csv_path)
    assert times["g1"].when == datetime(2026, 11, 11, 8, 0, tzinfo=timezone.utc) and times["g1"].source == "times.csv line 3"
    assert times["g2"].when is None and times["g2"].problem == "no row for cy or di in times.csv"


def extensions(tmp_path, text: str) -> Deadlines:
    (tmp_path / "extensions.csv").write_bytes(text.encode("utf-8"))
    table = {"timezone": "America/Los_Angeles", "policy": "per_day", "penalty_percent": 10,
             "extensions": "extensions.csv", "lab": {"due": DUE.replace(tzinfo=None)}}
    return deadlines_from_table(table, tmp_path / "scalelabs.toml", {"lab", "other"})


def test_an_extensions_csv_as_a_spreadsheet_saves_it_reads(tmp_path):
    """A byte-order mark, capitalised headers, extra columns, blank lines and spaces around cells."""
    d = extensions(tmp_path, "\ufeffStudent,Lab,Due,Reason\n\n kim , lab , 2026-11-12T23:59:00 ,flu\n,,,\n")
    assert d.extensions == {("kim", "lab"): datetime(2026, 11, 12, 23, 59, tzinfo=LA)}


@pytest.mark.parametrize("rows, said", [
    ("kim,lab,2026-11-09T23:59:00\n", "line 2: due 2026-11-09T23:59:00 is before lab's own due date"),
    ("kim,lab,2026-11-12T23:59:00\nkim,lab,2026-11-13T23:59:00\n", "line 3: kim already has an extension of lab (line 2)"),
    ("kim,other,2026-11-12T23:59:00\n", "line 2: lab 'other' has no due date in [deadlines]"),
    ("=cmd,lab,2026-11-12T23:59:00\n", "line 2: student id '=cmd' is not a safe student id"),
    ("kim,lab,friday\n", "line 2: due 'friday' is not a date-time"),
    # a bare date was 00:00, the start of that day: the student it was meant to help was 15 h late
    ("kim,lab,2026-11-12\n", "line 2: due '2026-11-12' is a date without a time: write the time too, e.g. "
                             "2026-11-12T23:59:00-08:00"),
    ("kim,lab\n", "line 2: 2 fields where the header has 3")])
def test_an_extensions_row_that_cannot_be_used_names_its_line(tmp_path, rows, said):
    with pytest.raises(ExtensionsError) as raised:
        extensions(tmp_path, "student,lab,due\n" + rows)
    assert str(raised.value).startswith(f"{tmp_path / 'extensions.csv'} {said}"), str(raised.value)


def test_a_bad_table_is_one_line_naming_the_key(tmp_path):
    with pytest.raises(ConfigError, match="policy"):
        deadlines_from_table({"policy": "per_week", "lab": {"due": DUE}}, tmp_path / "scalelabs.toml", {"lab"})


def test_the_zips_copy_reads_back_the_same(tmp_path):
    d = course(tmp_path)
    again = Deadlines.from_settings("lab", d.settings("lab"), "otter_config.json")
    for student, late_by in [("ann", timedelta(hours=30)), ("kim", timedelta(hours=30)), ("ann", timedelta(minutes=5))]:
        when = SubmissionTime(DUE + late_by, "t")
        assert again.assess("lab", student, when, NOW) == d.assess("lab", student, when, NOW)


def test_one_labs_zip_carries_only_that_labs_extensions(tmp_path):
    """lee is extended in another lab, not this one: on Gradescope (the zip's copy) lee's late work in this lab
    costs what it costs natively, and kim's extension here still holds."""
    (tmp_path / "extensions.csv").write_text("student,lab,due\nkim,lab,2026-11-12T23:59:00\n"
                                             "lee,other,2026-11-20T23:59:00\n")
    table = {"timezone": "America/Los_Angeles", "policy": "per_day", "penalty_percent": 10,
             "extensions": "extensions.csv", "lab": {"due": DUE.replace(tzinfo=None)},
             "other": {"due": DUE.replace(tzinfo=None)}}
    d = deadlines_from_table(table, tmp_path / "scalelabs.toml", {"lab", "other"})
    again = Deadlines.from_settings("lab", d.settings("lab"), "otter_config.json")
    when = SubmissionTime(DUE + timedelta(hours=30), "t")
    assert again.assess("lab", "lee", when, NOW).penalty_percent == d.assess("lab", "lee", when, NOW).penalty_percent == 20
    assert again.assess("lab", "kim", when, NOW).penalty_percent == 0
    assert d.assess("other", "lee", when, NOW).penalty_percent == 0    # where lee is extended


def test_an_extension_for_a_student_not_in_the_class_is_refused_by_name(tmp_path):
    """A row naming nobody (a case typo, a classmate of another course) was accepted silently: the student
    it was meant for was priced without it. Checked against the course's roster, or the class folder."""
    d = extensions(tmp_path, "student,lab,due\nkim,lab,2026-11-12T23:59:00\nCarol,lab,2026-11-12T23:59:00\n")
    d.check_students({"kim", "carol"}, "on the course's roster roster.csv", "other")     # rows of another lab only
    with pytest.raises(ExtensionsError) as raised:
        d.check_students({"kim", "carol", "dee"}, "on the course's roster roster.csv")
    assert str(raised.value) == ("extensions.csv line 3: the student Carol is not on the course's roster roster.csv "
                                 "(ids are exact: did you mean carol?): fix the id, or remove the row")
    d.check_students({"kim", "Carol"}, "in the class folder")
    with pytest.raises(ExtensionsError, match=r"line 2: the student kim is not in the class folder: fix the id, or "
                                              r"remove the row; a course roster \(\[course\] roster\) checks ids"):
        d.check_students({"Carol"}, "in the class folder")


def test_a_course_with_a_roster_refuses_an_extension_for_someone_not_on_it(tmp_path):
    from autograder.classroom.deadlines import course_deadlines

    (tmp_path / "nbgrader_config.py").write_text("")
    (tmp_path / "roster.csv").write_text("id,first_name\nkim,Kim\n")
    (tmp_path / "extensions.csv").write_text("student,lab,due\nkim,lab,2026-11-12T23:59:00\nzed,lab,2026-11-12T23:59:00\n")
    (tmp_path / "scalelabs.toml").write_text('[deadlines]\ntimezone = "America/Los_Angeles"\nextensions = '
                                             '"extensions.csv"\n\n[deadlines.lab]\ndue = 2026-11-10T23:59:00\n')
    with pytest.raises(ExtensionsError, match=r"extensions.csv line 3: the student zed is not on the course's roster "):
        course_deadlines(tmp_path / "scalelabs.toml", {"lab"})


def test_the_platforms_dates_apply_and_an_extension_is_the_later_of_the_two(tmp_path):
    """Gradescope's due date (the class's, moved there) applies over [deadlines]'; of Gradescope's extension
    and extensions.csv's the later applies; each disagreement is said, never resolved silently; a platform
    that gives no date leaves [deadlines]'."""
    from autograder.classroom.deadlines import PlatformDates

    d = course(tmp_path)         # kim: extensions.csv to 2026-11-12 23:59
    moved = DUE + timedelta(days=1)
    given = PlatformDates("Gradescope", moved, None, {"ann": moved, "kim": DUE + timedelta(days=3), "lee": moved})
    when = SubmissionTime(DUE + timedelta(days=1, hours=5), "Gradescope created_at")
    ann = d.assess("lab", "ann", when, NOW, given)
    assert (ann.due, ann.lab_due, ann.due_source) == (moved.isoformat(), moved.isoformat(), "Gradescope's due date")
    assert ann.penalty_percent == 10 and ann.disagreement == (
        "Gradescope's due date 2026-11-11 23:59 -08:00 is not the [deadlines] due date 2026-11-10 23:59 -08:00: "
        "Gradescope's applies")
    kim = d.assess("lab", "kim", when, NOW, given)
    assert kim.due == (DUE + timedelta(days=3)).isoformat() and kim.due_source == "Gradescope's extension"
    assert "Gradescope extends kim to 2026-11-13 23:59 -08:00, extensions.csv to 2026-11-12 23:59 -08:00: the later applies" \
        in kim.disagreement and kim.status == "on_time"
    shorter = PlatformDates("Gradescope", DUE, None, {"kim": DUE + timedelta(days=1)})
    kim = d.assess("lab", "kim", when, NOW, shorter)
    assert kim.due == datetime(2026, 11, 12, 23, 59, tzinfo=LA).isoformat() and kim.due_source == "extensions.csv"
    assert "the later applies" in kim.disagreement
    assert d.assess("lab", "ann", when, NOW, PlatformDates("Gradescope")).due == DUE.isoformat()
    # the rule again on what was recorded: an extension added since, the policy changed since
    again = course(tmp_path, penalty_percent=20).reassess("lab", "ann", ann, NOW)
    assert again.penalty_percent == 20 and again.due == moved.isoformat() and again.platform_due == moved.isoformat()


def test_a_course_policy_without_a_lab_due_date_takes_the_platforms_and_the_zip_carries_it(tmp_path):
    """[deadlines] with a policy and no [deadlines.<lab>]: Gradescope's due date is the one; natively there is
    none (no late work); the zip's copy of the settings reads back the same."""
    from autograder.classroom.deadlines import PlatformDates

    d = deadlines_from_table({"timezone": "America/Los_Angeles", "policy": "per_day", "penalty_percent": 10},
                             tmp_path / "scalelabs.toml", {"lab"})
    when = SubmissionTime(DUE + timedelta(hours=30), "Gradescope created_at")
    assert d.assess("lab", "ann", when, NOW) is None
    given = PlatformDates("Gradescope", DUE, None, {})
    assert d.assess("lab", "ann", when, NOW, given).penalty_percent == 20
    again = Deadlines.from_settings("lab", d.settings("lab"), "otter_config.json")
    assert again.assess("lab", "ann", when, NOW, given) == d.assess("lab", "ann", when, NOW, given)
    assert Deadlines().settings("lab") == {} and Deadlines().assess("lab", "ann", when, NOW, given) is None
