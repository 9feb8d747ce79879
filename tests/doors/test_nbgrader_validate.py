"""nbgrader's Validate, as a student runs it on their machine (`nbgrader validate` in the released
folder, no course config): it executes the notebook, and a function's grade cell runs that function's
public checks (the released test module's `check`), so a notebook whose public checks fail is reported
failed, cell by cell, with each failed check's line. Before: every grade cell only printed, and a
19/29 notebook got "Success! Your notebook passes all the tests."."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from autograder.classroom import samples
from autograder.engine.grade import grade_submission
from labs import load

from door_helpers import BIN, REPO

LAB = "lab06_collectives"
SUCCESS = "Success! Your notebook passes all the tests."


def _validate(folder: Path) -> str:
    done = subprocess.run([str(BIN / "nbgrader"), "validate", f"{LAB}.ipynb"], cwd=folder, capture_output=True,
                          text=True, timeout=600)
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    """The committed release of lab06: the reference module with the keys, and the partly wrong sample."""
    lab, work = load(LAB), tmp_path_factory.mktemp("validate")
    correct = samples.reference_submission(lab, work / "correct" / LAB, REPO / "release" / LAB)
    partly = samples.materialise(LAB, "partly_wrong", work / "partly_wrong" / LAB, release_dir=REPO / "release" / LAB)
    return lab, {"correct": (correct, _validate(correct)), "partly_wrong": (partly, _validate(partly))}


def test_a_correct_notebook_passes_validate(validated):
    _, seen = validated
    assert SUCCESS in seen["correct"][1], seen["correct"][1][-3000:]


def test_a_notebook_whose_public_checks_fail_fails_validate_naming_each_function(validated):
    lab, seen = validated
    folder, said = seen["partly_wrong"]
    assert SUCCESS not in said and "VALIDATION FAILED" in said, said[-3000:]
    failed = set(re.findall(r'check\("(\w+)"\)\n\nThe error was', said))
    scores = grade_submission(lab, folder, "partly_wrong").item_scores()
    short = {item for item, (score, most) in scores.items() if score < most}
    assert failed and failed <= short, (failed, short)
    assert sum(s for s, _ in scores.values()) < lab.total_points
    # each failed check's own line: the worked example's label, what was expected and what came back
    assert "naive_allreduce_time" in failed and "expected" in said and "got" in said, said[-3000:]
