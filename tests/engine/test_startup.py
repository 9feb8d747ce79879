"""`scalelabs grade` imports only what grading uses: a TA who grades one submission (and every grading
process of a batch or a door) should not pay for the notebook, gradebook or validation stacks.
Each package below costs 0.1-2 s to import here; typer 0.29, for one, imports pydantic for every
command (pyproject.toml keeps typer below it)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from autograder.classroom import samples

REPO = Path(__file__).resolve().parents[2]
LAB = "lab06_collectives"
NOT_FOR_GRADING = {"pydantic", "nbgrader", "nbformat", "nbconvert", "jupytext", "jsonschema", "sqlalchemy",
                   "alembic", "otter", "matplotlib", "pytest"}


def test_grading_one_submission_imports_no_notebook_gradebook_or_validation_stack(tmp_path):
    submission = tmp_path / "submission"
    samples.materialise(LAB, "correct", submission, release_dir=REPO / "release" / LAB)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "autograder.cli", "grade", LAB, str(submission),
                           "--json", "--student", "s1", "--course", str(REPO)], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout)
    assert results["tests"] and all(t["score"] == t["max_score"] for t in results["tests"])
    imported = {line.split("|")[-1].strip().split(".")[0]
                for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert {"hypothesis", "autograder", "labs"} <= imported        # the listing is real
    assert not imported & NOT_FOR_GRADING, sorted(imported & NOT_FOR_GRADING)


# --- the sandbox's start check, started early (check_jail_soon) ---------------------------------------

import os      # noqa: E402
import time    # noqa: E402

import pytest  # noqa: E402

from autograder.engine.config import GradingConfig  # noqa: E402
from autograder.engine.sandbox import SandboxUnavailable, client, usermode  # noqa: E402


@pytest.fixture
def probes(monkeypatch):
    """The start check's probe replaced by a record of its runs (in the user mode, as on Gradescope)."""
    runs: list[str] = []
    monkeypatch.setattr(client, "_checked", set())
    monkeypatch.setattr(client, "choose_mode", lambda *a, **k: "user")
    return runs


def test_the_early_start_check_is_the_sandboxs_own_which_waits_for_it(probes, monkeypatch):
    def probe(config, secrets, mode, key):
        probes.append("started")
        time.sleep(0.3)
        client._checked.add(key)
        probes.append("passed")
    monkeypatch.setattr(client, "_probe_jail", probe)
    thread = client.check_jail_soon(GradingConfig(), [])
    client.check_jail(GradingConfig(), [], "user")      # what a sandbox does before its worker starts
    assert probes == ["started", "passed"]              # it waited for the one probe and ran none of its own
    thread.join()
    assert probes == ["started", "passed"]


def test_a_refusal_found_early_is_raised_when_the_sandbox_checks(probes, monkeypatch):
    def probe(config, secrets, mode, key):
        probes.append(mode)
        raise SandboxUnavailable("the unprivileged-user sandbox cannot run the grader's worker here")
    monkeypatch.setattr(client, "_probe_jail", probe)
    client.check_jail_soon(GradingConfig(), []).join()      # the thread swallows it...
    with pytest.raises(SandboxUnavailable, match="cannot run the grader's worker"):
        client.check_jail(GradingConfig(), [], "user")    # ...and grading refuses all the same
    assert probes == ["user", "user"]


# --- the user mode's private numpy -------------------------------------------------------------------

@pytest.mark.skipif(os.geteuid() != 0, reason="the user mode runs as root (hard links of root's files)")
def test_the_private_numpy_links_only_what_a_copy_would_equal(tmp_path):
    shared, writable, closed = (tmp_path / n for n in ("shared.so", "writable.py", "closed.py"))
    for path, mode in ((shared, 0o644), (writable, 0o666), (closed, 0o600)):
        path.write_text(path.name)
        path.chmod(mode)
    site = tmp_path / "site"
    site.mkdir()
    for path in (shared, writable, closed):
        usermode._numpy_file(str(path), str(site / path.name))
    assert os.stat(site / "shared.so").st_ino == shared.stat().st_ino             # root's, readable by all
    for path in (writable, closed):                 # others could change it through a link / the jail uid could not read it
        copy = site / path.name
        assert copy.stat().st_ino != path.stat().st_ino and copy.read_text() == path.name
        assert copy.stat().st_mode & 0o777 == 0o644
    assert writable.stat().st_mode & 0o777 == 0o666 and closed.stat().st_mode & 0o777 == 0o600   # the host's untouched
