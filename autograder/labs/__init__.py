"""Assignment declarations: one package per lab, each exposing `ASSIGNMENT` (autograder.spec.Assignment).

Adding a lab means adding a package here (plus its reference module); nothing else lists labs.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from ..spec import Assignment


@lru_cache(maxsize=None)
def all_assignments() -> dict[str, Assignment]:
    found: dict[str, Assignment] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.ispkg or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        assignment = getattr(module, "ASSIGNMENT", None)
        if isinstance(assignment, Assignment):
            found[assignment.id] = assignment
    return found


def load(assignment_id: str) -> Assignment:
    """The declared assignment, or a ValueError that lists the ones that exist.

    A lab whose package is named like its id is imported alone (grading one lab should not pay
    for importing every declaration); anything else falls back to scanning every lab."""
    if assignment_id.isidentifier() and not assignment_id.startswith("_"):
        try:
            module = importlib.import_module(f"{__name__}.{assignment_id}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{assignment_id}":
                raise
        else:
            assignment = getattr(module, "ASSIGNMENT", None)
            if isinstance(assignment, Assignment) and assignment.id == assignment_id:
                return assignment
    found = all_assignments()
    if assignment_id not in found:
        known = ", ".join(sorted(found)) or "none"
        raise ValueError(f"unknown assignment {assignment_id!r}; known assignments: {known}")
    return found[assignment_id]
