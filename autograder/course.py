"""Where the course is: the folder staff work in, marked by its `nbgrader_config.py`.

Every command that reads or writes course files (release/, source/, samples/, dist/, the gradebook,
scalelabs.toml) resolves them here, from the current directory or `--course DIR`, walking up the
way git finds its repository. The package's own files (the reference modules, the templates) are
found through the package instead, so a non-editable install (`pip install .`) works from any course.

Who the course is comes from its own files, never the code: the `[course]` table of its
scalelabs.toml (`course_settings`), every key optional:

    [course]
    id = "mlsys-fall26"                  # nbgrader's course id, the course's folder in the exchange;
                                         # default: the course folder's name
    exchange = "/srv/nbgrader/exchange"  # nbgrader's exchange root (default: nbgrader's own)
    roster = "roster.csv"                # id,first_name,last_name,email (nbgrader's `db student import`
                                         # columns); default: roster.csv in the course, if there

Two offerings on one hub are two course folders: their ids differ by the folder's name or by `id`, so
their exchange folders, hand-ins and collects never meet.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

MARKER = "nbgrader_config.py"
SETTINGS = "scalelabs.toml"
# A course id names a folder of the exchange (`<exchange>/<id>/inbound`) and nbgrader's `--course`
COURSE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
COURSE_ID_TEXT = "ASCII letters, digits and . _ - (starting with a letter or digit, at most 64 characters)"
DEFAULT_ROSTER = "roster.csv"
# nbgrader's own course id where no course is found (a TA's batch into a gradebook outside any course)
NBGRADER_DEFAULT_COURSE = "default_course"
# The installed packages holding the engine, the declarations (keys, hidden domains) and the
# reference bodies: student code must never read them, and every zip or lockdown names them here.
SECRET_PACKAGES = ("autograder", "labs", "reference")


def package_dirs(names=SECRET_PACKAGES) -> list[Path]:
    """Where each of `names` is imported from (site-packages, or the clone for pip install -e). Found by
    the import system without running the package (importing labs/ would import hypothesis: the sandbox's
    start check asks for these on a thread of its own, while the grader imports the lab)."""
    return [_package_dir(name) for name in names]


def _package_dir(name: str) -> Path:
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    if origin is None:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
    if origin is None:      # not importable as a package with a file: what importing it says
        origin = importlib.import_module(name).__file__
    return Path(origin).resolve().parent


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


class CourseConfigError(ValueError):
    """The course's [course] table cannot be used: the message names the file, the key and the value."""


@dataclass(frozen=True)
class CourseSettings:
    id: str                    # nbgrader's course id
    exchange: Path | None      # nbgrader's Exchange.root, None: nbgrader's default
    roster: Path | None        # the students' names (a CSV), None: no roster


def course_settings(root: Path) -> CourseSettings:
    """Who the course at `root` is: its scalelabs.toml's [course] table (module docstring), the
    defaults where a key or the file is missing. CourseConfigError, one line naming file, key and
    value, for invalid TOML, an unknown key, a value that is not a string or an id that cannot be
    an exchange folder (the folder's own name included: then set [course] id)."""
    root = Path(root).resolve()
    path = root / SETTINGS
    table = {}
    if path.is_file():
        try:
            table = tomllib.loads(path.read_text()).get("course", {})
        except tomllib.TOMLDecodeError as exc:
            raise CourseConfigError(f"{path} is not valid TOML: {exc}") from None
        if not isinstance(table, dict):
            raise CourseConfigError(f"{path}: [course] must be a table")
    unknown = sorted(set(table) - {"id", "exchange", "roster"})
    if unknown:
        raise CourseConfigError(f"{path}: unknown [course] keys {unknown}; known: id, exchange, roster")
    for key, value in table.items():
        if not isinstance(value, str) or not value:
            raise CourseConfigError(f"{path}: [course] {key} = {value!r}: must be a non-empty string")
    course_id = table.get("id", root.name)
    if not COURSE_ID.fullmatch(course_id):
        where = f"{path}: [course] id = {course_id!r}" if "id" in table else \
            f"the course folder's name {course_id!r} (the default course id; set [course] id in {path})"
        raise CourseConfigError(f"{where} is not a course id: ids use {COURSE_ID_TEXT}")
    roster = root / table["roster"] if "roster" in table else root / DEFAULT_ROSTER
    if "roster" in table and not roster.is_file():
        raise CourseConfigError(f"{path}: [course] roster = {table['roster']!r}: no such file {roster}")
    return CourseSettings(id=course_id, exchange=root / table["exchange"] if "exchange" in table else None,
                          roster=roster if roster.is_file() else None)


def current_course_id() -> str:
    """The id of the course at or above the current directory; nbgrader's default outside any course."""
    root = find_course()
    return course_settings(root).id if root else NBGRADER_DEFAULT_COURSE
