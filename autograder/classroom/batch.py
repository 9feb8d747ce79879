"""Grade a class: one subfolder per student, a process pool (or with one job a thread), resumable after kill -9.

Before anything is graded or written, the folder must be the lab's class (autograder.classroom.roster:
one line, NotAClass, otherwise). Each finished student is one file, results/<student>.json, written
atomically (tmp + os.replace) after their feedback page; it records what graded it: the submission's
fingerprint and the grader's (autograder.classroom.fingerprints). A rerun skips every student whose
file exists with both unchanged (and rewrites a feedback page that is missing or is not its result's),
regrades the others saying why, then writes the lab's whole record to the gradebook and rebuilds
grades.csv from it (autograder.classroom.record): nothing is lost, nothing counted twice.

    out/results/<student>.json   Gradescope results.json + "scalelabs" metadata (fingerprints, attention,
                                 lateness: autograder.classroom.deadlines, beside the engine's score)
    out/feedback/<student>.html  the feedback page
    out/grades.csv               the lab's record: one row per student (record.COLUMNS, then each item)
    out/record.json              which gradebook holds the record
    the gradebook                the course's, or out/gradebook.db, or --db URL (record.default_gradebook)
"""
from __future__ import annotations

import atexit
import hashlib
import json
import multiprocessing
import os
import signal
import stat
import tempfile
import threading
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

from autograder.classroom.deadlines import (Deadlines, Lateness, PlatformDates, SubmissionTime, course_deadlines,
                                            known_labs, late_attention)
from autograder.classroom.feedback import render_feedback, write_atomic
from autograder.classroom.fingerprints import (grader_changes, grader_fingerprint, machine_differences,
                                               submission_fingerprint)
from autograder.classroom.gradebook import GradebookUnavailable, GradebookWriter, item_scores, sqlite_url
from autograder.classroom.identity import read_export
from autograder.classroom.record import grades_csv, record_rows, write_pointer
from autograder.classroom.roster import NotAClass, Submitter, class_roster, students, submission_folder  # noqa: F401
from autograder.classroom.shards import Shard, write_manifest
from autograder.engine.config import GradingConfig, load_config
from autograder.engine.secret import CourseSecret, load_secret
from autograder.engine.sandbox import Sandbox, check_jail, choose_mode
from autograder.engine.results import Result, record_item_scores
from autograder.engine.spec import Assignment
from labs import load

try:
    import orjson
except ImportError:    # a platform without its wheel: json alone
    orjson = None

fingerprint = submission_fingerprint   # the name tests and older callers use


class OutputFolderError(ValueError):
    """The output folder cannot take this class's grades; nothing was graded or written."""


def check_output(out_dir: Path) -> None:
    """Make results/ and feedback/ and write a probe in each, so a folder that cannot be written is
    one error before the class is graded, not a traceback (or a failure per student) after."""
    try:
        for folder in (out_dir / "results", out_dir / "feedback"):
            folder.mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise OutputFolderError(f"cannot write the grades to {out_dir}: {exc.strerror or exc}"
                                f"{f' ({exc.filename})' if exc.filename else ''}; pass --out a folder you can write") from exc


def load_result(path: Path) -> dict | None:
    """A finished student's results dict, or None when the file is missing, torn or not ours
    (then the student is graded again)."""
    found = read_result(path)
    return found[1] if found else None


def read_result(path: Path) -> tuple[str, dict, dict[str, float], os.stat_result] | None:
    """load_result's, with the file's text, its item scores, checked as its record is
    (results.record_item_scores), and the file's status as read: what the merge copies (or links), and
    the scores it writes, without reading or checking the file again. A symbolic link, a FIFO or a
    device is not a result (never followed or read: a shard's folder is not trusted to hold only files)."""
    try:
        text, status = read_regular(path)
        data = _loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("scalelabs"), dict):
            return None
        return text, data, record_item_scores(data), status
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _loads(text: str):
    """json.loads, by orjson where it reads the text (2-3 times faster: a merge of 2,000 results reads
    74 MB); anything orjson refuses that json reads (NaN, integers past 64 bits) is read by json."""
    if orjson is not None:
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def read_regular(path: Path) -> tuple[str, os.stat_result]:
    """The UTF-8 text of the regular file at `path` itself and its status; OSError for a symbolic link
    (O_NOFOLLOW) or anything else that is not a regular file (a FIFO would block, a device never end),
    ValueError (UnicodeDecodeError) for text that is not UTF-8."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb", closefd=True) as file:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise OSError(f"{path} is not a regular file")
        return file.read().decode("utf-8"), status


def all_results(out_dir: Path, assignment_id: str) -> dict[str, dict]:
    """Every student's results of the lab in out/results (every section graded into it)."""
    found = {}
    for path in sorted((Path(out_dir) / "results").glob("*.json")):
        data = load_result(path)
        if data and data["scalelabs"].get("assignment") == assignment_id:
            found[path.stem] = data
    return found


