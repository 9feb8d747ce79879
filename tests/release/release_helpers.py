"""Helpers of the release tests (a module of its own: `conftest` names collide across folders)."""
from __future__ import annotations

from pathlib import Path

from autograder.classroom.samples import flat_reference_modules as flat_reference  # noqa: F401

REPO = Path(__file__).resolve().parents[2]
