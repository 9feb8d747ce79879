"""A term's week in a fresh course (a copy of the repository's tracked files, running its own code as
a clone with `pip install -e .` does), with the README's staff and TA commands in order:

1. `scalelabs release`; `nbgrader release_assignment` to an exchange, three students fetch, do the lab
   and `nbgrader submit`; `nbgrader collect` (submitted/<student>/<lab>/);
2. `nbgrader autograde`, `nbgrader generate_feedback`;
3. a TA's tired attempts at the wrong folder (the course root, release/, source/, one student's folder,
   the class as another lab's), each refused in one line with nothing written; then the TA's batch
   `scalelabs grade-batch LAB submitted`, into the course gradebook;
4. a fix to a check: the week's course starts with a hidden property that is wrong (it fails a correct
   naive AllReduce); staff fix it, the batch regrades the class and says why;
5. a manual override in formgrader; the next batch keeps it and skips everyone byte for byte; grades.csv,
   `scalelabs report` and `nbgrader export` show it, with the engine's score beside it in ours;
6. `scalelabs otter`.
Every file lands in the course, not next to the installed package."""
from __future__ import annotations

import csv
import json
import math
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from labs import load
from autograder.classroom import samples
from autograder.course import course_settings
from autograder.engine import secret
from labs import load
from repo_copy import copy_tracked

LAB = "lab06_collectives"
# Three of the sample class, scoring full, partial and nothing: enough to compare the doors student by
# student, and the week stays near two minutes on a quiet machine.
STUDENTS = ("correct", "partly_wrong", "untouched")
BIN = Path(sys.executable).parent
ITEMS = Path("labs") / LAB / "items.py"
# The week's wrong check: naive AllReduce must not beat the ring, written the wrong way round, so a
# correct naive AllReduce fails it. The fix restores the line.
RIGHT_CHECK = 'assert got >= ref.ring_allreduce_time(**d) * (1 - 1e-9), f"naive {got!r} beats ring AllReduce"'
WRONG_CHECK = 'assert got <= ref.ring_allreduce_time(**d) * (1 + 1e-9), f"naive {got!r} beats ring AllReduce"'
OVERRIDE = ("partly_wrong", "act1_reflection")    # a question the TA decides to give full marks by hand


COURSE = "mlsys-fall26"   # not the folder's name: the id comes from the course's scalelabs.toml
ROSTER = {"correct": ("Ada", "Lovelace"), "partly_wrong": ("Grace", "Hopper")}   # untouched: not on it
# What formgrader's pages show of a lab and its students (its API, with the course's nbgrader_config.py)
FORMGRADER_VIEW = """
import json, sys
from nbgrader.apps.api import NbGraderAPI
from nbgrader.apps.nbgraderapp import NbGraderApp
app = NbGraderApp()
app.load_config_file()
api = NbGraderAPI(parent=app)
lab = api.get_assignment(sys.argv[1])
print(json.dumps({"course": api.course_id, "status": lab["status"], "duedate": lab["display_duedate"],
                  "students": {s: [api.get_student(s)[k] for k in ("first_name", "last_name")] for s in sys.argv[2:]}}))
"""


