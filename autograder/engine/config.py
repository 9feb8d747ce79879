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
    predictions = "commitment"   # commitment | correctness (see below)
    variants = true           # each student their own version of a lab (see below)

`sandbox`: "auto" runs student code under bubblewrap where it works, else (grader running as root,
e.g. a Gradescope container) as a separate unprivileged user; where neither can run, grading
REFUSES. "unsandboxed" is the explicit opt-in to grading without a boundary (as is the CLI flag
`--allow-unsandboxed`); every result then says so.

`predictions`: how a prediction earns its points. "commitment" (the default): any option recorded
when its reveal first ran earns them, and the feedback still says whether it was the best answer
(the class report counts both). "correctness": the recorded answer must be the key. Either way a
prediction without a record (its reveal never ran, or the outputs were cleared and the record file
the reveal wrote was not handed in) earns nothing and is reported as unrecorded. Reflections are always graded for correctness, from their answer cell.

`variants`: true (the default) gives every student their own version of each lab that declares
variants (labs/<lab>/variants.py): its story numbers and the order of its options, chosen from the
student's id and the lab (autograder.engine.variants); every door grades a student in their own
version. false: one version (the lab as written) for everyone; set it before the release, which
builds the notebook accordingly.

The feedback policy, tables `[feedback]` and `[feedback.before]` (every key optional):

    [feedback]
    native = "after"          # the view of `scalelabs grade` and grade-batch's feedback pages
    nbgrader = "after"        # the view in the grade cells of `nbgrader autograde` (and its feedback)
    gradescope = "due_date"   # the zip: the before view until Gradescope's due date, then the after view
    prairielearn = "before"   # the PrairieLearn question's results (students resubmit and see them at once)
    submission_limit = 0      # Gradescope: graded submissions per student (0: no limit) ...
    submission_window_hours = 0   # ... per this many hours (0: per assignment)

    [feedback.before]         # what the before view shows beyond what failed (all false by default)
    keys = false              # the best answer of a question answered wrongly
    explanations = false      # why each option is right or wrong (a right pick's own "why" is shown)
    reference_values = false  # the reference's value at a hidden input, its numbers for a design, hidden properties' checks
    hidden_inputs = false     # the hidden input a check failed on, the student's value there, hidden properties' counterexamples
    student_text = false      # messages and prints of the student's code (else: the exception's type and the student's own line)

"after" is everything (as graded; `[grading] show_expected = false` still leaves out the reference's
values). A door whose students can resubmit and see feedback at once shows "before" until the due date,
so that resubmitting does not collect the answers (autograder/engine/views.py renders both from one record).
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

# The settings' vocabularies live here, where they are checked: the sandbox (its MODES) and the
# questions read them from this module, which imports nothing of the engine.
SANDBOX_MODES = ("bubblewrap", "user", "unsandboxed")   # the boundaries student code can run in
PREDICTION_MODES = ("correctness", "commitment")        # how predictions earn points


VIEWS = ("before", "after")
DOOR_VIEWS = {"native": VIEWS, "nbgrader": VIEWS, "gradescope": (*VIEWS, "due_date"), "prairielearn": VIEWS}


@dataclass(frozen=True)
class BeforeView:
    """What feedback before the due date shows beyond what failed (`[feedback.before]`); the after view
    shows everything."""
    keys: bool = False
    explanations: bool = False
    reference_values: bool = False
    hidden_inputs: bool = False
    student_text: bool = False


@dataclass(frozen=True)
class FeedbackPolicy:
    """Which view each door renders (`[feedback]`), the Gradescope submission limit, and the before view."""
    native: str = "after"
    nbgrader: str = "after"
    gradescope: str = "due_date"
    prairielearn: str = "before"
    submission_limit: int = 0
    submission_window_hours: float = 0.0
    before: BeforeView = BeforeView()

    def __post_init__(self):
        for door, views in DOOR_VIEWS.items():
            if getattr(self, door) not in views:
                raise ValueError(f"[feedback] {door} = {getattr(self, door)!r}: must be one of "
                                 + " or ".join(f'"{v}"' for v in views))


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
    predictions: str = "commitment"
    variants: bool = True
    feedback: FeedbackPolicy = FeedbackPolicy()   # from [feedback], not a [grading] key

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