# --- the pool worker: one assignment per process, loaded once ---

_assignment: Assignment | None = None
_mode: str = ""
_config: GradingConfig | None = None
_secret: CourseSecret | None = None
_ahead: Sandbox | None = None     # the next student's jail, booting while this student is graded


def _init_worker(assignment_name: str, mode: str) -> None:
    global _assignment, _mode, _config, _secret
    if threading.current_thread() is threading.main_thread():   # a grading process: Ctrl-C is the parent's
        signal.signal(signal.SIGINT, signal.SIG_IGN)            # (a SIGINT pending since its start is dropped)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _assignment = load(assignment_name)
    _mode = mode
    _config = load_config()
    _secret = load_secret()
    _start_ahead()


def _close_ahead() -> None:
    global _ahead
    if _ahead is not None:
        _ahead.close()
        _ahead = None


atexit.register(_close_ahead)     # in a grading process: its last jail started ahead


def _start_ahead() -> None:
    """Start the next student's jail now (bubblewrap): its interpreter starts (~40 ms) while the
    grader works, instead of before each student's first check."""
    global _ahead
    try:
        _ahead = Sandbox.ahead(_assignment.module, _config) if _mode == "bubblewrap" else None
    except Exception:   # then the student's own grading starts its jail, and says what fails
        _ahead = None


def grade_student(graded_as: str, folder: str, out_dir: str, sha: str, grader: dict,
                  members: tuple[str, ...] = (), root: str = "", late: dict | None = None,
                  provided_from: str = "") -> str:
    """Grade one submission under `graded_as` and write, for each student whose record it is
    (`members`, default the one), the feedback page then the results file (which marks it finished);
    `late`: member -> their Lateness as JSON (None: the lab has no due date), kept beside the score.
    The class root is a secret and the output folder off-limits to the student's code. `provided_from`: the
    released provided modules, graded in place of the folder's own (a Gradescope export's upload)."""
    from autograder.engine.grade import grade_submission

    ahead = _ahead
    _start_ahead()
    secrets = [Path(root)] if root else []
    result = grade_submission(_assignment, Path(folder), graded_as, sandbox=_mode or None, config=_config,
                              secrets=secrets, outputs=[Path(out_dir), Path(out_dir) / "results",
                                                        Path(out_dir) / "feedback"], ahead=ahead, secret=_secret,
                              provided_from=Path(provided_from) if provided_from else None)
    for student in members or (graded_as,):
        data = record_data(result, _assignment.id, student, graded_as, sha, grader, _config.feedback.native,
                           _secret.fingerprint if _secret else "", (late or {}).get(student))
        _write_record(Path(out_dir), _assignment.title, student, data)
    return graded_as


def record_data(result: Result, assignment_id: str, student: str, graded_as: str, sha: str, grader: dict,
                view: str, secret_fingerprint: str, late: dict | None, **more) -> dict:
    """A student's results file: the engine's record and what graded it (`scalelabs`: fingerprints, the
    id it was graded under, the view, the course secret's fingerprint, the lateness as JSON, `more`)."""
    data = result.to_gradescope()
    data["scalelabs"] = {"assignment": assignment_id, "student": student, "graded_as": graded_as,
                         "fingerprint": sha, "grader": grader, "max_score": result.max_score,
                         "sandbox": result.sandbox_mode, "attention": list(result.attention), "view": view,
                         "course_secret": secret_fingerprint, **more}
    if late is not None:
        data["scalelabs"]["late"] = late
    return data


