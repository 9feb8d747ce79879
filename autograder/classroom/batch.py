"""Grade a class: one subfolder per student, a process pool (or with one job a thread), resumable after kill -9.

Each finished student is one file, results/<student>.json, written atomically (tmp + os.replace)
after their feedback page; it records a fingerprint of the submission. A rerun skips every student
whose file exists with the same fingerprint, then rebuilds the class CSV and the gradebook from all
result files, keyed by student: nothing is lost, nothing counted twice.

    out/results/<student>.json   Gradescope results.json + "scalelabs" metadata
    out/feedback/<student>.html  the feedback page
    out/grades.csv               student, total, max, one column per item
    out/gradebook.db             the nbgrader gradebook (or --db URL)
"""
from __future__ import annotations

import atexit
import csv
import hashlib
import io
import json
import multiprocessing
import os
import signal
import stat
import tempfile
import threading
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from autograder.engine.config import GradingConfig, load_config
from autograder.engine.secret import CourseSecret, load_secret
from autograder.classroom.feedback import write_atomic, write_feedback
from autograder.classroom.gradebook import GradebookWriter, item_scores, sqlite_url
from autograder.engine.filetree import TREE_BYTES_CAP, read_regular, walk_submission
from autograder.engine.sandbox import Sandbox, choose_mode
from autograder.engine.results import Result
from autograder.engine.spec import Assignment
from labs import load


def fingerprint(folder: Path) -> str:
    """sha256 over what the grader takes from the submission (walk_submission: regular files, no
    links, bounded depth and count): relative path, size and bytes of each file while the total stays
    under TREE_BYTES_CAP (beyond it path and size only), and every skipped entry. Never reads a
    file over COPY_CAP_BYTES, never follows a link, never recurses."""
    digest = hashlib.sha256()
    tree = walk_submission(Path(folder))
    total = 0
    for f in tree.files:
        digest.update(f"{f.rel}\0{f.size}\0".encode())
        if total + f.size <= TREE_BYTES_CAP:
            try:
                data = read_regular(f.path)
                total += len(data)
                digest.update(data)
            except (OSError, ValueError) as exc:
                digest.update(f"unreadable {exc}".encode())
        digest.update(b"\0")
    for line in tree.skipped:
        digest.update(f"skipped {line}\0".encode())
    return digest.hexdigest()


def _is_real_dir(path: Path) -> bool:
    """A folder, not a link to one (a student folder linked to a classmate's is not followed)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def submission_folder(student_dir: Path, assignment: Assignment) -> Path:
    """A student's submission: nbgrader's `submitted/<student>/<assignment>/` or the folder itself."""
    nested = Path(student_dir) / assignment.id
    return nested if _is_real_dir(nested) else Path(student_dir)


def students(root: Path) -> list[str]:
    """Every student subfolder; a link among them counts too (it is graded as an empty folder:
    walk_submission never follows it), so that student gets a result that says why."""
    with os.scandir(root) as it:
        return sorted(e.name for e in it if not e.name.startswith((".", "_"))
                      and (e.is_dir(follow_symlinks=False) or e.is_symlink()))


def _entries(folder: Path) -> set[str]:
    try:
        with os.scandir(folder) as it:
            return {e.name for e in it}
    except OSError:
        return set()


def misplaced_class(root: Path, assignment: Assignment) -> str | None:
    """Why `root` cannot be graded as this assignment's class, or None. Each case grades every student
    0 and says nothing a TA sees: not one student folder holds the lab's module or notebook (the folder
    above the class, a student's own folder, another lab's class); or every folder that holds the module
    lacks the modules the release provides (students uploaded only their own files: Canvas,
    Gradescope), so no module imports; or `root` holds no student folder at all (one submission, or
    the files of a flat download)."""
    wanted = {f"{assignment.module}.py", f"{assignment.id}.ipynb"}
    names = students(root)
    if not names:
        found = _entries(root)
        hint = ""
        if wanted & found:
            hint = (f": it looks like one submission; grade it with `scalelabs grade {assignment.id} {root}`, or put "
                    "each student's files in a folder of their own")
        elif any(n.endswith((".py", ".ipynb")) for n in found):
            hint = ": put each student's files in a folder of their own (ROOT/<student>/), e.g. a Canvas download's files"
        return f"submissions root {root} has no student subfolders{hint}"
    entries = {s: _entries(submission_folder(root / s, assignment)) for s in names}
    if not any(wanted & found for found in entries.values()):
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        return (f"no student folder in {root} ({shown}) holds {' or '.join(sorted(wanted))}, directly or in "
                f"<student>/{assignment.id}/: pass the folder that holds one folder per student of {assignment.id}")
    provided = {f"{name}.py" for name in assignment.provided}
    with_module = [found for found in entries.values() if f"{assignment.module}.py" in found]
    if with_module and all(provided - found for found in with_module):
        nested = any(submission_folder(root / s, assignment) != root / s for s in names)
        folders = f'"{root}"/*/' + (f"{assignment.id}/" if nested else "")
        return (f"no student folder in {root} holds {', '.join(sorted(provided))} beside {assignment.module}.py, "
                f"so no module can import them: copy the released files into each student's folder first "
                f"(keeping the student's own), e.g. for d in {folders}; do cp -n release/{assignment.id}/*.py \"$d\"; done")
    return None


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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not isinstance(data.get("scalelabs"), dict):
            return None
        Result.from_gradescope(data)
        return data
    except (OSError, ValueError, TypeError, KeyError):
        return None


# --- the pool worker: one assignment per process, loaded once ---

_assignment: Assignment | None = None
_mode: str = ""
_config: GradingConfig | None = None
_secret: CourseSecret | None = None
_ahead: Sandbox | None = None     # the next student's jail, booting while this student is graded


def _init_worker(assignment_name: str, mode: str) -> None:
    global _assignment, _mode, _config, _secret
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


def grade_student(student: str, folder: str, out_dir: str, sha: str, root: str = "") -> str:
    """Grade one student and write feedback then results (the results file marks it finished).
    The class root is a secret and the output folder off-limits to the student's code."""
    from autograder.engine.grade import grade_submission

    ahead = _ahead
    _start_ahead()
    secrets = [Path(root)] if root else []
    result = grade_submission(_assignment, Path(folder), student, sandbox=_mode or None, config=_config,
                              secrets=secrets, outputs=[Path(out_dir), Path(out_dir) / "results",
                                                        Path(out_dir) / "feedback"], ahead=ahead, secret=_secret)
    data = result.to_gradescope()
    write_feedback(Path(out_dir) / "feedback" / f"{student}.html", _assignment.title, student, data)
    data["scalelabs"] = {"assignment": _assignment.id, "student": student, "fingerprint": sha,
                         "max_score": result.max_score, "sandbox": result.sandbox_mode,
                         "course_secret": _secret.fingerprint if _secret else ""}
    write_atomic(Path(out_dir) / "results" / f"{student}.json", json.dumps(data, indent=1, sort_keys=True))
    return student


