"""Write per-item scores into the nbgrader gradebook (nbgrader.api.Gradebook).

nbgrader conventions (docs/ARCHITECTURE.md): notebook name = assignment id; every graded item has
one grade cell whose grade_id is the item id and whose points are the item's points. Missing
assignment / notebook / grade cells are created from the declaration; each grade's auto_score is
set. Writes are idempotent (update or create), so re-running after a resumed batch counts nothing twice,
and a batch's write is one transaction: all of its scores are stored, or none.

Lateness goes where nbgrader keeps it (`record_lateness`): the lab's due date in Assignment.duedate, the
submission's time in SubmittedAssignment.timestamp and an extension in its `extension`, the penalty in
points in SubmittedNotebook.late_submission_penalty, so formgrader and nbgrader's feedback show it; the
engine's auto scores never change. Those points are of the score of record when written: a penalty is a
rule (autograder.classroom.deadlines), so the Lateness itself (the time and its source, the platform's
dates, the percent) is kept beside them in a table of our own, `scalelabs_lateness` (assignment,
student, the Lateness as JSON; nbgrader ignores a table it does not know), from which `nbgrader export`
(autograder.doors.nbgrader_export), grades.csv and the report take the penalty again on the score of
record as it is then (a manual override since, an extension added since).
"""
from __future__ import annotations

import importlib.util
import re
import sys
import types
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Mapping

from autograder.classroom.deadlines import Lateness
from autograder.course import current_course_id
from autograder.engine.results import Result
from autograder.lean import skip_unused
from autograder.engine.spec import Assignment


def item_scores(results: dict) -> dict[str, float]:
    """item id -> score, from the typed records of a results.json dict."""
    return record_scores(Result.from_gradescope(results))


def record_scores(record: Result) -> dict[str, float]:
    """item id -> score, of a result already read (Result.from_gradescope)."""
    return {item: score for item, (score, _) in record.item_scores().items()}


def _nbgrader_api():
    """nbgrader.api, ready to use, at a quarter of nbgrader's import cost.

    Three imports that no gradebook access uses are put off until something does use them:
    - nbgrader's package `__init__` loads its Jupyter server extensions (jupyter_server, tornado's web
      stack, the exchange: about 500 modules, 0.3-0.4 s CPU), and nbformat's loads its validator
      (jsonschema, 0.1 s) where nbgrader.api needs only `nbformat.notebooknode`. Unless this process
      imported them already, each package is registered without running its `__init__`, which runs in
      full the first time anything asks the package for a name it lacks (`nbgrader.__version__`,
      `nbformat.reads`, `from nbformat import ...`): code that wants the whole package gets it.
    - nbgrader.utils imports three archive functions from setuptools (0.2 s: setuptools, pkg_resources)
      for `nbgrader zip_collect`; they import it the first time one of them is called.
    - jsonschema imports the optional rfc3987-syntax when installed (jupyter-events pulls it in); it
      compiles ~40 grammars at import, 2.3 s CPU for IRI format checks no gradebook access makes, so
      unless this process imported it already it is skipped (jsonschema leaves those checks out)."""
    skip_unused()
    if "setuptools.archive_util" not in sys.modules:
        sys.modules["setuptools.archive_util"] = _imported_on_first_call(
            "setuptools.archive_util", ("unpack_archive", "unpack_tarfile", "unpack_zipfile"))
    for package in ("nbgrader", "nbformat"):
        if package not in sys.modules:
            sys.modules[package] = _package_without_init(package)
    import nbgrader.api

    return nbgrader.api


def _package_without_init(name: str) -> types.ModuleType:
    """The package `name` with its submodules importable and its `__init__` not yet run: the first
    lookup of a name the package lacks, other than a submodule's, runs it (PEP 562 module
    __getattr__), then answers."""
    spec = importlib.util.find_spec(name)
    package = importlib.util.module_from_spec(spec)

    def __getattr__(attr: str):
        if importlib.util.find_spec(f"{name}.{attr}") is not None:
            raise AttributeError(attr)          # a submodule: `from . import utils` then imports it
        del package.__dict__["__getattr__"]     # once: the real __init__ defines the names
        spec.loader.exec_module(package)
        return getattr(package, attr)

    package.__getattr__ = __getattr__
    return package