def keep_results(assignment: Assignment, results: dict, when: str, submitter: Submitter, out_dir: Path, sha: str,
                 grader: dict, view: str, secret_fingerprint: str, late: dict) -> None:
    """Record, for each member of a Gradescope export's submission over the submission limit, the results
    Gradescope kept (the earlier submission's engine record, autograder.doors.gradescope.kept_from) instead
    of grading the folder, which holds the upload that was not graded; ValueError when they are not the
    door's results."""
    result = Result.from_gradescope(results)
    for student in submitter.students:
        data = record_data(result, assignment.id, student, submitter.graded_as, sha, grader, view, secret_fingerprint,
                           late[student] and late[student].to_json(), kept_from=when)
        _write_record(out_dir, assignment.title, student, data)


def _write_record(out_dir: Path, title: str, student: str, data: dict) -> None:
    """The student's feedback page, then their results file (which records the page's hash and marks
    the student finished), in the view the result records."""
    page, text = record_texts(title, student, data)
    write_atomic(out_dir / "feedback" / f"{student}.html", page)
    write_atomic(out_dir / "results" / f"{student}.json", text)


def record_texts(title: str, student: str, data: dict) -> tuple[str, str]:
    """(the feedback page, the results file) of a student's result as grade-batch writes them: the page
    in the view the result records, the result recording the page's hash (set in `data`)."""
    page = render_feedback(title, student, data, data["scalelabs"].get("view", "after"))
    data["scalelabs"]["feedback"] = _sha256(page.encode())
    return page, json.dumps(data, indent=1, sort_keys=True)


def with_lateness(data: dict, late: Lateness | None) -> dict:
    """A graded result whose lateness alone changed, with `late` recorded in place of its own (none when
    the lab has no due date now): the engine's record stands, no engine run (`data`, changed)."""
    if late is None:
        data["scalelabs"].pop("late", None)
    else:
        data["scalelabs"]["late"] = late.to_json()
    return data


def recorded_lateness_now(deadlines: Deadlines, lab: str, student: str, data: dict) -> Lateness | None:
    """The lateness a grade-batch rerun records for a result whose files stand, from what the result
    recorded (the submission time or why there is none, its source, the platform's dates:
    Deadlines.reassess) under the course's deadlines now: None where the course gives the lab no due
    date or late policy now (grade-batch records none then), as a rerun finds it from the class folder.
    ValueError when the result records no lateness but the lab has a due date now: the submission time
    was never recorded (graded without the course's [deadlines]) and only the class folder has it."""
    recorded = Lateness.from_json(data["scalelabs"].get("late"))
    if recorded is None:
        if deadlines.of(lab) is not None and deadlines.policy_of(lab) is not None:
            raise ValueError(f"{student}'s result records no lateness (graded without the course's [deadlines]), "
                             f"and {lab} has a due date in {deadlines.where} now")
        return None
    return deadlines.reassess(lab, student, recorded, keep=False)


