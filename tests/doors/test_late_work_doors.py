"""One late policy, every door (issue 28): a class of the toy lab handed in around its due date, with
one extension, scored by `scalelabs grade-batch`, `nbgrader autograde` and otter's autograder on
Gradescope's layout with the times each door reads (nbgrader's timestamp.txt, Gradescope's created_at,
a TA's CSV): the same lateness,
the same penalty, the same score after it, student by student. Times that cannot be used (no zone,
not a time, in the future, missing) give no penalty and are said, in each door.

Course policy: 10 % of the points earned per started day late, at most 30 %, after a 10-minute grace
period; due ten days before the test runs (so no time is in the future by accident)."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import zipfile
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from nbgrader.api import Gradebook

from autograder.classroom import samples
from autograder.classroom.batch import grade_batch
from autograder.classroom.deadlines import final_score, known_labs
from autograder.classroom.report import build_report, write_report
from autograder.doors import gradescope
from autograder.doors import otter as otter_door
from autograder.engine.results import Result

import door_helpers
from door_helpers import BIN, REPO, run, sample_class, toy_course

ZONE = ZoneInfo("America/Los_Angeles")
DUE = (datetime.now(ZONE) - timedelta(days=10)).replace(hour=23, minute=59, second=0, microsecond=0)
EXTENDED = DUE + timedelta(days=2)         # an extension for `extended` and `extended_late`
# student -> when they submitted, relative to the lab's due date; and the penalty the policy gives
TIMES = {
    "early": (DUE - timedelta(hours=1), 0),
    "grace": (DUE + timedelta(minutes=5), 0),                 # within the 10-minute grace period
    "late": (DUE + timedelta(hours=26), 20),                  # two started days
    "capped": (DUE + timedelta(days=5, hours=1), 30),         # six started days, capped at 30 %
    "extended": (DUE + timedelta(hours=47), 0),               # on time by their extension
    "extended_late": (EXTENDED + timedelta(hours=3), 10),     # one started day past their extension
    "moved": (DUE + timedelta(hours=30), 20),                 # on time once the class's due date moves to MOVED
}
MOVED = DUE + timedelta(days=2)
# a group (Gradescope) handing in at GROUP_TIME: gina late by her due date, hal on time by his extension;
# their work is correct, so that its score is the same whoever's id seeds it (Gradescope grades a group
# once, under its smallest id; nbgrader grades each hand-in under its own)
GROUP = {"gina": 20, "hal": 0}
GROUP_TIME = DUE + timedelta(hours=26)
EXTENSIONS = {"extended": EXTENDED, "extended_late": EXTENDED, "hal": EXTENDED}
# nbgrader's timestamp.txt a time cannot be taken from: student -> (content or None for no file, what is said)
UNUSABLE = {
    "nozone": ((DUE + timedelta(days=3)).strftime("%Y-%m-%d %H:%M:%S.%f"), "has no time zone"),
    "malformed": ("yesterday, before midnight", "is not a date-time"),
    "future": ((datetime.now(timezone.utc) + timedelta(days=3)).strftime("%Y-%m-%d %H:%M:%S.%f UTC"),
               "after the time of grading"),
    "missing": (None, "no timestamp.txt"),
}
MODULE, ANSWERS = sample_class()["bob"]     # partly right: the penalty is a share of a partial score
CORRECT = sample_class()["ada"]


def nbgrader_stamp(moment: datetime) -> str:
    """timestamp.txt as `nbgrader submit` writes it (Exchange.timezone UTC, its default)."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f %Z")


@pytest.fixture(scope="module")
def late_course(tmp_path_factory, assignment, monkeypatch_module):
    """The toy course with the policy, the extensions, and the class in nbgrader's submitted/ layout
    (every student hands in the same partly right work; the hidden inputs, hence the engine's score,
    may differ by student: each door's score is compared student by student)."""
    root = tmp_path_factory.mktemp("late-course")
    monkeypatch_module.chdir(root)
    students = [*TIMES, *UNUSABLE, *GROUP]
    # olly's two Gradescope uploads (the table: an upload over the submission limit), not in nbgrader's class
    toy_course(root, assignment, {s: (MODULE, ANSWERS) for s in [*TIMES, *UNUSABLE, "olly_first"]}
               | {s: CORRECT for s in GROUP} | {"olly_second": (None, {})})
    # the course's roster: extension rows are checked against the whole class, whichever part of it is graded
    (root / "roster.csv").write_text("id\n" + "".join(f"{s}\n" for s in [*students, "olly"]))
    (root / "extensions.csv").write_text("student,lab,due\n" + "".join(
        f"{s},{assignment.id},{due.isoformat()}\n" for s, due in EXTENSIONS.items()))
    (root / "scalelabs.toml").write_text(f"""
[deadlines]
timezone = "America/Los_Angeles"
policy = "per_day"
penalty_percent = 10
max_penalty_percent = 30
grace_minutes = 10
extensions = "extensions.csv"

[deadlines.{assignment.id}]
due = {DUE.replace(tzinfo=None).isoformat()}
""")
    folders = {}
    for student in students:
        folders[student] = samples.materialise(assignment.id, student, root / "submitted" / student / assignment.id,
                                               assignment=assignment, release_dir=root / "release" / assignment.id,
                                               samples_dir=root / "samples")
        stamp = nbgrader_stamp(TIMES[student][0]) if student in TIMES else \
            nbgrader_stamp(GROUP_TIME) if student in GROUP else UNUSABLE[student][0]
        if stamp is not None:
            (folders[student] / "timestamp.txt").write_text(stamp)
    return root, folders


def expected_final(score: float, percent: float) -> float:
    return round(score - round(score * percent / 100, 6), 6)


@pytest.fixture(scope="module")
def batch_of_submitted(late_course, assignment, monkeypatch_module):
    """grade-batch of nbgrader's submitted/ (timestamp.txt), from the course."""
    root, _ = late_course
    monkeypatch_module.chdir(root)
    out = root / "grades"
    summary = grade_batch("release_toy:ASSIGNMENT", root / "submitted", out, jobs=2)
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}
    return summary, rows, out


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


