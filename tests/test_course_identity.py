"""Who the course is (autograder/course.py, `course_settings`) and its roster (classroom/names.py):
from the course's own scalelabs.toml and files, never the code; bad input is one line naming the
file, the key or row, and the value. The end-to-end run (another id releases, collects, grades;
formgrader shows names) is tests/test_course_week.py."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from autograder.classroom.names import RosterError, read_roster
from autograder.course import CourseConfigError, course_settings

BIN = Path(sys.executable).parent


def course(tmp_path: Path, name: str = "mlsys-spring27", toml: str | None = None, roster: str | None = None) -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / "nbgrader_config.py").write_text("")
    if toml is not None:
        (root / "scalelabs.toml").write_text(toml)
    if roster is not None:
        (root / "roster.csv").write_text(roster)
    return root


def test_the_id_defaults_to_the_folders_name_and_the_table_overrides_it(tmp_path):
    assert course_settings(course(tmp_path)).id == "mlsys-spring27"
    settings = course_settings(course(tmp_path, "clone", '[course]\nid = "cs249-f26"\nexchange = "../ex"\n'))
    assert settings.id == "cs249-f26" and settings.exchange == tmp_path / "clone" / "../ex"
    assert settings.roster is None


@pytest.mark.parametrize("toml, said", [
    ('[course]\nid = "a b"\n', "[course] id = 'a b' is not a course id"),
    ('[course]\nid = 7\n', "[course] id = 7: must be a non-empty string"),
    ('[course]\ncourse_id = "x"\n', "unknown [course] keys ['course_id']"),
    ('[course]\nroster = "nobody.csv"\n', "[course] roster = 'nobody.csv': no such file"),
    ('[course\n', "is not valid TOML"),
])
def test_a_bad_course_table_is_one_line_naming_the_key_and_value(tmp_path, toml, said):
    with pytest.raises(CourseConfigError, match=None) as caught:
        course_settings(course(tmp_path, toml=toml))
    assert said in str(caught.value) and "\n" not in str(caught.value), str(caught.value)


def test_a_folder_name_that_cannot_be_an_id_says_to_set_one(tmp_path):
    with pytest.raises(CourseConfigError) as caught:
        course_settings(course(tmp_path, "my course"))
    assert "set [course] id" in str(caught.value)


def test_the_roster_gives_names_and_refuses_an_unsafe_id_by_row(tmp_path):
    root = course(tmp_path, roster="\ufeffID,First_Name,last_name,email\nada,Ada,Lovelace,\nbob,,,b@x\n")
    assert read_roster(course_settings(root).roster) == {
        "ada": {"first_name": "Ada", "last_name": "Lovelace", "email": None},
        "bob": {"first_name": None, "last_name": None, "email": "b@x"}}
    bad = tmp_path / "bad.csv"
    bad.write_text('id,first_name\nada,Ada\n=HYPERLINK("x"),Eve\n')
    with pytest.raises(RosterError, match=r"row 3: id .* is not a safe student id"):
        read_roster(bad)
    bad.write_text("id\nada\nada\n")
    with pytest.raises(RosterError, match="listed twice"):
        read_roster(bad)


def test_scalelabs_refuses_a_bad_course_table_in_one_line_before_any_work(tmp_path):
    root = course(tmp_path, toml='[course]\nid = "two words"\n')
    done = subprocess.run([str(BIN / "scalelabs"), "release", "--course", str(root)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0 and "is not a course id" in done.stderr + done.stdout, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and not (root / "release").exists()