def _imported_on_first_call(name: str, functions: tuple[str, ...]) -> types.ModuleType:
    """A stand-in for the module `name` with these functions only: the first call of one imports the
    real module (the stand-in leaves sys.modules, so every later import gets the real one) and every
    call is answered by the real function."""
    stand_in = types.ModuleType(name, f"{name}, imported when one of {', '.join(functions)} is first called")

    def forward(function: str):
        def call(*args, **kwargs):
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
            return getattr(importlib.import_module(name), function)(*args, **kwargs)
        call.__name__ = call.__qualname__ = function
        return call

    for function in functions:
        setattr(stand_in, function, forward(function))
    return stand_in


# A module-level `revision = '...'` or `down_revision = None | '...' | ('...', '...')`, annotated or not.
_REVISION_LINE = re.compile(r"^(revision|down_revision)\s*(?::[^=]*)?=\s*(.*)$", re.M)


def migration_head(versions_dir: Path) -> str:
    """The head of a chain of alembic migration scripts, as `alembic heads` prints it: the one
    `revision` that no script names as its `down_revision`, read from the scripts' module-level
    assignments (importing alembic to ask it costs 0.25 s). Read as text, not with `ast`: this runs on
    the gradebook's thread while the grading thread parses notebooks, and CPython before 3.11.8 keeps
    ast's recursion counter per interpreter, not per thread (a SystemError, "AST constructor recursion
    depth mismatch", stopped a batch's gradebook write)."""
    named: dict[str, set] = {"revision": set(), "down_revision": set()}
    for script in sorted(Path(versions_dir).glob("*.py")):
        for name, value in _REVISION_LINE.findall(script.read_text(encoding="utf-8")):
            named[name].update(re.findall(r"""['"]([^'"]+)['"]""", value))
    heads = named["revision"] - named["down_revision"]
    if len(heads) != 1:
        raise RuntimeError(f"the migration scripts in {versions_dir} have {len(heads)} heads, not one: {sorted(heads)}")
    return heads.pop()


def stamp_new_gradebook(db_url: str) -> None:
    """Stamp a new (empty) gradebook database with nbgrader's migration head, as nbgrader's Gradebook
    would: it finds the head by running `alembic heads` in a subprocess (about 4 s); read in-process
    from nbgrader's own migration scripts it takes milliseconds. Gradebook then sees a stamped
    database and creates its tables; an existing database is left alone."""
    from nbgrader.dbutil import ALEMBIC_DIR
    from sqlalchemy import create_engine, inspect, text

    engine = create_engine(db_url)
    try:
        if inspect(engine).get_table_names():
            return
        head = migration_head(Path(ALEMBIC_DIR) / "versions")
        with engine.begin() as connection:
            connection.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
            connection.execute(text("INSERT INTO alembic_version (version_num) VALUES (:head)"), {"head": head})
    finally:
        engine.dispose()


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{Path(path).resolve()}"


@contextmanager
def one_transaction(session) -> Iterator[None]:
    """nbgrader's API commits after every call it makes (about 70 commits, each a file sync, for a class
    of 24); inside, its commits only flush, and the whole write is committed once at the end, or not
    at all if any call fails (a rerun writes every student again from the results files)."""
    session.commit = session.flush     # shadows the session's own method until deleted
    try:
        yield
    except BaseException:
        session.rollback()
        raise
    finally:
        del session.commit
    session.commit()


class GradebookUnavailable(RuntimeError):
    """The gradebook could not be opened or written (a bad --db URL, an unreachable server)."""


