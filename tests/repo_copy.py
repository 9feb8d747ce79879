"""The repository's tracked files alone, copied into an empty folder: what a fresh clone holds."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


# bench/mutate.py's copies hold no .git: it writes the tracked files of the tree it copied here
# (NUL-separated), so the tests that need a fresh clone run in its copies too.
MANIFEST = ".tracked-files"


def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True)
    if done.returncode == 0:
        return [name for name in done.stdout.split("\0") if name]
    if (REPO / MANIFEST).is_file():
        return [name for name in (REPO / MANIFEST).read_text(encoding="utf-8").split("\0") if name]
    pytest.skip(f"{REPO} is not a git work tree (git ls-files: {done.stderr.strip()}) and has no {MANIFEST}")


def copy_tracked(dest: Path) -> Path:
    """dest/ holding exactly the tracked files (as they are in the work tree now)."""
    for name in tracked_files():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    return dest


def copy_repository(dest: Path) -> Path:
    """dest/ holding the repository as a fresh clone would: its tracked files (from git, or from the
    manifest of bench/mutate.py's copies), or, where REPO has neither, every file but caches."""
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True)
    if done.returncode == 0 or (REPO / MANIFEST).is_file():
        return copy_tracked(dest)
    shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache", ".venv",
                                                                ".git"))
    return dest
