"""Open design challenges: graded against constraints, not against one key.

A challenge asks for a few named numbers, written in the notebook as one literal assignment,
`lab05_layout = dict(tp=8, pp=4, microbatches=16)` (or `{"tp": 8, ...}`). The answer cell is found
and read like a question's (autograder.engine.questions: bounded, parsed with `ast`, never
executed); anything but number literals scores 0 with a reason. The check is staff-side and
trusted: it runs in the grader, not in the sandbox, and measures the design with reference/.
Each declared constraint earns an equal share of the points, and the feedback names every
constraint, met or missed, with the number computed for the student's design. Several designs
meet every constraint, so no key exists to leak; but the numbers the reference computes for the
student's own design (a breakeven, a memory footprint) answer the question on the next try, so the
view before the due date (`ChallengeGrade.brief`) says only which constraints are met unless the
course shows reference values (`[feedback.before] reference_values`).
"""
from __future__ import annotations

import ast
import math
from typing import Mapping, NamedTuple, Sequence

from autograder.engine import scoring
from autograder.engine.config import BeforeView
from autograder.engine.questions import assigned_value
from autograder.engine.spec import DesignChallenge, Field, Invalid, Verdict   # the declaration; labs import it here
from autograder.engine.submission import Submission

SHOWN_CHARS = 30   # characters of a student's value or name echoed in feedback


class ChallengeGrade(NamedTuple):
    score: float
    feedback: str
    answer: str = ""   # the design graded, "tp=8 pp=4 microbatches=16"; "" when none could be read
    brief: str | None = None   # the feedback before the due date, where it differs


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."


def design_text(values: Mapping[str, float]) -> str:
    return " ".join(f"{k}={v!r}" for k, v in values.items())


def design_source(challenge: DesignChallenge, values: Mapping[str, float]) -> str:
    """The answer cell a student writes for `values`."""
    return f"{challenge.id} = dict({', '.join(f'{k}={v!r}' for k, v in values.items())})"


def answer_line(challenge: DesignChallenge) -> str:
    """The editable answer cell as released: unanswered, with the form to fill in."""
    return f"{challenge.id} = None  # your design: dict({', '.join(f'{f.name}=...' for f in challenge.fields)})"


def _range(field: Field) -> str:
    kind = "a whole number" if field.integer else "a number"
    return f"{kind} from {field.low:g} to {field.high:g}"


def prompt_markdown(challenge: DesignChallenge) -> str:
    fields = "\n".join(f"- `{f.name}`: {f.meaning} ({_range(f)})" for f in challenge.fields)
    constraints = "\n".join(f"{i}. {c}" for i, c in enumerate(challenge.constraints, 1))
    return (f"{challenge.prompt}\n\n**Your design.**\n\n{fields}\n\n**Constraints** (each met constraint earns "
            f"1/{len(challenge.constraints)} of the {challenge.points:g} points; more than one design meets them "
            f"all):\n\n"
            f"{constraints}\n\nWrite your design in the cell below as number literals, e.g. "
            f"`{challenge.id} = dict({', '.join(f'{f.name}=...' for f in challenge.fields)})` with your numbers "
            "in place of the dots. It is read, never run: computed values are not read.")


