"""`scalelabs new-lab` in a copy of the repository, as a lab author starts: the skeleton passes lint as
generated, releases, its sample class grades as samples.toml declares, and the files that changed are
the lab's own places only (its reference module, lab folder and test folder, its generated source/ and
release/ folders, and the generated docs)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from repo_copy import copy_repository

LAB, MODULE = "lab98_toy", "toyphysics"
OWN_PLACES = (f"reference/{MODULE}.py", f"labs/{LAB}/", f"tests/labs/{LAB}/", f"source/{LAB}/", f"release/{LAB}/")
GENERATED_DOCS = ("README.md", "docs/physics.md", "docs/errata/README.md", "docs/instruments.md",
                  "docs/measurements.md")
GRADE = f"""
import json, tempfile
from autograder.classroom.samples import grade_class
from labs import load
print(json.dumps(grade_class(load({LAB!r}), tempfile.mkdtemp())))
"""


def _git(copy, *args) -> str:
    done = subprocess.run(["git", "-c", "user.name=scaffold", "-c", "user.email=scaffold@test", *args], cwd=copy,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def scaffolded(tmp_path_factory):
    """(copy, {step: completed process}) after new-lab, lint, release and the sample class graded."""
    copy = copy_repository(tmp_path_factory.mktemp("scaffold") / "repo")
    _git(copy, "init", "-q")
    _git(copy, "add", "-A")
    _git(copy, "commit", "-qm", "before the new lab")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    steps = {}
    for step, command in (("new-lab", ["-m", "autograder.cli", "new-lab", LAB, "--module", MODULE]),
                          ("lint", ["-m", "autograder.cli", "lint", LAB]),
                          ("release", ["-m", "autograder.cli", "release", LAB]),
                          ("grade", ["-c", GRADE])):
        steps[step] = subprocess.run([sys.executable, *command], cwd=copy, env=env, capture_output=True, text=True,
                                     timeout=900)
        assert steps[step].returncode == 0, (step, steps[step].stdout[-3000:], steps[step].stderr[-3000:])
    return copy, steps


def test_the_skeleton_passes_lint_as_generated(scaffolded):
    _, steps = scaffolded
    assert steps["lint"].stdout.strip().splitlines()[-1].startswith(f"{LAB}: 0 problem(s)"), steps["lint"].stdout


def test_it_releases_and_its_sample_class_grades_as_declared(scaffolded):
    copy, steps = scaffolded
    assert (copy / "release" / LAB / f"{LAB}.ipynb").is_file() and (copy / "release" / LAB / f"{MODULE}.py").is_file()
    scores = json.loads(steps["grade"].stdout.strip().splitlines()[-1])
    total = {student: (sum(s for s, _ in items.values()), sum(t for _, t in items.values()))
             for student, items in scores.items()}
    assert sorted(scores) == ["broken", "correct", "partly_wrong", "untouched", "wrong_predictions"]
    assert total["correct"][0] == total["correct"][1] > 0
    assert total["untouched"][0] == 0
    assert 0 < total["partly_wrong"][0] < total["correct"][0] and total["broken"][0] < total["partly_wrong"][0]
    assert scores["partly_wrong"]["transfer_time_s"][0] < scores["partly_wrong"]["transfer_time_s"][1]


def test_only_the_labs_own_places_and_the_generated_docs_changed(scaffolded):
    copy, _ = scaffolded
    changed = [line[3:] for line in _git(copy, "status", "--porcelain", "-uall").splitlines()]
    outside = [path for path in changed if not path.startswith(OWN_PLACES) and path not in GENERATED_DOCS]
    assert changed and not outside, outside
    for place in OWN_PLACES + GENERATED_DOCS:   # and each of them did change
        assert any(path.startswith(place) for path in changed), place
    print("\n".join(sorted(changed)))


def test_new_lab_writes_into_the_course_it_runs_in_not_where_scalelabs_is_installed(tmp_path):
    """Issue 41: with scalelabs installed elsewhere (site-packages for `pip install .`; here a second
    copy first on the path, and -P: the `scalelabs` entry point puts no cwd on it), new-lab wrote the lab there. It writes into the course it runs in, and
    says that this scalelabs will not see it until the course is installed editable."""
    installed, course = copy_repository(tmp_path / "installed"), copy_repository(tmp_path / "course")
    done = subprocess.run([sys.executable, "-P", "-m", "autograder.cli", "new-lab", LAB, "--module", MODULE], cwd=course,
                          env={**os.environ, "PYTHONPATH": str(installed)}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (course / "labs" / LAB / "__init__.py").is_file() and (course / "reference" / f"{MODULE}.py").is_file()
    assert not (installed / "labs" / LAB).exists() and not (installed / "reference" / f"{MODULE}.py").exists()
    assert f"pip install -e {course}" in " ".join(done.stderr.split()), done.stderr
    assert f"wrote labs/{LAB}/__init__.py" in done.stdout
