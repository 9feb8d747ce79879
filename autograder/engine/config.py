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
    predictions = "correctness"  # correctness | commitment (see below)

`sandbox`: "auto" runs student code under bubblewrap where it works, else (grader running as root,
e.g. a Gradescope container) as a separate unprivileged user; where neither can run, grading
REFUSES. "unsandboxed" is the explicit opt-in to grading without a boundary (as is the CLI flag
`--allow-unsandboxed`); every result then says so.

`predictions`: how a prediction earns its points. "correctness": its first answer (recorded when
its reveal ran, else the answer cell) must be the key. "commitment": any option recorded (or
answered) earns them, and the feedback still says whether it was the best answer. Reflections are
always graded for correctness.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

# The settings' vocabularies live here, where they are checked: the sandbox (its MODES) and the
# questions read them from this module, which imports nothing of the engine.
SANDBOX_MODES = ("bubblewrap", "user", "unsandboxed")   # the boundaries student code can run in
PREDICTION_MODES = ("correctness", "commitment")        # how predictions earn points


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
    predictions: str = "correctness"

    def __post_init__(self):
        if self.predictions not in PREDICTION_MODES:
            raise ValueError(f"[grading] predictions = {self.predictions!r}: must be one of "
                             + " or ".join(f'"{m}"' for m in PREDICTION_MODES))
        if self.sandbox not in ("auto", *SANDBOX_MODES):
            raise ValueError(f"[grading] sandbox = {self.sandbox!r}: expected auto, {', '.join(SANDBOX_MODES)}")


class ConfigError(ValueError):
    """scalelabs.toml cannot be used: the message names the file and the key, value or syntax at fault."""


# Settings a course may set to 0; every other number must be positive (a negative memory_mb made the
# jail fail to start, which read as "bubblewrap is not usable here").
MAY_BE_ZERO = ("hidden_examples", "property_examples", "output_cap_chars")


def course_table(path: Path | None = None) -> tuple[dict, Path | None]:
    """The `[grading]` table of the first scalelabs.toml found (explicit path, cwd, course root)
    and where it was found; ({}, None) when there is none."""
    from autograder.course import find_course
    course = find_course()
    candidates = [path] if path else [Path.cwd() / "scalelabs.toml", course and course / "scalelabs.toml"]
    for candidate in candidates:
        if candidate and candidate.is_file():
            try:
                return tomllib.loads(candidate.read_text()).get("grading", {}), candidate
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{candidate} is not valid TOML: {exc}") from None
    return {}, None


def load_config(path: Path | None = None) -> GradingConfig:
    """The course's settings (`course_table`), validated; the defaults where there is no file."""
    table, where = course_table(path)
    return config_from_table(table, where)


def config_from_table(table: dict, where) -> GradingConfig:
    """A `[grading]` table as a GradingConfig; ConfigError (a ValueError) naming `where` and the bad key,
    type or value (numbers must be positive; MAY_BE_ZERO may also be 0). (The otter zip carries the
    course's table, so Gradescope grades with the course's settings.)"""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [grading] must be a table")
    defaults = GradingConfig()
    unknown = set(table) - {f.name for f in fields(GradingConfig)}
    if unknown:
        raise ConfigError(f"{where}: unknown [grading] keys {sorted(unknown)}; known: "
                          + ", ".join(f.name for f in fields(GradingConfig)))
    for key, value in table.items():
        default = getattr(defaults, key)
        kind = type(default)
        if isinstance(default, (bool, str)):
            fits = type(value) is kind
        else:   # a number: an int setting takes an int, a float one either
            fits = type(value) is int or (kind is float and type(value) is float)
        if not fits:
            wanted = {bool: "true or false", str: "a string", int: "an integer", float: "a number"}[kind]
            raise ConfigError(f"{where}: [grading] {key} = {value!r}: must be {wanted}")
        if kind in (int, float) and not (value > 0 or (key in MAY_BE_ZERO and value == 0)):
            raise ConfigError(f"{where}: [grading] {key} = {value!r}: must be "
                              + ("0 or more" if key in MAY_BE_ZERO else "more than 0"))
    try:
        return replace(defaults, **table)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