def env_of(course: Path) -> dict:
    """The course's own code first on the path (a clone's `pip install -e .`), this venv's tools on PATH."""
    # the course's own secret, made by its first release (the tests' shared one is not this course's)
    ambient = {k: v for k, v in os.environ.items() if k != secret.ENV}
    return {**ambient, "PYTHONPATH": str(course), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def run(command: list, cwd: Path, env: dict, expect: int | None = 0) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, timeout=900, env=env)
    if expect is not None:
        assert done.returncode == expect, f"{command} in {cwd}: {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def gradebook_items(course: Path) -> dict[str, dict[str, float]]:
    """student -> item -> the score of record, as formgrader shows it (manual if set, else auto)."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=course_settings(course).id) as gb:
        return {s: {g.name: g.score for g in gb.find_submission_notebook(LAB, LAB, s).grades} for s in STUDENTS}


def results_items(course: Path, student: str) -> dict[str, float]:
    results = json.loads((course / "grades" / LAB / "results" / f"{student}.json").read_text())
    items: dict[str, float] = {}
    for t in results["tests"]:
        item = t["name"].split(":", 1)[0]
        items[item] = items.get(item, 0.0) + t["score"]
    return items


def snapshot(course: Path) -> dict[str, bytes]:
    """What a refused command must leave as it was: the gradebook and everything under grades/."""
    files = [course / "gradebook.db", *sorted((course / "grades").rglob("*"))]
    return {str(p): p.read_bytes() for p in files if p.is_file()}


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    """The course after the week; returns (course, what was seen along the way)."""
    work = tmp_path_factory.mktemp("week")
    course = copy_tracked(work / "course")
    env = env_of(course)
    seen: dict = {}
    items = (course / ITEMS).read_text()
    assert items.count(RIGHT_CHECK) == 1
    (course / ITEMS).write_text(items.replace(RIGHT_CHECK, WRONG_CHECK))   # the check staff will fix

    # 1. release, and the students' hand-ins through nbgrader's exchange. The course is another
    # offering: its id, exchange and roster come from its scalelabs.toml, staff's commands pass none.
    (course / "scalelabs.toml").write_text(f'[course]\nid = "{COURSE}"\nexchange = "../exchange"\n')
    (course / "roster.csv").write_text("id,first_name,last_name,email\n" + "".join(
        f"{s},{first},{last},\n" for s, (first, last) in ROSTER.items()))
    seen["release"] = run([BIN / "scalelabs", "release"], course, env)
    exchange = work / "exchange"
    exchange.mkdir(mode=0o777)
    at = f"--Exchange.root={exchange}"    # the students' own commands run outside the course
    run([BIN / "nbgrader", "db", "assignment", "add", LAB, "--duedate=2026-12-04 17:00:00 UTC"], course, env)
    run([BIN / "nbgrader", "release_assignment", LAB], course, env)
    homes = {s: work / "students" / s for s in STUDENTS}
    for home in homes.values():
        home.mkdir(parents=True)
    fetching = [subprocess.Popen([BIN / "nbgrader", "fetch_assignment", LAB, "--course", course_settings(course).id, at], cwd=home,
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for home in homes.values()]
    assert all(p.wait(timeout=600) == 0 for p in fetching), [p.stdout.read() for p in fetching]
    for student, home in homes.items():
        samples.materialise(LAB, student, home / LAB, release_dir=course / "release" / LAB,
                            samples_dir=course / "samples" / LAB)
    submitting = [subprocess.Popen([BIN / "nbgrader", "submit", LAB, "--course", course_settings(course).id, "--student", s, at],
                                   cwd=homes[s], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                  for s in STUDENTS]
    assert all(p.wait(timeout=600) == 0 for p in submitting), [p.stdout.read() for p in submitting]
    run([BIN / "nbgrader", "collect", LAB], course, env)
    seen["homes"] = homes
    seen["formgrader"] = json.loads(run([sys.executable, "-c", FORMGRADER_VIEW, LAB, *STUDENTS], course, env).stdout)

    # 2. nbgrader's autograde and feedback
    run([BIN / "nbgrader", "autograde", LAB], course, env)
    run([BIN / "nbgrader", "generate_feedback", LAB], course, env)
    seen["autograded"] = gradebook_items(course)

    # 3. a TA at the wrong folder, then at the class
    before = snapshot(course)
    seen["wrong folders"] = {what: run([BIN / "scalelabs", "grade-batch", lab, folder, "--jobs", "1"], course, env, None)
                             for what, lab, folder in (("the course root", LAB, "."), ("release/", LAB, "release"),
                                                       ("source/", LAB, "source"),
                                                       ("one student's folder", LAB, "submitted/correct"),
                                                       ("another lab's class", "lab01_scale", "submitted"))}
    seen["after wrong folders"] = snapshot(course) == before
    seen["batch"] = run([BIN / "scalelabs", "grade-batch", LAB, "submitted", "--jobs", "2"], course, env)
    seen["before fix"] = {s: results_items(course, s) for s in STUDENTS}

    # 4. the fix to the check, and the regrade
    (course / ITEMS).write_text(items)
    seen["regrade"] = run([BIN / "scalelabs", "grade-batch", LAB, "submitted", "--jobs", "2"], course, env)
    seen["after fix"] = {s: results_items(course, s) for s in STUDENTS}
    seen["engine"] = {r["student"]: r for r in csv.DictReader((course / "grades" / LAB / "grades.csv").open())}

    # 5. a manual override, as formgrader sets it (nbgrader's GradeHandler.put)
    student, item = OVERRIDE
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=course_settings(course).id) as gb:
        grade = gb.find_grade(item, LAB, LAB, student)
        grade.manual_score = grade.max_score
        grade.needs_manual_grade = False
        gb.db.commit()
    results = sorted((course / "grades" / LAB / "results").glob("*.json"))
    seen["results before"] = {p.name: p.read_bytes() for p in results}
    seen["after override"] = run([BIN / "scalelabs", "grade-batch", LAB, "submitted", "--jobs", "2"], course, env)
    seen["results after"] = {p.name: p.read_bytes() for p in results}
    run([BIN / "scalelabs", "report", LAB], course, env)
    run([BIN / "nbgrader", "export"], course, env)
    return course, seen


def test_release_registers_every_lab_in_the_course_gradebook(week):
    course, _ = week
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=course_settings(course).id) as gb:
        registered = {a.name: sum(len(nb.grade_cells) for nb in a.notebooks) for a in gb.assignments}
    released = sorted(p.name for p in (course / "release").iterdir())
    assert sorted(registered) == released and all(registered.values()), registered


def test_another_course_id_from_the_courses_config_releases_collects_and_grades(week):
    """The course's id is its scalelabs.toml's (not the code's "scalelabs", not the folder's name):
    the exchange folder, formgrader's course, and the gradebook every door writes all carry it."""
    course, seen = week
    assert course_settings(course).id == COURSE != course.name
    assert (course.parent / "exchange" / COURSE / "outbound" / LAB).is_dir()
    assert seen["formgrader"]["course"] == COURSE
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE) as gb:
        assert gb.find_assignment(LAB).course_id == COURSE