class GradebookWriter:
    """The nbgrader gradebook, opened on a thread of its own as soon as the writer is made: a batch
    makes it before grading, so importing nbgrader (about 1 s) and stamping a new database overlap the
    grading instead of following it. Every gradebook call runs on that one thread (a SQLite
    connection stays on the thread that made it). Use as a context manager; write() blocks until
    the scores are stored and raises what opening or writing raised."""

    def __init__(self, db_url: str, assignment: Assignment, course_id: str | None = None):
        self.db_url, self.assignment = db_url, assignment
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gradebook")
        self._book = self._thread.submit(self._open, db_url, course_id or current_course_id())

    @staticmethod
    def _open(db_url: str, course_id: str):
        api = _nbgrader_api()
        stamp_new_gradebook(db_url)
        return api.Gradebook(db_url, course_id=course_id)

    def write(self, results_by_student: Mapping[str, dict],
              scores_by_student: Mapping[str, dict[str, float]] | None = None) -> "Written":
        """Set auto_score of every (student, item) grade cell from the students' results dicts (their
        item_scores, when the caller has them), and read back the lab's whole record;
        GradebookUnavailable names the database and the reason when it cannot."""
        try:
            return self._thread.submit(self._write, results_by_student, scores_by_student).result()
        except Exception as exc:
            raise unavailable(self.db_url, "written", exc) from exc

    def _write(self, results_by_student: Mapping[str, dict],
               scores_by_student: Mapping[str, dict[str, float]] | None = None) -> "Written":
        gb = self._book.result()
        warnings.filterwarnings("ignore", module="nbgrader")  # nbgrader's own SQLAlchemy autoflush warnings
        warnings.filterwarnings("ignore", message=".*not in session.*")
        with one_transaction(gb.db):
            review = self._write_rows(gb, results_by_student, scores_by_student)
        return Written(lab_record(gb, self.assignment.id), review, lab_lateness(gb, self.assignment.id))

    def _write_rows(self, gb, results_by_student: Mapping[str, dict],
                    scores_by_student: Mapping[str, dict[str, float]] | None = None) -> dict[str, list[str]]:
        """Write the auto scores; a manual score (formgrader) stays, and where the engine's score under
        it changed the grade is flagged for review (nbgrader's needs_manual_grade) and returned:
        student -> the items to review. `scores_by_student`: item_scores of each result, when the
        caller has them already.

        What the gradebook holds decides the way (same rows either way; tests/engine/test_gradebook_bulk.py):
        a student with no submission of the lab gets nbgrader's add_submission's rows (a submitted
        notebook of each of the lab's notebooks, a grade of each grade and task cell, a comment of each
        solution and task cell) in a few bulk INSERTs, not ~25 ms of ORM calls each (2,000 results: 50 s
        CPU); a student whose grades and lateness are already as written is skipped (a rerun); the others
        are updated through nbgrader's API, one by one, as before."""
        api = _nbgrader_api()
        review: dict[str, list[str]] = {}
        aid = self.assignment.id
        points = self.assignment.item_points
        gb.update_or_create_assignment(aid)
        try:
            gb.find_notebook(aid, aid)
        except api.MissingEntry:
            gb.add_notebook(aid, aid)
        cells = {}
        for item, max_score in points.items():
            try:
                cells[item] = gb.find_grade_cell(item, aid, aid)
            except api.MissingEntry:
                cells[item] = gb.add_grade_cell(item, aid, aid, max_score=max_score, cell_type="code")
        gb.db.flush()
        scores = {student: (scores_by_student[student] if scores_by_student is not None and student in scores_by_student
                            else item_scores(results))
                  for student, results in results_by_student.items()}
        held = _held(gb, aid)
        new = [s for s in sorted(results_by_student) if s not in held["submitted"]]
        _add_submissions(gb, api, aid, new, {s: scores[s] for s in new}, points,
                         {s: Lateness.from_json(results_by_student[s].get("scalelabs", {}).get("late")) for s in new})
        for student, results in sorted(results_by_student.items()):
            if student in held["submitted"]:
                late = Lateness.from_json(results.get("scalelabs", {}).get("late"))
                if not _unchanged(held, student, scores[student], points, late):
                    self._update_row(gb, api, student, scores[student], cells, late, review)
        return review

    def _update_row(self, gb, api, student: str, scores: dict[str, float], cells: dict, late: Lateness | None,
                    review: dict[str, list[str]]) -> None:
        """One student's existing submission updated through nbgrader's API (`_write_rows`)."""
        aid = self.assignment.id
        gb.update_or_create_student(student)
        gb.update_or_create_submission(aid, student)
        submitted_nb = gb.find_submission_notebook(aid, aid, student)
        grades = {grade.cell.name: grade for grade in submitted_nb.grades}   # one query, not one per item
        for item in self.assignment.item_points:
            grade = grades.get(item)
            if grade is None:  # a grade cell added after this submission was created
                grade = api.Grade(cell_id=cells[item].id, notebook=submitted_nb)
                gb.db.add(grade)
            auto = scores.get(item, 0.0)
            if grade.manual_score is None:
                grade.needs_manual_grade = False     # the engine's score is the grade: nothing to review
            elif grade.auto_score is not None and abs(grade.auto_score - auto) > 1e-9:
                grade.needs_manual_grade = True      # as nbgrader's autograde does: review the override
                review.setdefault(student, []).append(item)
            grade.auto_score = auto
        gb.db.flush()   # None too: a lab without a due date clears the penalty and the kept Lateness
        record_lateness(gb, aid, student, late, sum(_cell(g).score for g in submitted_nb.grades))

    def _close(self) -> None:
        if self._book.exception() is None:
            self._book.result().close()

    def __enter__(self) -> "GradebookWriter":
        return self

    def __exit__(self, *exc) -> None:
        self._thread.submit(self._close).result()
        self._thread.shutdown()