def course_document(path: Path | None = None) -> tuple[dict, Path | None]:
    """The first scalelabs.toml found (explicit path, cwd, course root), parsed, and where it was
    found; ({}, None) when there is none."""
    from autograder.course import find_course
    course = find_course()
    candidates = [path] if path else [Path.cwd() / "scalelabs.toml", course and course / "scalelabs.toml"]
    for candidate in candidates:
        if candidate and candidate.is_file():
            try:
                return tomllib.loads(candidate.read_text()), candidate
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{candidate} is not valid TOML: {exc}") from None
    return {}, None


def course_table(path: Path | None = None, name: str = "grading") -> tuple[dict, Path | None]:
    """The `[name]` table of the first scalelabs.toml found (`course_document`) and where it was
    found; ({}, None) when there is none."""
    document, where = course_document(path)
    return document.get(name, {}), where


def load_config(path: Path | None = None) -> GradingConfig:
    """The course's settings (`[grading]` and `[feedback]` of `course_document`), validated; the
    defaults where there is no file."""
    document, where = course_document(path)
    return replace(config_from_table(document.get("grading", {}), where),
                   feedback=feedback_from_table(document.get("feedback", {}), where))


def _checked(table, defaults, name: str, where, may_be_zero=(), skip=()) -> dict:
    """`table` checked against the fields of the dataclass instance `defaults` (less `skip`): a dict
    of its keys, or ConfigError naming `where`, `[name]` and the unknown key, wrong type or value
    (numbers must be positive; `may_be_zero` may also be 0)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [{name}] must be a table")
    known = [f.name for f in fields(defaults) if f.name not in skip]
    unknown = set(table) - set(known)
    if unknown:
        raise ConfigError(f"{where}: unknown [{name}] keys {sorted(unknown)}; known: " + ", ".join(known))
    for key, value in table.items():
        default = getattr(defaults, key)
        kind = type(default)
        if isinstance(default, (bool, str)):
            fits = type(value) is kind
        else:   # a number: an int setting takes an int, a float one either
            fits = type(value) is int or (kind is float and type(value) is float)
        if not fits:
            wanted = {bool: "true or false", str: "a string", int: "an integer", float: "a number"}[kind]
            raise ConfigError(f"{where}: [{name}] {key} = {value!r}: must be {wanted}")
        if kind in (int, float) and not (value > 0 or (key in may_be_zero and value == 0)):
            raise ConfigError(f"{where}: [{name}] {key} = {value!r}: must be "
                              + ("0 or more" if key in may_be_zero else "more than 0"))
    return dict(table)


def config_from_table(table: dict, where) -> GradingConfig:
    """A `[grading]` table as a GradingConfig; ConfigError (a ValueError) naming `where` and the bad key,
    type or value (numbers must be positive; MAY_BE_ZERO may also be 0). (The otter zip carries the
    course's table, so Gradescope grades with the course's settings.)"""
    checked = _checked(table, GradingConfig(), "grading", where, MAY_BE_ZERO, skip=("feedback",))
    try:
        return replace(GradingConfig(), **checked)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None


def feedback_from_table(table: dict, where) -> FeedbackPolicy:
    """A `[feedback]` table (with its `[feedback.before]`) as a FeedbackPolicy; ConfigError naming
    `where` and the bad key, type or value. (The otter zip carries it like `[grading]`.)"""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [feedback] must be a table")
    table = dict(table)
    before = _checked(table.pop("before", {}), BeforeView(), "feedback.before", where)
    checked = _checked(table, FeedbackPolicy(), "feedback", where,
                       may_be_zero=("submission_limit", "submission_window_hours"), skip=("before",))
    try:
        return FeedbackPolicy(**checked, before=BeforeView(**before))
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from None
