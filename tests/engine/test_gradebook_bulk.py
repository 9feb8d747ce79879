"""The gradebook written in bulk (issue 40): a class's new submissions are INSERTed in a few statements,
an unchanged student is skipped, the others go through nbgrader's API; formgrader, `nbgrader export` and
grades.csv must not be able to tell which way a row was written. One class is written both ways into two
databases, on the toy assignment with a solution cell and a task cell beside the grade cells, and every
row a teacher could see is compared; then a rerun, a changed score under a manual override and a changed
late penalty are written over it, and the time lane's rules (#38) both ways: the Lateness kept in
`scalelabs_lateness` for new rows too, a time no longer known, a lab whose due date is removed."""
from __future__ import annotations

import sqlite3
from datetime import datetime

import pytest

import toy
from autograder.classroom.deadlines import Lateness
from autograder.classroom.gradebook import GradebookWriter, _nbgrader_api, read_book, sqlite_url
from autograder.engine.results import Result, TestResult

AID = toy.ASSIGNMENT_ID
ITEMS = list(toy.ASSIGNMENT.item_points)
LATE = Lateness("late", "2026-03-03T17:00:00+00:00", "2026-03-01T17:00:00+00:00", "2026-03-04T17:00:00+00:00",
                late_by_s=86400.0, penalty_percent=10.0)
ON_TIME = Lateness("on_time", "2026-03-01T17:00:00+00:00", "2026-03-01T17:00:00+00:00",
                   "2026-03-01T12:00:00+00:00")


def result(student: str, fraction: float, late: Lateness | None = None) -> dict:
    """A results dict whose every item scores `fraction` of its points."""
    tests = [TestResult(item, "check", "item", round(points * fraction, 6), points, "out")
             for item, points in toy.ASSIGNMENT.item_points.items()]
    data = Result(AID, student, tests).to_gradescope()
    data["scalelabs"] = {"assignment": AID, "student": student, **({"late": late.to_json()} if late else {})}
    return data


CLASS = {"alice": result("alice", 1.0), "bob": result("bob", 0.5, LATE), "carol": result("carol", 0.25, ON_TIME),
         "dave": result("dave", 0.0)}


def book(tmp_path, name: str) -> str:
    """A gradebook holding the lab (assignment, notebook, grade cells: a write of no one), a solution cell
    and a task cell in its notebook (as `nbgrader generate_assignment` may have left), and dave as a
    student with no submission."""
    url = sqlite_url(tmp_path / f"{name}.db")
    with GradebookWriter(url, toy.ASSIGNMENT, "course") as writer:
        writer.write({})
    with _nbgrader_api().Gradebook(url, course_id="course") as gb:
        gb.add_solution_cell("answer_cell", AID, AID)
        gb.add_task_cell("task_cell", AID, AID, max_score=3, cell_type="markdown")
        gb.add_student("dave")
    return url


def write(url: str, results: dict) -> dict:
    with GradebookWriter(url, toy.ASSIGNMENT, "course") as writer:
        return writer.write(results).review


def rows(url: str) -> dict:
    """Every row a teacher sees through formgrader or `nbgrader export`, keyed by names, not uuids."""
    db = sqlite3.connect(url.removeprefix("sqlite:///"))
    try:
        seen = {"students": sorted(db.execute("SELECT id, first_name, last_name, email, lms_user_id FROM student")),
                "lab": sorted(db.execute("SELECT name, duedate FROM assignment"))}
        for table, columns in (("grade", "auto_score, manual_score, extra_credit, needs_manual_grade"),
                               ("comment", "auto_comment, manual_comment")):
            seen[table] = sorted(db.execute(
                f"SELECT sa.student_id, nb.name, c.name, c.type, {', '.join(f't.{x.strip()}' for x in columns.split(','))} "
                f"FROM {table} t JOIN submitted_notebook sn ON t.notebook_id = sn.id "
                "JOIN submitted_assignment sa ON sn.assignment_id = sa.id JOIN notebook nb ON sn.notebook_id = nb.id "
                "JOIN base_cell c ON t.cell_id = c.id"))
        seen["submissions"] = sorted(db.execute(
            "SELECT sa.student_id, a.name, sa.timestamp, sa.extension, nb.name, sn.flagged, sn.late_submission_penalty "
            "FROM submitted_assignment sa JOIN assignment a ON sa.assignment_id = a.id "
            "JOIN submitted_notebook sn ON sn.assignment_id = sa.id JOIN notebook nb ON sn.notebook_id = nb.id"))
        seen["kept"] = sorted(db.execute("SELECT assignment, student, lateness FROM scalelabs_lateness")) if db.execute(
            "SELECT name FROM sqlite_master WHERE name = 'scalelabs_lateness'").fetchone() else []
        seen["counts"] = {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                          for t in ("student", "submitted_assignment", "submitted_notebook", "grade", "comment")}
        return seen
    finally:
        db.close()


@pytest.fixture
def both(tmp_path):
    """The class written in bulk (no one has a submission) and through nbgrader's API (each submission
    made first by nbgrader's add_submission, then written as an update)."""
    bulk, api_way = book(tmp_path, "bulk"), book(tmp_path, "api")
    with _nbgrader_api().Gradebook(api_way, course_id="course") as gb:
        for student in CLASS:
            gb.update_or_create_student(student)
            gb.add_submission(AID, student)
    assert write(bulk, CLASS) == write(api_way, CLASS) == {}
    return bulk, api_way


