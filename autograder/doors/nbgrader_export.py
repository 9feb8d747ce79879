"""`nbgrader export` for the course: nbgrader's CSV of every assignment and student, written as CSV,
with the late penalty taken as a rule on the score of record.

nbgrader's own CsvExportPlugin joins the fields with commas unquoted (a name with a comma shifts
every column after it) and writes them verbatim (a student id or name `=HYPERLINK(...)` is a live
formula when the file is opened in a spreadsheet). `SafeCsvExport` (nbgrader_config.py:
`ExportApp.plugin_class`) writes nbgrader's rows with the csv module, every cell through
`autograder.classroom.csvcells.spreadsheet_safe`.

Scores are nbgrader's: the grade of record, a manual score set in formgrader included, named as
every scalelabs view names them: `raw_score` (before late work), `late_submission_penalty` (points)
and `final_score` (after late work; nbgrader's own export calls it `score`). nbgrader stores the
penalty in points when a door writes it, so a score set by hand afterwards was priced with the old
points (27.9 instead of 27). Where a door kept the submission's Lateness (autograder.classroom.gradebook,
`scalelabs_lateness`), the penalty here is its percent of the score of record as it is now, under the
course's deadlines as they are now (an extension added since, a due date moved:
`Deadlines.reassess`); elsewhere (a course using nbgrader's own late penalties) nbgrader's points.
"""
from __future__ import annotations

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import CsvExportPlugin

from autograder.classroom.csvcells import csv_text
from autograder.classroom.deadlines import final_score

KEYS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
        "raw_score", "late_submission_penalty", "final_score", "max_score"]   # nbgrader's columns, in its order


def penalty_of_record(deadlines, assignment_id: str, student: str, raw: float, kept: dict, nbgrader_points) -> float:
    """The late penalty in points on `raw`, the score of record: the kept Lateness (`kept`, student ->
    Lateness) reassessed under `deadlines` and priced on `raw`; nbgrader's own points where none is kept."""
    late = kept.get(student)
    if late is None:
        return float(nbgrader_points or 0.0)
    late = deadlines.reassess(assignment_id, student, late) if deadlines is not None else late
    return late.penalty_points(raw) if late is not None and late.status == "late" else 0.0


class SafeCsvExport(CsvExportPlugin):
    """nbgrader's CSV export, quoted, with no cell a spreadsheet would run, and the penalty a rule."""

    def export(self, gradebook: Gradebook) -> None:
        from autograder.classroom.gradebook import read_late_records

        dest = self.to or "grades.csv"
        assignments, students = {str(a) for a in self.assignment}, {str(s) for s in self.student}
        self.log.info("Exporting grades to %s", dest)
        rows = []
        for assignment in gradebook.assignments:
            if assignments and assignment.name not in assignments:
                continue
            kept = read_late_records(gradebook, assignment.name)
            deadlines = _course_deadlines(assignment.name) if kept else None
            for student in gradebook.students:
                if students and student.id not in students:
                    continue
                row = {"assignment": assignment.name, "duedate": assignment.duedate, "student_id": student.id,
                       "last_name": student.last_name, "first_name": student.first_name, "email": student.email,
                       "max_score": assignment.max_score}
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:   # nothing submitted: 0, as nbgrader's export has it
                    row |= {"timestamp": "", "raw_score": 0.0, "late_submission_penalty": 0.0, "final_score": 0.0}
                else:
                    raw = submission.score
                    penalty = penalty_of_record(deadlines, assignment.name, student.id, raw, kept,
                                                submission.late_submission_penalty)
                    row |= {"timestamp": submission.timestamp, "raw_score": raw,
                            "late_submission_penalty": round(penalty, 6), "final_score": final_score(raw, penalty)}
                rows.append(["" if row[k] is None else row[k] if isinstance(row[k], (int, float, str)) else str(row[k])
                             for k in KEYS])
        with open(dest, "w", encoding="utf-8", newline="") as fh:
            fh.write(csv_text(KEYS, rows))


def _course_deadlines(assignment_id: str):
    """The course's deadlines (scalelabs.toml where nbgrader export runs), or a stop in one line."""
    from autograder.classroom.deadlines import course_deadlines, known_labs
    from autograder.doors.nbgrader import course_setting

    return course_setting(lambda: course_deadlines(labs=known_labs(assignment_id)))
