"""Read multiple-choice answers from the student's notebook without running it.

The answer cell must be exactly `<qid> = "B"` (a comment is allowed): it is parsed with `ast`, never
executed, so computed or disguised answers score 0 with a reason. The cell is the one whose nbgrader
`grade_id` is the question id, else a cell with nbgrader metadata that assigns it, else the first
code cell that assigns it.

A prediction is graded on its *record*, made when its reveal first ran (autograder.build.predictions:
a display_data of RECORD_MIMETYPE `{"question": qid, "answer": "B"}` in the notebook's outputs): the
first valid record in notebook order is the answer graded, whatever the answer cell says now (a change
is reported, not counted); where the outputs were cleared, the record file the reveal wrote beside the
notebook. A prediction without any record (its reveal never ran, or the outputs were cleared and the
file is not there) is *unrecorded*: it earns nothing and its feedback says why (beginning with
UNRECORDED, which the class report counts); it is never graded from its answer cell, which anyone
can edit after seeing the reveal. Records are as untrusted as the rest of the notebook: malformed
ones are ignored, a forged one can only choose a letter (which `[grading] predictions =
"commitment"`, the default, makes pointless). Reflections are graded from their answer cell. A wrong
answer's feedback never names the key, unless the question explains its options (`Question.why`):
then the grade shows why the pick and the key are right or wrong, and the question's takeaway. Before
the due date (`QuestionGrade.brief`, `[feedback.before]`) a wrong answer's grade names neither the key,
nor any option's explanation, nor the takeaway (which states the key): only that it is not the best
answer, and the question's hint.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from autograder.engine.config import PREDICTION_MODES as MODES
from autograder.engine.config import BeforeView
from autograder.engine.spec import Question
from autograder.engine.submission import Submission, assigning_cells, parse_cell, pick_answer, read_submission


UNRECORDED = "unrecorded:"       # the feedback of a prediction without a record begins with this


def recorded_answers(cells: list[dict], questions, fallback: list[tuple[str, str]] = ()) -> dict[str, str]:
    """question id -> its first valid recorded answer (an option letter) in notebook order, for
    the predictions among `questions`; `fallback` records (the record file) count only for a
    prediction the notebook holds none for (its outputs were cleared)."""
    options = {q.id: q.options for q in questions if q.kind == "prediction"}
    first: dict[str, str] = {}
    for qid, answer in [r for cell in cells for r in cell.get("records", ())] + list(fallback):
        if qid in options and qid not in first and answer in options[qid]:
            first[qid] = answer
    return first


def answer_cell(cells: list[dict], qid: str) -> str | None:
    """The source of the question's answer cell among `cells`, or None when no cell assigns it
    (submission.pick_answer; a Submission finds it with its own index, answer_source)."""
    return pick_answer(cells, assigning_cells(cells, [qid])[qid], qid)


def assigned_value(source: str, name: str, expected_form: str) -> tuple[ast.expr | None, str]:
    """(the expression of a cell that is exactly `<name> = <expression>`, "") else (None, reason);
    a cell still holding `<name> = None` is "not answered yet"."""
    tree = parse_cell(source)
    if tree is None:
        return None, f"the answer cell is not short, valid Python; {expected_form}"
    body = tree.body
    if (len(body) != 1 or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1
            or not isinstance(body[0].targets[0], ast.Name) or body[0].targets[0].id != name):
        return None, f"the answer cell holds something else; {expected_form}"
    value = body[0].value
    if isinstance(value, ast.Constant) and value.value is None:
        return None, "not answered yet (still None)"
    return value, ""


def parse_answer(source: str, qid: str) -> tuple[str | None, str]:
    """(letter, "") for a literal answer, else (None, reason)."""
    expected_form = f'the answer cell must be exactly {qid} = "<letter>": one option letter in quotes'
    value, problem = assigned_value(source, qid, expected_form)
    if value is None:
        return None, problem
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return None, f"the answer is not a literal letter; {expected_form}"
    return value.value.strip().upper(), ""


class QuestionGrade(NamedTuple):
    score: float
    feedback: str
    answer: str = ""   # the option letter graded; "" when there is none (unanswered, unreadable)
    brief: str | None = None   # the feedback before the due date, where it differs


def grade_question(question: Question, submission_dir: Path, assignment_id: str,
                   predictions: str = "commitment") -> QuestionGrade:
    """One question of a submission folder: its points for the key (or, for a committed
    prediction, any option), else 0 with a reason or hint."""
    return grade_questions([question], read_submission(submission_dir, assignment_id, [question.id]), predictions)[0]


def grade_questions(questions: list[Question], submission: Submission,
                    predictions: str = "commitment", before: BeforeView = BeforeView()) -> list[QuestionGrade]:
    """Each question's grade from the submission's notebook, read once (its record, whose answer
    cells are best indexed for every question and challenge at once: read_submission's `names`).
    `predictions`: one of MODES; `before`: what the before view (QuestionGrade.brief) shows."""
    if predictions not in MODES:
        raise ValueError(f"predictions must be one of {', '.join(MODES)}, not {predictions!r}")
    if submission.cells is None:
        return [QuestionGrade(0.0, submission.problem)] * len(questions)
    recorded = recorded_answers(submission.cells, questions, submission.records)
    return [_grade_one(q, submission, recorded.get(q.id), predictions, before) for q in questions]


def _answer_in_cell(question: Question, submission: Submission) -> tuple[str | None, str]:
    """(letter, "") from the answer cell as it stands, else (None, reason)."""
    source = submission.answer_source(question.id)
    if source is None:
        return None, f"no answer cell for {question.id} was found in {submission.notebook}"
    letter, problem = parse_answer(source, question.id)
    if letter is None:
        return None, problem
    if letter not in question.options:
        return None, f"{letter[:10]!r} is not one of the options {', '.join(sorted(question.options))}"
    return letter, ""


def unrecorded(question: Question, now: str | None, problem: str,
               before: BeforeView = BeforeView()) -> QuestionGrade:
    """A prediction with no record: nothing earned, the reason and the way to a record."""
    cell = f"your answer cell says {now}" if now else f"your answer cell: {problem}"
    lines = [f"{UNRECORDED} the notebook holds no record of {question.id} ({cell}). A prediction is "
             "recorded when its reveal cell first runs, and only a recorded prediction earns points: its reveal "
             "never ran, or the notebook's outputs were cleared before it was submitted. Run the notebook from "
             "the top and submit it with its outputs."]
    full = "\n".join(lines + (explanations(question, now) if now else []))
    brief = "\n".join(lines + (explanations(question, now, before) if now else []))
    return QuestionGrade(0.0, full, "", None if brief == full else brief)


def _grade_one(question: Question, submission: Submission, recorded: str | None, predictions: str,
               before: BeforeView = BeforeView()) -> QuestionGrade:
    now, problem = _answer_in_cell(question, submission)
    if question.kind == "prediction" and recorded is None:
        return unrecorded(question, now, problem, before)
    letter, notes = now, []
    if recorded is not None:
        letter = recorded
        if now is None:
            notes.append(f"your answer cell for {question.id} no longer gives a letter ({problem}); "
                         f"your first answer {recorded}, recorded at its reveal, counts")
        elif now != recorded:
            notes.append(f"you changed {question.id} from {recorded} to {now} after its reveal; "
                         f"your first answer {recorded} counts")
    if letter is None:
        return QuestionGrade(0.0, problem)
    answered = f"answered {letter}" + (" (recorded at its reveal)" if recorded is not None else "")
    right = letter == question.key
    hint = "" if right or not question.hint else f" Hint: {question.hint}"
    if question.kind == "prediction" and predictions == "commitment":
        score = float(question.points)
        verdict = (f"{answered}: a committed prediction earns its points; "
                   + ("it was the best answer" if right else f"it was not the best answer.{hint}"))
    else:
        score = float(question.points) if right else 0.0
        verdict = f"{answered}: " + ("correct" if right else f"not the best answer.{hint}")
    full = "\n".join(notes + [verdict] + explanations(question, letter))
    brief = "\n".join(notes + [verdict] + explanations(question, letter, before))
    return QuestionGrade(score, full, letter, None if brief == full else brief)


def explanations(question: Question, letter: str, before: BeforeView | None = None) -> list[str]:
    """Why the student's pick, and the key, are right or wrong (the question's `why`; shown only
    with a grade), and what the question teaches (its takeaway, which states the key). Given
    `before` (the before view): a right pick's own explanation; a wrong pick's only with
    `before.explanations`, the key only with `before.keys` (and its why with both), the takeaway
    to a right pick or with `before.keys`."""
    right = question.key == letter
    lines = []
    if letter in question.why and (before is None or right or before.explanations):
        lines.append(f"Why {letter}: {question.why[letter]}")
    if not right and (before is None or before.keys):
        if question.key in question.why and (before is None or before.explanations):
            lines.append(f"The best answer is {question.key}: {question.why[question.key]}")
        elif before is not None:
            lines.append(f"The best answer is {question.key}.")
    if question.takeaway and (before is None or right or before.keys):
        lines.append(f"Takeaway: {question.takeaway}")
    return lines
