"""The grade of record: the nbgrader gradebook, and the views of it a TA reads.

The grade of a student is what the gradebook holds: the engine's score of each item (auto_score),
unless someone set a score by hand in formgrader (a manual override), plus any extra credit. Inside
a course that is the course's `gradebook.db`, the one formgrader and `nbgrader export` read;
outside a course (or with --db) the batch's own. grade-batch writes the engine's scores there,
keeps the overrides, and writes two views of the lab's whole record beside the results:

    grades.csv     one row per student of the lab in the record: the raw score (the grade of record
                   before late work), the engine's score beside it, the items overridden by hand, what
                   needs a person, the submission time, how late, the late penalty in points and the
                   final score (after late work: the raw score less the penalty, nbgrader export's
                   `final_score`); lateness is kept beside the score, never in it, and priced as a rule
                   on the raw score (autograder.classroom.deadlines); then each item's grade (COLUMNS; a
                   new column is one more entry there)
    record.json    which gradebook the record is (the report and `scalelabs forget` read it)

`scalelabs report` shows the same scores. `forget` removes one student from all of it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from autograder.classroom.csvcells import csv_text
from autograder.classroom.feedback import write_atomic
from autograder.classroom.deadlines import Lateness, final_score as _final, late_attention
from autograder.classroom.gradebook import BookLate, LabRecord, forget_submission, item_scores, sqlite_url
from autograder.engine.spec import Assignment

POINTER = "record.json"
FULL = 1e-9


def default_gradebook(course: Path | None, out_dir: Path) -> str:
    """The gradebook a batch writes unless told otherwise: the course's (nbgrader's default db_url,
    `<course>/gradebook.db`), or the batch's own outside a course."""
    return sqlite_url(Path(course) / "gradebook.db") if course else sqlite_url(Path(out_dir) / "gradebook.db")


def write_pointer(out_dir: Path, assignment_id: str, db_url: str) -> None:
    write_atomic(Path(out_dir) / POINTER, json.dumps({"assignment": assignment_id, "gradebook": db_url}, indent=1))


def read_pointer(out_dir: Path) -> str | None:
    """The gradebook a batch wrote the record of `out_dir` to, or None (no batch has finished there)."""
    try:
        data = json.loads((Path(out_dir) / POINTER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    url = data.get("gradebook") if isinstance(data, dict) else None
    return url if isinstance(url, str) and url else None


@dataclass
class Row:
    """One student of the lab in the record."""
    student: str
    grades: dict[str, float]                 # item -> the grade of record (manual where overridden)
    engine: dict[str, float]                 # item -> the engine's score
    max_score: float
    overridden: list[str] = field(default_factory=list)   # items with a manual score
    attention: list[str] = field(default_factory=list)    # what needs a person, one line each
    late: Lateness | None = None          # the lateness a batch recorded (results file)
    book_late: BookLate | None = None     # or, for a student only the gradebook holds, nbgrader's

    @property
    def score(self) -> float:
        """The raw score: the grade of record before late work."""
        return round(sum(self.grades.values()), 6)

    raw_score = score

    @property
    def engine_score(self) -> float:
        return round(sum(self.engine.values()), 6)

    @property
    def submitted_at(self) -> str:
        return self.late.submitted_at if self.late else (self.book_late.timestamp if self.book_late else "")

    @property
    def late_by_hours(self) -> float | str:
        """Hours past the due date ("" when there is no due date or the time is unknown)."""
        if self.late:
            return round(self.late.late_by_s / 3600, 3) if self.late.status != "unknown" else ""
        return round(self.book_late.late_by_s / 3600, 3) if self.book_late and self.book_late.timestamp else ""

    @property
    def late_penalty(self) -> float:
        """The late penalty in points on the grade of record (its percent of the raw score as it is now)."""
        if self.late:
            return self.late.penalty_points(self.score) if self.late.status == "late" else 0.0
        return round(min(self.book_late.penalty, self.score), 6) if self.book_late else 0.0

    @property
    def final_score(self) -> float:
        """The raw score less the late penalty (nbgrader export's `final_score`)."""
        return _final(self.score, self.late_penalty)


def record_rows(assignment: Assignment, results: dict[str, dict], book: LabRecord | None,
                late: dict[str, BookLate] | None = None, *, deadlines=None,
                scores: dict[str, dict[str, float]] | None = None) -> list[Row]:
    """Every student of the lab in the record: those with a results file and those the gradebook holds
    (e.g. graded by `nbgrader autograde`), sorted. Without a gradebook (it could not be read) the
    engine's scores are the grades. Lateness: the one the gradebook keeps (`late`: the last door to
    write it), else a results file's, reassessed under `deadlines` (the course's,
    autograder.classroom.deadlines) when given. `scores`: item_scores of the results, when the caller
    has them already."""
    book, late = book or {}, late or {}
    items = assignment.item_ids
    rows = []
    for student in sorted(set(results) | set(book)):
        data = results.get(student)
        engine = (scores[student] if scores and student in scores else item_scores(data)) if data else {}
        cells = book.get(student, {})
        engine = {i: engine.get(i, cells[i].auto if i in cells and cells[i].auto is not None else 0.0) for i in items}
        grades = {i: cells[i].score if i in cells else engine[i] for i in items}
        meta = data.get("scalelabs", {}) if data else {}
        # the gradebook's late record first (grades.csv is a view of the record), a results file's where it has none
        lateness = getattr(late.get(student), "lateness", None) or Lateness.from_json(meta.get("late"))
        if deadlines is not None:
            lateness = deadlines.reassess(assignment.id, student, lateness)
        attention = list(meta.get("attention", [])) + [line for line in [late_attention(lateness)] if line]
        rows.append(Row(student, grades, engine, float(meta.get("max_score", assignment.total_points)),
                        [i for i in items if i in cells and cells[i].manual is not None], attention,
                        lateness, None if lateness else late.get(student)))
    return rows


# grades.csv: (header, value of a row); the item columns follow.
COLUMNS: list[tuple[str, Callable[[Row], object]]] = [
    ("student", lambda r: r.student),
    ("raw_score", lambda r: r.score),
    ("max_score", lambda r: r.max_score),
    ("engine_score", lambda r: r.engine_score),
    ("overridden", lambda r: " ".join(r.overridden)),
    ("needs_attention", lambda r: "; ".join(r.attention)),
    ("submitted_at", lambda r: r.submitted_at),
    ("late_by_hours", lambda r: r.late_by_hours),
    ("late_penalty", lambda r: r.late_penalty),
    ("final_score", lambda r: r.final_score),
]


def grades_csv(assignment: Assignment, rows: list[Row]) -> str:
    """grades.csv: the record's raw and final score of each student, the engine's beside them, then each
    item's grade."""
    items = assignment.item_ids
    return csv_text([h for h, _ in COLUMNS] + items,
                    [[value(r) for _, value in COLUMNS] + [r.grades[i] for i in items] for r in rows])


def forget(assignment: Assignment, student: str, out_dir: Path, db_url: str | None) -> list[str]:
    """Remove one student of the lab from the record: results file, feedback page, gradebook
    submission (and the student, when nothing else of theirs is left); the CSV is rebuilt by the
    caller. Returns what was removed, one line each (empty: there was nothing of theirs)."""
    removed = []
    for path in (Path(out_dir) / "results" / f"{student}.json", Path(out_dir) / "feedback" / f"{student}.html"):
        if path.is_file() or path.is_symlink():
            path.unlink()
            removed.append(str(path))
    if db_url:
        removed += forget_submission(db_url, assignment.id, student)
    return removed
