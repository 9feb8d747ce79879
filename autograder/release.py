"""`scalelabs release`: regenerate source/<id>/ from reference/ + the declaration, then let nbgrader
build release/<id>/ from it.

Steps per declared assignment, each a function of its own: the stub module (stubgen), the
provided modules (copied verbatim from reference/), the public checks (publictests), the source
notebook (notebook), then `nbgrader generate_assignment <id> --force` run from the repository
root (so the repository's nbgrader_config.py applies) with a throw-away gradebook. Nothing
carries a timestamp, so the output is byte-for-byte reproducible and a test compares a fresh
build in a temporary root with the committed source/ and release/.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable

from . import notebook, publictests, stubgen
from .spec import Assignment

REPO_ROOT = Path(__file__).resolve().parent.parent
REFERENCE_DIR = REPO_ROOT / "reference"


def nbgrader_executable() -> str:
    candidate = Path(sys.executable).parent / "nbgrader"
    return str(candidate) if candidate.exists() else "nbgrader"


def tool_env() -> dict:
    """The environment for nbgrader/otter subprocesses: this interpreter's bin first on PATH
    (nbgrader shells out to `alembic`)."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def write_stub(assignment: Assignment, source_dir: Path) -> Path:
    return stubgen.write_stub(Path(assignment.reference.__file__), source_dir / f"{assignment.module}.py",
                              flat_modules=tuple(assignment.provided))


def copy_provided(assignment: Assignment, source_dir: Path) -> list[Path]:
    copied = []
    for name in assignment.provided:
        dest = source_dir / f"{name}.py"
        shutil.copyfile(REFERENCE_DIR / f"{name}.py", dest)
        copied.append(dest)
    return copied


def build_source(assignment: Assignment, root: Path, properties: Path | None = None) -> Path:
    """source/<id>/ from scratch: stub, provided modules, public checks, notebook."""
    source_dir = Path(root) / "source" / assignment.id
    if source_dir.exists():
        shutil.rmtree(source_dir)
    source_dir.mkdir(parents=True)
    write_stub(assignment, source_dir)
    copy_provided(assignment, source_dir)
    publictests.write_public_tests(assignment, source_dir, properties)
    notebook.write_notebook(assignment, source_dir / f"{assignment.id}.ipynb")
    return source_dir


def generate_assignment(assignment_id: str, root: Path, log_dir: Path | None = None) -> Path:
    """`nbgrader generate_assignment <id> --force` into <root>/release/<id>/ (throw-away gradebook)."""
    with tempfile.TemporaryDirectory(prefix="scalelabs-gb-") as tmp:
        command = [nbgrader_executable(), "generate_assignment", assignment_id, "--force",
                   f"--CourseDirectory.root={Path(root).resolve()}",
                   f"--CourseDirectory.db_url=sqlite:///{tmp}/gradebook.db"]
        done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, env=tool_env())
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader generate_assignment {assignment_id} failed:\n{done.stdout}\n{done.stderr}")
    return Path(root) / "release" / assignment_id


def release_one(assignment: Assignment, root: Path = REPO_ROOT, properties: Path | None = None) -> Path:
    build_source(assignment, root, properties)
    return generate_assignment(assignment.id, root)


def release(ids: Iterable[str] | None = None, root: Path = REPO_ROOT) -> list[Path]:
    """Regenerate source/ and release/ for the given (default: every declared) assignment."""
    from .labs import all_assignments, load
    assignments = [load(i) for i in ids] if ids else list(all_assignments().values())
    return [release_one(a, Path(root)) for a in assignments]
