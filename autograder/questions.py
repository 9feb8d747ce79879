"""Read multiple-choice answers from the student's notebook without running it.

The answer cell must be exactly `<qid> = "B"` (a comment is allowed): it is parsed with `ast`, never
executed, so computed or disguised answers score 0 with a reason. The cell is the one whose nbgrader
`grade_id` is the question id, else a cell with nbgrader metadata that assigns it, else the first
code cell that assigns it. Feedback never names the key.
"""
from __future__ import annotations

import ast
import json
from pathlib import Path

from .spec import Question


def find_notebook(submission_dir: Path, assignment_id: str) -> Path | None:
    """`<assignment_id>.ipynb`, else the folder's only notebook, else None."""
    path = Path(submission_dir) / f"{assignment_id}.ipynb"
    if path.is_file():
        return path
    found = [p for p in Path(submission_dir).glob("*.ipynb") if p.is_file()]
    return found[0] if len(found) == 1 else None


def load_cells(notebook: Path) -> list[dict]:
    data = json.loads(notebook.read_text(encoding="utf-8"))
    return [c for c in data.get("cells", []) if isinstance(c, dict)]


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _assigns(source: str, qid: str) -> bool:
    """Whether the cell assigns qid at top level (parsed, or by its first characters if it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return any(line.strip().startswith(qid) and "=" in line for line in source.splitlines())
    return any(isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
               and any(isinstance(t, ast.Name) and t.id == qid
                       for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))
               for node in tree.body)


def answer_cell(cells: list[dict], qid: str) -> str | None:
    """The source of the question's answer cell, or None when no cell assigns it."""
    code = [c for c in cells if c.get("cell_type") == "code"]
    meta = lambda c: (c.get("metadata") or {}).get("nbgrader") or {}  # noqa: E731
    candidates = [c for c in code if _assigns(_source(c), qid)]
    for rank in (lambda c: meta(c).get("grade_id") == qid, lambda c: bool(meta(c)), lambda c: True):
        for cell in candidates:
            if rank(cell):
                return _source(cell)
    return None


def parse_answer(source: str, qid: str) -> tuple[str | None, str]:
    """(letter, "") for a literal answer, else (None, reason)."""
    expected_form = f'the answer cell must be exactly {qid} = "B" (one letter in quotes)'
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None, f"the answer cell has a syntax error; {expected_form}"
    body = tree.body
    if (len(body) != 1 or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1
            or not isinstance(body[0].targets[0], ast.Name) or body[0].targets[0].id != qid):
        return None, f"the answer cell holds something else; {expected_form}"
    value = body[0].value
    if isinstance(value, ast.Constant) and value.value is None:
        return None, "not answered yet (still None)"
    if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
        return None, f"the answer is not a literal letter; {expected_form}"
    return value.value.strip().upper(), ""


def grade_question(question: Question, submission_dir: Path, assignment_id: str) -> tuple[float, str]:
    """(score, feedback) of one question: full points for the key, else 0 with a reason or hint."""
    notebook = find_notebook(submission_dir, assignment_id)
    if notebook is None:
        return 0.0, f"the notebook {assignment_id}.ipynb is not in the submission"
    try:
        cells = load_cells(notebook)
    except (OSError, ValueError):
        return 0.0, f"{notebook.name} is not a readable notebook"
    source = answer_cell(cells, question.id)
    if source is None:
        return 0.0, f"no answer cell for {question.id} was found in {notebook.name}"
    letter, problem = parse_answer(source, question.id)
    if letter is None:
        return 0.0, problem
    if letter not in question.options:
        return 0.0, f"{letter!r} is not one of the options {', '.join(sorted(question.options))}"
    if letter == question.key:
        return float(question.points), f"answered {letter}: correct"
    hint = f" Hint: {question.hint}" if question.hint else ""
    return 0.0, f"answered {letter}: not the best answer.{hint}"