def _held(gb, assignment_id: str) -> dict:
    """What the gradebook holds of the lab, in six queries of columns joined here (no ORM objects;
    SQLite, without an index on grade.notebook_id, scans the grade table once per submission in a
    join): "submitted": student -> (timestamp, extension) of their submission; "penalty": student ->
    the late penalty of their submitted notebook of the lab; "grades": student -> cell name -> (auto,
    manual, extra credit, needs_manual_grade) in that notebook; "kept": student -> their Lateness as
    `scalelabs_lateness` keeps it (text); "duedate": the lab's (None when the gradebook has no such lab)."""
    api = _nbgrader_api()
    SA, SN, NB, G, C = api.SubmittedAssignment, api.SubmittedNotebook, api.Notebook, api.Grade, api.BaseCell
    held: dict = {"duedate": None, "submitted": {}, "penalty": {}, "grades": {}, "kept": {}}
    try:
        assignment = gb.find_assignment(assignment_id)
    except api.MissingEntry:
        return held
    held["duedate"] = assignment.duedate
    held["kept"] = _late_texts(gb, assignment_id)
    by_submission = {}
    for sa_id, student, timestamp, extension in gb.db.query(SA.id, SA.student_id, SA.timestamp, SA.extension) \
            .filter(SA.assignment_id == assignment.id):
        held["submitted"][student] = (timestamp, extension)
        by_submission[sa_id] = student
    notebook = gb.db.query(NB.id).filter(NB.assignment_id == assignment.id, NB.name == assignment_id).scalar()
    if notebook is None:
        return held
    by_notebook = {}
    for sn_id, sa_id, penalty in gb.db.query(SN.id, SN.assignment_id, SN.late_submission_penalty) \
            .filter(SN.notebook_id == notebook):
        if sa_id in by_submission:
            by_notebook[sn_id] = student = by_submission[sa_id]
            held["penalty"][student] = penalty
            held["grades"][student] = {}
    names = dict(gb.db.query(C.id, C.name).filter(C.notebook_id == notebook))
    if names:
        for sn_id, cell, *grade in gb.db.query(G.notebook_id, G.cell_id, G.auto_score, G.manual_score, G.extra_credit,
                                               G.needs_manual_grade).filter(G.cell_id.in_(list(names))):
            if sn_id in by_notebook:
                held["grades"][by_notebook[sn_id]][names[cell]] = tuple(grade)
    return held


