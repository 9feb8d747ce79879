"""Students' names in the course gradebook, from the course's roster, so formgrader shows a student by
name (nbgrader's own forms print "None, None" for a student nobody named).

The roster is a CSV in nbgrader's `nbgrader db student import` columns: `id` (required), `first_name`,
`last_name`, `email` (others are ignored, an empty cell is no value); where it is, course.py says
(`[course] roster`, default roster.csv in the course). `scalelabs release` registers it; nbgrader's
own `nbgrader db student import roster.csv` reads the same file. Grading never clears a name: a
student a batch or autograde creates without one keeps the roster's once registered.
"""
from __future__ import annotations

import csv
from pathlib import Path

from autograder.classroom.identity import id_problem

FIELDS = ("first_name", "last_name", "email")


class RosterError(ValueError):
    """The roster cannot be read: the message names the file, the row and what is wrong."""


def read_roster(path: Path) -> dict[str, dict[str, str | None]]:
    """student id -> {first_name, last_name, email} (None where the cell is empty or absent)."""
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:   # a spreadsheet's byte-order mark
            reader = csv.DictReader(f)
            if reader.fieldnames is None or "id" not in [h.strip().lower() for h in reader.fieldnames]:
                raise RosterError(f"{path}: no `id` column (the roster's columns: id,first_name,last_name,email)")
            reader.fieldnames = [h.strip().lower() for h in reader.fieldnames]
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise RosterError(f"{path}: cannot be read as a CSV ({exc})") from None
    roster: dict[str, dict[str, str | None]] = {}
    for line, row in enumerate(rows, 2):
        student = (row.get("id") or "").strip()
        problem = id_problem(student, f"row {line}: id")
        if problem:
            raise RosterError(f"{path}: {problem}")
        if student in roster:
            raise RosterError(f"{path}: row {line}: the id {student!r} is listed twice")
        roster[student] = {k: (row.get(k) or "").strip() or None for k in FIELDS}
    return roster


def register_names(gradebook, roster: dict[str, dict[str, str | None]]) -> None:
    """Each roster student in the gradebook (an nbgrader.api.Gradebook), with the roster's names."""
    for student, fields in roster.items():
        gradebook.update_or_create_student(student, **fields)
