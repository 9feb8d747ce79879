"""`scalelabs otter-try ZIP UPLOAD ...`: run a Gradescope autograder zip on an upload as Gradescope would,
at a given time, and show what the student and the staff see.

Gradescope unpacks the zip into /autograder/source/, the student's upload into /autograder/submission/
(a zip upload extracted), writes /autograder/submission_metadata.json (the submitter, the upload's
`created_at`, the assignment's due dates) and runs the zip's run_autograder, which runs otter's
`run_autograder.main` on that folder; the results are /autograder/results/results.json. Here the same
layout is made in a temporary folder and otter's same entry point runs on it, in a process of this
Python (otter-grader and this scalelabs, not the zip's image: `pip install 'scalelabs[otter]'`), with the
engine's sandbox as on every door. The time is `--submitted-at` (default: now) and Gradescope's due
date `--due` (default: the zip's own), so a late upload, an extension or a due date entered differently
on Gradescope can be tried before students upload.

What is shown, as Gradescope shows it (its results.json visibility): the student's view at the upload
(tests `visible`, and `after_due_date` ones once Gradescope's due date, or its late due date, has
passed), then after the due date, and the staff's view (every test, hidden ones included, and the
grader's own output, which `stdout_visibility: hidden` keeps from students).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from autograder.classroom.deadlines import parse_moment
from autograder.doors import gradescope_settings

# otter's entry point, as the zip's run_autograder calls it, at the upload's moment: on Gradescope grading
# starts as the upload lands, so the try grades "now" = the upload's time (argv[2]), which lets staff try a
# late upload before its due date has come (the engine takes no submission time after the moment of grading).
RUN = """
import sys
from datetime import datetime
from autograder.classroom import deadlines
at = datetime.fromisoformat(sys.argv[2])
_assess = deadlines.Deadlines.assess
deadlines.Deadlines.assess = lambda self, lab, student, submitted, now=None, **kw: _assess(self, lab, student,
                                                                                             submitted, now or at, **kw)
from otter.run.run_autograder import main
main(sys.argv[1], otter_run=True, logo=False)
"""
DEFAULT_STUDENT = "try_student"


class TryError(ValueError):
    """The try cannot run as asked: the message says what is wrong and what to pass."""


@dataclass
class Tried:
    results: dict                      # Gradescope's results.json, as the zip wrote it
    submitted_at: datetime
    due: datetime | None               # Gradescope's due date (the one that decides `after_due_date`)
    late_due: datetime | None
    zip_due: datetime | None           # the zip's own (scalelabs.toml's when it was built)
    grader_output: str = ""            # what the run printed: Gradescope's "Autograder Output", staff's
    settings: dict = field(default_factory=dict)


def moment(value: str, zone: str, what: str) -> datetime:
    try:
        return parse_moment(value, zone)
    except ValueError as error:
        raise TryError(f"{what} {value!r}: {error}") from None


def put_upload(uploads: list[Path], submission: Path) -> None:
    """The upload as Gradescope files it: a folder's contents, a zip extracted, a file as it is."""
    submission.mkdir(parents=True, exist_ok=True)
    for upload in uploads:
        if not upload.exists():
            raise TryError(f"upload {upload} does not exist: pass the files a student uploads (the notebook and the "
                           "module, their folder, or that folder zipped)")
        if upload.is_dir():
            shutil.copytree(upload, submission, dirs_exist_ok=True, symlinks=True)
        elif zipfile.is_zipfile(upload):
            with zipfile.ZipFile(upload) as zf:
                zf.extractall(submission)
        else:
            shutil.copy2(upload, submission / upload.name)


def metadata(student: str, submitted_at: datetime, due: datetime | None, late_due: datetime | None,
             settings: dict) -> dict:
    """Gradescope's submission_metadata.json for one upload of one student (the fields the zip reads)."""
    iso = lambda m: m.astimezone(timezone.utc).isoformat() if m else None   # noqa: E731
    return {"id": 1, "created_at": iso(submitted_at), "submission_method": "upload",
            "assignment": {"title": settings.get("assignment", ""), "due_date": iso(due), "late_due_date": iso(late_due),
                           "group_submission": False, "group_size": 1},
            "users": [{"sid": student, "email": f"{student}@example.edu", "name": student}],
            "previous_submissions": []}