def _unchanged(held: dict, student: str, scores: dict[str, float], points: Mapping[str, float],
               late: Lateness | None) -> bool:
    """Whether writing this student's scores and lateness would leave every row as `held` has it:
    each item's auto score the same float, needs_manual_grade already what the write would set (False
    under no manual score; unchanged under one, as the auto score is), the lateness columns equal (the
    timestamp too: None where the time is unknown) and the Lateness kept in `scalelabs_lateness` the
    same; for a lab without a due date (None), no penalty and no Lateness kept."""
    book = held["grades"].get(student)
    if book is None or student not in held["penalty"] or any(item not in book for item in points):
        return False
    for item in points:
        auto, manual, _, needs = book[item]
        if auto is None or auto != scores.get(item, 0.0) or (manual is None and needs):
            return False
    kept = held["kept"].get(student)
    if late is None:
        return held["penalty"][student] is None and kept is None
    due, timestamp, extension, penalty = late_columns(late, sum(CellGrade(*g[:3]).score for g in book.values()))
    held_timestamp, held_extension = held["submitted"][student]
    return (kept == _late_text(late) and held["duedate"] == due and held_timestamp == timestamp
            and held_extension == extension and held["penalty"][student] == penalty)


def _add_submissions(gb, api, assignment_id: str, students: list[str], scores: dict[str, dict[str, float]],
                     points: Mapping[str, float], lates: dict[str, Lateness | None]) -> None:
    """New submissions of the lab for `students` (none has one), as nbgrader's add_submission makes
    them, with the engine's scores and the lateness set as `_update_row` sets them (`record_lateness`:
    nbgrader's columns, and each Lateness in `scalelabs_lateness`, a stale one of a submission removed
    outside scalelabs replaced): bulk INSERTs."""
    if not students:
        return
    assignment = gb.find_assignment(assignment_id)
    known = {student for (student,) in gb.db.query(api.Student.id)}
    if gb.authenticator:
        for student in students:
            gb.authenticator.add_student_to_course(student, gb.course_id)
    notebooks = [(nb.id, nb.name == assignment_id, [(c.id, c.name) for c in nb.grade_cells],
                  [c.id for c in nb.solution_cells], [c.id for c in nb.task_cells]) for nb in assignment.notebooks]
    rows: dict[str, list[dict]] = {"student": [], "submitted_assignment": [], "submitted_notebook": [], "grade": [],
                                   "comment": []}

    def grade(notebook: str, cell: str, auto: float | None = None) -> None:
        rows["grade"].append({"id": api.new_uuid(), "notebook_id": notebook, "cell_id": cell, "auto_score": auto,
                              "manual_score": None, "extra_credit": None, "needs_manual_grade": auto is None})

    def comment(notebook: str, cell: str) -> None:
        rows["comment"].append({"id": api.new_uuid(), "notebook_id": notebook, "cell_id": cell, "auto_comment": None,
                                "manual_comment": None})

    for student in students:
        if student not in known:
            rows["student"].append({"id": student, "first_name": None, "last_name": None, "email": None,
                                    "lms_user_id": None})
        submission = {"id": api.new_uuid(), "assignment_id": assignment.id, "student_id": student, "timestamp": None,
                      "extension": None}
        rows["submitted_assignment"].append(submission)
        for nb_id, ours, grade_cells, solution_cells, task_cells in notebooks:
            notebook = {"id": api.new_uuid(), "assignment_id": submission["id"], "notebook_id": nb_id, "flagged": False,
                        "late_submission_penalty": None}
            rows["submitted_notebook"].append(notebook)
            for cell, name in grade_cells:
                grade(notebook["id"], cell, scores[student].get(name, 0.0) if ours and name in points else None)
            for cell in solution_cells:
                comment(notebook["id"], cell)
            for cell in task_cells:
                comment(notebook["id"], cell)
                grade(notebook["id"], cell)
            late = lates.get(student)
            if ours and late is not None:
                due, timestamp, extension, penalty = late_columns(late, sum(scores[student].get(i, 0.0) for i in points))
                assignment.duedate = due
                submission.update(timestamp=timestamp, extension=extension)
                notebook["late_submission_penalty"] = penalty
    for table in ("student", "submitted_assignment", "submitted_notebook", "grade", "comment"):
        if rows[table]:
            gb.db.execute(api.Base.metadata.tables[table].insert(), rows[table])
    write_late_records(gb, assignment_id, {student: lates.get(student) for student in students})
    gb.db.flush()


