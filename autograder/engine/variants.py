"""Which version of a lab a student is graded in (issue 45): every door asks here.

A lab that declares variants (labs/<lab>/variants.py; `Assignment.variants`) has `count` versions:
its story numbers, option texts and order, design targets and keys differ per version. The version
of a student is a pure function of the assignment id and the student id (`variant_index`, the one
function the released notebook runs too: autograder/build/student/_variant.py), so a student's
notebook shows the version the grader uses, with no course secret. The id is the one the door grades
under (autograder.classroom.identity: nbgrader's id, the folder's name, Gradescope's sid or email, a
group's smallest id). A course turns variants off with `[grading] variants = false`: then every
student is graded in the lab as written (variant 0).
"""
from __future__ import annotations

from dataclasses import replace

from autograder.build.student._variant import normal_id, variant_index  # noqa: F401  (re-exported)
from autograder.engine.config import GradingConfig
from autograder.engine.spec import Assignment


def varies(assignment: Assignment, config: GradingConfig | None = None) -> bool:
    """Whether students get versions of their own of this assignment in a course with `config`."""
    return assignment.variant_count > 1 and (config is None or config.variants)


def variant_of(assignment: Assignment, student_id: str, config: GradingConfig | None = None) -> int:
    """The index of the student's version (0 where the assignment or the course has no variants)."""
    if not varies(assignment, config):
        return 0
    return variant_index(assignment.id, student_id, assignment.variant_count)


def for_student(assignment: Assignment, student_id: str, config: GradingConfig | None = None) -> Assignment:
    """The assignment in the student's version: its questions (options in the student's order, keys),
    design challenges (targets) and notebook are the version's, everything else `assignment`'s own (a
    caller's functions, say); itself without variants or where it already is that version."""
    if assignment.variants is None:
        return assignment
    index = variant_of(assignment, student_id, config)
    if index == assignment.variant:
        return assignment
    version = assignment.variants.assignment(index)
    if version.functions is assignment.functions and version.misconceptions is assignment.misconceptions:
        return version    # the lab's own: its cached version
    return replace(assignment, questions=version.questions, challenges=version.challenges, notebook=version.notebook,
                   variant=index)


def base_of(assignment: Assignment) -> Assignment:
    """The lab as written (variant 0), from any of its versions."""
    return assignment.variants.assignment(0) if assignment.variants is not None and assignment.variant else assignment


def note(assignment: Assignment, student_id: str) -> str:
    """The line a graded result carries: which version, from which id."""
    return (f"Graded in version {assignment.variant + 1} of {assignment.variant_count} of this lab, the version of "
            f"the id {student_id!r}: your answers are read in that version's option letters and your designs "
            "measured against its targets.")


def describe(assignment: Assignment, student_id: str, config: GradingConfig | None = None, *,
             keys: bool = False) -> dict:
    """The student's version as JSON data (`scalelabs variant`): which version, its varied story numbers,
    each question's options in the order the student sees them and each design challenge's constraints;
    with `keys` (a staff view, never released) each key, its option identity and each challenge's
    reference design."""
    base = base_of(assignment)
    version = for_student(base, student_id, config)
    numbers = base.variants.values(version.variant) if base.variants is not None else {}
    questions = {}
    for q in version.questions:
        entry = {"kind": q.kind, "options": dict(q.options)}
        if keys:
            entry |= {"key": q.key, "key_option": q.option_identity(q.key),
                      "options_as_written": {letter: q.option_identity(letter) for letter in q.options}}
        questions[q.id] = entry
    challenges = {c.id: {"constraints": list(c.constraints)} | ({"reference_design": dict(c.reference_answer)}
                                                                 if keys else {})
                  for c in version.challenges}
    return {"assignment": base.id, "student": student_id, "variants": varies(base, config),
            "variant": version.variant, "version": version.variant + 1, "of": base.variant_count,
            "numbers": numbers, "questions": questions, "challenges": challenges}


def other_version(assignment: Assignment, submission, whose: str = "your") -> str:
    """What the notebook's own record says it showed, where that is another version than the one graded
    (the student typed another id): one line, else "". The record is the student's to forge; it changes
    no score, it only tells the student and staff why the letters read may not be the ones meant."""
    shown = next((c["shown"] for c in (submission.cells or []) if c.get("shown")), None)
    if shown is None or shown[1] == assignment.variant:
        return ""
    return (f"{whose} notebook showed version {shown[1] + 1} (the id {shown[0][:40]!r}), not the graded one: the answers "
            f"were read in version {assignment.variant + 1}'s letters")
