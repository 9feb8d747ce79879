"""The repository's tracked files alone, copied into an empty folder: what a fresh clone holds."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"{REPO} is not a git work tree (git ls-files: {done.stderr.strip()})")
    return [name for name in done.stdout.split("\0") if name]


def copy_tracked(dest: Path) -> Path:
    """dest/ holding exactly the tracked files (as they are in the work tree now)."""
    for name in tracked_files():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    return dest


def copy_repository(dest: Path) -> Path:
    """dest/ holding the repository as a fresh clone would: its tracked files, or, where REPO is no git
    work tree (bench/mutate.py's copy, which holds only tracked files already), every file but caches."""
    done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True)
    if done.returncode == 0:
        return copy_tracked(dest)
    shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis", ".pytest_cache", ".venv",
                                                                ".git"))
    return dest