def unavailable(db_url: str, doing: str, exc: Exception) -> GradebookUnavailable:
    first = str(exc).splitlines()[0] if str(exc) else ""
    return GradebookUnavailable(f"the gradebook {db_url} could not be {doing} ({type(exc).__name__}: {first})")


@dataclass(frozen=True)
class CellGrade:
    """One grade cell of one student as the gradebook holds it (nbgrader.api.Grade)."""
    auto: float | None      # the engine's score
    manual: float | None    # a score set by hand in formgrader (the override), if any
    extra: float | None     # extra credit set in formgrader

    @property
    def score(self) -> float:
        """The grade of record, as nbgrader computes Grade.score: the manual score where there is
        one, else the engine's, plus any extra credit."""
        base = self.manual if self.manual is not None else (self.auto or 0.0)
        return base + (self.extra or 0.0)


# student -> item -> CellGrade: one lab's record in the gradebook
LabRecord = dict[str, dict[str, CellGrade]]


def _cell(grade) -> CellGrade:
    return CellGrade(grade.auto_score, grade.manual_score, grade.extra_credit)


@dataclass(frozen=True)
class BookLate:
    """A submission's lateness as the gradebook holds it (nbgrader's model)."""
    timestamp: str        # SubmittedAssignment.timestamp, ISO in UTC ("" when none)
    due: str              # its due date, an extension's included ("" when the lab has none)
    late_by_s: float      # SubmittedAssignment.total_seconds_late
    penalty: float        # SubmittedNotebook.late_submission_penalty, points (0 when none)
    lateness: Lateness | None = None   # the Lateness kept beside them (scalelabs_lateness), the rule's facts


def _utc_naive(iso: str) -> datetime | None:
    """nbgrader's way of keeping a time: naive, in UTC."""
    if not iso:
        return None
    return datetime.fromisoformat(iso).astimezone(timezone.utc).replace(tzinfo=None)


def _iso_utc(moment: datetime | None) -> str:
    return moment.replace(tzinfo=timezone.utc).isoformat() if moment is not None else ""


def late_columns(late: Lateness, score: float) -> tuple:
    """nbgrader's columns for a lateness (module docstring): (Assignment.duedate, SubmittedAssignment.timestamp,
    SubmittedAssignment.extension, SubmittedNotebook.late_submission_penalty: its percent of `score`, the
    grade of record of the notebook; none where the time is unknown or on time). The timestamp is None
    where the time is unknown, and written so: a time kept from an earlier write would be priced by
    nbgrader's views."""
    due = _utc_naive(late.lab_due)
    return (due, _utc_naive(late.submitted_at) if late.submitted_at else None,
            (_utc_naive(late.due) - due) if late.extended else None,
            late.penalty_points(score) if late.status == "late" else None)


