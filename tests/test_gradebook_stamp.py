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


WRITE_THEN_IMPORT = """
import sys
from autograder.classroom.gradebook import GradebookWriter, read_gradebook, sqlite_url
from autograder.engine.results import Result, TestResult
from labs import load

assignment = load("lab06_collectives")
item = assignment.item_ids[0]
result = Result(assignment.id, "ada", tests=[TestResult(item, "hidden checks", "hidden", 0.5, 1.0, "")])
with GradebookWriter(sqlite_url(sys.argv[1]), assignment) as book:
    book.write({"ada": result.to_gradescope()})
print("server extensions loaded:", "nbgrader.server_extensions" in sys.modules, "setuptools" in sys.modules,
      "jsonschema" in sys.modules)
print("stored:", read_gradebook(sqlite_url(sys.argv[1]), assignment.id)["ada"][item])
import pathlib, zipfile
from nbgrader.utils import unzip
with zipfile.ZipFile("collected.zip", "w") as z:
    z.writestr("ada/notebook.ipynb", "{}")
pathlib.Path("unzipped").mkdir()
unzip("collected.zip", "unzipped")
print("zip_collect unzips:", sorted(p.name for p in pathlib.Path("unzipped").rglob("*")), "setuptools" in sys.modules)
import nbgrader
from nbgrader.apps import NbGraderAPI
print("whole package:", nbgrader.__version__ == nbgrader._version.__version__, callable(nbgrader._load_jupyter_server_extension))
import nbformat
print("nbformat whole:", nbformat.reads(nbformat.writes(nbformat.v4.new_notebook()), as_version=4).nbformat, "jsonschema" in sys.modules)
"""