def try_zip(zip_path: Path, uploads: list[Path], submitted_at: str | None = None, due: str | None = None,
            late_due: str | None = None, student: str = DEFAULT_STUDENT, timeout_s: float = 900) -> Tried:
    """Run the zip on the upload in Gradescope's layout (module docstring); TryError for bad arguments."""
    try:
        settings = gradescope_settings.carried(zip_path)
    except gradescope_settings.NotAnAutograderZip as error:
        raise TryError(str(error)) from None
    why = gradescope_settings.check_settings(settings)
    if why:
        raise TryError(f"the zip's settings cannot be read: {why}")
    deadlines = gradescope_settings.deadlines_of(settings)
    deadline = deadlines.of(settings.get("assignment", ""))
    zip_due = deadline.due if deadline else None
    when = moment(submitted_at, deadlines.zone, "--submitted-at") if submitted_at else datetime.now(timezone.utc)
    gs_due = moment(due, deadlines.zone, "--due") if due else zip_due
    gs_late = moment(late_due, deadlines.zone, "--late-due") if late_due else None
    if gs_late and gs_due and gs_late < gs_due:
        raise TryError(f"--late-due {late_due} is before the due date: Gradescope's late due date comes after it")
    with tempfile.TemporaryDirectory(prefix="scalelabs-otter-try-") as tmp:
        ag = Path(tmp) / "autograder"
        for sub in ("source", "submission", "results"):
            (ag / sub).mkdir(parents=True)
        with zipfile.ZipFile(zip_path) as zf:
            zf.extractall(ag / "source")
        put_upload(uploads, ag / "submission")
        (ag / "submission_metadata.json").write_text(json.dumps(metadata(student, when, gs_due, gs_late, settings),
                                                                indent=1))
        env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
        try:
            done = subprocess.run([sys.executable, "-c", RUN, str(ag), when.isoformat()], cwd=ag, capture_output=True,
                                  text=True, env=env, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise TryError(f"the autograder ran longer than {timeout_s:g} s (Gradescope's own limit is the "
                           "assignment's Autograder timeout)") from None
        results_file = ag / "results" / "results.json"
        if not results_file.is_file():
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise TryError(f"the autograder wrote no results.json (exit status {done.returncode}): as on Gradescope, "
                           f"the submission would show an autograder failure. Its last output:\n{tail}")
        results = json.loads(results_file.read_text())
    return Tried(results, when, gs_due, gs_late, zip_due, (done.stdout + done.stderr).strip(), settings)


def _seen_by_student(test: dict, after_due: bool, top: str) -> bool:
    visibility = test.get("visibility", top)
    return visibility == "visible" or (visibility == "after_due_date" and after_due)


def _test_lines(tests: list[dict], mark: bool = False) -> list[str]:
    lines = []
    for t in tests:
        score = f"{t.get('score', 0):g} / {t.get('max_score', 0):g}" if "max_score" in t or "score" in t else ""
        seen = f"  [{t.get('visibility', 'visible')}]" if mark else ""
        lines.append(f"--- {t['name']}  {score}{seen}".rstrip())
        lines += ["    " + line for line in str(t.get("output", "")).rstrip().splitlines()]
    return lines


def views(tried: Tried) -> str:
    """The student's view at the upload and after Gradescope's due date, then the staff's."""
    results = tried.results
    top = results.get("visibility", "visible")
    tests = results.get("tests", [])
    closes = tried.late_due or tried.due
    after_at_upload = closes is not None and tried.submitted_at >= closes
    total = f"{results.get('score', 0):g}"
    possible = (results.get("extra_data", {}).get("scalelabs", {}) or {}).get("max_score")
    total += f" / {possible:g}" if isinstance(possible, (int, float)) else ""
    when = tried.submitted_at.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    due = tried.due.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if tried.due else "none"
    out = [f"Uploaded {when}; Gradescope's due date {due}"
           + (f", late due date {tried.late_due.astimezone(timezone.utc):%Y-%m-%d %H:%M UTC}" if tried.late_due else "")]
    if tried.zip_due and tried.due and tried.zip_due != tried.due:
        out.append(f"WARNING: Gradescope's due date ({due}) is not the zip's "
                   f"({tried.zip_due.astimezone(timezone.utc):%Y-%m-%d %H:%M UTC}): the penalty counts from Gradescope's "
                   "(the platform's word on time) and the full feedback appears then; the course's other doors "
                   "(grade-batch, nbgrader) count from the zip's. Make them the same.")
    student_now = [t for t in tests if _seen_by_student(t, after_at_upload, top)]
    later = [t for t in tests if _seen_by_student(t, True, top) and t not in student_now]
    hidden = [t for t in tests if not _seen_by_student(t, True, top)]
    out.append(f"In short: at the upload the student sees {len(student_now)} tests and the score {total}; "
               f"{len(later)} more after Gradescope's {'late ' if tried.late_due else ''}due date; {len(hidden)} tests "
               "and the autograder's output are staff-only.")
    out += ["", f"=== What the student sees at the upload: score {total}", str(results.get("output", "")).rstrip(),
            *_test_lines(student_now)]
    out += ["", "=== Added for the student after Gradescope's " + ("late due date" if tried.late_due else "due date")
            + (": nothing" if not later else f": {len(later)} tests"), *_test_lines(later)]
    out += ["", f"=== What only the staff see: {len(hidden)} hidden tests, and the autograder's output",
            *_test_lines(hidden, mark=True), "--- Autograder Output (stdout_visibility: "
            + str(results.get("stdout_visibility", "visible")) + ")",
            *["    " + line for line in tried.grader_output.splitlines()[-40:]]]
    return "\n".join(out)
