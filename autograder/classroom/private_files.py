"""The course's private files stay out of git from the first release.

A course is a clone of this repository, and staff commit release/ (docs/staff.md); beside it lie files
that name students: the roster (`[course] roster`, default roster.csv: names and emails), the
extensions (`[deadlines] extensions`) and the grades.csv `nbgrader export` writes. The repository's
.gitignore names the default places; `scalelabs release` adds any other place the course's
scalelabs.toml names to the course's .gitignore (and says so), so `git add -A` never takes one.
"""
from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

from autograder.course import DEFAULT_ROSTER, SETTINGS

EXPORT = "grades.csv"          # what `nbgrader export` writes in the course
DEFAULT_EXTENSIONS = "extensions.csv"


def private_files(root: Path) -> dict[Path, str]:
    """path -> what it holds, of every private file the course names (existing or not)."""
    root = Path(root).resolve()
    try:
        document = tomllib.loads((root / SETTINGS).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        document = {}     # a bad scalelabs.toml is reported by the commands that read it
    course, deadlines = document.get("course", {}), document.get("deadlines", {})
    roster = course.get("roster") if isinstance(course, dict) else None
    extensions = deadlines.get("extensions") if isinstance(deadlines, dict) else None
    return {root / (roster if isinstance(roster, str) and roster else DEFAULT_ROSTER): "students' names and emails",
            root / (extensions if isinstance(extensions, str) and extensions else DEFAULT_EXTENSIONS):
                "students' extensions",
            root / EXPORT: "every student's grades (nbgrader export)"}


def _git(root: Path, *args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None


def ignore_private_files(root: Path) -> list[str]:
    """Add to the course's .gitignore each private file git would not ignore; one line per file added.
    Nothing where the course is not in a git work tree (or git is missing)."""
    root = Path(root).resolve()
    inside = _git(root, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.returncode != 0 or inside.stdout.strip() != "true":
        return []
    said = []
    for path, holds in private_files(root).items():
        if not path.resolve().is_relative_to(root):
            continue     # outside the course: not this repository's to ignore
        entry = "/" + path.resolve().relative_to(root).as_posix()
        tracked = _git(root, "ls-files", "--error-unmatch", str(path))
        if tracked is not None and tracked.returncode == 0:
            said.append(f"{entry} is tracked by git, and it holds {holds}: git rm --cached {entry[1:]} (and remove it from "
                        "the history if the repository is shared)")
        checked = _git(root, "check-ignore", "-q", "--no-index", str(path))
        if checked is None or checked.returncode == 0:
            continue     # ignored already (or git could not say)
        gitignore = root / ".gitignore"
        text = gitignore.read_text(encoding="utf-8") if gitignore.is_file() else ""
        if text and not text.endswith("\n"):
            text += "\n"
        gitignore.write_text(text + f"{entry}\n", encoding="utf-8")
        said.append(f"added {entry} to .gitignore: it holds {holds}, never commit it")
    return said
