"""Deadline attacks we keep (issue 38): a student with a deadline against the Gradescope door, a regrade
of Gradescope's export and the times a course reads, each beside an honest classmate. The engine's work is
not the subject here: it is a fixed result (half of every item's points), so each attack costs milliseconds;
the table of cases through every door, with the real engine and a real `otter run` per case (and the upload
that carries its own time, dates and course), is tests/doors/test_late_work_doors.py.

Course policy: 10 % per started day late, at most 30 %; due DUE (UTC)."""
from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.doors import gradescope
from autograder.doors import otter as otter_door
from autograder.engine import grade
from autograder.engine.results import Result, TestResult

from door_helpers import gradescope_metadata

DUE = (datetime.now(timezone.utc) - timedelta(days=10)).replace(hour=23, minute=59, second=0, microsecond=0)
EXTENDED = DUE + timedelta(days=2)
DECLARATION = "release_toy:ASSIGNMENT"
SETTINGS = {"due": DUE.isoformat(), "policy": "per_day", "penalty_percent": 10.0, "max_penalty_percent": 30.0,
            "grace_minutes": 0.0, "timezone": "UTC", "extensions": {}}


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat()


@pytest.fixture
def half_marks(assignment, monkeypatch):
    """The engine's result for anyone: half of every item's points (so a penalty has something to take)."""
    def graded(a, folder, student, **_):
        return Result(a.id, student, [TestResult(item, "check", "hidden", points / 2, float(points), "half")
                                      for item, points in a.item_points.items()], "graded", "bubblewrap")
    monkeypatch.setattr(grade, "grade_submission", graded)
    return assignment.total_points / 2


def gradescope_door(assignment, folder: Path, work: Path, metadata: dict, settings=SETTINGS, feedback=None) -> dict:
    """The otter plugin on one upload with Gradescope's metadata, in this process (what `otter run` calls)."""
    from otter.test_files import GradingResults

    config = otter_door.otter_config(assignment.id, DECLARATION, {}, feedback or {}, settings)["plugins"][0][otter_door.PLUGIN]
    top = work / "submission"
    shutil.copytree(folder, top)
    plugin = otter_door.EngineOverride(str(top / f"{assignment.id}.ipynb"), metadata, config)
    plugin.before_grading(None)
    results = GradingResults([])
    plugin.after_grading(results)
    return results.to_gradescope_dict(None)


def seen(markdown: str) -> str:
    """A test's markdown as the student reads it (Gradescope renders `output_format: "md"`): its text."""
    import re

    from markdown_it import MarkdownIt

    return " ".join(re.sub(r"<[^>]+>", " ", MarkdownIt("commonmark").render(markdown)).split())


def own_finals(results: dict) -> dict[str, float]:
    raw = Result.from_gradescope(results).score
    return {m: round(raw - (late.penalty_points(raw) if late.status == "late" else 0.0), 6)
            for m, late in gradescope.recorded_members(results).items()}


@pytest.mark.parametrize("extended, late", [("abe", "zed"), ("ben", "amy")])
def test_a_group_is_priced_per_member_whoever_has_the_smaller_id(extended, late, assignment, submissions,
                                                                 half_marks, tmp_path):
    """A group's upload 26 h after the due date; one member has a Gradescope extension. Before: both were
    assessed as the smallest id. ("abe", "zed"): a late student who adds a classmate holding an extension
    paid nothing (0 % instead of 20 %); ("ben", "amy"): a student with an extension lost it to a partner with
    a smaller id (20 % off). Now each member is assessed on their own due date; Gradescope's one score is
    the lowest member's, and the output gives each member's own final score and why they differ."""
    metadata = gradescope_metadata({extended: EXTENDED, late: DUE}, iso(DUE + timedelta(hours=26)), DUE)
    results = gradescope_door(assignment, submissions["ada"], tmp_path, metadata)
    finals = own_finals(results)
    assert finals == {extended: half_marks, late: pytest.approx(half_marks * 0.8)}
    assert results["score"] == pytest.approx(half_marks * 0.8)        # nobody gains by grouping
    penalty = next(t for t in results["tests"] if t["name"] == gradescope.LATE_TEST)
    shown = seen(penalty["output"])
    assert "each is assessed on their own" in shown and f"{extended} {half_marks:g}" in shown, shown
    assert penalty["output"] in results["output"] and penalty["visibility"] == "visible"


