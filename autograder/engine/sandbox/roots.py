"""The jails' folders: each holds a copy of a submission and is named by its grader's pid, so that a
later grader can remove what a grader killed with -9 left behind."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from functools import lru_cache
from pathlib import Path

ROOT_PREFIX = "scalelabs-sandbox-"
_ROOT_NAME = re.compile(re.escape(ROOT_PREFIX) + r"(\d+)-")
STALE_AFTER_S = 3600    # a folder untouched this long whose grader is gone is stale (not merely slow)


def sweep_stale_roots(parent: Path | None = None, stale_after_s: float = STALE_AFTER_S) -> list[Path]:
    """Remove the jail folders that graders killed without cleaning up (kill -9, a lost machine) left
    behind: each holds a copy of a student's submission. A folder is stale when the pid in its name
    runs no longer and it was not modified for stale_after_s (a pid seen from another pid namespace
    may look dead; an hour-old jail is not in use). Returns what was removed."""
    removed = []
    parent = Path(parent or tempfile.gettempdir())
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        match = _ROOT_NAME.match(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            os.kill(int(match.group(1)), 0)
            continue                    # the grader still runs
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            continue
        try:
            if time.time() - entry.stat(follow_symlinks=False).st_mtime < stale_after_s:
                continue
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed


@lru_cache(maxsize=None)
def sweep_once() -> None:
    sweep_stale_roots()
