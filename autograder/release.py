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


def generate_assignments(assignment_ids: list[str], root: Path) -> list[Path]:
    """`nbgrader generate_assignment <id> --force` for each id into <root>/release/, with a
    throw-away gradebook, in one subprocess (importing nbgrader is slow)."""
    root = Path(root).resolve()
    with tempfile.TemporaryDirectory(prefix="scalelabs-gb-") as tmp:
        command = [sys.executable, "-m", "autograder.release", "--nbgrader", str(root),
                   f"sqlite:///{tmp}/gradebook.db", *assignment_ids]
        done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, env=tool_env())
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader generate_assignment failed:\n{done.stdout}\n{done.stderr}")
    return [root / "release" / i for i in assignment_ids]


def _nbgrader_generate(root: str, db_url: str, assignment_ids: list[str]) -> int:
    """Run inside the subprocess: nbgrader's own API with the repository's nbgrader_config.py."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO_ROOT)).load_config()
    config.CourseDirectory.root = root
    config.CourseDirectory.db_url = db_url
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    for assignment_id in assignment_ids:
        result = api.generate_assignment(assignment_id, force=True, create=True)
        if not result["success"]:
            print(result.get("log", ""), result.get("error", ""), file=sys.stderr)
            return 1
    return 0


def release_one(assignment: Assignment, root: Path = REPO_ROOT, properties: Path | None = None) -> Path:
    build_source(assignment, root, properties)
    return generate_assignments([assignment.id], root)[0]


def release(ids: Iterable[str] | None = None, root: Path = REPO_ROOT) -> list[Path]:
    """Regenerate source/ and release/ for the given (default: every declared) assignment."""
    from .labs import all_assignments, load
    assignments = [load(i) for i in ids] if ids else list(all_assignments().values())
    for a in assignments:
        build_source(a, Path(root))
    return generate_assignments([a.id for a in assignments], Path(root))


if __name__ == "__main__" and sys.argv[1:2] == ["--nbgrader"]:
    sys.exit(_nbgrader_generate(sys.argv[2], sys.argv[3], sys.argv[4:]))
