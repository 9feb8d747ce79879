"""`nbgrader export` for the course: nbgrader's CSV of every assignment and student, written as CSV.

nbgrader's own CsvExportPlugin joins the fields with commas unquoted (a name with a comma shifts
every column after it) and writes them verbatim (a student id or name `=HYPERLINK(...)` is a live
formula when the file is opened in a spreadsheet). `SafeCsvExport` (nbgrader_config.py:
`ExportApp.plugin_class`) writes the same columns and rows with the csv module, every cell through
`autograder.classroom.csvcells.spreadsheet_safe`. Scores are nbgrader's: the grade of record,
a manual score set in formgrader included.
"""
from __future__ import annotations

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import CsvExportPlugin

from autograder.classroom.csvcells import csv_text

KEYS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name", "email",
        "raw_score", "late_submission_penalty", "score", "max_score"]   # nbgrader's columns, in its order


class SafeCsvExport(CsvExportPlugin):
    """nbgrader's CSV export, quoted and with no cell a spreadsheet would run."""

    def export(self, gradebook: Gradebook) -> None:
        dest = self.to or "grades.csv"
        assignments, students = {str(a) for a in self.assignment}, {str(s) for s in self.student}
        self.log.info("Exporting grades to %s", dest)
        rows = []
        for assignment in gradebook.assignments:
            if assignments and assignment.name not in assignments:
                continue
            for student in gradebook.students:
                if students and student.id not in students:
                    continue
                row = {"assignment": assignment.name, "duedate": assignment.duedate, "student_id": student.id,
                       "last_name": student.last_name, "first_name": student.first_name, "email": student.email,
                       "max_score": assignment.max_score}
                try:
                    submission = gradebook.find_submission(assignment.name, student.id)
                except MissingEntry:   # nothing submitted: 0, as nbgrader's export has it
                    row |= {"timestamp": "", "raw_score": 0.0, "late_submission_penalty": 0.0, "score": 0.0}
                else:
                    penalty = submission.late_submission_penalty
                    row |= {"timestamp": submission.timestamp, "raw_score": submission.score,
                            "late_submission_penalty": penalty,
                            "score": max(0.0, submission.score - (penalty or 0.0))}
                rows.append(["" if row[k] is None else row[k] if isinstance(row[k], (int, float, str)) else str(row[k])
                             for k in KEYS])
        with open(dest, "w", encoding="utf-8", newline="") as fh:
            fh.write(csv_text(KEYS, rows))