@contextmanager
def _started_ignoring_ctrl_c() -> Iterator[None]:
    """Processes started inside ignore Ctrl-C from their first instruction (an ignored signal stays
    ignored across exec, and Python then installs no KeyboardInterrupt handler): the terminal's SIGINT
    reaches the whole process group, and a grading process still importing would print a traceback.
    Ctrl-C is the parent's to handle: it drops the students not yet started, and each grading process
    finishes the one in hand. The parent ignores it only while the processes start (milliseconds)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


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
    graded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    csv_path: Path | None = None
    db_url: str = ""


def class_csv(assignment: Assignment, results: dict[str, dict]) -> str:
    items = assignment.item_ids
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["student", "score", "max_score", *items])
    for student in sorted(results):
        data = results[student]
        scores = item_scores(data)
        writer.writerow([student, data["score"], data["scalelabs"]["max_score"], *(scores.get(i, 0.0) for i in items)])
    return buffer.getvalue()


def grade_batch(assignment_name: str, root: Path, out_dir: Path, jobs: int = 2, *, db_url: str | None = None,
                on_start: Callable[[int, int], None] | None = None,
                on_done: Callable[[str], None] | None = None, allow_unsandboxed: bool = False) -> BatchSummary:
    """Grade every student folder under root with `jobs` processes; skip finished, unchanged students.

    The sandbox mode is chosen once, before anything is graded: where none can run (and the course
    did not opt in with allow_unsandboxed or scalelabs.toml), SandboxUnavailable.
    on_start(total, to_grade) is called once, on_done(student) after each graded student.
    """
    config = load_config()
    mode = choose_mode(config.sandbox, allow_unsandboxed or config.allow_unsandboxed)
    secret = load_secret()      # the grading processes load the same (a bad file stops the batch here)
    fingerprint_now = secret.fingerprint if secret else ""
    assignment = load(assignment_name)
    root, out_dir = Path(root), Path(out_dir)
    check_output(out_dir)
    summary = BatchSummary(out_dir)
    todo: list[tuple[str, str]] = []
    folders = {student: submission_folder(root / student, assignment) for student in students(root)}
    for student, folder in folders.items():
        sha = fingerprint(folder)
        done = load_result(out_dir / "results" / f"{student}.json")
        if done and done["scalelabs"].get("assignment") != assignment.id:
            raise OutputFolderError(
                f"{out_dir} holds results of {done['scalelabs'].get('assignment')} ({student}.json): grade "
                f"{assignment.id} into a folder of its own (--out DIR; default grades/{assignment.id}), so that "
                "no result is overwritten")
        if done and done["scalelabs"].get("course_secret", "") != fingerprint_now:
            graded_under = done["scalelabs"].get("course_secret") or "no course secret"
            raise OutputFolderError(
                f"{out_dir} holds results graded under course secret {graded_under} ({student}.json), and this "
                f"machine has {fingerprint_now or 'none'}: hidden inputs would differ from the graded ones. Copy the "
                "course secret of the machine that graded them (docs/tas.md), or grade into another --out DIR")
        if done and done["scalelabs"].get("fingerprint") == sha:
            summary.skipped.append(student)
        else:
            todo.append((student, sha))
    if on_start:
        on_start(len(todo) + len(summary.skipped), len(todo))
    summary.db_url = db_url or sqlite_url(out_dir / "gradebook.db")
    with GradebookWriter(summary.db_url, assignment) as gradebook:   # nbgrader loads while the class is graded
        if todo:
            with _graders(jobs, assignment_name, mode) as pool:
                with _started_ignoring_ctrl_c():   # the grading processes start at the first submits
                    futures = {pool.submit(grade_student, s, str(folders[s]), str(out_dir), sha, str(root)): s
                               for s, sha in todo}
                for future in as_completed(futures):
                    student = futures[future]
                    try:
                        future.result()
                        summary.graded.append(student)
                    except Exception as exc:  # a grader fault for one student must not stop the class
                        summary.failed[student] = f"{type(exc).__name__}: {exc}"
                    if on_done:
                        on_done(student)
        results = {s: r for s in students(root) if (r := load_result(out_dir / "results" / f"{s}.json"))}
        summary.csv_path = out_dir / "grades.csv"
        write_atomic(summary.csv_path, class_csv(assignment, results))
        gradebook.write(results)
    summary.graded.sort()
    return summary