def test_formgrader_shows_the_lab_released_with_its_due_date_and_students_by_name(week):
    """Before: every lab "draft" (formgrader looked for the course "scalelabs" in nbgrader's default
    exchange) and every student "None, None"."""
    _, seen = week
    view = seen["formgrader"]
    assert view["status"] == "released", view
    assert view["duedate"] and "2026-12-04" in view["duedate"], view
    assert view["students"] == {"correct": ["Ada", "Lovelace"], "partly_wrong": ["Grace", "Hopper"],
                                "untouched": [None, None]}, view


def test_collect_brings_each_students_hand_in_to_submitted(week):
    course, seen = week
    for student, home in seen["homes"].items():
        handed = course / "submitted" / student / LAB
        for name in ("collectives.py", f"{LAB}.ipynb"):
            assert (handed / name).read_bytes() == (home / LAB / name).read_bytes(), (student, name)


def test_nbgrader_autograde_gives_the_per_item_scores_of_the_batch_for_every_student(week):
    """nbgrader's autograde (before the fix) and the TA's batch (before the fix): the same per-item
    scores, the same student id, so the same hidden inputs."""
    _, seen = week
    for student in STUDENTS:
        book, items = seen["autograded"][student], seen["before fix"][student]
        assert set(book) == set(items), student
        differ = {k: (book[k], items[k]) for k in items if not math.isclose(book[k], items[k], abs_tol=1e-4)}
        assert not differ, f"{student}: (gradebook, grade-batch) {differ}"
    totals = {s: sum(seen["before fix"][s].values()) for s in STUDENTS}
    assert len(set(totals.values())) == len(STUDENTS), f"the three students should not score alike: {totals}"


def test_feedback_is_written_in_the_course(week):
    course, _ = week
    for student in STUDENTS:
        assert (course / "feedback" / student / LAB / f"{LAB}.html").is_file(), student


def test_every_wrong_folder_is_one_line_and_nothing_is_written(week):
    _, seen = week
    words = {"the course root": "is the course folder, not a class", "release/": "holds the labs' own folders",
             "source/": "holds the labs' own folders", "one student's folder": "is one student's folder in nbgrader's layout",
             "another lab's class": "no student folder in"}
    for what, done in seen["wrong folders"].items():
        message = " ".join(done.stderr.split())
        assert done.returncode == 2 and "Traceback" not in done.stderr, (what, done.stderr[-2000:])
        assert message.startswith("error: ") and words[what] in message, (what, message)
        assert "grading" not in done.stderr and not done.stdout, (what, done.stdout, done.stderr)
    assert seen["after wrong folders"], "a refused grade-batch changed the gradebook or grades/"


def test_the_batch_writes_the_course_gradebook_that_formgrader_reads(week):
    course, seen = week
    said = seen["batch"].stdout
    assert f"gradebook (the grade of record): sqlite:///{course / 'gradebook.db'}" in said, said
    assert said.splitlines()[-1] == "needs attention: 0"
    pointer = json.loads((course / "grades" / LAB / "record.json").read_text())
    assert pointer == {"assignment": LAB, "gradebook": f"sqlite:///{course / 'gradebook.db'}"}
    assert not (course / "grades" / LAB / "gradebook.db").exists(), "a second gradebook beside the course's"