@pytest.fixture(scope="module")
def autograded(late_course, assignment, batch_of_submitted):
    """`nbgrader autograde` of the same class (after the batch, into its own gradebook) and its feedback."""
    root, _ = late_course
    shutil.copyfile(root / "gradebook.db", root / "batch-gradebook.db")
    done = run([str(BIN / "nbgrader"), "autograde", assignment.id, "--force"], root)
    run([str(BIN / "nbgrader"), "generate_feedback", assignment.id, "--force"], root)
    book = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", course_id="scalelabs") as gb:
        due = gb.find_assignment(assignment.id).duedate
        for student in [*TIMES, *UNUSABLE]:
            sub = gb.find_submission(assignment.id, student)
            nb = gb.find_submission_notebook(assignment.id, assignment.id, student)
            book[student] = dict(timestamp=sub.timestamp, extension=sub.extension, late_by_s=sub.total_seconds_late,
                                 raw=nb.score, penalty=nb.late_submission_penalty or 0.0)
    return book, due, done.stdout + done.stderr


def test_grade_batch_scores_each_time_as_the_policy_says(batch_of_submitted, late_course):
    summary, rows, out = batch_of_submitted
    for student, (when, percent) in TIMES.items():
        row = rows[student]
        score = float(row["engine_score"])
        assert 0 < score < 10 and float(row["raw_score"]) == pytest.approx(score), student
        assert float(row["late_penalty"]) == pytest.approx(round(score * percent / 100, 6)), student
        assert float(row["final_score"]) == pytest.approx(expected_final(score, percent)), student
        assert datetime.fromisoformat(row["submitted_at"]) == when
        due = EXTENSIONS.get(student, DUE)
        assert float(row["late_by_hours"]) == pytest.approx(max(0, (when - due).total_seconds()) / 3600, abs=1e-3)
        record = json.loads((out / "results" / f"{student}.json").read_text())
        assert record["score"] == pytest.approx(score)      # the engine's score: never mixed with the penalty
        assert record["scalelabs"]["late"]["penalty_percent"] == percent
    assert sorted(s for s, v in summary.late.items() if v.extended) == sorted(EXTENSIONS)


def test_grade_batch_says_which_times_cannot_be_used(batch_of_submitted, late_course):
    summary, rows, out = batch_of_submitted
    for student, (_, said) in UNUSABLE.items():
        row = rows[student]
        score = float(row["engine_score"])
        assert float(row["late_penalty"]) == 0 and float(row["final_score"]) == pytest.approx(score)
        assert row["submitted_at"] == "" and said in row["needs_attention"], (student, row["needs_attention"])
        assert any(said in line for line in summary.attention[student])
        page = (out / "feedback" / f"{student}.html").read_text()
        assert "no late penalty was applied" in page and said in page
    assert set(summary.needs_attention) == set(UNUSABLE)


def test_the_feedback_page_says_how_late_and_the_penalty(batch_of_submitted, late_course):
    _, rows, out = batch_of_submitted
    page = (out / "feedback" / "late.html").read_text()
    assert "1 d 2 h late" in page and "10 % per started day late, at most 30 %" in page
    assert f"final score {rows['late']['final_score'].rstrip('0').rstrip('.')}" in page
    extended = (out / "feedback" / "extended.html").read_text()
    assert "extended from" in extended and ": on time." in extended


def test_nbgrader_autograde_scores_as_grade_batch(autograded, batch_of_submitted, late_course):
    """nbgrader's own model: raw score, late_submission_penalty, and nbgrader export's score (raw less
    the penalty) equal grade-batch's score, late_penalty and final_score; the due date, the time and
    the extension are nbgrader's too."""
    book, due, log = autograded
    _, rows, _ = batch_of_submitted
    assert due == DUE.astimezone(timezone.utc).replace(tzinfo=None)
    for student in [*TIMES, *UNUSABLE]:
        row = rows[student]
        assert book[student]["raw"] == pytest.approx(float(row["raw_score"]), abs=1e-6), student
        assert book[student]["penalty"] == pytest.approx(float(row["late_penalty"]), abs=1e-6), student
        assert book[student]["raw"] - book[student]["penalty"] == pytest.approx(float(row["final_score"]), abs=1e-6)
    for student, (when, _) in TIMES.items():
        assert book[student]["timestamp"] == when.astimezone(timezone.utc).replace(tzinfo=None)
        assert (book[student]["extension"] is not None) == (student in EXTENSIONS)
    for student in UNUSABLE:   # graded all the same (nbgrader itself fails a student on a time it cannot parse)
        assert book[student]["timestamp"] is None and book[student]["penalty"] == 0
        assert f"scalelabs: {student} needs a person" in log


def test_nbgrader_feedback_shows_the_penalty_and_why(autograded, late_course, assignment):
    root, _ = late_course
    page = (root / "feedback" / "late" / assignment.id / f"{assignment.id}.html").read_text()
    assert "Late submission penalty" in page and "1 d 2 h late" in page
    unusable = (root / "feedback" / "malformed" / assignment.id / f"{assignment.id}.html").read_text()
    assert "Late submission penalty" not in unusable and "no late penalty was applied" in unusable


# --- otter run, on Gradescope's layout: the time is Gradescope's created_at ----------------------------

# students of the table's real `otter run`s (gradescope_results, below) that these tests read: late, extended
# and on time, extended and late, capped; and one Gradescope gives no created_at for (a local run)
ON_GRADESCOPE = ["late", "extended", "extended_late", "capped"]
FORGED = nbgrader_stamp(DUE - timedelta(days=1))    # a timestamp.txt in the upload claiming a day early


def gradescope_metadata(users: dict[str, datetime], created_at: str | None, lab_due: datetime = DUE,
                        previous: list | None = None) -> dict:
    """Gradescope's submission_metadata.json of one upload (door_helpers.gradescope_metadata)."""
    return door_helpers.gradescope_metadata(users, created_at, lab_due, previous)


