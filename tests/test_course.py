"""The course root is where staff stand: the folder holding nbgrader_config.py at or above the
current directory, or --course DIR; never the installed package's folder. No course is a clear
one-line error naming what was looked for and where."""
from __future__ import annotations

import subprocess
import sys

import pytest

from autograder.course import MARKER, CourseNotFound, course_root

SCALELABS = [sys.executable, "-c", "from autograder.cli import main; main()"]


@pytest.fixture
def course(tmp_path):
    (tmp_path / "course" / "submitted" / "ada").mkdir(parents=True)
    (tmp_path / "course" / MARKER).write_text("c = get_config()\n")
    return tmp_path / "course"


def test_found_from_the_current_directory_or_below(course, monkeypatch):
    monkeypatch.chdir(course / "submitted" / "ada")
    assert course_root() == course.resolve()
    monkeypatch.chdir(course)
    assert course_root() == course.resolve()


def test_found_from_an_explicit_folder_wherever_staff_stand(course, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert course_root(course / "submitted") == course.resolve()


def test_no_course_names_what_was_looked_for_and_where(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CourseNotFound, match=rf"{MARKER} in {tmp_path.resolve()} and every folder above"):
        course_root()
    with pytest.raises(CourseNotFound, match="--course .*/nowhere: no such folder"):
        course_root(tmp_path / "nowhere")


@pytest.mark.parametrize("args", [["release"], ["otter", "lab06_collectives"], ["demo"]])
def test_staff_commands_outside_a_course_fail_with_one_clear_line(tmp_path, args):
    done = subprocess.run([*SCALELABS, *args], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"no course found: looked for {MARKER} in {tmp_path.resolve()}" in " ".join(done.stderr.split())


def test_otter_before_release_says_to_release_first(course, tmp_path):
    done = subprocess.run([*SCALELABS, "otter", "lab06_collectives", "--course", str(course)],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "run `scalelabs release lab06_collectives` first" in " ".join(done.stderr.split())
