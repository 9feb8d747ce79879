"""`scalelabs export LAB ... --canvas`: the CSV Canvas's gradebook import accepts, one column per lab, each
student's final score (the grade of record less the late penalty).

Canvas's format, as its guide ("How do I import grades in the Gradebook?") and its importer
(canvas-lms app/models/gradebook_importer.rb) read it: a header Student, ID, SIS User ID, SIS Login ID,
Section (the last student column must be Section), then the assignments; a row whose first cell is
"Points Possible"; a row per student, found by ID, else SIS User ID, else SIS Login ID, else name; a
column whose header names one of Canvas's totals ("Final Score", ...) is dropped. `canvas_rules` below
checks those rules, written from the importer, without the code under test. No grading here: results
files are written directly (the sample class graded: tests/test_report.py).
"""
from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from autograder.classroom.canvas import canvas_csv
from autograder.classroom.deadlines import Lateness
from autograder.engine.results import Result, TestResult
from labs import load

REPO = Path(__file__).resolve().parents[2]
LAB06, LAB01 = load("lab06_collectives"), load("lab01_scale")
DUE = "2026-11-10T23:59:00-08:00"
LATE = Lateness("late", DUE, DUE, submitted_at="2026-11-11T01:00:00-08:00", source="nbgrader timestamp.txt",
                late_by_s=3660.0, penalty_percent=10.0, policy="10 % per started day late, at most 50 %")
CANVAS_TOTALS = re.compile("Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
                           "Override Score|Override Grade|Override Status")


def canvas_rules(text: str) -> dict[str, dict[str, str]]:
    """What Canvas's importer makes of the CSV: {student key: {assignment: score}}; AssertionError where
    it would refuse the header or misread a row."""
    rows = list(csv.reader(io.StringIO(text)))
    header = rows[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1], header
    assert re.match(r"SIS\s+User\s+ID", header[2]) and re.match(r"SIS\s+Login\s+ID", header[3]), header
    assert "Section" in header[4], "the last student column must be Section"
    assignments = header[5:]
    assert assignments and not any(CANVAS_TOTALS.search(a) for a in assignments), assignments
    assert "Points Possible" in rows[1][0] and all(float(p) > 0 for p in rows[1][5:]), rows[1]
    found = {}
    for row in rows[2:]:
        assert len(row) == len(header), row
        key = row[1] or (row[2] and f"sis:{row[2]}") or (row[3] and f"login:{row[3]}") or f"name:{row[0]}"
        assert key not in found, f"two rows for {key}"
        for score in row[5:]:
            assert score == "" or re.fullmatch(r"-?\d+(\.\d+)?", score), row   # a number, or blank (no change)
        found[key] = dict(zip(assignments, row[5:]))
    return found


def _write(folder: Path, lab, scores: dict[str, float], late: dict[str, Lateness] = {}) -> Path:
    """lab's results files: each student's items at `share` of their points (one test per item)."""
    (folder / "results").mkdir(parents=True)
    for student, share in scores.items():
        tests = [TestResult(item, "hidden checks", "hidden", round(points * share, 6), points, "")
                 for item, points in lab.item_points.items()]
        data = Result(lab.id, student, tests).to_gradescope()
        data["scalelabs"] = {"assignment": lab.id, "student": student, "max_score": lab.total_points,
                             **({"late": late[student].to_json()} if student in late else {})}
        (folder / "results" / f"{student}.json").write_text(json.dumps(data))
    return folder


@pytest.fixture(scope="module")
def grades(tmp_path_factory):
    root = tmp_path_factory.mktemp("canvas")
    return {LAB06.id: _write(root / LAB06.id, LAB06, {"ann": 1.0, "bo": 0.5, "cy": 1.0}, {"cy": LATE}),
            LAB01.id: _write(root / LAB01.id, LAB01, {"ann": 0.5, "di": 1.0})}


def test_the_header_points_row_and_a_students_row_are_canvass(grades):
    text, missing = canvas_csv([(LAB06, grades[LAB06.id], None), (LAB01, grades[LAB01.id], None)])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", LAB06.title, LAB01.title]
    assert rows[1] == ["Points Possible", "", "", "", "", f"{LAB06.total_points:g}", f"{LAB01.total_points:g}"]
    assert rows[2] == ["ann", "", "", "ann", "", f"{LAB06.total_points:g}", f"{LAB01.total_points / 2:g}"]
    found = canvas_rules(text)
    assert set(found) == {"login:ann", "login:bo", "login:cy", "login:di"}
    assert missing == {LAB06.id: ["di"], LAB01.id: ["bo", "cy"]}
    assert found["login:di"][LAB06.title] == "" and found["login:bo"][LAB01.title] == ""   # no record: blank


