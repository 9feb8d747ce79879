"""The repository stands alone: a copy of its tracked files, with nothing beside it, collects the same
tests, and no tracked file names a path outside the repository. `.ci/run` runs the whole suite from
such a copy; these tests catch an escaping path sooner, in the normal run."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from labs import all_assignments
from repo_copy import REPO, copy_tracked, tracked_files

# Spelled in pieces so this file does not match itself.
OUTSIDE = re.compile(re.escape("../" + "shared") + "|" + re.escape("/" + "work" + "/"))


def collected(root: Path) -> tuple[int, str]:
    """(number of tests `pytest --collect-only` finds in root, its output), importing root's own
    autograder/ and reference/ (PYTHONPATH first), as a fresh clone with `pip install -e .` would."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0"],
                          cwd=root, capture_output=True, text=True, env=env, timeout=600)
    match = re.search(r"^(\d+) tests? collected", done.stdout, re.M)
    assert done.returncode == 0 and match, f"collection in {root} failed:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
    return int(match.group(1)), done.stdout


def test_no_tracked_file_names_a_path_outside_the_repository():
    offenders = []
    for name in tracked_files():
        try:
            text = (REPO / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):  # binary files; a file deleted but not yet staged
            continue
        offenders += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}: {m.group()}" for m in OUTSIDE.finditer(text)]
    assert not offenders, "paths outside the repository:\n" + "\n".join(offenders)


def test_a_copy_of_the_tracked_files_collects_every_test(tmp_path):
    copy = copy_tracked(tmp_path / "clone")
    count, output = collected(copy)
    here, _ = collected(REPO)
    assert count == here, f"{count} tests collected in a copy of the tracked files, {here} here"
    assert "error" not in output.lower().split("collected")[-1], output[-2000:]


def test_every_lab_names_its_public_source_lab():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    for lab_id, a in all_assignments().items():
        number = lab_id[3:5]
        lab, _, where = a.source_lab.partition(": ")
        assert lab.startswith(f"Vol II Lab {number}, ") and "https://github.com/" in where, (lab_id, a.source_lab)
        assert f"| `{lab_id}` |" in readme and f"| {lab} |" in readme, f"README's lab table lacks {lab_id} / {lab}"