def record_lateness(gb, assignment_id: str, student: str, late: Lateness | None, score: float,
                    notebook_id: str = "") -> None:
    """Put a student's lateness in nbgrader's model (module docstring, `late_columns`) and the Lateness in
    `scalelabs_lateness`. None: the lab has no due date (the notebook's penalty cleared, no record)."""
    api = _nbgrader_api()
    write_late_record(gb, assignment_id, student, late)
    try:
        notebook = gb.find_submission_notebook(notebook_id or assignment_id, assignment_id, student)
    except api.MissingEntry:
        notebook = None
    if late is None:
        if notebook is not None:
            notebook.late_submission_penalty = None
        return
    due, timestamp, extension, penalty = late_columns(late, score)
    gb.find_assignment(assignment_id).duedate = due
    submission = gb.find_submission(assignment_id, student)
    submission.timestamp = timestamp
    submission.extension = extension
    if notebook is not None:
        notebook.late_submission_penalty = penalty


LATE_TABLE = "scalelabs_lateness"


def _late_table():
    """The `scalelabs_lateness` table (module docstring), as SQLAlchemy Core describes it."""
    from sqlalchemy import Column, MetaData, String, Table, Text

    return Table(LATE_TABLE, MetaData(), Column("assignment", String(128), primary_key=True),
                 Column("student", String(128), primary_key=True), Column("lateness", Text, nullable=False))


def _late_text(late: Lateness) -> str:
    """A Lateness as `scalelabs_lateness` keeps it."""
    import json

    return json.dumps(late.to_json(), sort_keys=True)


def _late_of(text: str | None) -> Lateness | None:
    """The Lateness a `scalelabs_lateness` row keeps (None for none, or one that cannot be read)."""
    import json

    if text is None:
        return None
    try:
        return Lateness.from_json(json.loads(text))
    except ValueError:
        return None


def write_late_record(gb, assignment_id: str, student: str, late: Lateness | None) -> None:
    """Keep (or, with None, remove) the student's Lateness of the lab, in the gradebook's transaction."""
    write_late_records(gb, assignment_id, {student: late})


def write_late_records(gb, assignment_id: str, lates: Mapping[str, Lateness | None]) -> None:
    """Keep (or, with None, remove) each student's Lateness of the lab, in the gradebook's transaction:
    a DELETE and an INSERT for a few hundred students at a time (the bulk write's new submissions)."""
    if not lates:
        return
    table = _late_table()
    connection = gb.db.connection()
    table.create(connection, checkfirst=True)
    students = list(lates)
    for start in range(0, len(students), 500):     # well under SQLite's bound variables per statement
        chunk = students[start:start + 500]
        connection.execute(table.delete().where(table.c.assignment == assignment_id).where(table.c.student.in_(chunk)))
        rows = [{"assignment": assignment_id, "student": s, "lateness": _late_text(lates[s])}
                for s in chunk if lates[s] is not None]
        if rows:
            connection.execute(table.insert(), rows)


def _late_texts(gb, assignment_id: str) -> dict[str, str]:
    """student -> the `scalelabs_lateness` row's text for the lab ({} where the gradebook has no such table)."""
    from sqlalchemy import inspect

    connection = gb.db.connection()
    if not inspect(connection).has_table(LATE_TABLE):
        return {}
    table = _late_table()
    return {row.student: row.lateness
            for row in connection.execute(table.select().where(table.c.assignment == assignment_id))}


def read_late_records(gb, assignment_id: str) -> dict[str, Lateness]:
    """student -> the Lateness kept for the lab ({} where the gradebook has no such table)."""
    return {student: late for student, text in _late_texts(gb, assignment_id).items()
            if (late := _late_of(text)) is not None}


