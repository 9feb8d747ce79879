"""Shared fixtures of the release tests: the toy assignment released once per session."""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import toy  # noqa: E402

from autograder import release  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def toy_assignment():
    return toy.make()


@pytest.fixture(scope="session")
def toy_root(tmp_path_factory, toy_assignment):
    """A course root holding source/ and release/ of the toy assignment."""
    root = tmp_path_factory.mktemp("course")
    release.release_one(toy_assignment, root, toy.PROPERTIES_PATH)
    return root


def flat_reference(dest: Path) -> None:
    """Every reference module into `dest` with relative imports made flat (the solution build)."""
    for path in (REPO / "reference").glob("*.py"):
        if path.name == "__init__.py":
            continue
        text = re.sub(r"^(\s*)from \.(\w+) import", r"\1from \2 import", path.read_text(), flags=re.M)
        (dest / path.name).write_text(text)


def copy_tree(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest
