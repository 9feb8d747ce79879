"""A course's first week, from a fresh copy of the repository (its tracked files alone), with the
README's course-staff commands in order and no extra step: `scalelabs release`; the sample class
hands in Lab 06 in nbgrader's `submitted/<student>/<lab>/` layout; `nbgrader autograde` and
`nbgrader generate_feedback`; a TA's `scalelabs grade-batch`; `scalelabs otter`. The gradebook's
per-cell scores equal grade-batch's per-item results, and every file lands in the course, not next
to the installed package."""
from __future__ import annotations

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

from autograder.classroom import samples
from autograder.engine import secret
from autograder.engine.config import COURSE_ID
from repo_copy import copy_tracked

LAB = "lab06_collectives"
# Three of the sample class, scoring full, partial and nothing: enough to compare the two doors
# student by student, and the week stays under two minutes on a quiet machine.
STUDENTS = ("correct", "partly_wrong", "untouched")
BIN = Path(sys.executable).parent


# the course's own secret, made by its first release (the tests' shared one is not this course's)
COURSE_ENV = {k: v for k, v in os.environ.items() if k != secret.ENV}


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, env=COURSE_ENV)
    assert done.returncode == 0, f"{command} in {cwd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    """The course after the week's commands; returns (course, the sample students)."""
    course = copy_tracked(tmp_path_factory.mktemp("week") / "course")
    released = run([str(BIN / "scalelabs"), "release"], course)
    assert "created the course secret" in released.stdout
    students = [s for s in samples.students(LAB, course / "samples" / LAB) if s in STUDENTS]
    assert len(students) == len(STUDENTS), f"the sample class of {LAB} lacks some of {STUDENTS}"
    for student in students:
        samples.materialise(LAB, student, course / "submitted" / student / LAB,
                            release_dir=course / "release" / LAB, samples_dir=course / "samples" / LAB)
    run([str(BIN / "nbgrader"), "autograde", LAB], course)
    run([str(BIN / "nbgrader"), "generate_feedback", LAB], course)
    run([str(BIN / "scalelabs"), "grade-batch", LAB, "submitted", "--jobs", "2"], course)
    return course, students


def test_release_registers_every_lab_in_the_course_gradebook(week):
    course, _ = week
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        registered = {a.name: sum(len(nb.grade_cells) for nb in a.notebooks) for a in gb.assignments}
    released = sorted(p.name for p in (course / "release").iterdir())
    assert sorted(registered) == released and all(registered.values()), registered


def test_gradebook_cells_equal_grade_batch_items_for_every_student(week):
    course, students = week
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=COURSE_ID) as gb:
        for student in students:
            book = {g.name: g.auto_score for g in gb.find_submission_notebook(LAB, LAB, student).grades}
            results = json.loads((course / "grades" / LAB / "results" / f"{student}.json").read_text())
            items: dict[str, float] = {}
            for t in results["tests"]:
                item = t["name"].split(":", 1)[0]
                items[item] = items.get(item, 0.0) + t["score"]
            assert set(book) == set(items), student
            differ = {k: (book[k], items[k]) for k in items if not math.isclose(book[k], items[k], abs_tol=1e-4)}
            assert not differ, f"{student}: (gradebook, grade-batch) {differ}"
    totals = {s: json.loads((course / "grades" / LAB / "results" / f"{s}.json").read_text())["score"]
              for s in students}
    assert len(set(totals.values())) == len(STUDENTS), f"the three students should not score alike: {totals}"


def test_feedback_is_written_in_the_course(week):
    course, students = week
    for student in students:
        assert (course / "feedback" / student / LAB / f"{LAB}.html").is_file(), student


def test_otter_zip_is_built_in_the_course(week, tmp_path):
    course, _ = week
    done = run([str(BIN / "scalelabs"), "otter", LAB, "--course", str(course)], tmp_path)
    zip_path = course / "dist" / f"{LAB}-autograder.zip"
    assert Path(done.stdout.strip()) == zip_path and zip_path.is_file()
    names = zipfile.ZipFile(zip_path).namelist()
    assert "scalelabs/pyproject.toml" in names and "scalelabs/autograder/course.py" in names
    assert not list(tmp_path.rglob("*.zip")), "otter wrote where it was run, not into the course"



def test_the_first_release_made_the_course_secret_every_door_grades_under(week, tmp_path):
    """`scalelabs release` made .scalelabs/course_secret (the owner's alone), nowhere under release/,
    source/ or the graded output; grade-batch recorded its fingerprint; the otter zip carries it."""
    course, students = week
    made = secret.read_secret(course / secret.RELATIVE)
    assert made is not None
    assert stat.S_IMODE((course / secret.RELATIVE).stat().st_mode) == 0o600
    assert stat.S_IMODE((course / secret.RELATIVE).parent.stat().st_mode) == 0o700
    hex_key = made.key.hex()
    for folder in ("release", "source", "grades", "feedback", "autograded"):
        for path in (course / folder).rglob("*"):
            assert not path.is_file() or hex_key not in path.read_bytes().decode("utf-8", "replace").lower(), path
    results = [json.loads((course / "grades" / LAB / "results" / f"{s}.json").read_text()) for s in students]
    assert {r["scalelabs"]["course_secret"] for r in results} == {made.fingerprint}
    assert all(secret.NO_SECRET_NOTE not in r["output"] for r in results)
    again = run([str(BIN / "scalelabs"), "secret"], course)
    assert made.fingerprint in again.stdout
    run([str(BIN / "scalelabs"), "otter", LAB, "--course", str(course)], tmp_path)
    with zipfile.ZipFile(course / "dist" / f"{LAB}-autograder.zip") as zf:
        assert zf.read(secret.ZIP_NAME).decode().strip() == hex_key
