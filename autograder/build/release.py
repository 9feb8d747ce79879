"""`scalelabs release`: regenerate source/<id>/ from reference/ + the declaration, then let nbgrader
build release/<id>/ from it.

Steps per declared assignment, each a function of its own: the stub module (stubgen), the
provided modules (copied verbatim from reference/), the student toolkit (autograder/build/student/,
the same for every lab), the public checks (publictests), the source notebook (notebook), then `nbgrader generate_assignment <id> --force` with the course's
nbgrader_config.py, which registers each assignment (notebooks, grade cells) in the gradebook of the
folder released into (nbgrader's default `<root>/gradebook.db`), so `nbgrader autograde <id>` works
right after, and registers the course's roster (students' names, autograder/classroom/names.py) in
the same gradebook. The course is the current directory's (autograder/course.py); the reference modules
come from the installed package. Nothing carries a timestamp, so the output is byte-for-byte
reproducible and a test compares a fresh build in a temporary root with the committed source/ and
release/.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterable

import reference

from autograder.lean import lean_env, skip_unused

from autograder.build import notebook, publictests, student, student_readme, stubgen
from autograder.classroom.names import read_roster, register_names
from autograder.course import MARKER, course_root, course_settings, find_course
from autograder.engine.spec import Assignment

REFERENCE_DIR = Path(reference.__file__).resolve().parent
STUDENT_DIR = Path(student.__file__).resolve().parent
# Shipped to every lab as they are: no secret, no import of reference/ or autograder/ (the leak scan checks).
STUDENT_FILES = ("_instruments.py", "_measured.py", "_checks.py", "_reveal.py", "_variant.py")


def nbgrader_executable() -> str:
    candidate = Path(sys.executable).parent / "nbgrader"
    return str(candidate) if candidate.exists() else "nbgrader"


def tool_env() -> dict:
    """The environment for nbgrader/otter subprocesses: this interpreter's bin first on PATH
    (nbgrader shells out to `alembic`)."""
    env = lean_env(os.environ)     # without the imports they never use (autograder/lean.py)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def write_stub(assignment: Assignment, source_dir: Path) -> Path:
    return stubgen.write_stub(Path(assignment.reference.__file__), source_dir / f"{assignment.module}.py",
                              flat_modules=tuple(assignment.provided))


def write_notebook_modules(assignment: Assignment, source_dir: Path) -> list[Path]:
    """The reference modules the notebook imports (`Assignment.notebook_modules`), with the stub's flat
    imports: they hold no solution region and no secret, and grading never needs them."""
    written = []
    for name in assignment.notebook_modules:
        body = stubgen.strip_solutions((REFERENCE_DIR / f"{name}.py").read_text(encoding="utf-8"),
                                       tuple(assignment.provided))
        dest = source_dir / f"{name}.py"
        dest.write_text(f"# Shipped by `scalelabs release` from the course's reference/{name}.py, for the notebook: "
                        "read it, nothing to implement here.\n" + body, encoding="utf-8")
        written.append(dest)
    return written


def copy_provided(assignment: Assignment, source_dir: Path) -> list[Path]:
    copied = []
    for name in assignment.provided:
        dest = source_dir / f"{name}.py"
        shutil.copyfile(REFERENCE_DIR / f"{name}.py", dest)
        copied.append(dest)
    return copied


def copy_student_files(source_dir: Path) -> list[Path]:
    """The toolkit every notebook may use (instruments), copied verbatim."""
    copied = []
    for name in STUDENT_FILES:
        shutil.copyfile(STUDENT_DIR / name, source_dir / name)
        copied.append(source_dir / name)
    return copied


def course_config(root: Path):
    """The `[grading]` settings of the course at `root` (its scalelabs.toml; the defaults without one):
    what the notebook depends on (whether its reveals may carry keys)."""
    from autograder.engine.config import load_config
    return load_config(Path(root) / "scalelabs.toml")


def course_exchange(root: Path) -> str | None:
    """The nbgrader exchange the course names in scalelabs.toml's `[course] exchange`, or None (nbgrader's
    default, which the notebook already knows): where a student's kernel finds nbgrader's id."""
    from autograder.engine.config import course_table
    table, _ = course_table(Path(root) / "scalelabs.toml", "course")
    return str(Path(root) / table["exchange"]) if isinstance(table.get("exchange"), str) else None


def build_source(assignment: Assignment, root: Path, properties: Path | None = None, config=None) -> Path:
    """source/<id>/ from scratch: stub, provided modules, student toolkit, public checks, notebook,
    the student's README.md; `config` (default: the course's at `root`) decides what the notebook's reveals carry."""
    config = config or course_config(root)
    source_dir = Path(root) / "source" / assignment.id
    if source_dir.exists():
        shutil.rmtree(source_dir)
    source_dir.mkdir(parents=True)
    write_stub(assignment, source_dir)
    copy_provided(assignment, source_dir)
    write_notebook_modules(assignment, source_dir)
    copy_student_files(source_dir)
    publictests.write_public_tests(assignment, source_dir, properties)
    notebook.write_notebook(assignment, source_dir / f"{assignment.id}.ipynb", predictions=config.predictions,
                            variants=config.variants, exchange=course_exchange(root))
    student_readme.write_readme(assignment, source_dir)   # what to do, check, hand in (README.md)
    return source_dir


