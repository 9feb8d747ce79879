"""`scalelabs otter` says what its zip carries about time and what Gradescope must be set to, and
`scalelabs otter-try ZIP UPLOAD` runs the zip as Gradescope would at a given time, printing what the
student sees at the upload, what appears after Gradescope's due date and what only the staff see
(issue 41: trying the zip on a late upload took copying the /autograder layout from a test).

One zip of the toy lab (due in ten days, 10 % a started day, extensions), two runs of the CLI, both
before students upload (times to come: the try grades at the upload's moment): an upload a day before
the due date and one 26 hours after it with Gradescope's due date entered two hours later than the zip's."""
from __future__ import annotations

import shutil
import subprocess
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from autograder.doors import gradescope_settings
from autograder.doors import otter as otter_door
from door_helpers import BIN, REPO, env

ZONE = ZoneInfo("America/Los_Angeles")
DUE = (datetime.now(ZONE) + timedelta(days=10)).replace(hour=23, minute=59, second=0, microsecond=0)
STUDENT = "bob"     # partly right: some items lose points, some "(in full)" tests exist


@pytest.fixture(scope="module")
def zip_path(tmp_path_factory, course, assignment):
    """The toy lab's zip built from a course whose scalelabs.toml has its due date, policy, extensions."""
    root = tmp_path_factory.mktemp("try-course")
    (root / "nbgrader_config.py").write_text("")
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(REPO / name, root / name)
    (root / "extensions.csv").write_text(f"student,lab,due\nzed,{assignment.id},{(DUE + timedelta(days=2)).isoformat()}\n")
    (root / "scalelabs.toml").write_text(f"""
[deadlines]
timezone = "America/Los_Angeles"
policy = "per_day"
penalty_percent = 10
max_penalty_percent = 30
extensions = "extensions.csv"

[deadlines.{assignment.id}]
due = {DUE.replace(tzinfo=None).isoformat()}
""")
    return otter_door.build_zip(assignment.id, root / "dist" / "toy-autograder.zip", assignment=assignment,
                                release_dir=course / "release" / assignment.id,
                                declaration="release_toy:ASSIGNMENT", course=root)


def otter_try(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "scalelabs"), "otter-try", *map(str, args)], capture_output=True, text=True,
                          env=env(without_rfc3987=True), timeout=900)


@pytest.fixture(scope="module")
def runs(zip_path, submissions):
    """{"on time": ..., "late": ...}: the CLI's completed processes."""
    folder = submissions[STUDENT]
    upload = [folder / "collectives.py", *folder.glob("*.ipynb")]
    return {"on time": otter_try(zip_path, *upload, "--submitted-at", (DUE - timedelta(days=1)).isoformat(),
                                 "--student", STUDENT),
            "late": otter_try(zip_path, folder, "--submitted-at", (DUE + timedelta(hours=26)).isoformat(),
                              "--due", (DUE + timedelta(hours=2)).isoformat(), "--student", STUDENT)}


def section(text: str, title: str) -> str:
    start = text.index(f"=== {title}")
    end = text.find("\n=== ", start + 1)
    return text[start:end if end >= 0 else None]


def test_the_zip_says_what_it_carries_and_what_gradescope_must_match(zip_path, assignment):
    text = gradescope_settings.settings_text(gradescope_settings.carried(zip_path))
    due = DUE.strftime("%Y-%m-%d %H:%M")
    assert f"due date: {due} America/Los_Angeles" in text
    assert "10 % per started day late, at most 30 %" in text
    assert f"extensions (1): zed to {(DUE + timedelta(days=2)).strftime('%Y-%m-%d %H:%M')}" in text
    gradescope = text[text.index("Gradescope's settings must match"):]
    assert f"Due date: {due} America/Los_Angeles" in gradescope
    assert "reaches its cap of 30 % at 3 days late" in gradescope and "(zed)" in gradescope


def test_an_upload_before_the_due_date_shows_scores_now_and_the_full_feedback_after(runs, assignment):
    done = runs["on time"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    now, later = section(done.stdout, "What the student sees at the upload"), section(done.stdout, "Added for the student")
    for item in assignment.item_ids:
        assert f"--- {item}  " in now, item
    assert "(in full)" not in now and "Late submission penalty" in now and "on time" in now
    assert "--- " in later and all(line.endswith(")") or "(in full)" in line
                                   for line in later.splitlines() if line.startswith("--- ")), later
    staff = section(done.stdout, "What only the staff see")
    assert "Autograder Output (stdout_visibility: hidden)" in staff and "GRADING SUMMARY" in staff
    assert "WARNING" not in done.stdout


def test_a_late_upload_takes_gradescopes_due_date_and_a_due_date_that_differs_is_said(runs):
    done = runs["late"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "WARNING: Gradescope's due date" in done.stdout and "is not the zip's" in done.stdout
    now = section(done.stdout, "What the student sees at the upload")
    # Gradescope's due date is 2 h after the zip's: 24 h late from it (one started day), not 26 h (two)
    assert "1 d late" in now and "10 % of" in now and "Gradescope's applies" in now
    assert "the penalty counts from Gradescope's" in done.stdout
    assert "(in full)" in now    # past Gradescope's due date: everything at once
    assert "nothing" in section(done.stdout, "Added for the student").splitlines()[0]


def test_bad_arguments_are_one_line_and_run_nothing(zip_path, tmp_path, submissions):
    not_a_zip = tmp_path / "upload.zip"
    shutil.make_archive(str(tmp_path / "upload"), "zip", submissions[STUDENT])
    for args, words in (((not_a_zip, submissions[STUDENT]), "holds no otter_config.json"),
                        ((zip_path, submissions[STUDENT], "--submitted-at", "friday night"), "--submitted-at"),
                        ((tmp_path / "missing.zip", submissions[STUDENT]), "does not exist")):
        done = otter_try(*args)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.startswith("error: ") and words in " ".join(done.stderr.split()), done.stderr