def test_bulk_rows_are_nbgraders_rows(both):
    bulk, api_way = both
    seen = rows(bulk)
    assert seen == rows(api_way)
    # what the rows say, not only that they agree: every grade and task cell graded or waiting, a
    # comment for the solution and the task cell, bob's penalty 10% of his score, carol's time kept
    assert seen["counts"] == {"student": 4, "submitted_assignment": 4, "submitted_notebook": 4,
                              "grade": 4 * (len(ITEMS) + 1), "comment": 8}
    record, late = read_book(bulk, AID, "course")
    assert set(record) == set(CLASS) and record["alice"][ITEMS[0]].auto == toy.ASSIGNMENT.item_points[ITEMS[0]]
    assert record["bob"]["task_cell"].auto is None
    assert late["bob"].penalty == pytest.approx(0.1 * 0.5 * toy.ASSIGNMENT.total_points)
    assert late["bob"].late_by_s == 86400.0 and late["bob"].due.startswith("2026-03-03T17:00")
    assert late["carol"].timestamp.startswith("2026-03-01T12:00") and late["carol"].penalty == 0.0
    assert late["bob"].lateness == LATE and late["carol"].lateness == ON_TIME and late["alice"].lateness is None
    assert [row[1] for row in seen["kept"]] == ["bob", "carol"], "the Lateness of each new row is kept beside it"
    assert read_book(api_way, AID, "course") == (record, late)


def test_a_rerun_changes_nothing_and_a_change_is_written_as_nbgrader_would(both):
    bulk, api_way = both
    before = rows(bulk)
    version = sqlite3.connect(bulk.removeprefix("sqlite:///"))
    data_version = version.execute("PRAGMA data_version").fetchone()
    assert write(bulk, CLASS) == {}
    assert version.execute("PRAGMA data_version").fetchone() == data_version, "a rerun wrote to the gradebook"
    assert rows(bulk) == before
    # a TA overrides alice's first item in formgrader; then her engine score changes, bob's penalty
    # changes and carol is unchanged: the override stands and is flagged, the penalty follows
    for url in both:
        with _nbgrader_api().Gradebook(url, course_id="course") as gb:
            gb.find_grade(ITEMS[0], AID, AID, "alice").manual_score = 1.0
            gb.db.commit()
    changed = {**CLASS, "alice": result("alice", 0.5),
               "bob": result("bob", 0.5, Lateness(**{**LATE.to_json(), "penalty_percent": 20.0}))}
    assert write(bulk, changed) == write(api_way, changed) == {"alice": [ITEMS[0]]}
    record, late = read_book(bulk, AID, "course")
    assert record["alice"][ITEMS[0]].manual == 1.0
    assert record["alice"][ITEMS[1]].auto == pytest.approx(0.5 * toy.ASSIGNMENT.item_points[ITEMS[1]])
    assert late["bob"].penalty == pytest.approx(0.2 * 0.5 * toy.ASSIGNMENT.total_points)
    assert rows(bulk) == rows(api_way)
    db = sqlite3.connect(bulk.removeprefix("sqlite:///"))
    flagged = db.execute("SELECT c.name FROM grade g JOIN base_cell c ON g.cell_id = c.id JOIN submitted_notebook sn "
                         "ON g.notebook_id = sn.id JOIN submitted_assignment sa ON sn.assignment_id = sa.id "
                         "WHERE sa.student_id = 'alice' AND g.needs_manual_grade").fetchall()
    assert sorted(flagged) == sorted([(ITEMS[0],), ("task_cell",)]), \
        "the override over a changed engine score waits for review in formgrader (and the task cell for its grader)"


def test_a_new_student_beside_written_ones(both):
    """A class that grew: the new student's rows in bulk, beside the others', as nbgrader's."""
    bulk, api_way = both
    grown = {**CLASS, "erin": result("erin", 0.75, LATE)}
    with _nbgrader_api().Gradebook(api_way, course_id="course") as gb:
        gb.add_student("erin")
        gb.add_submission(AID, "erin")
    write(bulk, grown), write(api_way, grown)
    assert rows(bulk) == rows(api_way)
    assert rows(bulk)["counts"]["submitted_assignment"] == 5
    assert isinstance(datetime.fromisoformat(read_book(bulk, AID, "course")[1]["erin"].due), datetime)


def test_the_kept_lateness_a_lost_time_and_a_removed_due_date_are_written_as_nbgrader_would(both):
    """A rerun where only the kept Lateness changes (Gradescope's dates now beside carol's, same columns)
    rewrites it; bob's time no longer known clears the time kept from the first write (nbgrader's views
    would price it); then the lab's due date is removed: no penalty, no Lateness kept. Both ways alike."""
    bulk, api_way = both
    platform = Lateness(**{**ON_TIME.to_json(), "platform": "Gradescope", "platform_lab_due": ON_TIME.lab_due})
    unknown = Lateness("unknown", LATE.due, LATE.lab_due, note="no submission time")
    changed = {**CLASS, "carol": result("carol", 0.25, platform), "bob": result("bob", 0.5, unknown)}
    assert write(bulk, changed) == write(api_way, changed) == {}
    assert rows(bulk) == rows(api_way)
    late = read_book(bulk, AID, "course")[1]
    assert late["carol"].lateness == platform, "a changed Lateness with the same columns was skipped as unchanged"
    assert late["bob"].timestamp == "" and late["bob"].penalty == 0.0 and late["bob"].lateness == unknown
    no_due = {student: {**data, "scalelabs": {"assignment": AID, "student": student}} for student, data in CLASS.items()}
    assert write(bulk, no_due) == write(api_way, no_due) == {}
    assert rows(bulk) == rows(api_way)
    assert rows(bulk)["kept"] == [] and all(not late.penalty for late in read_book(bulk, AID, "course")[1].values())
