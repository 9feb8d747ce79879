"""The nbgrader source notebook of an assignment, built from `Assignment.notebook`.

What a student sees first is the lab: its first markdown cell (title and story), then the setup (one
short cell, its source collapsed: imports and the scenario's numbers; the machinery lives in the
shipped modules), then the lab's cells in order. Cell kinds (nbgrader metadata schema 3):

* `Markdown` -> locked markdown; one with `reveal=qid` is not a cell: its prediction's last reveal
  shows it once the student's functions have run (autograder.build.predictions);
* `Code` -> locked code, source collapsed where declared; a cell that `requires` answers is a reveal
  (autograder.build.predictions): a reminder until they are given, then it records the required
  predictions, runs, and stops cleanly where a student function is missing. A prediction no Code
  cell requires gets a reveal of its own after its answer cell;
* `Answer` -> locked prompt+options markdown and an editable answer cell `<qid> = None` (solution,
  no key anywhere);
* `Measurements` -> the model-vs-measurement element (autograder.build.measured): a locked markdown
  cell with the published setups and their sources, and a locked code cell evaluating the student's
  functions there;
* `Challenge` -> the same for a design challenge (autograder.engine.challenges); a declared
  challenge placed nowhere goes after the last `Answer` and the code cells right after it, where
  the acts end;
* every graded item's grade cell (`grade_id=<item>`: questions and challenges in notebook order,
  then the functions) sits under one "Grades" heading where `FunctionGrades` stands (else at the
  end), the heading collapsed in JupyterLab and Notebook 7 (`jp-MarkdownHeadingCollapsed`), each
  cell a one-line comment: a student reading the lab never meets them. A "Before you submit" note
  ends the notebook (and keeps Run All, which activates the last cell, from opening the grades).

Grade cells do nothing in the student's kernel: their outputs are written after execution by
`autograder.doors.nbgrader.EngineScores`, which runs the engine outside the kernel.
Cell ids equal grade ids, so the file is byte-for-byte reproducible.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.build import measured
from autograder.build.dollars import for_jupyterlab
from autograder.build.predictions import explained_here, first_here, locked_source, peeks, setup_prelude, with_reveals
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


def _markdown(grade_id: str, source: str, **extra) -> nbformat.NotebookNode:
    cell = new_markdown_cell(for_jupyterlab(source, f"markdown cell {grade_id}"),
                             metadata=_meta(grade_id, locked=True) | extra)
    cell.id = grade_id
    return cell


def setup_source(assignment: Assignment) -> str:
    """The setup cell: the lab's own (notebook.py's first code cell, scenario imports made literal),
    else the generated default; either way followed by the import of `reveal` where a reveal needs it."""
    if assignment.setup:
        return assignment.setup + setup_prelude(assignment)
    return (f"# Setup: your module, the cited constants, numpy and matplotlib.\n"
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
    return f"# {item}: your grade ({points:g} point{'' if points == 1 else 's'}) appears here after grading."


def grade_cell(item: str, points: float, source: str | None = None) -> nbformat.NotebookNode:
    return _code(item, source or grade_source(item, points), locked=True, grade=True, points=points, hidden=True)


def function_grade_source(assignment: Assignment, item: str, points: float) -> str:
    """A function's grade cell runs the function's public checks (the released test module's `check`),
    so `nbgrader validate` and Run All fail on a function whose public checks fail; the score is
    still the autograder's, from outside the notebook (no door executes the notebook)."""
    # lines short enough for nbgrader validate's report, which cuts a cell's lines at 80 columns
    return (f"# `{item}` ({points:g} point{'' if points == 1 else 's'}): its public checks, run here.\n"
            f"# The autograder scores it outside this notebook, hidden checks too.\n"
            f"from test_{assignment.module} import check\n"
            f'check("{item}")')


def answer_cells(assignment: Assignment, qid: str) -> list:
    q = assignment.question(qid)
    return [_markdown(f"{qid}-prompt", prompt_markdown(q)), _code(f"{qid}-answer", answer_line(q), solution=True)]


def challenge_cells(assignment: Assignment, cid: str) -> list:
    c = assignment.challenge(cid)
    return [_markdown(f"{cid}-prompt", challenges.prompt_markdown(c)),
            _code(f"{cid}-answer", challenges.answer_line(c), solution=True)]


SUBMIT = ("## Before you submit\n\nSave the notebook with its outputs and hand it in with your module. Each "
          "prediction was recorded by its reveal, in the reveal's output (and in `.scalelabs_predictions.json`): "
          "clearing the outputs erases those records, and a prediction without a record earns no points.")
GRADES_HEADING = ("## Grades\n\nAfter grading, your score and feedback for each question and function "
                  "appear in the cells of this section.")


def grade_cells(assignment: Assignment, asked: list[str], names) -> list:
    """The Grades section: its heading (collapsed: the cells under it stay hidden until opened) and
    a grade cell per item, the questions and challenges in the order asked, then the functions."""
    functions = [assignment.function(n) for n in names] if names else list(assignment.functions)
    points = assignment.item_points
    heading = _markdown("grades-heading", GRADES_HEADING, **{"jp-MarkdownHeadingCollapsed": True})
    return [heading] + [grade_cell(item, points[item]) for item in asked] + \
        [grade_cell(f.name, f.points, function_grade_source(assignment, f.name, f.points)) for f in functions]


def build_notebook(assignment: Assignment, *, predictions: str = "commitment", variants: bool = False,
                   exchange: str | None = None, validate: bool = True) -> nbformat.NotebookNode:
    """The source notebook; `predictions` (the course's `[grading] predictions`) decides whether the
    reveals may carry their keys (autograder.build.predictions.keys_ship). With `variants` (the course's
    `[grading] variants`) and a lab that declares them, every version of the lab in one notebook
    (autograder.build.versions; `exchange`: the course's nbgrader exchange, where the kernel finds
    nbgrader's id); else this version of it alone, as its students see it."""
    if variants and assignment.variant_count > 1:
        from autograder.build.versions import merge
        books = [build_notebook(assignment.variants.assignment(i), predictions=predictions, validate=False)
                 for i in range(assignment.variant_count)]   # the merged notebook is validated once
        return merge(books, assignment.id, exchange)
    declared = with_reveals(assignment, list(assignment.notebook))
    shown_at_reveal = peeks(assignment, declared)
    cells, asked, grades_at = [], [], None
    placed = {c.challenge_id for c in declared if isinstance(c, Challenge)}
    acts_end = max((i for i, c in enumerate(declared) if isinstance(c, Answer)), default=-1)
    while acts_end >= 0 and isinstance(next(iter(declared[acts_end + 1:]), None), Code):
        acts_end += 1   # the last act's instruments and readouts belong to it
    last_reveal = {qid: i for i, c in enumerate(declared) if isinstance(c, Code) for qid in c.requires}
    # cell ids: a declared cell's index in the lab's notebook (stable when reveals are added)
    number = {id(c): i for i, c in enumerate(assignment.notebook)}
    for index, cell in enumerate(declared):
        if isinstance(cell, Markdown):
            if not cell.reveal:
                cells.append(_markdown(f"md-{number[id(cell)]:03d}", cell.text))
        elif isinstance(cell, Code):
            explain = explained_here(declared, index)
            peek = "\n\n".join(shown_at_reveal[q] for q in cell.requires
                                if q in shown_at_reveal and last_reveal[q] == index)
            source = locked_source(cell.source, cell.requires, assignment, explain, peek, first_here(declared, index),
                                   predictions)
            grade_id = f"code-{number[id(cell)]:03d}" if id(cell) in number else f"reveal-{cell.requires[0]}"
            cells.append(_code(grade_id, source, locked=True, hidden=cell.hidden))
        elif isinstance(cell, Answer):
            cells.extend(answer_cells(assignment, cell.question_id))
            asked.append(cell.question_id)
        elif isinstance(cell, FunctionGrades):
            grades_at = (len(cells), cell.names)
        elif isinstance(cell, Challenge):
            cells.extend(challenge_cells(assignment, cell.challenge_id))
            asked.append(cell.challenge_id)
        elif isinstance(cell, Measurements):
            cells.append(_markdown("measurements", measured.element_markdown(assignment)))
            cells.append(_code("measurements-compare", measured.element_source(assignment), locked=True, hidden=True))
        else:
            raise TypeError(f"unknown notebook cell {cell!r}")
        if index == acts_end:
            for c in assignment.challenges:
                if c.id not in placed:
                    cells.extend(challenge_cells(assignment, c.id))
                    asked.append(c.id)
    at, names = grades_at or (len(cells), ())
    cells[at:at] = grade_cells(assignment, asked, names)
    # last: Run All leaves the last cell active, and JupyterLab opens the collapsed section holding it
    cells.append(_markdown("before-you-submit", SUBMIT))
    # the lab opens on its title and story: the setup follows the first markdown cell
    first = 1 if declared and isinstance(declared[0], Markdown) and not declared[0].reveal else 0
    cells.insert(first, _code("setup", setup_source(assignment), locked=True, hidden=bool(first)))
    graded = [c.metadata["nbgrader"]["grade_id"] for c in cells if c.metadata["nbgrader"]["grade"]]
    if sorted(graded) != sorted(assignment.item_ids):
        raise ValueError(f"{assignment.id}: grade cells {graded} must be exactly one per item "
                         f"{assignment.item_ids} (add the Answer / FunctionGrades / Challenge cells)")
    nb = new_notebook(cells=cells, metadata={
        "kernelspec": KERNELSPEC,
        "language_info": {"name": "python"},
        "scalelabs": {"assignment": assignment.id, "module": assignment.module},
    })
    if validate:
        nbformat.validate(nb)
    return nb


def write_notebook(assignment: Assignment, dest: Path, *, predictions: str = "commitment", variants: bool = False,
                   exchange: str | None = None) -> Path:
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(build_notebook(assignment, predictions=predictions, variants=variants, exchange=exchange), str(dest))
    return dest
