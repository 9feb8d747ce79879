"""Assignment declarations: one package per lab, each exposing `ASSIGNMENT` (autograder.engine.spec.Assignment).

Adding a lab means adding a package here (plus its reference module); nothing else lists labs.
"""
from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache
from pathlib import Path

from autograder.engine.spec import Assignment


@lru_cache(maxsize=None)
def all_assignments() -> dict[str, Assignment]:
    found: dict[str, Assignment] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.ispkg or info.name.startswith("_"):
            continue
        # an import error in a declaration propagates: a broken lab must fail loudly, never vanish
        module = importlib.import_module(f"{__name__}.{info.name}")
        assignment = getattr(module, "ASSIGNMENT", None)
        if not isinstance(assignment, Assignment):
            raise TypeError(f"labs/{info.name}/ declares no ASSIGNMENT (an autograder.engine.spec.Assignment)")
        found[assignment.id] = assignment
    return found


def load(assignment_id: str) -> Assignment:
    """The one way to name an assignment: a declared lab id, or `package.module:ATTRIBUTE` naming
    an Assignment (a course's own or a test's). A ValueError lists the labs that exist.

    A lab whose package is named like its id is imported alone (grading one lab should not pay
    for importing every declaration); anything else falls back to scanning every lab."""
    if ":" in assignment_id:
        module_name, attr = assignment_id.split(":", 1)
        try:
            found = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"cannot load assignment {assignment_id!r}: {exc}") from None
        if not isinstance(found, Assignment):
            raise ValueError(f"{assignment_id!r} is not an Assignment")
        return found
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


def lab_folder(assignment_id: str) -> Path | None:
    """labs/<assignment_id>/ when that lab is a package named like its id (every declared lab is)."""
    folder = Path(__file__).parent / assignment_id
    return folder if assignment_id.isidentifier() and (folder / "__init__.py").is_file() else None
