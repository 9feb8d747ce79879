"""`pip install .` (not editable) works for course staff: the package installed into a fresh venv
runs from a course that is only a copy of the repository's tracked files. The wheel is built once per
run (module fixture); to stay cheap, the fresh venv takes its third-party dependencies from this
interpreter's site-packages (a .pth line) instead of downloading them again, while autograder/ and
reference/ come from the wheel alone."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from repo_copy import REPO, copy_tracked

LAB = "lab06_collectives"


def run(command: list, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv bin folder, environment, course): scalelabs installed from a wheel, a fresh course copy."""
    work = tmp_path_factory.mktemp("install")
    source = copy_tracked(work / "source")  # build from tracked files only, not the work tree's leftovers
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    env.pop("PYTHONPATH", None)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", work / "wheel", source], work, env)
    venv = work / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv], work, env)
    wheel = next((work / "wheel").glob("scalelabs-*.whl"))
    run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "-q", "--no-deps", wheel],
        work, env)
    site = Path(run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                    work, env).stdout.strip())
    (site / "zz_dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    env["PATH"] = os.pathsep.join([str(venv / "bin"), str(Path(sys.executable).parent), env.get("PATH", "")])
    return venv / "bin", env, copy_tracked(work / "course"), site


def test_the_installed_package_is_the_wheel_not_a_clone(installed):
    bin_dir, env, course, site = installed
    where = run([bin_dir / "python", "-c", "import autograder, labs, reference; print(autograder.__file__); "
                 "print(labs.__file__); print(reference.__file__)"], course.parent, env).stdout.split()
    assert all(Path(w).is_relative_to(site) for w in where), where
    assert (site / "autograder" / "classroom" / "templates" / "feedback.html.j2").is_file()


def test_staff_release_and_grade_from_a_course_with_a_non_editable_install(installed):
    bin_dir, env, course, _ = installed
    run([bin_dir / "scalelabs", "release", LAB], course, env)
    assert (course / "release" / LAB / f"{LAB}.ipynb").is_file() and (course / "gradebook.db").is_file()
    (course / "submitted").mkdir()
    run([bin_dir / "python", "-c", "import sys; from autograder.classroom.samples import materialise; "
         f"materialise({LAB!r}, 'correct', sys.argv[1])", course / "submitted" / "correct" / LAB],
        course / "submitted", env)
    done = run([bin_dir / "scalelabs", "grade-batch", LAB, ".", "--jobs", "1"], course / "submitted", env)
    results = json.loads((course / "grades" / LAB / "results" / "correct.json").read_text())
    assert results["score"] > 0, done.stdout
    assert (course / "grades" / LAB / "feedback" / "correct.html").is_file()
