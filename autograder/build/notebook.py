"""The nbgrader source notebook of an assignment, built from `Assignment.notebook`.

Cell kinds (nbgrader metadata schema 3):

* a generated setup cell (locked) importing the student's module, `constants`, numpy, matplotlib;
* `Markdown` -> locked markdown; `Code` -> locked code, behind a prediction lock when it `requires`
  answers (it prints "answer <qid> above first" and does nothing else while one is None), and a
  reveal that records the required predictions (autograder.build.predictions);
* `Answer` -> locked prompt+options markdown, an editable answer cell `<qid> = None` (solution, no
  key anywhere) and a grade cell `grade_id=<qid>`;
* `FunctionGrades` -> one grade cell per function item, `grade_id=<function name>`;
* `Measurements` -> the model-vs-measurement element (autograder.build.measured): a locked markdown
  cell with the published setups and their sources, and a locked code cell evaluating the student's
  functions there;
* `Challenge` -> like `Answer`, for a design challenge (autograder.engine.challenges); a declared
  challenge placed nowhere goes after the last `Answer` and the code cells right after it, where
  the acts end.

Grade cells do nothing in the student's kernel: their outputs are written after execution by
`autograder.doors.nbgrader.EngineScores`, which runs the engine outside the kernel.
Cell ids equal grade ids, so the file is byte-for-byte reproducible.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.build import measured
from autograder.build.predictions import explained_here, locked_source, setup_prelude
from autograder.engine import challenges
from autograder.engine.spec import Answer, Assignment, Challenge, Code, FunctionGrades, Markdown, Measurements

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def _meta(grade_id: str, *, locked: bool = False, solution: bool = False,
          grade: bool = False, points: float | None = None) -> dict:
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked,
            "schema_version": 3, "solution": solution, "task": False}
    if grade:
        meta["points"] = points
    return {"nbgrader": meta}


def _code(grade_id: str, source: str, *, hidden: bool = False, **meta) -> nbformat.NotebookNode:
    metadata = _meta(grade_id, **meta)
    if hidden:
        # JupyterLab/Notebook 7 open the cell with its source collapsed; its output still shows
        metadata["jupyter"] = {"source_hidden": True}
    cell = new_code_cell(source, metadata=metadata)
    cell.id = grade_id
    return cell


def _markdown(grade_id: str, source: str) -> nbformat.NotebookNode:
    cell = new_markdown_cell(source, metadata=_meta(grade_id, locked=True))
    cell.id = grade_id
    return cell


def setup_source(assignment: Assignment) -> str:
    """The setup cell: the lab's own (notebook.py's first code cell, scenario imports made literal),
    else the generated default; either way followed by the prediction recorder where a reveal needs it."""
    if assignment.setup:
        return assignment.setup + setup_prelude(assignment)
    return (f"# Setup (generated): your module, the cited constants, numpy and matplotlib.\n"
            f"import {assignment.module}\n"
            "import constants\n"
            "import numpy as np\n"
            "import matplotlib.pyplot as plt" + setup_prelude(assignment))


def answer_line(question) -> str:
    letters = [f'"{letter}"' for letter in question.options]
    choices = ", ".join(letters[:-1]) + f" or {letters[-1]}" if len(letters) > 1 else letters[0]
    return f"{question.id} = None  # your answer: {choices}"


def prompt_markdown(question) -> str:
    options = "\n".join(f"- **{letter}.** {text}" for letter, text in question.options.items())
    # "X", never a real letter: an example `<qid> = "A"` would read as the key when the key is A.
    return (f"{question.prompt}\n\n{options}\n\nWrite your letter in the cell below in quotes, "
            f"e.g. `{question.id} = \"X\"` with X your letter.")


def grade_source(item: str, points: float) -> str:
    return (f"# Grade cell for `{item}` ({points:g} point{'' if points == 1 else 's'}). The autograder scores it outside this\n"
            f"# notebook; running it here does nothing.\n"
            f'print("{item}: scored by the autograder")')


def answer_cells(assignment: Assignment, qid: str) -> list:
    q = assignment.question(qid)
    return [_markdown(f"{qid}-prompt", prompt_markdown(q)),
            _code(f"{qid}-answer", answer_line(q), solution=True),
            _code(qid, grade_source(qid, q.points), locked=True, grade=True, points=q.points)]


def challenge_cells(assignment: Assignment, cid: str) -> list:
    c = assignment.challenge(cid)
    return [_markdown(f"{cid}-prompt", challenges.prompt_markdown(c)),
            _code(f"{cid}-answer", challenges.answer_line(c), solution=True),
            _code(cid, grade_source(cid, c.points), locked=True, grade=True, points=c.points)]


GRADES_HEADING = ("## Grade cells\n\nOne per function: each runs the function's public checks (as `pytest` "
                  "does) and fails while one fails; the autograder scores them outside this notebook.")


def function_grade_source(assignment: Assignment, item: str, points: float) -> str:
    """A function's grade cell runs the function's public checks (the released test module's `check`),
    so `nbgrader validate` and Run All fail on a function whose public checks fail; the score is
    still the autograder's, from outside the notebook (no door executes the notebook)."""
    # lines short enough for nbgrader validate's report, which cuts a cell's lines at 80 columns
    return (f"# Grade cell for `{item}` ({points:g} point{'' if points == 1 else 's'}): its public checks.\n"
            f"# The autograder scores it outside this notebook, hidden checks too.\n"
            f"from test_{assignment.module} import check\n"
            f'check("{item}")')


def function_grade_cells(assignment: Assignment, names) -> list:
    """The function items' grade cells, under one short heading with their sources collapsed (lab
    folders only: an old-style declaration keeps its released notebook as it was)."""
    items = [assignment.function(n) for n in names] if names else list(assignment.functions)
    grouped = bool(assignment.setup)
    cells = [_markdown("grades-heading", GRADES_HEADING)] if grouped else []
    return cells + [_code(f.name, function_grade_source(assignment, f.name, f.points), locked=True, grade=True, points=f.points,
                          hidden=grouped) for f in items]


def build_notebook(assignment: Assignment) -> nbformat.NotebookNode:
    cells = [_code("setup", setup_source(assignment), locked=True)]
    placed = {c.challenge_id for c in assignment.notebook if isinstance(c, Challenge)}
    acts_end = max((i for i, c in enumerate(assignment.notebook) if isinstance(c, Answer)), default=-1)
    while acts_end >= 0 and isinstance(next(iter(assignment.notebook[acts_end + 1:]), None), Code):
        acts_end += 1   # the last act's instruments and readouts belong to it
    for index, cell in enumerate(assignment.notebook):
        if isinstance(cell, Markdown):
            cells.append(_markdown(f"md-{index:03d}", cell.text))
        elif isinstance(cell, Code):
            source = locked_source(cell.source, cell.requires, assignment, explained_here(assignment.notebook, index))
            cells.append(_code(f"code-{index:03d}", source, locked=True, hidden=cell.hidden))
        elif isinstance(cell, Answer):
            cells.extend(answer_cells(assignment, cell.question_id))
        elif isinstance(cell, FunctionGrades):
            cells.extend(function_grade_cells(assignment, cell.names))
        elif isinstance(cell, Challenge):
            cells.extend(challenge_cells(assignment, cell.challenge_id))
        elif isinstance(cell, Measurements):
            cells.append(_markdown("measurements", measured.element_markdown(assignment)))
            cells.append(_code("measurements-compare", measured.element_source(assignment), locked=True, hidden=True))
        else:
            raise TypeError(f"unknown notebook cell {cell!r}")
        if index == acts_end:
            for c in assignment.challenges:
                if c.id not in placed:
                    cells.extend(challenge_cells(assignment, c.id))
    graded = [c.metadata["nbgrader"]["grade_id"] for c in cells if c.metadata["nbgrader"]["grade"]]
    if sorted(graded) != sorted(assignment.item_ids):
        raise ValueError(f"{assignment.id}: grade cells {graded} must be exactly one per item "
                         f"{assignment.item_ids} (add the Answer / FunctionGrades / Challenge cells)")
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": KERNELSPEC,
        "language_info": {"name": "python"},
        "scalelabs": {"assignment": assignment.id, "module": assignment.module},
    })
    nbformat.validate(nb)
    return nb


def write_notebook(assignment: Assignment, dest: Path) -> Path:
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build_notebook(assignment), str(dest))
    return dest
