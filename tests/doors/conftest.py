"""Shared fixtures of the door tests: a course root with the toy assignment released, sample
submissions (correct, buggy, noisy with a non-literal answer, untouched stub) and the engine's
per-item scores for each, computed once per session."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS_RELEASE = Path(__file__).resolve().parents[1] / "release"
sys.path.insert(0, str(TESTS_RELEASE))

import toy  # noqa: E402

from autograder import release, samples  # noqa: E402
from autograder.grade import grade_submission  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

_RING = "return 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth"
_DEPTH = "depth = (n - 1).bit_length()"


def _reference_module() -> str:
    return (REPO / "reference" / "collectives.py").read_text().replace("from ._domain import", "from _domain import")


def sample_class() -> dict[str, tuple[str | None, dict]]:
    """student -> (module source or None for the stub, answers)."""
    correct = _reference_module()
    assert _RING in correct and _DEPTH in correct
    buggy = correct.replace(_RING, "return 2 * n * alpha_s + (n - 1) / n * message_bytes / bandwidth")
    buggy = buggy.replace(_DEPTH, "depth = max(1, n.bit_length() - 1)")
    future = "from __future__ import annotations\n"
    noisy = correct.replace(future, future + 'import sys, warnings\nwarnings.warn("noisy module")\n'
                                             'print("noise", file=sys.stderr)\n', 1)
    return {
        "ada": (correct, {"act1_prediction": "@key"}),
        "bob": (buggy, {"act1_prediction": "@wrong"}),
        "cy": (noisy, {"act1_prediction": {"source": 'act1_prediction = "ABCD"[3]'}}),
        "dee": (None, {}),
    }


def env() -> dict:
    e = dict(os.environ)
    e["PATH"] = f"{BIN}{os.pathsep}{e.get('PATH', '')}"
    e["PYTHONPATH"] = os.pathsep.join([str(TESTS_RELEASE), e.get("PYTHONPATH", "")])
    return e


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env())
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done


COURSE_CONFIG = '''\
import sys
sys.path.insert(0, {tests_release!r})
exec(compile(open({config!r}).read(), {config!r}, "exec"))
c.Autograde.exclude_overwriting = {{**c.Autograde.exclude_overwriting, {toy_id!r}: ["collectives.py"]}}
c.EngineScores.declaration = "toy:make"
'''


@pytest.fixture(scope="session")
def assignment():
    return toy.make()


@pytest.fixture(scope="session")
def course(tmp_path_factory, assignment):
    """A course root: nbgrader_config.py (the repository's + the toy), source/, release/, gradebook."""
    root = tmp_path_factory.mktemp("doors")
    release.build_source(assignment, root, toy.PROPERTIES_PATH)
    (root / "nbgrader_config.py").write_text(COURSE_CONFIG.format(
        tests_release=str(TESTS_RELEASE), config=str(REPO / "nbgrader_config.py"), toy_id=assignment.id))
    run([str(BIN / "nbgrader"), "generate_assignment", assignment.id, "--force"], root)
    sample_root = root / "samples"
    for student, (module, answers) in sample_class().items():
        folder = sample_root / student
        folder.mkdir(parents=True)
        if module is not None:
            (folder / "collectives.py").write_text(module)
        (folder / "answers.json").write_text(json.dumps(answers))
    return root


@pytest.fixture(scope="session")
def submissions(course, assignment) -> dict[str, Path]:
    """student -> submitted/<student>/<id>/ (the release with the student's module and answers)."""
    return {student: samples.materialise(assignment.id, student, course / "submitted" / student / assignment.id,
                                         assignment=assignment, release_dir=course / "release" / assignment.id,
                                         samples_dir=course / "samples")
            for student in sample_class()}


@pytest.fixture(scope="session")
def engine_scores(submissions, assignment) -> dict[str, dict[str, tuple[float, float]]]:
    """student -> the native engine's item scores (nbgrader student id = engine student id)."""
    return {student: grade_submission(assignment, folder, student).item_scores()
            for student, folder in submissions.items()}