def generate_assignments(assignment_ids: list[str], root: Path) -> list[Path]:
    """`nbgrader generate_assignment <id> --force` for each id into <root>/release/, registering each
    in <root>'s gradebook, in one subprocess (importing nbgrader is slow). The nbgrader configuration
    is root's own nbgrader_config.py, else the current course's (a scratch root, as in the tests)."""
    root = Path(root).resolve()
    config_dir = find_course(root) or course_root()
    roster = course_settings(config_dir).roster
    if roster is not None:
        read_roster(roster)   # a bad roster stops the release in one line, before nbgrader runs
    # -P: the installed autograder, not a same-named folder in the course (the subprocess runs there).
    command = [sys.executable, "-P", "-m", "autograder.build.release", "--nbgrader", str(root), str(config_dir),
               *assignment_ids]
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, env=tool_env())
    if done.returncode != 0:
        raise RuntimeError(f"nbgrader generate_assignment failed:\n{done.stdout}\n{done.stderr}")
    return [root / "release" / i for i in assignment_ids]


def _nbgrader_generate(root: str, config_dir: str, assignment_ids: list[str]) -> int:
    """Run inside the subprocess: nbgrader's own API with the course's nbgrader_config.py; the
    gradebook is nbgrader's default for `root` (root/gradebook.db) unless that config names one."""
    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader(MARKER, path=config_dir).load_config()
    config.CourseDirectory.root = root
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    for assignment_id in assignment_ids:
        result = api.generate_assignment(assignment_id, force=True, create=True)
        if not result["success"]:
            print(result.get("log", ""), result.get("error", ""), file=sys.stderr)
            return 1
    roster = course_settings(Path(config_dir)).roster
    if roster is not None:
        with api.gradebook as gradebook:
            register_names(gradebook, read_roster(roster))
    return 0


def release_one(assignment: Assignment, root: Path | None = None, properties: Path | None = None) -> Path:
    root = Path(root) if root is not None else course_root()
    build_source(assignment, root, properties)
    return generate_assignments([assignment.id], root)[0]


def release(ids: Iterable[str] | None = None, root: Path | None = None) -> list[Path]:
    """Regenerate source/ and release/ for the given (default: every declared) assignment, in
    `root` (default: the course of the current directory), and register them in its gradebook. The
    course secret that keys the hidden inputs is made here the first time (autograder.engine.secret),
    outside release/ and source/."""
    from labs import all_assignments, load
    from autograder.engine.secret import create_secret
    root = Path(root) if root is not None else course_root()
    create_secret(root)
    assignments = [load(i) for i in ids] if ids else list(all_assignments().values())
    for a in assignments:
        build_source(a, root)
    return generate_assignments([a.id for a in assignments], root)


if __name__ == "__main__" and sys.argv[1:2] == ["--nbgrader"]:
    skip_unused()
    sys.exit(_nbgrader_generate(sys.argv[2], sys.argv[3], sys.argv[4:]))