def test_the_rosters_names_fill_the_student_column_as_canvas_sorts_them(grades):
    roster = {"ann": {"first_name": "Ann", "last_name": "Lee", "email": None}, "bo": {"first_name": "Bo"},
              "cy": {"first_name": None, "last_name": None}}
    text, _ = canvas_csv([(LAB06, grades[LAB06.id], None)], roster=roster)
    rows = {row[3]: row[0] for row in csv.reader(io.StringIO(text))}
    assert (rows["ann"], rows["bo"], rows["cy"]) == ("Lee, Ann", "Bo", "cy")   # no name: the id
    assert set(canvas_rules(text)) == {"login:ann", "login:bo", "login:cy"}    # still found by login


def test_the_score_is_the_final_one_after_the_late_penalty(grades):
    text, _ = canvas_csv([(LAB06, grades[LAB06.id], None)])
    cy = canvas_rules(text)["login:cy"][LAB06.title]
    assert float(cy) == pytest.approx(LAB06.total_points * 0.9)            # 10 % of full marks taken
    assert float(canvas_rules(text)["login:ann"][LAB06.title]) == LAB06.total_points


def test_a_score_is_a_plain_decimal_canvas_reads_never_an_exponent():
    from autograder.classroom.canvas import canvas_number
    assert [canvas_number(v) for v in (29.0, 26.5, 0.000005, 0.0, 13.333333333)] == ["29", "26.5", "0.000005", "0",
                                                                                    "13.333333"]


def test_the_id_goes_in_sis_user_id_when_asked(grades):
    text, _ = canvas_csv([(LAB01, grades[LAB01.id], None)], id_column="sis")
    assert set(canvas_rules(text)) == {"sis:ann", "sis:di"}
    with pytest.raises(ValueError, match="one of login, sis"):
        canvas_csv([(LAB01, grades[LAB01.id], None)], id_column="email")


def test_a_title_canvas_would_drop_or_a_gradebook_that_cannot_be_read_is_refused(grades, tmp_path):
    with pytest.raises(ValueError, match="Canvas would drop a column named 'Final Score'"):
        canvas_csv([(replace(LAB06, title="Final Score"), grades[LAB06.id], None)])
    gone = f"sqlite:///{tmp_path / 'moved' / 'gradebook.db'}"
    with pytest.raises(ValueError, match=f"lab06_collectives: the gradebook {re.escape(gone)} could not be read"):
        canvas_csv([(LAB06, grades[LAB06.id], gone)])
    (tmp_path / "empty" / "results").mkdir(parents=True)
    with pytest.raises(ValueError, match="no record of lab01_scale"):
        canvas_csv([(LAB01, tmp_path / "empty", None)])


def test_cli_export_canvas_writes_the_file_and_says_who_has_no_record(grades, tmp_path):
    scalelabs = [sys.executable, "-c", "from autograder.cli import main; main()", "export"]
    labs = [f"{LAB06.id}={grades[LAB06.id]}", f"{LAB01.id}={grades[LAB01.id]}"]
    done = subprocess.run([*scalelabs, *labs, "--canvas", "--out", str(tmp_path / "c.csv")], capture_output=True,
                          text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert f"canvas: {tmp_path / 'c.csv'} (4 students, 2 labs; the id in SIS Login ID)" in said, said
    assert f"{LAB01.id}: no record of 2 (bo, cy): their cells are blank" in said
    assert canvas_rules((tmp_path / "c.csv").read_text())["login:cy"][LAB06.title]
    refused = subprocess.run([*scalelabs, *labs], capture_output=True, text=True, cwd=tmp_path)
    assert refused.returncode == 2 and "say which platform: --canvas" in refused.stderr
    refused = subprocess.run([*scalelabs, labs[0], "--canvas", "--canvas-id", "email"], capture_output=True,
                             text=True, cwd=tmp_path)
    assert refused.returncode == 2 and "--canvas-id email: must be one of login, sis" in refused.stderr
    assert "Traceback" not in refused.stderr
