"""The course's private files (the roster's names and emails, extensions, nbgrader export's grades.csv)
are ignored by git from the first release, wherever scalelabs.toml puts them (issue 41: they sat in the
course untracked but not ignored, beside staff.md's advice to commit release/)."""
from __future__ import annotations

import shutil
import subprocess

from autograder.classroom.private_files import ignore_private_files
from repo_copy import REPO


def git(course, *args) -> str:
    return subprocess.run(["git", *args], cwd=course, capture_output=True, text=True, check=True).stdout


def course_with(tmp_path, toml: str):
    course = tmp_path / "course"
    course.mkdir()
    git(course, "init", "-q")
    shutil.copyfile(REPO / ".gitignore", course / ".gitignore")
    (course / "nbgrader_config.py").write_text("")
    (course / "scalelabs.toml").write_text(toml)
    return course


def test_the_default_places_are_ignored_by_the_repositorys_gitignore(tmp_path):
    course = course_with(tmp_path, "")
    for name in ("roster.csv", "extensions.csv", "grades.csv"):
        (course / name).write_text("id\ns1\n")
    assert ignore_private_files(course) == []
    assert git(course, "status", "--porcelain") == "?? .gitignore\n?? nbgrader_config.py\n?? scalelabs.toml\n"


def test_release_adds_the_places_scalelabs_toml_names_and_says_so(tmp_path):
    course = course_with(tmp_path, '[course]\nroster = "private/students.csv"\n\n[deadlines]\nextensions = "late.csv"\n')
    (course / "private").mkdir()
    (course / "private" / "students.csv").write_text("id,first_name,last_name,email\ns1,A,B,a@b.c\n")
    (course / "late.csv").write_text("student,lab,due\n")
    said = ignore_private_files(course)
    assert [line.split(":")[0] for line in said] == ["added /private/students.csv to .gitignore",
                                                     "added /late.csv to .gitignore"], said
    status = git(course, "status", "--porcelain", "-uall")
    assert "students.csv" not in status and "late.csv" not in status, status
    assert ignore_private_files(course) == []       # once is enough


def test_a_private_file_git_tracks_already_is_named(tmp_path):
    course = course_with(tmp_path, "")
    (course / "roster.csv").write_text("id\ns1\n")
    git(course, "add", "-f", "roster.csv")
    said = ignore_private_files(course)
    assert len(said) == 1 and "/roster.csv is tracked by git" in said[0] and "git rm --cached roster.csv" in said[0]
