"""A new gradebook is stamped in-process with the migration head nbgrader itself would write."""
from __future__ import annotations

import os
import sqlite3
import sys

from autograder.classroom.gradebook import GradebookWriter, sqlite_url, stamp_new_gradebook
from labs import load


def _versions(path) -> list[str]:
    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT version_num FROM alembic_version")]


def test_new_gradebook_carries_nbgrader_alembic_head_and_opens_in_nbgrader(tmp_path, monkeypatch):
    import nbgrader.api
    # nbgrader's own way: `alembic heads` in a subprocess (the executable sits beside this Python)
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    head = nbgrader.api.get_alembic_version()

    def no_subprocess():
        raise AssertionError("the gradebook writer ran `alembic heads` (4 s) instead of stamping in-process")
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", no_subprocess)
    db = tmp_path / "gradebook.db"
    assignment = load("lab06_collectives")
    with GradebookWriter(sqlite_url(db), assignment) as book:
        book.write({})
    assert _versions(db) == [head]
    with nbgrader.api.Gradebook(sqlite_url(db), course_id="scalelabs") as gb:   # tables were created
        assert [a.name for a in gb.assignments] == [assignment.id]
        assert {c.name for c in gb.find_notebook(assignment.id, assignment.id).grade_cells} == set(assignment.item_ids)


def test_an_existing_gradebook_is_left_alone(tmp_path):
    db = tmp_path / "gradebook.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)")
        con.execute("INSERT INTO alembic_version VALUES ('older')")
    stamp_new_gradebook(sqlite_url(db))
    assert _versions(db) == ["older"]