def gradescope_layout(zip_path: Path, folder: Path, ag: Path, metadata: dict) -> Path:
    """/autograder as Gradescope lays it out for one upload: the zip in source/, the upload's files in
    submission/ (with a forged timestamp.txt: the student's file is never the time), and the
    submission_metadata.json Gradescope writes beside them."""
    for sub in ("source", "submission", "results"):
        (ag / sub).mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(ag / "source")
    shutil.copytree(folder, ag / "submission", dirs_exist_ok=True)
    (ag / "submission" / "timestamp.txt").write_text(FORGED)
    (ag / "submission_metadata.json").write_text(json.dumps(metadata))
    return ag


def start_otter_run(ag: Path) -> subprocess.Popen:
    """otter's run_autograder of the zip in `ag` (what Gradescope's run_autograder script calls), as a
    process of its own; its results are ag/results/results.json. (Not from ag's parent: its folder named
    autograder/ would be the `autograder` package for `python -c`.)"""
    return subprocess.Popen([str(BIN / "python"), "-c", "import sys; from otter.run.run_autograder import main; "
                             "main(sys.argv[1], otter_run=True, logo=False)", str(ag)], cwd=ag.parent.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=door_helpers.env(without_rfc3987=True))


def finish_otter_run(ag: Path, process: subprocess.Popen) -> dict:
    output, _ = process.communicate()
    assert process.returncode == 0, f"otter run in {ag} failed:\n{output}"
    return json.loads((ag / "results" / "results.json").read_text())


def otter_runs(zip_path: Path, work: Path, runs: dict[str, tuple[Path, dict]], at_once: int = 2) -> dict[str, dict]:
    """name -> results.json of a real `otter run` of the zip on each (upload folder, metadata), in
    work/<name>/autograder, `at_once` processes at a time (two cores: a run is one process, mostly the
    engine's sandboxed grading)."""
    pending, running, done = list(runs.items()), {}, {}
    while pending or running:
        while pending and len(running) < at_once:
            name, (folder, metadata) = pending.pop(0)
            ag = gradescope_layout(zip_path, folder, work / name / "autograder", metadata)
            running[name] = (ag, start_otter_run(ag))
        name = next(iter(running))
        ag, process = running.pop(name)
        done[name] = finish_otter_run(ag, process)
    return done


@pytest.fixture(scope="module")
def on_gradescope(gradescope_results):
    """student -> results.json of a real `otter run` of the course's zip on Gradescope's layout (the
    table's runs below; extensions given in Gradescope's interface), and `missing`: no created_at."""
    return {s: gradescope_results[s] for s in [*ON_GRADESCOPE, "missing"]}


def test_otter_run_scores_as_grade_batch(on_gradescope, batch_of_submitted):
    """Gradescope's total is grade-batch's final_score, the items keep the engine's score, and the
    penalty is a test of its own; a timestamp.txt in the upload moves nothing."""
    _, rows, _ = batch_of_submitted
    for student in ON_GRADESCOPE:
        results, row = on_gradescope[student], rows[student]
        penalty = [t for t in results["tests"] if t["name"] == gradescope.LATE_TEST]
        items = [t for t in results["tests"] if t["name"] != gradescope.LATE_TEST]
        assert sum(t.get("score", 0) for t in items) == pytest.approx(float(row["engine_score"]), abs=1e-6), student
        assert -penalty[0]["score"] == pytest.approx(float(row["late_penalty"]), abs=1e-6), student
        assert results["score"] == pytest.approx(float(row["final_score"]), abs=1e-6), student
        late = results["extra_data"]["scalelabs"]["late"]
        assert late["penalty_percent"] == TIMES[student][1] and late["source"] == "Gradescope created_at"
        assert (late["due"] != late["lab_due"]) == (student in EXTENSIONS)
        assert penalty[0]["visibility"] == "visible" and penalty[0]["output"] in results["output"]
    assert "late" in on_gradescope["late"]["output"] and "extended from" in on_gradescope["extended"]["output"]
    # the export reads back as the engine's record: the penalty test is not an item's
    record = Result.from_gradescope(on_gradescope["late"])
    assert record.score == pytest.approx(float(rows["late"]["engine_score"]), abs=1e-6)


def test_otter_run_without_created_at_applies_no_penalty(on_gradescope, batch_of_submitted):
    results = on_gradescope["missing"]
    _, rows, _ = batch_of_submitted
    penalty = next(t for t in results["tests"] if t["name"] == gradescope.LATE_TEST)
    assert penalty["score"] == 0 and "no late penalty was applied" in penalty["output"]
    assert "Gradescope gave no created_at" in penalty["output"]
    assert results["score"] == pytest.approx(float(rows["missing"]["engine_score"]), abs=1e-6)


def test_otter_run_takes_no_time_or_date_from_what_the_upload_carries(on_gradescope, gradescope_results):
    """sly (`sly_upload`: a forged submission_metadata.json, a course and extensions.csv of its own, a notebook
    claiming an early time, a module rewriting every submission_metadata.json it can reach while it is graded)
    hands in late's work 26 h late: a real `otter run` prices sly as late, on Gradescope's created_at and
    the class's due date, as it prices late (the honest classmate: the same work at the same time)."""
    sly, late = gradescope_results["sly"], on_gradescope["late"]
    record, honest = sly["extra_data"]["scalelabs"]["late"], late["extra_data"]["scalelabs"]["late"]
    assert record["penalty_percent"] == honest["penalty_percent"] == TIMES["late"][1], record
    assert record["source"] == "Gradescope created_at" and record["due"] == record["lab_due"] == honest["lab_due"]
    raw = Result.from_gradescope(sly).score
    assert 0 < raw < 10 and sly["score"] == pytest.approx(expected_final(raw, TIMES["late"][1]), abs=1e-6)
    assert "extended from" not in sly["output"]


