"""The repository's tracked files alone, copied into an empty folder: what a fresh clone holds."""
from __future__ import annotations

import os
import shutil
import subprocess
from fnmatch import fnmatch
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def is_work_tree() -> bool:
    """REPO is the top of a git work tree of its own (a clone, a worktree, bench/mutate.py's copies),
    not a folder without .git, nor one inside another repository's tree."""
    done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=REPO, capture_output=True, text=True)
    return done.returncode == 0 and Path(done.stdout.strip()).resolve() == REPO.resolve()


def _ignored(rel: Path, patterns: list[str]) -> bool:
    """rel matches a line of .gitignore: `/name` (or `/name/`) at the top only, `name` at any depth."""
    for pattern in patterns:
        if pattern.startswith("/"):
            if fnmatch(rel.parts[0], pattern.strip("/")):
                return True
        elif any(fnmatch(part, pattern.rstrip("/")) for part in rel.parts):
            return True
    return False


def tracked_files() -> list[str]:
    """The files a fresh clone holds: git's list in a work tree; in a copy that is none (an archive
    unpacked, a copy of the tracked files made by another tool) every file .gitignore does not name,
    so the tests that copy a clone (course week, install, standalone) run there too, never skip."""
    if is_work_tree():
        done = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True)
        return [name for name in done.stdout.split("\0") if name]
    patterns = [line.strip() for line in (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
                if line.strip() and not line.lstrip().startswith("#")] + [".git"]
    found = []
    for folder, dirs, files in os.walk(REPO):
        here = Path(folder).relative_to(REPO)
        dirs[:] = [d for d in dirs if not _ignored(here / d, patterns)]   # never into .venv, caches
        found += [str(here / f) for f in files if not _ignored(here / f, patterns)]
    return sorted(found)


def copy_tracked(dest: Path) -> Path:
    """dest/ holding exactly the tracked files (as they are in the work tree now)."""
    for name in tracked_files():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target)
    return dest


# the lint and scaffold tests' name for it
copy_repository = copy_tracked