def test_the_gradebook_opens_without_nbgraders_server_extensions_and_nbgrader_stays_whole(tmp_path):
    """Writing the gradebook imports nbgrader.api, not the Jupyter server extensions nbgrader's
    package __init__ loads (a third of its import), nor nbformat's validator, nor setuptools
    (nbgrader's unzip uses it: it is imported when that runs); code that later imports nbgrader or
    nbformat gets all of it."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", WRITE_THEN_IMPORT, str(tmp_path / "gradebook.db")],
                          capture_output=True, text=True, cwd=tmp_path,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["server extensions loaded: False False False", "stored: 0.5",
                                        "zip_collect unzips: ['ada', 'notebook.ipynb'] True",
                                        "whole package: True True", "nbformat whole: 4 True"]


def test_a_write_that_fails_part_way_stores_nothing_and_says_so(tmp_path, monkeypatch):
    """A batch's scores go into the gradebook in one transaction: when writing one student fails, the
    students before it are not left half-written (a rerun writes them all again); the scores already
    there from an earlier batch stay."""
    import pytest

    from autograder.classroom import gradebook
    from autograder.classroom.gradebook import GradebookUnavailable, read_gradebook
    from autograder.engine.results import Result, TestResult

    assignment = load("lab06_collectives")
    item = assignment.item_ids[0]
    url = sqlite_url(tmp_path / "gradebook.db")

    def results(score: float) -> dict:
        return Result(assignment.id, "", tests=[TestResult(item, "hidden checks", "hidden", score, 1.0, "")]).to_gradescope()
    with GradebookWriter(url, assignment) as book:
        book.write({"ada": results(0.5)})
    item_scores = gradebook.item_scores

    def fails_for_cy(data: dict) -> dict:
        if data["score"] == 0.25:
            raise ValueError("cy's results are torn")
        return item_scores(data)
    monkeypatch.setattr(gradebook, "item_scores", fails_for_cy)
    with GradebookWriter(url, assignment) as book:
        with pytest.raises(GradebookUnavailable, match="could not be written"):
            book.write({"ada": results(1.0), "bo": results(1.0), "cy": results(0.25)})
    stored = read_gradebook(url, assignment.id)
    assert set(stored) == {"ada"} and stored["ada"][item] == 0.5


def test_migration_head_names_the_one_unreplaced_revision_or_says_why_not(tmp_path):
    """The stamp is the revision no migration script builds on (a branch: two such, an error naming them)."""
    import pytest

    from autograder.classroom.gradebook import migration_head

    def script(name: str, revision: str, down):
        (tmp_path / f"{name}.py").write_text(f'"""{name}"""\nrevision = {revision!r}\ndown_revision = {down!r}\n')
    script("a", "aaa", None)
    script("b", "bbb", "aaa")
    script("c", "ccc", "bbb")
    assert migration_head(tmp_path) == "ccc"
    script("d", "ddd", "bbb")
    with pytest.raises(RuntimeError, match=r"2 heads, not one: \['ccc', 'ddd'\]"):
        migration_head(tmp_path)
    # alembic's newer scripts annotate, and a merge revision names two
    (tmp_path / "e.py").write_text('revision: str = "eee"\ndown_revision: Union[str, None] = ("ccc", "ddd")\n')
    assert migration_head(tmp_path) == "eee"


def test_the_gradebook_thread_parses_no_python_while_a_grading_thread_does(monkeypatch):
    """Stamping nbgrader's migration head reads its scripts as text: it runs on the gradebook's thread
    while a one-job batch grades (parsing notebooks with ast) on another, and CPython before 3.11.8 shares
    ast's recursion counter between threads (SystemError: "AST constructor recursion depth mismatch" lost
    a shard's gradebook). Still nbgrader's head, with ast unusable."""
    import ast
    from pathlib import Path

    from nbgrader.dbutil import ALEMBIC_DIR

    from autograder.classroom.gradebook import migration_head

    expected = migration_head(Path(ALEMBIC_DIR) / "versions")
    monkeypatch.setattr(ast, "parse", lambda *args, **kwargs: (_ for _ in ()).throw(SystemError("ast in use")))
    assert migration_head(Path(ALEMBIC_DIR) / "versions") == expected
    assert len(expected) == 12 and int(expected, 16) >= 0


def _results(assignment, scores: dict[str, float]) -> dict:
    """A results dict of `assignment` with these item scores (one hidden-checks test per item)."""
    from autograder.engine.results import Result, TestResult

    points = assignment.item_points
    return Result(assignment.id, "", [TestResult(item, "hidden checks", "hidden", scores.get(item, 0.0), points[item], "")
                                      for item in assignment.item_ids]).to_gradescope()


def test_a_batchs_write_is_all_of_its_scores_or_none_and_a_rewrite_counts_nothing_twice(tmp_path):
    """One student whose results cannot be read stops the write (GradebookUnavailable names the database),
    and nothing of that write is stored: not the classmates sorted before them either. Writing the same
    student again updates their one submission."""
    import pytest

    from autograder.classroom.gradebook import GradebookUnavailable, read_record

    assignment = load("lab06_collectives")
    first, second = assignment.item_ids[:2]
    db = sqlite_url(tmp_path / "gradebook.db")
    with GradebookWriter(db, assignment, course_id="c") as book:
        written = book.write({"ann": _results(assignment, {first: 1.0})})
    assert written.record["ann"][first].auto == 1.0 and written.record["ann"][second].auto == 0.0
    with GradebookWriter(db, assignment, course_id="c") as book:
        with pytest.raises(GradebookUnavailable, match=f"the gradebook {db} could not be written"):
            book.write({"ann": _results(assignment, {first: 0.5}), "bo": _results(assignment, {first: 1.0}),
                        "cy": {"tests": "not a list"}})
    record = read_record(db, assignment.id, "c")
    assert sorted(record) == ["ann"] and record["ann"][first].auto == 1.0     # bo not stored, ann not changed
    with GradebookWriter(db, assignment, course_id="c") as book:
        again = book.write({"ann": _results(assignment, {first: 0.5})})
    assert sorted(again.record) == ["ann"] and again.record["ann"][first].auto == 0.5