def test_an_upload_after_the_due_date_shows_no_best_answer_before_gradescope_shows_the_rest(gradescope_results,
                                                                                              raw_scores):
    """Issue 37's "best answer with the feedback after the due date", through real `otter run`s: late's upload
    26 h after the due date, and olly's second upload then (a resubmission after the due date, over the
    limit: the on-time upload's results are kept). Both hold a wrong prediction: no test a student sees at once
    (nor the top-level output) names the best answer; it is in the "(in full)" test, which Gradescope shows
    after the due date (its late due date where one is set). The score of record is late's raw less 20 %, and
    the kept on-time upload's raw for olly, not the resubmission's."""
    for name in ("late", "olly"):
        results = gradescope_results[name]
        visible = [t for t in results["tests"] if t.get("visibility") == "visible"]
        in_full = [t for t in results["tests"] if t["name"].endswith(gradescope.IN_FULL)]
        assert visible and in_full, name
        assert not any("The best answer is" in t.get("output", "") for t in visible), name
        assert "The best answer is" not in results["output"], name
        assert any("The best answer is" in t.get("output", "") for t in in_full), name
        assert all(t["visibility"] == "after_due_date" for t in in_full), name
    assert gradescope_results["late"]["score"] == pytest.approx(expected_final(raw_scores["late"]["late"], 20), abs=1e-6)
    olly = gradescope_results["olly"]
    assert gradescope.kept_from(olly) is not None
    assert olly["score"] == pytest.approx(raw_scores["an upload over the submission limit"]["olly"], abs=1e-6)


# --- the class report from every door ------------------------------------------------------------------

