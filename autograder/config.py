"""Course-wide grading settings, read from `scalelabs.toml` (section `[grading]`) when present.

Looked up in the current folder first, then at the project root; every key is optional:

    [grading]
    show_expected = true      # a failed hidden check shows the reference's value
    call_timeout_s = 2.0      # one call of a student function
    budget_s = 60.0           # all of one submission's function items
    memory_mb = 1024          # address-space limit of the sandboxed worker
    hidden_examples = 30      # sampled inputs of the hidden differential check (plus the simplest)
    property_examples = 20    # sampled inputs per property (plus the simplest)
    output_cap_chars = 2000   # student stdout/stderr kept per call
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
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


def load_config(path: Path | None = None) -> GradingConfig:
    """The `[grading]` table of the first scalelabs.toml found (explicit path, cwd, project root)."""
    candidates = [path] if path else [Path.cwd() / "scalelabs.toml", PROJECT_ROOT / "scalelabs.toml"]
    for candidate in candidates:
        if candidate and candidate.is_file():
            table = tomllib.loads(candidate.read_text()).get("grading", {})
            known = {f.name for f in fields(GradingConfig)}
            unknown = set(table) - known
            if unknown:
                raise ValueError(f"{candidate}: unknown [grading] keys {sorted(unknown)}")
            return replace(GradingConfig(), **table)
    return GradingConfig()
