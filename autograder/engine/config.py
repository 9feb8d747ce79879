"""Course-wide grading settings, read from `scalelabs.toml` (section `[grading]`) when present.

Looked up in the current folder first, then at the course root (autograder/course.py); every key
is optional:

    [grading]
    show_expected = true      # a failed hidden check shows the reference's value
    call_timeout_s = 2.0      # one call of a student function
    budget_s = 60.0           # all of one submission's function items
    memory_mb = 1024          # memory of the sandboxed worker: its address space plus its /tmp
    hidden_examples = 30      # sampled inputs of the hidden differential check (plus the simplest)
    property_examples = 20    # sampled inputs per property (plus the simplest)
    output_cap_chars = 2000   # student stdout/stderr kept per call
    tmp_mb = 256              # the jail's tmpfs /tmp, taken from memory_mb (at most half of it)
    sandbox = "auto"          # auto | bubblewrap | user | unsandboxed (see below)

`sandbox`: "auto" runs student code under bubblewrap where it works, else (grader running as root,
e.g. a Gradescope container) as a separate unprivileged user; where neither can run, grading
REFUSES. "unsandboxed" is the explicit opt-in to grading without a boundary (as is the CLI flag
`--allow-unsandboxed`); every result then says so.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

# The nbgrader course id: nbgrader_config.py and the native gradebook writes share it, so a TA's
# `grade-batch --db` into the course gradebook lands in the same course as `nbgrader autograde`.
COURSE_ID = "scalelabs"


@dataclass(frozen=True)
class GradingConfig:
    show_expected: bool = True
    call_timeout_s: float = 2.0
    import_timeout_s: float = 10.0
    budget_s: float = 60.0
    memory_mb: int = 1024
    hidden_examples: int = 30
    property_examples: int = 20
    output_cap_chars: int = 2000
    tmp_mb: int = 256
    sandbox: str = "auto"
    allow_unsandboxed: bool = False   # "auto" may fall back to unsandboxed (CLI --allow-unsandboxed)


def load_config(path: Path | None = None) -> GradingConfig:
    """The `[grading]` table of the first scalelabs.toml found (explicit path, cwd, course root)."""
    from autograder.course import find_course
    course = find_course()
    candidates = [path] if path else [Path.cwd() / "scalelabs.toml", course and course / "scalelabs.toml"]
    for candidate in candidates:
        if candidate and candidate.is_file():
            table = tomllib.loads(candidate.read_text()).get("grading", {})
            known = {f.name for f in fields(GradingConfig)}
            unknown = set(table) - known
            if unknown:
                raise ValueError(f"{candidate}: unknown [grading] keys {sorted(unknown)}")
            return replace(GradingConfig(), **table)
    return GradingConfig()