def test_the_report_renders_from_a_gradescope_export(on_gradescope, batch_of_submitted, assignment, tmp_path):
    """A Gradescope export (submission_<n>/ folders, submission_metadata.yml with each :results) gives
    the report the engine's scores, the late work and each item's discrimination."""
    import yaml

    _, rows, _ = batch_of_submitted
    metadata = {}
    for number, (student, results) in enumerate(sorted(on_gradescope.items()), 1):
        (tmp_path / f"submission_{number}").mkdir()
        metadata[f"submission_{number}"] = {":submitters": [{":sid": student, ":name": student}],
                                            ":score": results["score"], ":results": results}
    (tmp_path / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    paths = write_report(assignment, tmp_path)
    report = build_report(assignment, tmp_path)
    assert report.source == "Gradescope export" and sorted(report.scores) == sorted(on_gradescope)
    for student in on_gradescope:
        assert report.scores[student] == pytest.approx(float(rows[student]["engine_score"]), abs=1e-6)
    assert report.late["late"][1] == pytest.approx(float(rows["late"]["late_penalty"]), abs=1e-6)
    assert report.late["late"][2] == pytest.approx(float(rows["late"]["final_score"]), abs=1e-6)
    assert "extended" not in report.late          # on time by the extension
    page = paths["html"].read_text()
    assert "results of a Gradescope export" in page and 'id="late"' in page and "discrimination" in page
    assert all(r.discrimination is not None for r in report.items)   # five students: groups of one
    assert "item_discrimination" in paths["csv"].read_text()


def test_the_report_renders_from_the_gradebook(autograded, batch_of_submitted, late_course, assignment, tmp_path):
    """The gradebook `nbgrader autograde` wrote, and no results file: its grades and its lateness."""
    root, _ = late_course
    _, rows, _ = batch_of_submitted
    paths = write_report(assignment, tmp_path, f"sqlite:///{root / 'gradebook.db'}")
    report = build_report(assignment, tmp_path, f"sqlite:///{root / 'gradebook.db'}")
    assert sorted(report.scores) == sorted([*TIMES, *UNUSABLE, *GROUP]) and report.gradebook
    for student, (_, percent) in TIMES.items():
        assert report.scores[student] == pytest.approx(float(rows[student]["raw_score"]), abs=1e-6), student
        if percent:
            assert report.late[student][1] == pytest.approx(float(rows[student]["late_penalty"]), abs=1e-6), student
            assert report.late[student][2] == pytest.approx(float(rows[student]["final_score"]), abs=1e-6), student
    assert "Scores are the grade of record, the gradebook" in paths["html"].read_text()


# --- a TA on a Friday night: an extension granted after grading -----------------------------------------

def test_an_extension_added_after_grading_changes_only_that_students_lateness(batch_of_submitted, late_course,
                                                                               assignment, tmp_path):
    """grade-batch again after one more row in extensions.csv: no submission is graded again, the
    extended student's lateness (results, page, grades.csv) is recorded anew, nobody else's file moves."""
    root, _ = late_course
    _, rows, out = batch_of_submitted
    again = tmp_path / "grades"
    shutil.copytree(out, again)
    before = {p.name: p.read_bytes() for p in (again / "results").glob("*.json")}
    extensions = root / "extensions.csv"
    text = extensions.read_text()
    try:
        extensions.write_text(text + f"late,{assignment.id},{(DUE + timedelta(days=3)).isoformat()}\n")
        summary = grade_batch("release_toy:ASSIGNMENT", root / "submitted", again, jobs=1)
    finally:
        extensions.write_text(text)
    assert summary.graded == [] and list(summary.regraded) == ["late"], (summary.graded, summary.regraded)
    assert summary.regraded["late"] == "their extension changed"
    late = json.loads((again / "results" / "late.json").read_text())
    assert late["scalelabs"]["late"]["status"] == "on_time" and late["scalelabs"]["late"]["due"] != late["scalelabs"]["late"]["lab_due"]
    assert late["score"] == json.loads(before["late.json"])["score"]          # the engine's score, untouched
    assert all((again / "results" / name).read_bytes() == data for name, data in before.items() if name != "late.json")
    row = {r["student"]: r for r in csv.DictReader((again / "grades.csv").open())}["late"]
    assert float(row["late_penalty"]) == 0 and float(row["final_score"]) == pytest.approx(float(rows["late"]["engine_score"]))
    assert "extended from" in (again / "feedback" / "late.html").read_text()


# --- a student with a deadline: a timestamp.txt edited to claim an earlier time -------------------------

def test_new_files_claiming_a_time_before_the_last_grading_take_no_penalty_on_trust(batch_of_submitted, late_course,
                                                                                    assignment, tmp_path):
    """`late` hands in again after the class was graded, with a timestamp.txt claiming a day before the
    due date: the claim is not used (no on-time record on the student's word, no penalty on a guess),
    the student needs a person, and the record stays so on the next run; an honest classmate's stands."""
    root, _ = late_course
    _, rows, out = batch_of_submitted
    again, submitted = tmp_path / "grades", tmp_path / "submitted"
    shutil.copytree(out, again)
    for student in ("late", "early"):
        shutil.copytree(root / "submitted" / student, submitted / student)
    folder = submitted / "late" / assignment.id
    module = folder / f"{assignment.module}.py"
    module.write_text(module.read_text() + "\n# handed in again\n")
    (folder / "timestamp.txt").write_text(nbgrader_stamp(DUE - timedelta(days=1)))
    early_before = (again / "results" / "early.json").read_bytes()
    summary = grade_batch("release_toy:ASSIGNMENT", submitted, again, jobs=1)
    late = json.loads((again / "results" / "late.json").read_text())["scalelabs"]["late"]
    assert late["status"] == "unknown" and late["penalty_percent"] == 0 and "were graded at" in late["note"]
    assert "late" in summary.needs_attention and "early" not in summary.needs_attention
    assert (again / "results" / "early.json").read_bytes() == early_before
    again_summary = grade_batch("release_toy:ASSIGNMENT", submitted, again, jobs=1)
    assert again_summary.regraded == {} and "late" in again_summary.needs_attention
    row = {r["student"]: r for r in csv.DictReader((again / "grades.csv").open())}["late"]
    assert "cannot be used" in row["needs_attention"] or "were graded at" in row["needs_attention"]


def test_a_forced_regrade_of_unchanged_files_keeps_their_time_and_penalty(batch_of_submitted, late_course, tmp_path):
    """--force (as a changed grader) regrades files this grader has seen: their timestamp.txt predates the
    last grading as it always did, which is no reason to doubt it: the penalty stands, nobody needs a person."""
    root, _ = late_course
    _, rows, out = batch_of_submitted
    again, submitted = tmp_path / "grades", tmp_path / "submitted"
    shutil.copytree(out, again)
    shutil.copytree(root / "submitted" / "late", submitted / "late")
    summary = grade_batch("release_toy:ASSIGNMENT", submitted, again, jobs=1, force=True)
    assert summary.regraded == {"late": "--force"} and summary.needs_attention == [], summary
    late = json.loads((again / "results" / "late.json").read_text())["scalelabs"]["late"]
    assert late["status"] == "late" and late["penalty_percent"] == TIMES["late"][1], late
    row = {r["student"]: r for r in csv.DictReader((again / "grades.csv").open())}["late"]
    assert float(rows["late"]["late_penalty"]) > 0
    assert float(row["late_penalty"]) == pytest.approx(float(rows["late"]["late_penalty"]))
    assert row["needs_attention"] == ""


# --- the other two sources of a time: a TA's CSV and a Gradescope export --------------------------------

OTHER_SOURCES = ["late", "extended_late"]


@pytest.fixture(scope="module")
def other_sources(late_course, assignment, batch_of_submitted, tmp_path_factory):
    """grade-batch of two students as a plain download with a TA's --timestamps CSV (times in the
    course's zone, no offset), and as a Gradescope export (:created_at); each folder holds a forged
    timestamp.txt, which neither reads."""
    import yaml

    root, folders = late_course
    work = tmp_path_factory.mktemp("sources")
    plain, export = work / "download", work / "export"
    metadata = {}
    for number, student in enumerate(OTHER_SOURCES, 1):
        for target in (plain / student, export / f"submission_{number}"):
            shutil.copytree(folders[student], target)
            (target / "timestamp.txt").write_text(FORGED)
        metadata[f"submission_{number}"] = {":submitters": [{":sid": student, ":name": student}],
                                            ":created_at": TIMES[student][0].astimezone(timezone.utc)}
    (export / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    times = work / "times.csv"
    times.write_text("student,submitted_at\n" + "".join(
        f"{s},{TIMES[s][0].replace(tzinfo=None).isoformat()}\n" for s in OTHER_SOURCES))
    grade_batch("release_toy:ASSIGNMENT", plain, work / "by-csv", jobs=1, timestamps=times)
    grade_batch("release_toy:ASSIGNMENT", export, work / "by-export", jobs=1)
    read = lambda out: {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}   # noqa: E731
    return read(work / "by-csv"), read(work / "by-export")


def test_a_tas_csv_and_a_gradescope_export_score_as_the_other_doors(other_sources, batch_of_submitted, on_gradescope):
    by_csv, by_export = other_sources
    _, rows, _ = batch_of_submitted
    for student in OTHER_SOURCES:
        for row in (by_csv[student], by_export[student]):
            assert float(row["engine_score"]) == pytest.approx(float(rows[student]["engine_score"]), abs=1e-6)
            assert float(row["late_penalty"]) == pytest.approx(float(rows[student]["late_penalty"]), abs=1e-6), student
            assert float(row["final_score"]) == pytest.approx(on_gradescope[student]["score"], abs=1e-6), student
            assert datetime.fromisoformat(row["submitted_at"]) == TIMES[student][0]


# --- nbgrader's reading of timestamp.txt, directly ------------------------------------------------------

@pytest.mark.parametrize("written, zone", [("2026-11-20 10:00:00.000000 -0800", ""),
                                           ("2026-11-20T10:00:00-08:00", ""),
                                           ("2026-11-20 10:00:00.000000 PST", "America/Los_Angeles")])
def test_nbgrader_reads_a_time_written_in_another_zone_as_the_instant_it_names(written, zone, tmp_path, monkeypatch):
    """nbgrader's gradebook keeps naive UTC: a timestamp.txt written at 10:00 in Los Angeles (an
    offset, or the course's [deadlines] timezone's abbreviation, as Exchange.timezone writes it) is
    18:00 there, not 10:00, or a late hand-in would count 8 hours earlier than it was."""
    import logging
    from types import SimpleNamespace

    from autograder.doors.nbgrader import _existing_timestamp

    monkeypatch.chdir(tmp_path)
    if zone:
        (tmp_path / "scalelabs.toml").write_text(f'[deadlines]\ntimezone = "{zone}"\n')
    folder = tmp_path / "submitted" / "ada" / "lab"
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text(written)
    found = _existing_timestamp(SimpleNamespace(log=logging.getLogger("test")), str(folder))
    assert found == datetime(2026, 11, 20, 18, 0)


# --- one table of cases, every door (issue 38) -------------------------------------------------------------
#
# Each case is put to each door in its platform's own terms (docs/staff.md, "Late work: one table of cases"):
# natively an extensions.csv row or [deadlines]; on Gradescope its submission_metadata.json (the class's
# due date, each user's own, created_at, previous_submissions); in an export what the autograder recorded.
# The final score (after late work) of every student must be the same in every door. The engine's work is
# shared: grade-batch and `nbgrader autograde` grade the class once (the module's fixtures above); the
# Gradescope door is a real `otter run` of one zip (built once, `table_zip`) per case, on the
# submission_metadata.json Gradescope would write, two processes at a time; the export's regrade resumes from
# grade-batch's results (only the group and the kept upload are new to it); the later states (a due date
# moved, an override, an extension added) record lateness again without grading anyone.

EXT_AFTER = DUE + timedelta(days=6)          # capped's extension, granted after grading
CASES = {   # case -> student -> the penalty percent of their final score
    "on time": {"early": 0},
    "inside the grace period": {"grace": 0},
    "late": {"late": 20},
    "past the cap": {"capped": 30},
    "an extension given in Gradescope's interface": {"extended": 0, "extended_late": 10},
    "the class's due date moved in Gradescope": {"moved": 0},
    "a group: a late member and a member with an extension": GROUP,
    "an upload over the submission limit": {"olly": 0},       # the on-time upload before it is the graded one
    "an override after a penalty": {"late": 20},             # 20 % of the score set by hand
    "an extension added after grading": {"capped": 0},
}
DOORS = ("grade-batch", "nbgrader autograde + export", "otter run", "regrade of the Gradescope export")
NOT_THERE = {   # (case, door) -> why the door has no such case (docs/staff.md says the same)
    ("an upload over the submission limit", "grade-batch"): "nbgrader has no submission limit",
    ("an upload over the submission limit", "nbgrader autograde + export"): "nbgrader has no submission limit",
    ("an override after a penalty", "otter run"): "a score set by hand on Gradescope is Gradescope's, not the autograder's",
}
TABLE = [pytest.param(case, door, id=f"{case} | {door}") for case in CASES for door in DOORS
         if (case, door) not in NOT_THERE]


def table_rows(out: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}


def override(db: Path, assignment, student: str) -> float:
    """A TA's score by hand (formgrader's manual score) of full points on the first item the engine scored
    below full; the student's raw score of record after it."""
    with Gradebook(f"sqlite:///{db}", course_id="scalelabs") as gb:
        notebook = gb.find_submission_notebook(assignment.id, assignment.id, student)
        grades = sorted(notebook.grades, key=lambda g: assignment.item_ids.index(g.name))
        grade = next(g for g in grades if (g.auto_score or 0.0) < g.max_score - 1e-9)
        grade.manual_score = grade.max_score
        gb.db.commit()
        return float(notebook.score)


@contextmanager
def changed(path: Path, text: str):
    """`path` holds `text` inside, its own text again after."""
    before = path.read_text()
    path.write_text(text)
    try:
        yield
    finally:
        path.write_text(before)


def moved_due(root: Path):
    """The course moves the class's due date to MOVED (the native doors' way of the Gradescope case)."""
    toml = root / "scalelabs.toml"
    return changed(toml, toml.read_text().replace(f"due = {DUE.replace(tzinfo=None).isoformat()}",
                                                  f"due = {MOVED.replace(tzinfo=None).isoformat()}"))


def extension_added(root: Path, assignment):
    """A TA grants capped an extension to EXT_AFTER after the class was graded (one more extensions.csv row)."""
    path = root / "extensions.csv"
    return changed(path, path.read_text() + f"capped,{assignment.id},{EXT_AFTER.isoformat()}\n")


@pytest.fixture(scope="module")
def batch_table(late_course, assignment, batch_of_submitted, tmp_path_factory):
    """case -> student -> final_score of grade-batch's grades.csv: the class as graded; the class's due date
    moved (the same batch again); a manual override of `late` and capped's extension added (again)."""
    root, _ = late_course
    _, rows, out = batch_of_submitted
    work = tmp_path_factory.mktemp("batch-table")
    for state in ("moved", "after"):
        shutil.copytree(out, work / state)
    with moved_due(root):
        moved = grade_batch(DECLARATION, root / "submitted", work / "moved", jobs=1,
                            db_url=f"sqlite:///{work / 'moved' / 'gradebook.db'}")
    override(work / "after" / "gradebook.db", assignment, "late")
    with extension_added(root, assignment):
        after = grade_batch(DECLARATION, root / "submitted", work / "after", jobs=1,
                            db_url=f"sqlite:///{work / 'after' / 'gradebook.db'}")
    assert moved.graded == after.graded == [] and moved.failed == after.failed == {}   # nobody graded again
    states = {"base": rows, "moved": table_rows(work / "moved"), "after": table_rows(work / "after")}
    return {case: {s: float(states[native_state(case)][s]["final_score"]) for s in students}
            for case, students in CASES.items() if (case, "grade-batch") not in NOT_THERE}


def native_state(case: str) -> str:
    """Which state of the course a native door shows a case in."""
    return {"the class's due date moved in Gradescope": "moved", "an override after a penalty": "after",
            "an extension added after grading": "after"}.get(case, "base")


def nbgrader_export(root: Path, db: Path, dest: Path, assignment, command: bool = True) -> dict[str, dict]:
    """`nbgrader export` of the gradebook `db` (the course's export plugin); command=False: the plugin
    itself in this process, as the command calls it (nbgrader_config.py's ExportApp.plugin_class)."""
    if command:
        run([str(BIN / "nbgrader"), "export", "--to", str(dest), "--db", f"sqlite:///{db}"], root, without_rfc3987=True)
    else:
        from autograder.doors.nbgrader_export import SafeCsvExport
        with Gradebook(f"sqlite:///{db}", course_id="scalelabs") as gb:
            SafeCsvExport(to=str(dest)).export(gb)
    return {r["student_id"]: r for r in csv.DictReader(dest.open()) if r["assignment"] == assignment.id}


@pytest.fixture(scope="module")
def nbgrader_table(late_course, assignment, autograded, tmp_path_factory):
    """case -> student -> final_score of `nbgrader export` of autograde's gradebook, in the same states:
    the penalty is a rule applied at export time, so neither state autogrades again."""
    root, _ = late_course
    work = tmp_path_factory.mktemp("nbgrader-table")
    states = {"base": nbgrader_export(root, root / "gradebook.db", work / "base.csv", assignment)}
    with moved_due(root):
        states["moved"] = nbgrader_export(root, root / "gradebook.db", work / "moved.csv", assignment, command=False)
    shutil.copyfile(root / "gradebook.db", work / "after.db")
    override(work / "after.db", assignment, "late")
    with extension_added(root, assignment):
        states["after"] = nbgrader_export(root, work / "after.db", work / "after.csv", assignment, command=False)
    return {case: {s: float(states[native_state(case)][s]["final_score"]) for s in students}
            for case, students in CASES.items() if (case, "nbgrader autograde + export") not in NOT_THERE}


DECLARATION = "release_toy:ASSIGNMENT"


def gradescope_finals(results: dict) -> dict[str, float]:
    """Each member's own final score in a results.json (the door records each member's lateness)."""
    raw = Result.from_gradescope(results).score
    members = gradescope.recorded_members(results)
    return {m: final_score(raw, late.penalty_points(raw) if late is not None and late.status == "late" else 0.0)
            for m, late in members.items()}


@pytest.fixture(scope="module")
def table_zip(late_course, assignment, tmp_path_factory):
    """The course's autograder zip as the table puts it on Gradescope, built once: its [deadlines] (the
    policy, the class's due date) and `[feedback] submission_limit = 1`, and no extensions.csv: extensions
    are given in Gradescope's interface (each user's own due date in the metadata). (The zip's own
    extensions.csv on a real run: tests/doors/test_otter_try.py.)"""
    root, _ = late_course
    for name in ("pyproject.toml", "README.md"):     # the course is a clone of scalelabs
        shutil.copyfile(REPO / name, root / name)
    toml = root / "scalelabs.toml"
    text = toml.read_text().replace('extensions = "extensions.csv"\n', "") + "\n[feedback]\nsubmission_limit = 1\n"
    with changed(toml, text):
        return otter_door.build_zip(assignment.id, tmp_path_factory.mktemp("table-zip") / "autograder.zip",
                                    assignment=assignment, release_dir=root / "release" / assignment.id,
                                    declaration=DECLARATION, course=root)


SLY_CLAIM = DUE - timedelta(days=1)            # what sly's upload says of its time
SLY_DUE = DUE + timedelta(days=30)             # ... and of sly's due date


def sly_upload(honest: Path, dest: Path, assignment) -> Path:
    """`late`'s hand-in (26 h late) carrying everything a student could put in an upload to claim time: a
    submission_metadata.json of its own (created a day early, due in a month), a course of its own
    (nbgrader_config.py, scalelabs.toml with no late policy and a due date in a month, an extensions.csv
    row for sly), a notebook whose metadata claims an early submission, and a module that, when imported,
    writes its forged submission_metadata.json over every one it can reach (/autograder's, the folder's,
    the ones above the working directory)."""
    shutil.copytree(honest, dest)
    forged = gradescope_metadata({"sly": SLY_DUE}, SLY_CLAIM.astimezone(timezone.utc).isoformat(), SLY_DUE)
    (dest / "submission_metadata.json").write_text(json.dumps(forged))
    (dest / "nbgrader_config.py").write_text("c = get_config()\n")
    (dest / "scalelabs.toml").write_text(f'[deadlines]\ntimezone = "UTC"\npolicy = "none"\nextensions = "extensions.csv"\n'
                                        f'[deadlines.{assignment.id}]\ndue = {SLY_DUE.replace(tzinfo=None).isoformat()}\n')
    (dest / "extensions.csv").write_text(f"student,lab,due\nsly,{assignment.id},{SLY_DUE.isoformat()}\n")
    notebook = dest / f"{assignment.id}.ipynb"
    nb = json.loads(notebook.read_text())
    nb["metadata"]["scalelabs"] = {"submitted_at": SLY_CLAIM.isoformat()}
    nb["metadata"]["created_at"] = SLY_CLAIM.isoformat()
    notebook.write_text(json.dumps(nb))
    module = dest / f"{assignment.module}.py"
    module.write_text(module.read_text() + f"""

import json as _json, os as _os
for _where in ("/autograder", _os.getcwd(), _os.path.dirname(_os.path.abspath(__file__)),
               *[_os.path.join(_os.getcwd(), *[".."] * _n) for _n in (1, 2, 3)]):
    try:
        with open(_os.path.join(_where, "submission_metadata.json"), "w") as _f:
            _f.write({json.dumps(json.dumps(forged))})
    except OSError:
        pass
""")
    return dest


@pytest.fixture(scope="module")
def gradescope_results(late_course, assignment, table_zip, tmp_path_factory):
    """name -> results.json of a real `otter run` of the table's zip for each case, on the
    submission_metadata.json Gradescope would write beside the upload: created_at, the class's dates,
    each user's own (an extension given in Gradescope's interface), previous_submissions. The score is
    read from the results otter writes; nothing of the door runs in this process."""
    root, folders = late_course
    work = tmp_path_factory.mktemp("gradescope-table")
    for name in ("olly_first", "olly_second"):
        folders[name] = samples.materialise(assignment.id, name, work / "uploads" / name, assignment=assignment,
                                            release_dir=root / "release" / assignment.id, samples_dir=root / "samples")
    iso = lambda moment: moment.astimezone(timezone.utc).isoformat()   # noqa: E731
    cases = {name: (name, {name: DUE}, TIMES[name][0], DUE) for name in ("early", "grace", "late", "capped")}
    cases |= {name: (name, {name: EXTENDED}, TIMES[name][0], DUE) for name in ("extended", "extended_late")}
    cases |= {"moved": ("moved", {"moved": MOVED}, TIMES["moved"][0], MOVED),
              "group": ("gina", {"gina": DUE, "hal": EXTENDED}, GROUP_TIME, DUE),
              "capped_after": ("capped", {"capped": EXT_AFTER}, TIMES["capped"][0], DUE),   # regraded after the extension
              "olly_first": ("olly_first", {"olly": DUE}, DUE - timedelta(hours=1), DUE)}
    runs = {name: (folders[folder], gradescope_metadata(users, iso(when), lab_due))
            for name, (folder, users, when, lab_due) in cases.items()}
    runs["sly"] = (sly_upload(folders["late"], work / "uploads" / "sly", assignment),    # late's work, 26 h late
                   gradescope_metadata({"sly": DUE}, iso(TIMES["late"][0])))
    results = otter_runs(table_zip, work, runs)
    # the second wave (two runs, one per core): an upload whose metadata holds the first wave's results
    # (Gradescope's previous_submissions), and a local run with no created_at
    first = results["olly_first"]
    kept = [{"submission_time": iso(DUE - timedelta(hours=1)), "score": first["score"], "results": first}]
    results |= otter_runs(table_zip, work, {
        "olly": (folders["olly_second"], gradescope_metadata({"olly": DUE}, iso(GROUP_TIME), previous=kept)),
        "missing": (folders["missing"], gradescope_metadata({"missing": DUE}, None))})
    return results


@pytest.fixture(scope="module")
def gradescope_table(gradescope_results):
    """case -> student -> the Gradescope door's final score: Gradescope's score of a single submitter's
    upload, each member's own of a group's (its score is the lowest of them: test below)."""
    table = {}
    for case, students in CASES.items():
        if (case, "otter run") in NOT_THERE:
            continue
        name = {"a group: a late member and a member with an extension": "group",
                "an extension added after grading": "capped_after"}.get(case)
        table[case] = {s: gradescope_finals(gradescope_results[name or s])[s] if name else
                       float(gradescope_results[s]["score"]) for s in students}
    return table


@pytest.fixture(scope="module")
def export_regrade(late_course, assignment, batch_of_submitted, gradescope_results, tmp_path_factory):
    """A Gradescope export of the cases' uploads (each folder the files, submission_metadata.yml the
    submitters, created_at and the results the door gave), regraded by grade-batch; then with the override
    of `late` and capped's extension added. Returns the two states' grades.csv rows, and the output folder."""
    import yaml

    root, folders = late_course
    _, _, out = batch_of_submitted
    work = tmp_path_factory.mktemp("export-table")
    export, graded = work / "export", work / "graded"
    uploads = [("early", "early", ["early"]), ("grace", "grace", ["grace"]), ("late", "late", ["late"]),
               ("capped", "capped", ["capped"]), ("extended", "extended", ["extended"]),
               ("extended_late", "extended_late", ["extended_late"]), ("moved", "moved", ["moved"]),
               ("group", "gina", ["gina", "hal"]), ("olly", "olly_second", ["olly"])]
    metadata = {}
    for number, (name, folder, who) in enumerate(uploads, 1):
        shutil.copytree(folders[folder], export / f"submission_{number}")
        results = gradescope_results[name]
        when = {"group": GROUP_TIME, "olly": GROUP_TIME}.get(name) or TIMES[name][0]
        metadata[f"submission_{number}"] = {":submitters": [{":sid": s, ":name": s, ":email": f"{s}@example.edu"}
                                                            for s in who],
                                            ":created_at": when.astimezone(timezone.utc), ":score": results["score"],
                                            ":results": results}
    (export / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    (graded / "results").mkdir(parents=True)
    for name, _, who in uploads[:7]:   # grade-batch's results of the same files resume: nobody is graded twice
        shutil.copyfile(out / "results" / f"{name}.json", graded / "results" / f"{name}.json")
    base = grade_batch(DECLARATION, export, graded, jobs=1)
    assert sorted(base.graded) == ["gina", "hal", "olly"] and base.failed == {}, base     # the group, the kept upload
    after = work / "after"
    shutil.copytree(graded, after)
    override(after / "gradebook.db", assignment, "late")
    with extension_added(root, assignment):
        again = grade_batch(DECLARATION, export, after, jobs=1, db_url=f"sqlite:///{after / 'gradebook.db'}")
    assert again.graded == [] and again.failed == {}, again
    return {"base": table_rows(graded), "after": table_rows(after)}, graded, base


@pytest.fixture(scope="module")
def export_table(export_regrade):
    states, _, _ = export_regrade
    return {case: {s: float(states["after" if native_state(case) == "after" else "base"][s]["final_score"])
                   for s in students}
            for case, students in CASES.items() if (case, "regrade of the Gradescope export") not in NOT_THERE}


@pytest.fixture(scope="module")
def raw_scores(batch_of_submitted, gradescope_results, assignment, tmp_path_factory):
    """case -> student -> the raw score (before late work) each door's final score is taken from: the
    engine's (grade-batch's); after the override, the score of record with the TA's score by hand (the
    same item set to full marks in every door's gradebook); the kept upload's for olly."""
    _, rows, out = batch_of_submitted
    engine = {s: float(r["engine_score"]) for s, r in rows.items()}
    olly = Result.from_gradescope(gradescope_results["olly_first"]).score
    raws = {case: {s: olly if s == "olly" else engine[s] for s in students} for case, students in CASES.items()}
    work = tmp_path_factory.mktemp("override-raw")
    shutil.copyfile(out / "gradebook.db", work / "gradebook.db")
    raws["an override after a penalty"]["late"] = override(work / "gradebook.db", assignment, "late")
    assert raws["an override after a penalty"]["late"] > engine["late"]
    return raws


DOOR_TABLES = dict(zip(DOORS, ("batch_table", "nbgrader_table", "gradescope_table", "export_table")))


@pytest.mark.parametrize("case, door", TABLE)
def test_one_table_of_cases_gives_every_student_the_same_final_score_in_every_door(case, door, request, raw_scores):
    finals = request.getfixturevalue(DOOR_TABLES[door])[case]
    for student, percent in CASES[case].items():
        raw = raw_scores[case][student]
        assert finals[student] == pytest.approx(expected_final(raw, percent), abs=1e-6), (case, door, student, raw)
