"""Grades for Canvas: the CSV its gradebook import accepts, one column per lab, each student's final score.

    canvas_csv(labs, id_column="login") -> (csv text, {lab: students without a record of it})
        labs: [(Assignment, grades_dir, db_url or None), ...]

Canvas's gradebook import (Instructure's guide "How do I import grades in the Gradebook?", and its
importer, canvas-lms `app/models/gradebook_importer.rb`) reads:

- a header row: `Student`, `ID`, `SIS User ID`, `SIS Login ID`, `Section` (the last student column must
  be Section), then one column per assignment: a title matches the Canvas assignment of that title, or
  makes a new one; `Title (123)` matches assignment 123 (so a lab whose title ends so is refused);
- a row whose first cell is `Points Possible`: each assignment's points (a new assignment takes them);
- one row per student, found by `ID` (Canvas's own user id), else `SIS User ID`, else `SIS Login ID`,
  else the name in `Student`. A blank score leaves the Canvas grade as it is.

scalelabs does not know Canvas's user ids: the student id of the record (the one every door grades
under) goes in `SIS Login ID` (`id_column="login"`, a course whose ids are logins) or `SIS User ID`
(`"sis"`, a student number); `Student` holds the course roster's name ("Last, First", Canvas's sortable
name), else the id. Canvas's import page asks about anyone it cannot match before it changes anything.
A student with no record of a lab has a blank cell there.
"""
from __future__ import annotations

import re
from pathlib import Path

from autograder.classroom.csvcells import csv_text
from autograder.engine.spec import Assignment

HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_POSSIBLE = "Points Possible"
ID_COLUMNS = {"login": "SIS Login ID", "sis": "SIS User ID"}
# Canvas drops a column whose header contains one of these (its read-only totals), whatever else it says
# Canvas reads a header ending in " (digits)" as "title (assignment id)" (Assignment.title_and_id)
TITLE_AND_ID = re.compile(r"\A(.*)\s\((\d+)\)\Z")
CANVAS_TOTALS = ("Current Score", "Current Points", "Current Grade", "Final Score", "Final Points", "Final Grade",
                 "Override Score", "Override Grade", "Override Status")


def final_scores(assignment: Assignment, grades_dir: Path, db_url: str | None = None) -> dict[str, float]:
    """student -> the lab's final score: the grade of record (a manual override included) less the late
    penalty, as grades.csv's final score; every export to a course's gradebook reads it here. ValueError
    when the gradebook named cannot be read (an export must not fall back to the engine's scores and
    lose a TA's overrides) or when there is no record of the lab."""
    from autograder.classroom.report import class_record

    record = class_record(assignment, grades_dir, db_url)
    if record.problem:
        raise ValueError(f"{assignment.id}: {record.problem}; nothing was exported")
    if not record.rows:
        raise ValueError(f"no record of {assignment.id} in {grades_dir} (grade the class first: "
                         f"scalelabs grade-batch {assignment.id} SUBMISSIONS)")
    return {row.student: row.final_score for row in record.rows}


def column_name(assignment: Assignment) -> str:
    """The lab's column: its title, which Canvas matches to an assignment of that title (or creates)."""
    name = assignment.title.strip() or assignment.id
    clash = next((word for word in CANVAS_TOTALS if word in name), None)
    if clash:
        raise ValueError(f"{assignment.id}: Canvas would drop a column named {name!r} (it contains "
                         f"{clash!r}, one of its read-only totals); give the lab another title")
    if read_as_id := TITLE_AND_ID.match(name):
        raise ValueError(f"{assignment.id}: Canvas would read {name!r} as the title {read_as_id[1]!r} and assignment "
                         f"id {read_as_id[2]} (a header ending in a number in parentheses names an assignment by id); "
                         "give the lab another title")
    return name


def sortable_name(fields: dict) -> str:
    """A roster row's name as Canvas sorts it ("Last, First"; what is there of it), "" when none."""
    first, last = (fields.get("first_name") or "").strip(), (fields.get("last_name") or "").strip()
    return ", ".join(part for part in (last, first) if part)


def canvas_number(value: float) -> str:
    """A score as Canvas's importer reads a number: plain decimals to the micro-point, never 1e-06."""
    return f"{value:.6f}".rstrip("0").rstrip(".") or "0"


def canvas_csv(labs: list[tuple[Assignment, Path, str | None]], id_column: str = "login",
               roster: dict[str, dict] | None = None) -> tuple[str, dict[str, list[str]]]:
    """The Canvas gradebook import CSV of `labs` (assignment, grades folder, gradebook URL or None), and
    each lab's students of the file without a record of it (a blank cell: Canvas keeps their grade).
    `roster` (autograder.classroom.names.read_roster) names each student in `Student` as Canvas does
    ("Last, First"); a student it does not name is shown by id."""
    if id_column not in ID_COLUMNS:
        raise ValueError(f"the Canvas id column is one of {', '.join(ID_COLUMNS)}, not {id_column!r}")
    names = [column_name(a) for a, _, _ in labs]
    if len(set(names)) < len(names):
        raise ValueError(f"two labs share a column name: {', '.join(names)}")
    scores = [final_scores(a, Path(d), db) for a, d, db in labs]
    students = sorted(set().union(*scores))
    rows = [[POINTS_POSSIBLE, "", "", "", ""] + [canvas_number(a.total_points) for a, _, _ in labs]]
    for student in students:
        ids = {"SIS User ID": "", "SIS Login ID": "", ID_COLUMNS[id_column]: student}
        name = sortable_name((roster or {}).get(student) or {}) or student
        rows.append([name, "", ids["SIS User ID"], ids["SIS Login ID"], ""]
                    + [canvas_number(lab[student]) if student in lab else "" for lab in scores])
    missing = {a.id: [s for s in students if s not in lab] for (a, _, _), lab in zip(labs, scores)}
    return csv_text(HEADER + names, rows), missing