def test_what_an_upload_says_of_its_own_time_or_dates_is_never_read(assignment, course, submissions, half_marks, tmp_path):
    """An upload carrying its own submission_metadata.json (an early created_at, an extension) and a
    timestamp.txt of the day before: the time and dates are Gradescope's, so it is late all the same."""
    folder = tmp_path / "upload"
    shutil.copytree(course / "submitted" / "ada" / assignment.id, folder)     # ada's hand-in (`submissions`)
    forged = gradescope_metadata({"eve": EXTENDED + timedelta(days=30)}, iso(DUE - timedelta(days=1)), DUE + timedelta(days=30))
    (folder / "submission_metadata.json").write_text(json.dumps(forged))
    (folder / "timestamp.txt").write_text((DUE - timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    metadata = gradescope_metadata({"eve": DUE}, iso(DUE + timedelta(hours=26)), DUE)
    results = gradescope_door(assignment, folder, tmp_path / "run", metadata)
    assert results["score"] == pytest.approx(half_marks * 0.8) and own_finals(results) == {"eve": pytest.approx(half_marks * 0.8)}


def test_gradescopes_metadata_is_read_before_anything_of_the_students_runs(assignment, submissions, monkeypatch, tmp_path):
    """Were student code to rewrite /autograder/submission_metadata.json (or the dict otter loaded) while it
    is graded, nothing would change: the door has read who, when, the dates and the earlier submissions
    before the engine runs."""
    metadata = gradescope_metadata({"eve": DUE}, iso(DUE + timedelta(hours=26)), DUE)

    def rewriting(a, folder, student, **_):
        metadata.update(gradescope_metadata({"eve": EXTENDED + timedelta(days=30)}, iso(DUE - timedelta(days=1)), DUE))
        (Path(folder).parent / "submission_metadata.json").write_text(json.dumps(metadata))
        return Result(a.id, student, [TestResult(i, "check", "hidden", float(p), float(p), "full")
                                      for i, p in a.item_points.items()], "graded", "bubblewrap")
    monkeypatch.setattr(grade, "grade_submission", rewriting)
    results = gradescope_door(assignment, submissions["ada"], tmp_path, metadata)
    assert results["score"] == pytest.approx(assignment.total_points * 0.8)


def test_gradescopes_due_date_applies_and_a_disagreement_with_the_zips_is_named(assignment, submissions, half_marks,
                                                                               tmp_path, capsys):
    """The zip was built with DUE; staff moved the class's due date on Gradescope: a day earlier (a student
    counting on the zip's date is late by Gradescope's) and two days later (a student inside it is on
    time). Each result names the disagreement, for the student (the visible late test) and for staff (the
    autograder's stdout, which only staff see)."""
    earlier = gradescope_door(assignment, submissions["ada"], tmp_path / "earlier",
                              gradescope_metadata({"eve": DUE - timedelta(days=1)}, iso(DUE - timedelta(hours=2)),
                                                  DUE - timedelta(days=1)))
    later = gradescope_door(assignment, submissions["ada"], tmp_path / "later",
                            gradescope_metadata({"sam": EXTENDED}, iso(DUE + timedelta(hours=30)), EXTENDED))
    assert earlier["score"] == pytest.approx(half_marks * 0.9) and later["score"] == half_marks
    for results in (earlier, later):
        penalty = next(t for t in results["tests"] if t["name"] == gradescope.LATE_TEST)
        shown = seen(penalty["output"])                 # Gradescope renders the test's markdown
        assert "is not the [deadlines] due date" in shown and "Gradescope's applies" in shown, shown
    assert capsys.readouterr().out.count("is not the [deadlines] due date") == 2


def test_an_upload_over_the_limit_keeps_the_graded_submission_priced_by_todays_dates(assignment, submissions,
                                                                                    half_marks, tmp_path):
    """Over the submission limit the earlier graded results stand; an extension granted since (Gradescope's
    regrade gives the user's new due date) prices them again: before, the kept copy kept its old penalty."""
    first = gradescope_door(assignment, submissions["ada"], tmp_path / "first",
                            gradescope_metadata({"eve": DUE}, iso(DUE + timedelta(hours=5)), DUE))
    assert first["score"] == pytest.approx(half_marks * 0.9)
    previous = [{"submission_time": iso(DUE + timedelta(hours=5)), "score": first["score"], "results": first}]
    again = gradescope_door(assignment, submissions["dee"], tmp_path / "again",
                            gradescope_metadata({"eve": EXTENDED}, iso(DUE + timedelta(hours=40)), DUE, previous),
                            feedback={"submission_limit": 1})
    assert again["output"].startswith("Submission limit reached: 1 graded submission.")
    assert again["score"] == half_marks and gradescope.kept_from(again) == previous[0]["submission_time"]


def export_of(root: Path, folders: dict, entries: list[tuple[list[str], datetime, dict]]) -> Path:
    """A Gradescope export: submission_<n>/ per entry (the files of folders[its first submitter]) and
    submission_metadata.yml (submitters, created_at, the results the door gave)."""
    import yaml

    metadata = {}
    for number, (who, when, results) in enumerate(entries, 1):
        shutil.copytree(folders[who[0]], root / f"submission_{number}")
        metadata[f"submission_{number}"] = {":submitters": [{":sid": s, ":name": s} for s in who],
                                            ":created_at": when, ":score": results["score"], ":results": results}
    (root / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    return root


@pytest.fixture
def course_with_a_due_date(tmp_path, monkeypatch):
    (tmp_path / "nbgrader_config.py").write_text("")
    (tmp_path / "scalelabs.toml").write_text(
        f'[deadlines]\ntimezone = "UTC"\npolicy = "per_day"\npenalty_percent = 10\nmax_penalty_percent = 30\n\n'
        f'[deadlines.toy06_collectives]\ndue = {DUE.isoformat()}\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_member_added_to_a_group_after_it_was_graded_is_not_taken_at_its_time(assignment, submissions, half_marks,
                                                                                course_with_a_due_date):
    """Ann uploads on time and is graded (on Gradescope, and by grade-batch of the export); later 'aa', a
    classmate with the smaller id who never handed in, is added to her group (Gradescope lets a submitter
    edit the group after uploading). Before: grade-batch of the new export gave 'aa' Ann's on-time record
    and kept Ann's result graded under her old id. Now the group is graded again under its new id (its
    hidden inputs are the group's), Ann keeps her time, and aa's is unknown (Gradescope records no time
    for a group's change): no penalty on a guess, and a person decides."""
    from autograder.classroom.batch import grade_batch

    root = course_with_a_due_date
    graded = gradescope_door(assignment, submissions["ada"], root / "run",
                             gradescope_metadata({"ann": DUE}, iso(DUE - timedelta(hours=1)), DUE))
    alone = export_of(root / "alone", {"ann": submissions["ada"]}, [(["ann"], DUE - timedelta(hours=1), graded)])
    grade_batch(DECLARATION, alone, root / "grades", jobs=1)
    export = export_of(root / "export", {"aa": submissions["ada"]}, [(["aa", "ann"], DUE - timedelta(hours=1), graded)])
    summary = grade_batch(DECLARATION, export, root / "grades", jobs=1)
    assert summary.regraded == {"ann": "their group changed (graded under another id)"}, summary.regraded
    assert summary.late["ann"].status == "on_time"
    assert summary.late["aa"].status == "unknown" and "joined the group after it was graded" in summary.late["aa"].note
    assert "aa" in summary.needs_attention and "ann" not in summary.needs_attention
    record = json.loads((root / "grades" / "results" / "ann.json").read_text())
    assert record["scalelabs"]["graded_as"] == "aa"


def test_grade_batch_outside_the_course_finds_it_or_refuses_and_never_grades_without_the_due_date(assignment,
                                                                                                   submissions, tmp_path):
    """A TA in another folder runs grade-batch on the course's submitted/: before, it printed a "no course
    secret" warning and graded with no due date (a late student kept every point). Now it takes the course
    above the class folder (as --course DIR), whose due date prices the late student; a class with no course
    anywhere is refused in one line, unless --no-course says to grade without one."""
    import subprocess

    from door_helpers import BIN, env

    course, elsewhere = tmp_path / "course", tmp_path / "elsewhere"
    elsewhere.mkdir()
    (course / "submitted").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("")
    (course / "scalelabs.toml").write_text(
        f'[deadlines]\ntimezone = "UTC"\npolicy = "per_day"\npenalty_percent = 10\n\n'
        f'[deadlines.{assignment.id}]\ndue = {DUE.isoformat()}\n')
    for student, late_by in (("ada", timedelta(hours=-1)), ("bob", timedelta(hours=26))):
        folder = course / "submitted" / student / assignment.id
        shutil.copytree(submissions["ada"], folder)
        (folder / "timestamp.txt").write_text((DUE + late_by).strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    scalelabs = [str(BIN / "scalelabs"), "grade-batch", DECLARATION]

    found = subprocess.run([*scalelabs, str(course / "submitted"), "--jobs", "1"], cwd=elsewhere, env=env(True),
                           capture_output=True, text=True)
    assert found.returncode == 0, found.stdout + found.stderr[-2000:]
    assert f"course: {course}" in " ".join(found.stderr.split())
    assert "late work: 1 on time, 1 late (bob)" in found.stdout
    rows = {r["student"]: r for r in __import__("csv").DictReader((course / "grades" / assignment.id / "grades.csv").open())}
    assert float(rows["bob"]["final_score"]) == pytest.approx(float(rows["bob"]["raw_score"]) * 0.8)
    assert not (elsewhere / "grades").exists()

    shutil.copytree(course / "submitted", tmp_path / "loose")
    refused = subprocess.run([*scalelabs, str(tmp_path / "loose"), "--jobs", "1"], cwd=elsewhere, env=env(True),
                             capture_output=True, text=True)
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 2 and "no course found" in said and "--no-course" in said, said
    assert not (elsewhere / "grades").exists()
    alone = subprocess.run([*scalelabs, str(tmp_path / "loose"), "--jobs", "1", "--no-course"], cwd=elsewhere,
                           env=env(True), capture_output=True, text=True)
    assert alone.returncode == 0 and (elsewhere / "grades" / assignment.id / "grades.csv").is_file(), alone.stderr[-2000:]


def test_a_regrade_of_the_export_records_the_kept_results_not_the_upload_over_the_limit(assignment, submissions,
                                                                                        half_marks, course_with_a_due_date):
    """Gradescope kept an upload's earlier results (the submission limit): the export's folder holds the files
    of the upload that was not graded. Before: grade-batch of the export graded those files at the upload's
    time (Gradescope kept 21, grades.csv recorded 30). Now it records the kept results, priced at the time of
    the submission they are from, and grades nothing."""
    from autograder.classroom.batch import grade_batch

    root = course_with_a_due_date
    first = gradescope_door(assignment, submissions["ada"], root / "first",
                            gradescope_metadata({"eve": DUE}, iso(DUE + timedelta(hours=5)), DUE))
    previous = [{"submission_time": iso(DUE + timedelta(hours=5)), "score": first["score"], "results": first}]
    kept = gradescope_door(assignment, submissions["dee"], root / "kept",
                           gradescope_metadata({"eve": DUE}, iso(DUE + timedelta(hours=40)), DUE, previous),
                           feedback={"submission_limit": 1})
    export = export_of(root / "export", {"eve": submissions["dee"]}, [(["eve"], DUE + timedelta(hours=40), kept)])
    summary = grade_batch(DECLARATION, export, root / "grades", jobs=1)
    assert summary.kept == {"eve": previous[0]["submission_time"]}
    row = next(__import__("csv").DictReader((root / "grades" / "grades.csv").open()))
    assert float(row["raw_score"]) == half_marks and float(row["final_score"]) == pytest.approx(half_marks * 0.9)
    assert kept["score"] == pytest.approx(float(row["final_score"]))


def test_nbgrader_export_prices_the_penalty_on_the_score_of_record_as_it_is_now(assignment, course_with_a_due_date):
    """A late student's record in the gradebook (a door wrote it: 20 % of the engine's 5 points), then a TA's
    score by hand in formgrader and an extension granted: before, `nbgrader export` subtracted the old points
    (27.9 instead of 27, here 6 - 1 = 5 instead of 4.8); now the percent of the score of record, under the
    course's deadlines as they are at export time."""
    from nbgrader.api import Gradebook

    from autograder.classroom.deadlines import SubmissionTime, course_deadlines, known_labs
    from autograder.classroom.gradebook import GradebookWriter
    from autograder.doors.nbgrader_export import SafeCsvExport

    root = course_with_a_due_date
    late = course_deadlines(labs=known_labs(assignment.id)).assess(
        assignment.id, "bo", SubmissionTime(DUE + timedelta(hours=26), "nbgrader timestamp.txt"))
    result = Result(assignment.id, "bo", [TestResult(item, "check", "hidden", points / 2, float(points), "half")
                                          for item, points in assignment.item_points.items()])
    data = result.to_gradescope() | {"scalelabs": {"assignment": assignment.id, "student": "bo", "late": late.to_json()}}
    db = f"sqlite:///{root / 'gradebook.db'}"
    with GradebookWriter(db, assignment, "scalelabs") as book:
        book.write({"bo": data})

    def exported() -> dict:
        with Gradebook(db, course_id="scalelabs") as gb:
            SafeCsvExport(to=str(root / "grades.csv")).export(gb)
        return next(r for r in __import__("csv").DictReader((root / "grades.csv").open()) if r["student_id"] == "bo")

    raw = assignment.total_points / 2
    assert float(exported()["final_score"]) == pytest.approx(raw * 0.8)
    with Gradebook(db, course_id="scalelabs") as gb:
        item = assignment.item_ids[0]
        grade = gb.find_grade(item, assignment.id, assignment.id, "bo")
        grade.manual_score = float(assignment.item_points[item])
        gb.db.commit()
    raw += assignment.item_points[assignment.item_ids[0]] / 2
    row = exported()
    assert float(row["raw_score"]) == pytest.approx(raw) and float(row["final_score"]) == pytest.approx(raw * 0.8)
    assert float(row["late_submission_penalty"]) == pytest.approx(raw * 0.2)
    (root / "extensions.csv").write_text(f"student,lab,due\nbo,{assignment.id},{iso(DUE + timedelta(days=2))}\n")
    (root / "scalelabs.toml").write_text((root / "scalelabs.toml").read_text().replace(
        'max_penalty_percent = 30\n', 'max_penalty_percent = 30\nextensions = "extensions.csv"\n'))
    assert float(exported()["final_score"]) == pytest.approx(raw)


# --- session 13: a fresh round (the real `otter run` of an upload carrying its own time, dates, course and a
# module rewriting the metadata is tests/doors/test_late_work_doors.py::test_otter_run_takes_no_time_or_date_...)

def test_a_resubmission_after_the_due_date_is_priced_at_its_own_time(assignment, submissions, half_marks, tmp_path):
    """Sue hands in on time, then again 26 h after the due date (no submission limit): Gradescope's score is the
    last upload's, so it is priced at its own created_at (20 % off), never at the earlier on-time upload's time;
    its page shows no best answer (the key stays in the "(in full)" tests, which Gradescope shows after the due
    date). Ian, who handed in once at the same late time, pays the same."""
    on_time = gradescope_door(assignment, submissions["ada"], tmp_path / "first",
                              gradescope_metadata({"sue": DUE}, iso(DUE - timedelta(hours=1)), DUE))
    assert on_time["score"] == half_marks
    previous = [{"submission_time": iso(DUE - timedelta(hours=1)), "score": on_time["score"], "results": on_time}]
    again = gradescope_door(assignment, submissions["ada"], tmp_path / "again",
                            gradescope_metadata({"sue": DUE}, iso(DUE + timedelta(hours=26)), DUE, previous))
    once = gradescope_door(assignment, submissions["ada"], tmp_path / "once",
                           gradescope_metadata({"ian": DUE}, iso(DUE + timedelta(hours=26)), DUE))
    assert again["score"] == once["score"] == pytest.approx(half_marks * 0.8)
    assert gradescope.kept_from(again) is None and "Submission limit" not in again["output"]
    late = again["extra_data"]["scalelabs"]["late"]
    assert late["status"] == "late" and late["penalty_percent"] == 20


@pytest.mark.parametrize("written, offsets", [("2026-11-01T01:30:00", "-07:00 or -08:00"),    # the clocks go back
                                              ("2026-03-08T02:30:00", "")])                    # ... go forward
def test_a_local_time_the_clock_change_makes_ambiguous_or_skips_is_refused_not_guessed(written, offsets, tmp_path):
    """A TA's --timestamps CSV in the course's zone (America/Los_Angeles, no offset), as a platform's download
    writes local times. At 01:30 on the night the clocks go back, Los Angeles lives that half hour twice: before,
    the first (PDT) was taken, so a student who handed in at 01:30 PST was recorded an hour early (an hour's
    penalty less under `per_hour`); 02:30 on the night they go forward never happened there, and was taken as
    03:30. Now the row is refused with its line and both readings; a time with its offset (the honest
    classmate's row) is read as written."""
    from autograder.classroom.submitted_at import TimestampsError, read_timestamps

    bad = tmp_path / "times.csv"
    bad.write_text(f"student,submitted_at\nian,2026-11-02T09:00:00\nsue,{written}\n")
    with pytest.raises(TimestampsError) as refused:
        read_timestamps(bad, "lab", "America/Los_Angeles")
    said = str(refused.value)
    assert f"{bad} line 3" in said and written in said and "America/Los_Angeles" in said, said
    assert offsets in said and ("twice" if offsets else "never") in said, said
    good = tmp_path / "good.csv"
    good.write_text(f"student,submitted_at\nian,2026-11-02T09:00:00\nsue,{written}-08:00\n")
    times = read_timestamps(good, "lab", "America/Los_Angeles")
    assert times["sue"].when == datetime.fromisoformat(f"{written}-08:00")
    assert times["ian"].when == datetime(2026, 11, 2, 17, 0, tzinfo=timezone.utc)
