"""Grading a failing submission writes nothing where the grader runs: hypothesis' shrinker, left to
itself, harvests constants from every imported module's source and caches them under
<cwd>/.hypothesis/ (and would let that harvest, which differs by door and install, steer the shrink)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from autograder.classroom import samples

REPO = Path(__file__).resolve().parents[2]


def test_grading_a_failing_submission_leaves_the_working_directory_empty(tmp_path):
    submission = tmp_path / "submission"
    samples.materialise("lab06_collectives", "partly_wrong", submission, release_dir=REPO / "release" / "lab06_collectives")
    where = tmp_path / "ta-folder"
    where.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}   # as a TA runs it
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", "lab06_collectives", str(submission),
                           "--json", "--student", "s1", "--course", str(REPO)], cwd=where, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    outputs = [t["output"] for t in json.loads(done.stdout)["tests"]]
    assert any("Counterexample:" in o for o in outputs)   # a property failed and was shrunk
    assert sorted(p.name for p in where.rglob("*")) == []