def test_a_fix_to_a_check_regrades_the_class_and_says_why(week):
    _, seen = week
    said = seen["regrade"].stdout
    assert "graded 3, skipped 0 already graded" in said, said
    assert f"regraded 3: the grader changed: labs/{LAB}/items.py (correct, partly_wrong, untouched)" in said, said
    correct_before, correct_after = seen["before fix"]["correct"], seen["after fix"]["correct"]
    assert correct_before["naive_allreduce_time"] < correct_after["naive_allreduce_time"]
    full = load(LAB).total_points
    assert sum(correct_after.values()) == full and sum(correct_before.values()) < full


def test_a_manual_override_stands_in_every_view_of_the_record_with_the_engines_score_beside(week):
    course, seen = week
    student, item = OVERRIDE
    assert "graded 0, skipped 3 already graded" in seen["after override"].stdout
    assert seen["results after"] == seen["results before"], "a batch with nothing changed rewrote results"
    engine = float(seen["engine"][student]["raw_score"])
    book = gradebook_items(course)[student]
    assert book[item] == 1.0 and seen["after fix"][student][item] == 0.0
    ours = {r["student"]: r for r in csv.DictReader((course / "grades" / LAB / "grades.csv").open())}[student]
    assert float(ours["raw_score"]) == engine + 1.0 and float(ours["engine_score"]) == engine
    assert ours["overridden"] == item and float(ours[item]) == 1.0
    report = json.loads((course / "grades" / LAB / "report.json").read_text())
    assert report["scores"][student] == engine + 1.0 and report["engine_scores"][student] == engine
    exported = {r["student_id"]: r for r in csv.DictReader((course / "grades.csv").open()) if r["assignment"] == LAB}
    assert float(exported[student]["final_score"]) == engine + 1.0
    assert sorted(exported) == sorted(STUDENTS)


def test_otter_zip_is_built_in_the_course(week, tmp_path):
    course, _ = week
    done = run([BIN / "scalelabs", "otter", LAB, "--course", course], tmp_path, env_of(course))
    zip_path = course / "dist" / f"{LAB}-autograder.zip"
    assert Path(done.stdout.splitlines()[0]) == zip_path and zip_path.is_file()
    total = next(line for line in done.stdout.splitlines() if line.startswith("total:"))
    assert total == f"total: {load(LAB).total_points:g} points"
    names = zipfile.ZipFile(zip_path).namelist()
    assert "scalelabs/pyproject.toml" in names and "scalelabs/autograder/course.py" in names
    assert not list(tmp_path.rglob("*.zip")), "otter wrote where it was run, not into the course"


def test_the_first_release_made_the_course_secret_every_door_grades_under(week, tmp_path):
    """`scalelabs release` made .scalelabs/course_secret (the owner's alone), nowhere under release/,
    source/, the exchange, the students' homes or the graded output; grade-batch recorded its
    fingerprint; the otter zip carries it."""
    course, seen = week
    students = STUDENTS
    assert "created the course secret" in seen["release"].stdout
    made = secret.read_secret(course / secret.RELATIVE)
    assert made is not None
    assert stat.S_IMODE((course / secret.RELATIVE).stat().st_mode) == 0o600
    assert stat.S_IMODE((course / secret.RELATIVE).parent.stat().st_mode) == 0o700
    hex_key = made.key.hex()
    for folder in [course / f for f in ("release", "source", "grades", "feedback", "autograded")] + [
            course.parent / "exchange", course.parent / "students"]:
        for path in folder.rglob("*"):
            assert not path.is_file() or hex_key not in path.read_bytes().decode("utf-8", "replace").lower(), path
    results = [json.loads((course / "grades" / LAB / "results" / f"{s}.json").read_text()) for s in students]
    assert {r["scalelabs"]["course_secret"] for r in results} == {made.fingerprint}
    assert all(secret.NO_SECRET_NOTE not in r["output"] for r in results)
    again = run([BIN / "scalelabs", "secret"], course, env_of(course))
    assert made.fingerprint in again.stdout
    run([BIN / "scalelabs", "otter", LAB, "--course", course], tmp_path, env_of(course))
    with zipfile.ZipFile(course / "dist" / f"{LAB}-autograder.zip") as zf:
        assert zf.read(secret.ZIP_NAME).decode().strip() == hex_key