def lab_lateness(gb, assignment_id: str) -> dict[str, BookLate]:
    """student -> the lateness the gradebook holds for their submission of the lab (those with a time,
    a due date, a penalty or a kept Lateness), as nbgrader's SubmittedAssignment.duedate and
    total_seconds_late have it, with the Lateness kept in `scalelabs_lateness`."""
    held = _held(gb, assignment_id)
    out = {}
    for student, penalty in held["penalty"].items():
        timestamp, extension = held["submitted"][student]
        due = held["duedate"] + extension if held["duedate"] is not None and extension is not None else held["duedate"]
        kept = _late_of(held["kept"].get(student))
        if timestamp is None and due is None and not penalty and kept is None:
            continue
        late_by_s = max(0, (timestamp - due).total_seconds()) if timestamp is not None and due is not None else 0
        out[student] = BookLate(_iso_utc(timestamp), _iso_utc(due), float(late_by_s), float(penalty or 0.0), kept)
    return out


@dataclass(frozen=True)
class Written:
    record: LabRecord                 # the lab's whole record after the write
    review: dict[str, list[str]]      # student -> items whose manual score stands over a changed engine score
    late: dict[str, BookLate] = field(default_factory=dict)   # student -> lateness as held (lab_lateness)


def lab_record(gb, assignment_id: str) -> LabRecord:
    """Every submission of the lab in an open nbgrader Gradebook, cell by cell (read as `_held` reads
    it: walking notebook.submissions loads three ORM objects and runs two queries a student)."""
    return {student: {name: CellGrade(*grade[:3]) for name, grade in cells.items()}
            for student, cells in _held(gb, assignment_id)["grades"].items()}


def read_record(db_url: str, assignment_id: str, course_id: str | None = None) -> LabRecord:
    """One lab's record in the gradebook at db_url ({} when the database has none);
    GradebookUnavailable when it cannot be read."""
    return read_book(db_url, assignment_id, course_id)[0]


def read_book(db_url: str, assignment_id: str, course_id: str | None = None) -> tuple[LabRecord, dict[str, BookLate]]:
    """One lab's record and lateness in the gradebook at db_url; GradebookUnavailable when it cannot be read."""
    try:
        api = _nbgrader_api()
        stamp_new_gradebook(db_url)
        with api.Gradebook(db_url, course_id=course_id or current_course_id()) as gb:
            return lab_record(gb, assignment_id), lab_lateness(gb, assignment_id)
    except Exception as exc:
        raise unavailable(db_url, "read", exc) from exc


def forget_submission(db_url: str, assignment_id: str, student: str, course_id: str | None = None) -> list[str]:
    """Remove the student's submission of the lab from the gradebook (its grades and comments), and
    the student too when nothing else of theirs is left; what was removed, one line each."""
    try:
        api = _nbgrader_api()
        with api.Gradebook(db_url, course_id=course_id or current_course_id()) as gb:
            removed = []
            try:
                gb.remove_submission(assignment_id, student)
                removed.append(f"{student}'s {assignment_id} submission and its grades in the gradebook {db_url}")
            except api.MissingEntry:
                return []
            write_late_record(gb, assignment_id, student, None)
            gb.db.commit()
            try:
                if not gb.find_student(student).submissions:
                    gb.remove_student(student)
                    removed.append(f"the student {student}, who has no other submission, from the gradebook")
            except api.MissingEntry:
                pass
            return removed
    except Exception as exc:
        raise unavailable(db_url, "changed", exc) from exc


def read_gradebook(db_url: str, assignment_id: str, course_id: str | None = None) -> dict[str, dict[str, float]]:
    """student -> item -> auto_score, as stored (for checks and the demo)."""
    api = _nbgrader_api()
    Gradebook, MissingEntry = api.Gradebook, api.MissingEntry
    out: dict[str, dict[str, float]] = {}
    with Gradebook(db_url, course_id=course_id or current_course_id()) as gb:
        try:
            notebook = gb.find_notebook(assignment_id, assignment_id)
        except MissingEntry:
            return out
        for student in gb.students:
            try:
                gb.find_submission(assignment_id, student.id)
            except MissingEntry:
                continue
            out[student.id] = {cell.name: gb.find_grade(cell.name, assignment_id, assignment_id, student.id).auto_score
                               for cell in notebook.grade_cells}
    return out
