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
