"""`scalelabs lint`'s memory of clean labs: a lab that linted clean is not linted again until something
lint reads changes.

The key is the content, never a time stamp: every file of the checkout lint's rules read (the packages
autograder/, labs/ and reference/, the lab's tests/labs/<lab>/ with its wrong modules, the pages under
docs/, README.md, pyproject.toml, nbgrader_config.py), the rules asked for, Python's version and the
versions of the packages the rules run (hypothesis, numpy, jupytext, nbformat, jinja2, matplotlib). Only
a clean result is kept: a problem is always found again, so one that depends on the machine (the
import-time rule's CPU seconds) is never remembered. A cache entry is an empty file named by the key,
in $SCALELABS_CACHE/lint/ (default: the checkout's .scalelabs/cache/lint/, which git ignores).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path
from typing import Iterable

ENV = "SCALELABS_CACHE"
PACKAGES = ("autograder", "labs", "reference")
FILES = ("README.md", "pyproject.toml", "nbgrader_config.py")
TOOLS = ("hypothesis", "numpy", "jupytext", "nbformat", "jinja2", "matplotlib")


def checkout() -> Path:
    """The checkout lint reads: the folder holding the `labs` package (as autograder.author.docs.REPO,
    without importing the labs)."""
    return Path(importlib.util.find_spec("labs").origin).resolve().parent.parent


def _files(repo: Path, lab_id: str) -> Iterable[Path]:
    for top in (*PACKAGES, f"tests/labs/{lab_id}"):
        for folder, dirs, names in os.walk(repo / top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            yield from (Path(folder) / n for n in sorted(names) if not n.endswith(".pyc"))
    yield from sorted((repo / "docs").rglob("*.md"))
    yield from (repo / name for name in FILES)


def key(lab_id: str, rules: Iterable[str] | None) -> str:
    """The content key of linting `lab_id` with `rules` (None: all) here."""
    from importlib.metadata import PackageNotFoundError, version

    def installed(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "-"
    digest = hashlib.sha256(repr((lab_id, sorted(rules) if rules else None, sys.version,
                                  [installed(t) for t in TOOLS])).encode())
    repo = checkout()
    for path in _files(repo, lab_id):
        try:
            data = path.read_bytes()
        except OSError:
            data = b"\0missing"
        digest.update(f"\0{path.relative_to(repo)}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def folder() -> Path:
    return Path(os.environ[ENV]) / "lint" if os.environ.get(ENV) else checkout() / ".scalelabs" / "cache" / "lint"


def clean_before(content_key: str) -> bool:
    """This content linted clean before."""
    return (folder() / content_key).is_file()


def remember_clean(content_key: str) -> None:
    """Remember that this content lints clean (best effort: a folder that cannot be written is skipped)."""
    try:
        folder().mkdir(parents=True, exist_ok=True)
        (folder() / content_key).touch()
    except OSError:
        pass
