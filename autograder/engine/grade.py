"""Grade one submission: every function item in the sandbox, every question and design challenge
from the notebook.

    grade_submission(assignment, submission_dir, student_id) -> Result
    Result.to_gradescope() -> the Gradescope results.json dict (autograder.engine.results)

Test names begin with the item id and a colon. A lab with variants is graded in the student's version
(autograder.engine.variants: its questions' option order and keys, its design targets). A regrade of the same submission by the same
student under the same course secret gives identical JSON (the seeds derive from assignment, student,
item and check, keyed by the secret: autograder.engine.secret).
"""
from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from autograder.engine import scoring
from autograder.engine.attention import needs_person
from autograder.engine.challenges import grade_challenges
from autograder.engine.checks import CheckOutcome, ItemGrading
from autograder.engine.config import GradingConfig, load_config
from autograder.engine.questions import grade_questions
from autograder.engine.results import Result, TestResult
from autograder.engine.filetree import Tree, TreeFile, ignored_note
from autograder.engine.sandbox import Sandbox
from autograder.engine.sandbox.modes import choose_mode, mode_note
from autograder.engine.secret import NO_SECRET_NOTE, CourseSecret
from autograder.engine.spec import Assignment
from autograder.engine.submission import read_submission
from autograder.engine.variants import for_student, varies
from autograder.engine.variants import note as variant_note, other_version


OUTPUT_CAP = 4096  # characters of one test's output (results.json and the feedback page)


def cap_output(text: str, cap: int = OUTPUT_CAP) -> str:
    return text if len(text) <= cap else text[:cap - 40] + "\n[feedback truncated]"


def _capped_brief(full: str, brief: str | None) -> str | None:
    """The before view's text, capped; None where it says what the full text says."""
    return None if brief is None or brief == full else cap_output(brief)


def _function_tests(item, outcomes: list[CheckOutcome]) -> list[TestResult]:
    """The item's tests: points per check (scoring.check_points), example/property points only
    through scoring.physics_gate, every output capped."""
    points = scoring.check_points(item.points, [o.kind if o.kind != "item" else "hidden" for o in outcomes])
    hidden = next((o for o in outcomes if o.kind == "hidden"), None)
    gate = None
    if hidden is not None:
        stats = hidden.hidden
        gate = scoring.physics_gate(hidden.passed, stats and stats.matched, stats and stats.total,
                                    bool(stats and stats.constant), stats.blind if stats else 0)
    tests = []
    for o, pts in zip(outcomes, points):
        score, output, brief = (pts if o.passed else 0.0), o.output, o.brief
        if gate and o.passed and o.kind in scoring.GATED_KINDS:
            note = f"\n(no credit: {gate}; worked examples and properties count only for a function that computes the physics)"
            score, output, brief = 0.0, output + note, None if brief is None else brief + note
        tests.append(TestResult(item.name, o.name, o.kind, score, pts, cap_output(output),
                                misconception=o.misconception, brief=None if brief is None else cap_output(brief)))
    return tests


def _provided_as_released(tree: Tree, provided_from: Path, names) -> Tree:
    """`tree` (a submission's files, which the sandbox copies) with each provided module of `provided_from`
    in place of the submission's own file of that name, or beside it where the submission has none."""
    own = {f"{name}.py" for name in names}
    files = [f for f in tree.files if f.rel not in own]
    for name in names:
        path = provided_from / f"{name}.py"
        if path.is_file():
            files.append(TreeFile(path.name, str(path), path.stat().st_size))
    return Tree(files, list(tree.skipped))


