"""`scalelabs lint` remembers a lab that linted clean by the content of what its rules read: an author
who changed nothing waits a fraction of a second, one who changed anything lint reads gets a full lint,
and a problem is never remembered (it is found again on every run)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from autograder.author import lint_cache

REPO = Path(__file__).resolve().parents[2]


def lint(*args: str, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", "lint", *args], cwd=REPO, capture_output=True,
                          text=True, env={**os.environ, lint_cache.ENV: str(cache)}, timeout=600)


def test_an_unchanged_clean_lab_is_not_linted_again(tmp_path):
    first = lint("lab06_collectives", "--rule", "contract", cache=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "lab06_collectives: 0 problem(s)," in first.stdout and "unchanged" not in first.stdout
    again = lint("lab06_collectives", "--rule", "contract", cache=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "lab06_collectives: 0 problem(s), unchanged since it linted clean" in again.stdout
    # another selection of rules is another lint
    other = lint("lab06_collectives", "--rule", "items", cache=tmp_path)
    assert "unchanged" not in other.stdout and other.returncode == 0, other.stdout + other.stderr


def test_a_problem_is_found_again_on_every_run(tmp_path):
    for _ in range(2):
        done = lint("lab99_nothing", cache=tmp_path)
        assert done.returncode == 1 and "labs/lab99_nothing:1: import: no lab 'lab99_nothing'" in done.stdout, done.stdout


def _checkout(root: Path) -> dict[str, Path]:
    files = {"lab": "labs/lab01_x/notebook.py", "other lab": "labs/lab02_y/items.py", "engine": "autograder/engine/draw.py",
             "reference": "reference/scaling.py", "wrong module": "tests/labs/lab01_x/impls/wrong_a.py",
             "physics page": "docs/physics.md", "readme": "README.md", "pyproject": "pyproject.toml"}
    paths = {what: root / name for what, name in files.items()}
    for path in paths.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    return paths


def test_the_key_changes_with_every_file_lint_reads_and_nothing_else(tmp_path, monkeypatch):
    paths = _checkout(tmp_path)
    monkeypatch.setattr(lint_cache, "checkout", lambda: tmp_path)
    before = lint_cache.key("lab01_x", None)
    assert lint_cache.key("lab01_x", None) == before
    for what, path in paths.items():
        path.write_text("x = 2\n")
        assert lint_cache.key("lab01_x", None) != before, what
        path.write_text("x = 1\n")
    assert lint_cache.key("lab01_x", None) == before
    # bytecode, another lab's tests and a screenshot are not read by lint's rules
    for name in ("labs/lab01_x/__pycache__/notebook.cpython-311.pyc", "tests/labs/lab02_y/test_y.py",
                 "docs/images/report.png"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(b"\0")
    assert lint_cache.key("lab01_x", None) == before
    assert lint_cache.key("lab01_x", ["contract"]) != before
