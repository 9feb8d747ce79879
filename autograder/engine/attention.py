"""What in a graded submission needs a person (course staff), one line each, never a score.

A student whose module is missing or does not import, whose notebook is missing or cannot be read,
whose code ran out of time, or whose item the grader itself could not grade has a grade that says
little about what they know: the class batch names each in its summary and in grades.csv, and its
exit status says someone needs attention (docs/tas.md). The lines are the engine's own messages.
"""
from __future__ import annotations

from autograder.engine.sandbox import StudentError

TIMEOUT_KINDS = ("timeout", "budget")
SHOWN = 3   # timeouts named one by one; more are counted


def needs_person(module: str, import_error: StudentError | None, notebook_problem: str,
                 timeouts: list[str], faults: list[str]) -> list[str]:
    """The lines for one submission: its module's import failure, its notebook's problem, what ran out
    of time (`timeouts`: the sandbox's messages), and the items the grader failed on (`faults`)."""
    lines = []
    if import_error is not None:
        if import_error.kind == "missing_module":
            lines.append(import_error.message)
        elif import_error.kind in TIMEOUT_KINDS:
            lines.append(f"timeout: {import_error.message}")
        else:
            lines.append(f"{module}.py does not import: {import_error.message}")
    if notebook_problem:
        lines.append(notebook_problem)
    seen = list(dict.fromkeys(t for t in timeouts if import_error is None or t != import_error.message))
    if seen:
        more = f" (and {len(seen) - SHOWN} more)" if len(seen) > SHOWN else ""
        lines.append("timeout: " + "; ".join(seen[:SHOWN]) + more)
    if faults:
        lines.append(f"the grader could not grade {', '.join(faults)}: tell whoever maintains the course's scalelabs")
    return lines