def grade_submission(assignment: Assignment, submission_dir: Path, student_id: str = "anonymous",
                     *, show_expected: bool | None = None, budget_s: float | None = None,
                     config: GradingConfig | None = None, sandbox: str | None = None,
                     secrets: list[Path] = (), outputs: list[Path] = (), ahead: Sandbox | None = None,
                     secret: CourseSecret | None = None, provided_from: Path | None = None) -> Result:
    """Grade one submission folder (shaped like release/<id>/).

    show_expected / budget_s default to the course config (scalelabs.toml). The boundary is
    `sandbox` (one of sandbox.MODES) or config.sandbox: where no sandbox can run and the
    course did not opt in, SandboxUnavailable (grading refuses); so too where the jail shows student
    code a secret or cannot start Python (sandbox.client.check_jail, Sandbox.fault), which would
    otherwise score the student for the grader's fault. `secrets`/`outputs`: further paths
    the student's code must not read / write (the unprivileged-user mode enforces them).
    `ahead`: a jail started before this submission was known (Sandbox.ahead, same module and
    config; bubblewrap only): the submission is copied into it and graded there.
    `secret`: the course secret keying the hidden inputs' seeds (each door loads it:
    autograder.engine.secret.load_secret); None draws them from public values and the result says so.
    `provided_from`: a folder holding the provided modules as released; they are graded in place of the
    submission's own copies, as the otter and PrairieLearn doors grade an upload (classroom/upload.py).
    """
    config = config or load_config()
    assignment = for_student(assignment, student_id, config)   # the student's version of the lab
    show = config.show_expected if show_expected is None else show_expected
    budget = config.budget_s if budget_s is None else budget_s
    answers = [q.id for q in assignment.questions] + [c.id for c in assignment.challenges]
    try:
        submission = read_submission(submission_dir, assignment.id, answers)   # its tree and notebook, read once
    except BaseException:
        if ahead is not None:   # its jail and folder go now, not when this process ends
            ahead.close()
        raise
    if provided_from is not None:
        submission = replace(submission, tree=_provided_as_released(submission.tree, Path(provided_from),
                                                                    assignment.provided))
    if secret is not None and secret.path is not None:
        secrets = [*secrets, secret.path]     # the unprivileged-user mode checks it is out of reach
    mode = sandbox or choose_mode(config.sandbox, config.allow_unsandboxed)
    result = Result(assignment.id, student_id, sandbox_mode=mode)
    deadline = time.monotonic() + budget
    if ahead is not None and (mode != "bubblewrap" or ahead.module != assignment.module or ahead.config != config):
        ahead.close()
        ahead = None
    box = ahead or Sandbox(submission, assignment.module, config, deadline=deadline, mode=mode,
                           secrets=secrets, outputs=outputs, provided=assignment.provided)
    with box:
        if box is ahead:
            box.take(submission, deadline, assignment.provided, secrets)
        faults = []
        gradings: dict[str, ItemGrading | Exception] = {}
        for public in (True, False):   # every public check before any hidden input reaches the worker
            for item in assignment.functions:
                grading = gradings.get(item.name)
                if isinstance(grading, Exception):
                    continue
                try:
                    if grading is None:
                        grading = gradings[item.name] = ItemGrading(assignment, item, box, student_id, config, show, secret)
                    grading.run(public)
                except Exception as exc:  # one item's failure must not end the submission's grading
                    gradings[item.name] = exc
        for item in assignment.functions:
            grading = gradings[item.name]
            try:
                if isinstance(grading, Exception):
                    raise grading
                outcomes = grading.outcomes(assignment.misconceptions.get(item.name, ()))
            except Exception as exc:
                outcomes = [CheckOutcome("item", "not graded", False,
                                         f"the grader could not grade this item ({type(exc).__name__}); "
                                         "tell the course staff")]
                faults.append(f"{item.name} ({type(exc).__name__}: {str(exc)[:200]})")
            result.tests += _function_tests(item, outcomes)
        skipped, ignored = box.skipped, box.ignored
        import_error, timeouts = box.import_error, list(box.timeouts)
    if box.fault is not None:   # the jail could not start Python: the grader's fault, so no score at all
        raise box.fault
    before = config.feedback.before
    graded = grade_questions(assignment.questions, submission, config.predictions, before)
    for q, grade in zip(assignment.questions, graded):
        result.tests.append(TestResult(q.id, q.kind, q.kind, grade.score, float(q.points), cap_output(grade.feedback),
                                       grade.answer, brief=_capped_brief(grade.feedback, grade.brief),
                                       option=q.option_identity(grade.answer) if grade.answer else ""))
    for c, grade in zip(assignment.challenges, grade_challenges(assignment.challenges, submission, show, before)):
        result.tests.append(TestResult(c.id, "design challenge", "challenge", grade.score, float(c.points),
                                       cap_output(grade.feedback), grade.answer,
                                       brief=_capped_brief(grade.feedback, grade.brief)))
    result.attention = needs_person(assignment.module, import_error, submission.problem, timeouts, faults)
    notes = [f"{assignment.title}: {mode_note(mode)}."]
    if varies(assignment, config):
        notes.append(variant_note(assignment, student_id))
        other = other_version(assignment, submission)
        if other:
            notes.append(other[0].upper() + other[1:] + ".")
            result.attention.append(other_version(assignment, submission, f"{student_id}'s"))
    if skipped:
        notes.append("Not graded from your folder: " + "; ".join(skipped[:5])
                     + (f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else ""))
    if ignored:
        notes.append(ignored_note(ignored))
    if secret is None and assignment.functions:
        notes.append(NO_SECRET_NOTE + ".")
    result.output = cap_output("\n".join(notes))
    return result