def _number(node: ast.AST):
    """The number a literal node holds (an int or float, optionally signed), else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return sign * node.value
    return None


def _pairs(value: ast.AST) -> list[tuple[object, ast.AST]] | None:
    """(name, value node) of `dict(a=1, ...)` or `{"a": 1, ...}`, else None."""
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict"
            and not value.args and all(kw.arg is not None for kw in value.keywords)):
        return [(kw.arg, kw.value) for kw in value.keywords]
    if isinstance(value, ast.Dict) and all(isinstance(k, ast.Constant) for k in value.keys):
        return [(k.value, v) for k, v in zip(value.keys, value.values)]
    return None


def parse_design(source: str, challenge: DesignChallenge) -> tuple[dict | None, str]:
    """({name: number}, "") for a well-formed answer within the declared ranges, else (None, reason)."""
    names = [f.name for f in challenge.fields]
    form = f"the answer cell must be exactly {challenge.id} = dict({', '.join(f'{n}=...' for n in names)})"
    value, problem = assigned_value(source, challenge.id, form)
    if value is None:
        return None, problem
    pairs = _pairs(value)
    if pairs is None:
        return None, f"the answer is not a literal dict of numbers; {form}"
    found: dict = {}
    for name, node in pairs:
        if name not in names:
            return None, f"{_shown(name)} is not part of the design; the names are {', '.join(names)}"
        if name in found:
            return None, f"{name} is given twice"
        number = _number(node)
        if number is None:
            return None, f"{name} must be a number literal (e.g. 8 or 2.5), not an expression, text or container"
        found[name] = number
    missing = [n for n in names if n not in found]
    if missing:
        return None, f"the design lacks {', '.join(missing)}; {form}"
    design = {}
    for f in challenge.fields:
        number = found[f.name]
        if isinstance(number, float) and not math.isfinite(number):   # 1e999 reads as inf
            return None, f"{f.name} must be finite, got {_shown(number)}"
        if f.integer:
            if isinstance(number, float) and not number.is_integer():
                return None, f"{f.name} must be a whole number, got {_shown(number)}"
            number = int(number)
        if not f.low <= number <= f.high:
            return None, f"{f.name} must be {_range(f)}, got {_shown(number)}"
        design[f.name] = number
    return design, ""


def grade_design(challenge: DesignChallenge, design: Mapping[str, float], show_expected: bool = True,
                 before: BeforeView = BeforeView()) -> ChallengeGrade:
    """Points: an equal share per constraint met. The check is trusted but a design may still
    reach a reference function's input check: any failure scores 0 with a reason, never a crash.
    A verdict's `expected` part is shown only with `show_expected` (the course's setting); before the
    due date its detail and expected part only with `before.reference_values`."""
    answer = design_text(design)
    try:
        verdicts = list(challenge.check(dict(design)))
    except Invalid as exc:
        return ChallengeGrade(0.0, f"design {answer}: {exc}", answer)
    except Exception as exc:  # the grader must never crash on a submission
        return ChallengeGrade(0.0, f"design {answer}: it could not be evaluated ({type(exc).__name__}: "
                                   f"{str(exc)[:200]}); check each number against the allowed ranges", answer)
    if len(verdicts) != len(challenge.constraints):   # a declaration bug: never the student's loss of a crash
        return ChallengeGrade(0.0, f"design {answer}: the grader could not grade this challenge ({len(verdicts)} "
                                   f"verdicts for {len(challenge.constraints)} constraints); tell the course staff",
                              answer)
    share = challenge.points / len(challenge.constraints)
    score = round(sum(share for v in verdicts if v.met), scoring.DIGITS)
    met = sum(v.met for v in verdicts)
    head = f"design {answer}: {met} of {len(verdicts)} constraints met"
    full = "\n".join([head] + [f"  {'met' if v.met else 'MISSED'}: {c}: {v.detail}"
                                + (f"; {v.expected}" if show_expected and v.expected else "")
                                for c, v in zip(challenge.constraints, verdicts)])
    if before.reference_values:
        return ChallengeGrade(score, full, answer)
    brief = "\n".join([head] + [f"  {'met' if v.met else 'MISSED'}: {c}" for c, v in zip(challenge.constraints, verdicts)]
                       + ["(the numbers your design gives are shown after the due date)"])
    return ChallengeGrade(score, full, answer, brief)


def grade_answer(challenge: DesignChallenge, source: str, show_expected: bool = True,
                 before: BeforeView = BeforeView()) -> ChallengeGrade:
    """The grade of one answer cell's source: 0 with the reason when it is not a well-formed design."""
    design, problem = parse_design(source, challenge)
    return ChallengeGrade(0.0, problem) if design is None else grade_design(challenge, design, show_expected, before)


def grade_challenges(challenges: Sequence[DesignChallenge], submission: Submission,
                     show_expected: bool = True, before: BeforeView = BeforeView()) -> list[ChallengeGrade]:
    """Each challenge's grade from the submission's notebook, read once (its record; the same
    bounded reader as the questions'); `before`: what the before view (ChallengeGrade.brief) shows."""
    if not challenges:
        return []
    if submission.cells is None:
        return [ChallengeGrade(0.0, submission.problem)] * len(challenges)
    grades = []
    for challenge in challenges:
        source = submission.answer_source(challenge.id)
        if source is None:
            grades.append(ChallengeGrade(0.0, f"no answer cell for {challenge.id} was found in {submission.notebook}"))
            continue
        grades.append(grade_answer(challenge, source, show_expected, before))
    return grades
