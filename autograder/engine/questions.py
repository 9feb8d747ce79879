"""Read multiple-choice answers from the student's notebook without running it.

The answer cell must be exactly `<qid> = "B"` (a comment is allowed): it is parsed with `ast`, never
executed, so computed or disguised answers score 0 with a reason. The cell is the one whose nbgrader
`grade_id` is the question id, else a cell with nbgrader metadata that assigns it, else the first
code cell that assigns it.

A prediction whose reveal ran has a *record* in the notebook's outputs (autograder.build.predictions:
a display_data of RECORD_MIMETYPE `{"question": qid, "answer": "B"}`): the first valid record in
notebook order is the answer graded, whatever the answer cell says now (a change is reported, not
counted); where the outputs were cleared, the record file the reveal wrote beside the notebook.
Records are as untrusted as the rest of the notebook: malformed ones are ignored, a forged one can
only choose a letter (which `[grading] predictions = "commitment"` makes pointless). Without a
record, and for reflections, the answer cell is graded. A wrong answer's feedback never names the
key, unless the question explains its options (`Question.why`): then the grade shows why the pick and
the key are right or wrong. Before the due date (`QuestionGrade.brief`, `[feedback.before]`) a wrong
answer's grade names neither the key nor any option's explanation (a wrong option's explains itself
with the key's figures): only that it is not the best answer, and the question's hint.
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import NamedTuple

from autograder.engine.config import PREDICTION_MODES as MODES
from autograder.engine.config import BeforeView
from autograder.engine.spec import Question
from autograder.engine.submission import Submission, read_submission


SOURCE_CAP = 10_000              # characters of an answer cell that is parsed


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


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    if isinstance(src, list) and all(isinstance(line, str) for line in src):
        return "".join(src)
    return src if isinstance(src, str) else ""


def _assigns(source: str, qid: str) -> bool:
    """Whether the cell assigns qid at top level (parsed, or by its first characters if it does not
    parse or is too long or deep to parse)."""
    if qid not in source:  # cheap: most cells of a huge notebook never mention the question
        return False
    tree = _parse(source)
    if tree is None:
        return any(line.strip().startswith(qid) and "=" in line for line in source.splitlines())
    return any(isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
               and any(isinstance(t, ast.Name) and t.id == qid
                       for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))
               for node in tree.body)


def _parse(source: str) -> ast.Module | None:
    """ast.parse, or None for a cell that is not Python, too long, or nested too deeply."""
    if len(source) > SOURCE_CAP:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def answer_cell(cells: list[dict], qid: str) -> str | None:
    """The source of the question's answer cell, or None when no cell assigns it."""
    code = [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]

    def meta(c: dict) -> dict:
        m = c.get("metadata")
        m = m.get("nbgrader") if isinstance(m, dict) else None
        return m if isinstance(m, dict) else {}

    candidates = [c for c in code if _assigns(_source(c), qid)]
    for rank in (lambda c: meta(c).get("grade_id") == qid, lambda c: bool(meta(c)), lambda c: True):
        for cell in candidates:
            if rank(cell):
                return _source(cell)
    return None


def assigned_value(source: str, name: str, expected_form: str) -> tuple[ast.expr | None, str]:
    """(the expression of a cell that is exactly `<name> = <expression>`, "") else (None, reason);
    a cell still holding `<name> = None` is "not answered yet"."""
    tree = _parse(source)
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
                   predictions: str = "correctness") -> QuestionGrade:
    """One question of a submission folder: its points for the key (or, for a committed
    prediction, any option), else 0 with a reason or hint."""
    return grade_questions([question], read_submission(submission_dir, assignment_id), predictions)[0]


def grade_questions(questions: list[Question], submission: Submission,
                    predictions: str = "correctness", before: BeforeView = BeforeView()) -> list[QuestionGrade]:
    """Each question's grade from the submission's notebook, read once (its record). `predictions`: one
    of MODES; `before`: what the before view (QuestionGrade.brief) shows."""
    if predictions not in MODES:
        raise ValueError(f"predictions must be one of {', '.join(MODES)}, not {predictions!r}")
    if submission.cells is None:
        return [QuestionGrade(0.0, submission.problem)] * len(questions)
    recorded = recorded_answers(submission.cells, questions, submission.records)
    return [_grade_one(q, submission.cells, submission.notebook, recorded.get(q.id), predictions, before)
            for q in questions]


def _answer_in_cell(question: Question, cells: list[dict], notebook_name: str) -> tuple[str | None, str]:
    """(letter, "") from the answer cell as it stands, else (None, reason)."""
    source = answer_cell(cells, question.id)
    if source is None:
        return None, f"no answer cell for {question.id} was found in {notebook_name}"
    letter, problem = parse_answer(source, question.id)
    if letter is None:
        return None, problem
    if letter not in question.options:
        return None, f"{letter[:10]!r} is not one of the options {', '.join(sorted(question.options))}"
    return letter, ""


def _grade_one(question: Question, cells: list[dict], notebook_name: str, recorded: str | None,
               predictions: str, before: BeforeView = BeforeView()) -> QuestionGrade:
    now, problem = _answer_in_cell(question, cells, notebook_name)
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
    with a grade). Given `before` (the before view): a right pick's own explanation; a wrong pick's
    only with `before.explanations`, the key only with `before.keys` (and its why with both)."""
    right = question.key == letter
    lines = []
    if letter in question.why and (before is None or right or before.explanations):
        lines.append(f"Why {letter}: {question.why[letter]}")
    if not right and (before is None or before.keys):
        if question.key in question.why and (before is None or before.explanations):
            lines.append(f"The best answer is {question.key}: {question.why[question.key]}")
        elif before is not None:
            lines.append(f"The best answer is {question.key}.")
    return lines
