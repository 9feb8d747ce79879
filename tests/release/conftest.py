"""Shared fixtures of the release tests: the toy assignment released once per session."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import release_toy as toy  # noqa: E402

from autograder.build import release  # noqa: E402


@pytest.fixture(scope="session")
def toy_assignment():
    return toy.make()


@pytest.fixture(scope="session")
def toy_root(tmp_path_factory, toy_assignment):
    """A course root holding source/ and release/ of the toy assignment."""
    root = tmp_path_factory.mktemp("course")
    release.release_one(toy_assignment, root, toy.PROPERTIES_PATH)
    return root