@contextmanager
def _ctrl_c_held_while_starting() -> Iterator[None]:
    """Processes started inside hold Ctrl-C from their first instruction (a blocked signal stays blocked
    across fork and exec) until their initializer ignores it: the terminal's SIGINT reaches the whole
    process group, and a grading process still importing would print a traceback. Ctrl-C is the
    parent's to handle: it drops the students not yet started, and each grading process finishes the
    one in hand. A Ctrl-C while they start is held, not lost, and acted on once they have started:
    blocked in this thread (the one that forks), and noted, not raised, if another thread of this
    process (the gradebook's, the progress bar's) receives it, since a KeyboardInterrupt between a
    fork and its write of the start-up data leaves that grading process a traceback of its own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    handler = signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)   # a Ctrl-C held by the block arrives now, noted
        signal.signal(signal.SIGINT, handler)
    if held and callable(handler):
        handler(signal.SIGINT, None)                          # Python's default raises KeyboardInterrupt


@contextmanager
def _graders(jobs: int, assignment_name: str, mode: str) -> Iterator[Executor]:
    """`jobs` grading processes; one job grades on a thread of this process instead, which spares a
    second interpreter importing the engine (~0.4 s a batch): the student's code runs in its jail
    either way. Stopped early (Ctrl-C), the students not yet started are dropped, not graded."""
    if jobs > 1:
        context = multiprocessing.get_context("spawn")  # no fork of a parent with threads (progress bar)
        pool: Executor = ProcessPoolExecutor(max_workers=jobs, mp_context=context,
                                             initializer=_init_worker, initargs=(assignment_name, mode))
    else:
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="grader",
                                  initializer=_init_worker, initargs=(assignment_name, mode))
    try:
        yield pool
    except BaseException:
        # one shutdown only: a second call resets cancel_futures before the pool acts on it, and the
        # whole class is then graded at exit behind a frozen progress bar
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    else:
        pool.shutdown(wait=True)
    finally:
        if jobs == 1:
            _close_ahead()


@dataclass
class BatchSummary:
    out_dir: Path
    graded: list[str] = field(default_factory=list)                  # graded for the first time
    regraded: dict[str, str] = field(default_factory=dict)           # student -> why (files or grader changed)
    skipped: list[str] = field(default_factory=list)                 # unchanged: their result stands
    failed: dict[str, str] = field(default_factory=dict)             # student -> the grader's error
    attention: dict[str, list[str]] = field(default_factory=dict)    # student -> what needs a person
    rewritten: list[str] = field(default_factory=list)               # feedback pages made whole again
    late: dict[str, Lateness] = field(default_factory=dict)           # student -> lateness (labs with a due date)
    kept: dict[str, str] = field(default_factory=dict)               # student -> the kept submission's time (over
                                                                     # Gradescope's submission limit: not graded)
    renamed: dict[str, str] = field(default_factory=dict)            # student id -> Gradescope's id it stands for
    csv_path: Path | None = None
    db_url: str = ""
    record: int = 0                                                  # students of the lab in the record

    @property
    def needs_attention(self) -> list[str]:
        """Every student who needs a person: a grader error, or a reason in their result."""
        return sorted(set(self.failed) | set(self.attention))

    def regrade_reasons(self) -> dict[str, list[str]]:
        """why -> the students regraded for it."""
        out: dict[str, list[str]] = {}
        for student, why in sorted(self.regraded.items()):
            out.setdefault(why, []).append(student)
        return out


def _why_regrade(done: dict | None, sha: str, grader: dict, force: bool, graded_as: str | None = None) -> str | None:
    """Why a student with this results file must be graded again, or None (the result stands)."""
    if done is None:
        return ""
    meta = done["scalelabs"]
    if force:
        return "--force"
    if meta.get("fingerprint") != sha:
        return "their files changed"
    if graded_as is not None and meta.get("graded_as", graded_as) != graded_as:
        return "their group changed (graded under another id)"
    changes = grader_changes(meta.get("grader"), grader)
    if changes:
        return "the grader changed: " + ", ".join(changes[:4]) + (f" and {len(changes) - 4} more" if len(changes) > 4 else "")
    return None


def why_reassess(done: dict, late: Lateness | None) -> str | None:
    """Why a student whose graded result stands must have their lateness recorded again (the due date,
    their extension, the policy or their submission time changed), or None."""
    before = Lateness.from_json(done["scalelabs"].get("late"))
    if before == late:
        return None
    if before is None or late is None:
        return "the lab's due date was " + ("removed" if late is None else "set")
    if before.lab_due != late.lab_due:
        return "the lab's due date changed"
    if before.due != late.due:
        return "their extension changed"
    if before.policy != late.policy:
        return "the late policy changed"
    if (before.submitted_at, before.source) != (late.submitted_at, late.source):
        return "their submission time changed"
    return "their lateness changed"


def _time_before_seen(late: Lateness | None, previous: Path) -> Lateness | None:
    """The lateness to record instead when a student's files changed but their timestamp.txt (written on
    the student's side: their clock, their file) claims a time before this grader last saw other files
    of theirs (the previous result's mtime, a time of ours): that time cannot be trusted, so no penalty
    is taken on it and the student needs a person (autograder.classroom.deadlines, `unknown`)."""
    from autograder.classroom.submitted_at import NBGRADER_SOURCE

    if late is None or late.source != NBGRADER_SOURCE or not late.submitted_at:
        return None
    try:
        seen = datetime.fromtimestamp(previous.stat().st_mtime, timezone.utc)
    except OSError:
        return None
    claimed = datetime.fromisoformat(late.submitted_at)
    if claimed >= seen:
        return None
    return replace(late, status="unknown", submitted_at="", late_by_s=0.0, penalty_percent=0.0,
                   note=_doubt(late) + seen.astimezone(claimed.tzinfo).isoformat(timespec="seconds"))


def _doubt(late: Lateness) -> str:
    """The start of the note `_time_before_seen` leaves on a claim it cannot trust."""
    from autograder.classroom.submitted_at import NBGRADER_SOURCE

    return f"{NBGRADER_SOURCE} gives {late.submitted_at}, but other files of theirs were graded at "


def _still_doubted(done: dict, late: Lateness | None) -> Lateness | None:
    """The doubted lateness a result records, when the unchanged files still make the same claim."""
    before = Lateness.from_json(done["scalelabs"].get("late"))
    if late is None or before is None or before.status != "unknown" or not late.submitted_at:
        return None
    return before if before.note.startswith(_doubt(late)) else None


def class_lateness(assignment: Assignment, root: Path, roster: list[Submitter], timestamps: Path | None = None,
                   now=None, deadlines: Deadlines | None = None) -> dict[str, Lateness | None]:
    """student -> their Lateness (None for everyone when the lab has no due date). The course's
    [deadlines] and extensions are read (ConfigError names what is wrong; ExtensionsError a row for a
    student not in the class folder, where the course has no roster to check them against), and each
    submitter's time (autograder.classroom.submitted_at.class_times: NoSubmissionTimes when the folder
    has none). In a Gradescope export the door's recorded results give each member's platform dates
    (Gradescope's due date, their extension), the time of the submission kept over the submission limit,
    and who was in a group when it was graded: a member listed now who was not joined it later, at a time
    Gradescope does not record, so theirs is `unknown` (no penalty on a guess; a person decides)."""
    from autograder.classroom.deadlines import course_roster
    from autograder.classroom.submitted_at import class_times, from_gradescope

    deadlines = deadlines or course_deadlines(labs=known_labs(assignment.id))
    lab = assignment.id
    platform, joined, kept = export_record(root, roster)
    if deadlines.of(lab) is None and not (deadlines.policy_of(lab) and any(platform.values())):
        return {s: None for sub in roster for s in sub.students}
    if course_roster(deadlines.where) is None and any(l == lab for _, l in deadlines.extension_lines):
        everyone = {s for sub in class_roster(root, assignment) for s in sub.students}
        deadlines.check_students(everyone, f"in the class folder {root}", lab)
    times = class_times(root, roster, lab, deadlines.zone, timestamps)
    for name, when in kept.items():
        times[name] = from_gradescope(when, "Gradescope's submission_time of the kept submission")
    out = {}
    for sub in roster:
        for s in sub.students:
            time = times[sub.name]
            if s in joined:
                time = SubmissionTime(None, time.source, f"Gradescope lists {s} in this submission's group, but its "
                                      f"autograder graded it for {', '.join(joined[s])}: {s} joined the group after it "
                                      "was graded, at a time Gradescope does not record")
            out[s] = deadlines.assess(lab, s, time, now, platform.get(s))
    return out


def export_record(root: Path, roster: list[Submitter]) -> tuple[dict, dict, dict]:
    """What the Gradescope door recorded in an export's results (autograder.doors.gradescope): student ->
    their platform dates; student -> whom the submission was graded for, when they were not among them;
    folder -> the time of the kept submission, when the upload is over the submission limit. Empty for a
    folder that is not an export, or results that do not say."""
    from autograder.classroom.identity import read_export
    from autograder.doors.gradescope import kept_from, recorded_members

    export = read_export(root) or {}
    platform, joined, kept = {}, {}, {}
    for sub in roster:
        entry = export.get(sub.name)
        if entry is None or entry.results is None:
            continue
        members = recorded_members(entry.results) or {}
        for student in sub.students:
            if members.get(student) is not None:
                platform[student] = PlatformDates.of_record(members[student], student)
            elif members and student not in members:
                joined[student] = sorted(members)
        if when := kept_from(entry.results):
            kept[sub.name] = when
    return platform, joined, kept


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _whole_feedback(out_dir: Path, title: str, student: str, data: dict) -> bool:
    """Make the student's feedback page the one their result gives (a crash or a hand may have left it
    missing or another): the page's hash is checked against the one the result records (rendered and
    compared when the result records none); True when it had to be written."""
    path = out_dir / "feedback" / f"{student}.html"
    try:
        held = path.read_bytes()
    except OSError:
        held = None
    recorded = data["scalelabs"].get("feedback")
    if held is not None and recorded and _sha256(held) == recorded:
        return False
    page = render_feedback(title, student, data, data["scalelabs"].get("view", "after"))   # the view it was given
    if held == page.encode():
        return False
    write_atomic(path, page)
    return True


def class_attention(results: dict[str, dict], students, late: dict) -> dict[str, list[str]]:
    """student -> what needs a person, for `students`: what their result says, then their lateness's line
    (`late`: student -> Lateness or None)."""
    attention = {s: list(results[s]["scalelabs"].get("attention", []))
                 for s in sorted(students) if s in results and results[s]["scalelabs"].get("attention")}
    for student in sorted(students):
        if line := late_attention(late.get(student)):
            attention.setdefault(student, []).append(line)
    return attention


def write_class_record(assignment: Assignment, out_dir: Path, results: dict[str, dict], gradebook: GradebookWriter,
                       db_url: str, attention: dict[str, list[str]], graded_now,
                       *, deadlines: Deadlines | None = None,
                       scores: dict[str, dict[str, float]] | None = None) -> tuple[Path, int]:
    """The lab's whole record (every result in out/results) into the gradebook, then grades.csv and
    record.json from it; `attention` (student -> lines) gains a line for each student of `graded_now`
    whose manual score stands over a changed engine score; a result's lateness is reassessed under
    `deadlines` (the course's) where the gradebook keeps none. Returns (grades.csv, students in the record).
    Where the gradebook cannot be written, grades.csv is written from the results alone and
    GradebookUnavailable raised. `scores`: item_scores of some of the results, when the caller has them."""
    csv_path = out_dir / "grades.csv"
    scores = {student: (scores or {}).get(student) or item_scores(data)     # each result's records read once
              for student, data in results.items()}
    try:
        written = gradebook.write(results, scores)
    except GradebookUnavailable:
        write_atomic(csv_path, grades_csv(assignment, record_rows(assignment, results, None, None,
                                                                  deadlines=deadlines, scores=scores)))
        raise
    for student, items in written.review.items():
        if student in graded_now:
            attention.setdefault(student, []).append(
                f"a manual score stands on {', '.join(items)} while the engine's score changed: review it in formgrader")
    rows = record_rows(assignment, results, written.record, written.late, deadlines=deadlines, scores=scores)
    for row in rows:   # the CSV names what needs a person too, as this batch saw it
        row.attention = attention.get(row.student, row.attention)
    write_atomic(csv_path, grades_csv(assignment, rows))
    write_pointer(out_dir, assignment.id, db_url)
    return csv_path, len(rows)


def _refuse_other_machines(out_dir: Path, assignment_id: str, grader: dict, loaded: dict[str, dict | None],
                           regraded: set[str]) -> None:
    """OutputFolderError when out/ keeps results graded on a machine whose Python, numpy or hypothesis
    differs from this one's (the class would mix two graders), other than those of `regraded`.
    `loaded`: the results already read (student -> result or None); the others are read here."""
    kept: dict[str, list[str]] = {}
    for path in sorted((out_dir / "results").glob("*.json")):
        student = path.stem
        data = loaded[student] if student in loaded else load_result(path)
        if student in regraded or not data or data["scalelabs"].get("assignment") != assignment_id:
            continue
        differences = machine_differences(data["scalelabs"].get("grader"), grader)
        if differences:
            kept.setdefault("; ".join(differences), []).append(student)
    if kept:
        differences, who = next(iter(kept.items()))
        shown = ", ".join(who[:3]) + (f" and {len(who) - 3} more" if len(who) > 3 else "")
        raise OutputFolderError(
            f"{out_dir} holds results graded on another machine ({differences}: {shown}). Another Python, numpy or "
            "hypothesis draws other hidden examples and gives other reference floats, so one class would mix two "
            "graders: grade on the machine (or image) that graded them, or regrade every student here with --force")


def grade_batch(assignment_name: str, root: Path, out_dir: Path, jobs: int = 2, *, db_url: str | None = None,
                only: tuple[str, ...] | list[str] = (), force: bool = False,
                on_start: Callable[[int, int], None] | None = None,
                on_done: Callable[[str], None] | None = None, allow_unsandboxed: bool = False,
                timestamps: Path | None = None, shard: Shard | None = None) -> BatchSummary:
    """Grade every submission of the class under root (only those of the students in `only`, when
    given) with `jobs` processes; skip finished students whose files and grader are unchanged (all of
    them are regraded with `force`).

    Before anything is written: NotAClass when root cannot be this lab's class; the sandbox mode is
    chosen once, and where none can run (and the course did not opt in with allow_unsandboxed or
    scalelabs.toml), or the bubblewrap jail would show the class or the course to student code or
    cannot start (check_jail), SandboxUnavailable; when the lab has a due date ([deadlines]),
    ConfigError for a bad table or extensions CSV, TimestampsError for a bad `timestamps` CSV,
    NoSubmissionTimes when the class says nothing of when anyone submitted. Each student's lateness is
    recorded beside the engine's score; a student whose lateness alone changed keeps their graded result
    and has it recorded again (no engine run). on_start(total, to_grade) is called once, on_done(student)
    after each graded submission. Afterwards the lab's whole record (every results file in out/results)
    goes to the gradebook (db_url, default out/gradebook.db) and grades.csv.

    `shard`: grade only the submitters of that shard of the class (autograder.classroom.shards), whose
    shard.json is written into out/ before anyone is graded; `scalelabs merge` joins the shards. Results
    in out/ graded on a machine with another Python, numpy or hypothesis are refused (OutputFolderError
    naming the versions) unless this run regrades every one of them (`force`).
    """
    config = load_config()
    mode = choose_mode(config.sandbox, allow_unsandboxed or config.allow_unsandboxed)
    secret = load_secret()      # the grading processes load the same (a bad file stops the batch here)
    fingerprint_now = secret.fingerprint if secret else ""
    assignment = load(assignment_name)
    root, out_dir = Path(root), Path(out_dir)
    roster = whole = class_roster(root, assignment, only)
    if shard is not None:
        roster = shard.take(whole)
    deadlines = course_deadlines(labs=known_labs(assignment.id))
    late = class_lateness(assignment, root, roster, timestamps, deadlines=deadlines)
    kept_uploads = export_record(root, roster)[2]   # over Gradescope's submission limit: recorded, not graded
    if mode == "bubblewrap":    # a jail that shows a secret or cannot start refuses the class, not each student
        check_jail(config, [root])
    check_output(out_dir)
    grader = grader_fingerprint(assignment_name, assignment, config, mode, secret)
    summary = BatchSummary(out_dir, late={s: v for s, v in late.items() if v is not None},
                           renamed={student: own for sub in roster for student, own in sub.renamed})
    todo: list[tuple[Submitter, str]] = []
    reassess: dict[str, dict] = {}      # student -> their result, whose lateness alone changed
    done_by_student: dict[str, dict | None] = {}
    for submitter in roster:
        sha = submission_fingerprint(submitter.folder)
        reasons, done_by = {}, {}
        for student in submitter.students:
            done = done_by[student] = done_by_student[student] = load_result(out_dir / "results" / f"{student}.json")
            if done and done["scalelabs"].get("assignment") != assignment.id:
                raise OutputFolderError(
                    f"{out_dir} holds results of {done['scalelabs'].get('assignment')} ({student}.json): grade "
                    f"{assignment.id} into a folder of its own (--out DIR; default grades/{assignment.id}), so that "
                    "no result is overwritten")
            if done and done["scalelabs"].get("course_secret", "") != fingerprint_now:
                graded_under = done["scalelabs"].get("course_secret") or "no course secret"
                raise OutputFolderError(
                    f"{out_dir} holds results graded under course secret {graded_under} ({student}.json), and this "
                    f"machine has {fingerprint_now or 'none'}: hidden inputs would differ from the graded ones. Copy "
                    "the course secret of the machine that graded them (docs/tas.md), or grade into another --out DIR")
            reasons[student] = _why_regrade(done, sha, grader, force, submitter.graded_as)
        if all(why is None for why in reasons.values()):
            for student in submitter.students:
                if (kept := _still_doubted(done_by[student], late[student])) is not None:
                    late[student] = summary.late[student] = kept   # the same files, the same claim
                why = why_reassess(done_by[student], late[student])
                if why:
                    summary.regraded[student], reassess[student] = why, done_by[student]
                else:
                    summary.skipped.append(student)
            continue
        todo.append((submitter, sha))
        for student in submitter.students:
            if reasons[student] == "their files changed" and (doubted := _time_before_seen(
                    late[student], out_dir / "results" / f"{student}.json")) is not None:
                late[student] = summary.late[student] = doubted
        for student, why in reasons.items():
            if why:
                summary.regraded[student] = why
            elif why is None:   # a group member whose own result stood: graded again with the group
                summary.regraded[student] = "graded again with their group"
    _refuse_other_machines(out_dir, assignment.id, grader, done_by_student,
                           {m for sub in roster for m in sub.students} if force else set())
    kept_todo = [(s, sha) for s, sha in todo if s.name in kept_uploads]
    todo = [(s, sha) for s, sha in todo if s.name not in kept_uploads]
    for submitter, sha in kept_todo:
        try:
            keep_results(assignment, read_export(root)[submitter.name].results, kept_uploads[submitter.name], submitter, out_dir,
                         sha, grader, config.feedback.native, fingerprint_now, late)
        except ValueError as exc:
            for m in submitter.students:
                summary.failed[m] = f"the results Gradescope kept over the submission limit cannot be read: {exc}"
                summary.regraded.pop(m, None)
            continue
        summary.graded += [m for m in submitter.students if m not in summary.regraded]
    for submitter in roster:
        if submitter.name in kept_uploads:
            summary.kept.update({m: kept_uploads[submitter.name] for m in submitter.students})
    if shard is not None:
        write_manifest(out_dir, assignment.id, shard, whole, roster)
    # an export's upload is graded as the otter door grades it: the provided modules as released, over
    # the upload's own (autograder.classroom.upload.put_provided; `scalelabs release` copies them from reference/)
    released = ""
    if any(s.export for s, _ in todo):
        from autograder.build.release import REFERENCE_DIR
        released = str(REFERENCE_DIR)
    if on_start:
        on_start(len(roster), len(todo))
    summary.db_url = db_url or sqlite_url(out_dir / "gradebook.db")
    with GradebookWriter(summary.db_url, assignment) as gradebook:   # nbgrader loads while the class is graded
        if todo:
            with _graders(jobs, assignment_name, mode) as pool:
                with _ctrl_c_held_while_starting():   # the grading processes start at the first submits
                    futures = {pool.submit(grade_student, s.graded_as, str(s.folder), str(out_dir), sha, grader,
                                           s.students, str(root), {m: late[m] and late[m].to_json() for m in s.students},
                                           released if s.export else ""): s
                               for s, sha in todo}
                for future in as_completed(futures):
                    submitter = futures[future]
                    try:
                        future.result()
                        summary.graded += [m for m in submitter.students if m not in summary.regraded]
                    except Exception as exc:  # a grader fault for one student must not stop the class
                        for m in submitter.students:
                            summary.failed[m] = f"{type(exc).__name__}: {exc}"
                            summary.regraded.pop(m, None)
                    if on_done:
                        on_done(submitter.graded_as)
        for student, data in reassess.items():   # the graded result stands; its lateness is recorded again
            _write_record(out_dir, assignment.title, student, with_lateness(data, late[student]))
        results = all_results(out_dir, assignment.id)
        for student in summary.skipped:
            if student in results and _whole_feedback(out_dir, assignment.title, student, results[student]):
                summary.rewritten.append(student)
        graded_now = {s for sub in roster for s in sub.students}
        summary.attention = class_attention(results, graded_now, late)
        for submitter in roster:     # an export's upload that holds no lab (autograder.classroom.roster)
            for student in submitter.students if submitter.upload else ():
                summary.attention.setdefault(student, []).insert(0, submitter.upload)
        summary.csv_path, summary.record = write_class_record(assignment, out_dir, results, gradebook, summary.db_url,
                                                              summary.attention, graded_now, deadlines=deadlines)
    summary.graded.sort()
    summary.skipped.sort()
    return summary
