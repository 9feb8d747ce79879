"""Where the course is: the folder staff work in, marked by its `nbgrader_config.py`.

Every command that reads or writes course files (release/, source/, samples/, dist/, the gradebook,
scalelabs.toml) resolves them here, from the current directory or `--course DIR`, walking up the
way git finds its repository. The package's own files (the reference modules, the templates) are
found through the package instead, so a non-editable install (`pip install .`) works from any course.
"""
from __future__ import annotations

import importlib
from pathlib import Path

MARKER = "nbgrader_config.py"
# The installed packages holding the engine, the declarations (keys, hidden domains) and the
# reference bodies: student code must never read them, and every zip or lockdown names them here.
SECRET_PACKAGES = ("autograder", "labs", "reference")


def package_dirs(names=SECRET_PACKAGES) -> list[Path]:
    """Where each of `names` is imported from (site-packages, or the clone for pip install -e)."""
    return [Path(importlib.import_module(name).__file__).resolve().parent for name in names]


class CourseNotFound(ValueError):
    """No folder at or above the starting point holds nbgrader_config.py."""


def find_course(start: Path | None = None) -> Path | None:
    """The nearest folder at or above `start` (default: the current directory) holding
    nbgrader_config.py, or None."""
    start = Path(start or Path.cwd()).resolve()
    return next((d for d in (start, *start.parents) if (d / MARKER).is_file()), None)


def course_root(course: Path | None = None) -> Path:
    """The course root: `course` (an explicit --course DIR) or the current directory, or the
    nearest folder above it, holding nbgrader_config.py. Raises CourseNotFound naming where it looked."""
    if course is not None and not Path(course).is_dir():
        raise CourseNotFound(f"--course {course}: no such folder")
    start = Path(course or Path.cwd()).resolve()
    found = find_course(start)
    if found is None:
        raise CourseNotFound(f"no course found: looked for {MARKER} in {start} and every folder above it; "
                             f"run scalelabs in the course folder (a clone of the scalelabs repository) "
                             f"or pass --course DIR")
    return found
