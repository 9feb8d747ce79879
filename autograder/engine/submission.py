"""One submission, read once: its file tree (walked without trusting it, autograder.engine.filetree)
and its notebook's cells, which the sandbox, the questions and the design challenges all take.

The notebook is untrusted JSON: read at most NOTEBOOK_CAP_BYTES, never executed, checked in shape
(any JSON may arrive); a notebook that cannot be read gives every question and challenge 0 with the
reason (`Submission.problem`). Prediction records (autograder.build.predictions) are read from the
cells' outputs and from the record file the reveals write beside the notebook.
"""
from __future__ import annotations

import ast
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from autograder.engine.filetree import Tree, read_regular, walk_submission

NOTEBOOK_CAP_BYTES = 20 << 20   # a notebook larger than this is not read
CELLS_CAP = 5000                 # code cells looked at
OUTPUTS_CAP = 100                # outputs of one cell looked at for prediction records
RECORD_CAP = 64                  # characters of a record's question id or answer
RECORD_MIMETYPE = "application/vnd.scalelabs.prediction+json"  # = autograder.build.predictions.MIMETYPE
RECORD_FILE = ".scalelabs_predictions.json"  # the kernel's copy of the records (predictions.RECORD_FILE)
RECORD_FILE_CAP = 64 << 10       # bytes of the record file read
SOURCE_CAP = 10_000              # characters of a cell that is parsed (a longer one is read line by line)
# Characters of code cells parsed to find every answer cell of a notebook, together: each cell is
# parsed once for all questions and challenges, the cells tagged with a question's grade id first,
# then the others in notebook order, until this much has been parsed (~0.25 s CPU). The shipped
# notebooks' cells that name a question hold ~10,000 characters; 1,990 cells of 10,000 naming every
# question cost 4.4 s per question set before.
PARSE_BUDGET_CHARS = 200_000


@dataclass(frozen=True)
class Submission:
    """What the grader takes from a submission folder, read once before any student code runs.

    `tree`: its regular files (walk_submission), which the sandbox copies; `cells`: the notebook's
    code cells (load_cells), None when there is no notebook to grade (`problem` says why, in words
    a student understands), `notebook` its file name; `records`: the prediction record file's."""
    folder: Path
    tree: Tree
    cells: list[dict] | None = None
    notebook: str = ""
    problem: str = "no notebook was read"
    records: list[tuple[str, str]] = field(default_factory=list)
    # name -> the indexes of the code cells assigning it at top level (assigning_cells), for the
    # names given to read_submission; a name asked later is indexed then
    assigning: dict[str, list[int]] = field(default_factory=dict)

    def answer_source(self, name: str) -> str | None:
        """The source of `name`'s answer cell (pick_answer), or None; indexes `name` if it was not."""
        if self.cells is None:
            return None
        if name not in self.assigning:
            self.assigning.update(assigning_cells(self.cells, [name]))
        return pick_answer(self.cells, self.assigning[name], name)


def read_submission(folder: Path, assignment_id: str | None = None, names: Sequence[str] = ()) -> Submission:
    """The submission record of `folder`: its tree, and with `assignment_id` its notebook's cells
    and prediction records (submission_cells, file_records), and the answer cells of `names` (the
    questions' and challenges' ids) found in one pass (assigning_cells)."""
    folder = Path(folder)
    tree = walk_submission(folder)
    if assignment_id is None:
        return Submission(folder, tree)
    try:
        cells, name = submission_cells(folder, assignment_id)
    except BadNotebook as exc:
        return Submission(folder, tree, problem=str(exc), records=file_records(folder))
    return Submission(folder, tree, cells, name, "", file_records(folder), assigning_cells(cells, names))


# --- which cell answers a name: each cell parsed once, within a budget ---

def cell_source(cell: dict) -> str:
    src = cell.get("source", "")
    if isinstance(src, list) and all(isinstance(line, str) for line in src):
        return "".join(src)
    return src if isinstance(src, str) else ""


def nbgrader_meta(cell: dict) -> dict:
    m = cell.get("metadata")
    m = m.get("nbgrader") if isinstance(m, dict) else None
    return m if isinstance(m, dict) else {}


def parse_cell(source: str) -> ast.Module | None:
    """ast.parse, or None for a cell that is not Python, too long, or nested too deeply."""
    if len(source) > SOURCE_CAP:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def assigned_names(source: str, names: Iterable[str], tree: ast.Module | None) -> set[str]:
    """Which of `names` the cell assigns at top level: from its parse, or, for a cell too long or
    not Python (`tree` None), from lines that start with the name and hold an "="."""
    names = set(names)
    if tree is None:
        return {n for line in source.splitlines() if "=" in line
                for n in names if line.strip().startswith(n)}
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Name) and target.id in names:
                    found.add(target.id)
    return found


def assigning_cells(cells: list, names: Sequence[str], budget_chars: int = PARSE_BUDGET_CHARS) -> dict[str, list[int]]:
    """name -> the indexes, in notebook order, of the code cells that assign it at top level. Only
    cells whose text names one of `names` are looked at, each once for all of them: those whose
    nbgrader grade_id is one of the names first, then those with nbgrader metadata, then the rest in
    notebook order; a cell is parsed only while the characters parsed stay within budget_chars (a
    cell past the budget counts as assigning nothing). A cell too long to parse is read line by line."""
    found: dict[str, list[int]] = {n: [] for n in names}
    if not names:
        return found
    mentions: dict[int, list[str]] = {}
    for i, cell in enumerate(cells):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            named = [n for n in names if n in cell_source(cell)]
            if named:
                mentions[i] = named

    def rank(i: int) -> tuple[int, int]:
        meta = nbgrader_meta(cells[i])
        return (0 if meta.get("grade_id") in mentions[i] else 1 if meta else 2, i)

    spent = 0
    for i in sorted(mentions, key=rank):
        source = cell_source(cells[i])
        if len(source) <= SOURCE_CAP:
            if spent + len(source) > budget_chars:
                continue
            spent += len(source)
            tree = parse_cell(source)
        else:
            tree = None
        for name in assigned_names(source, mentions[i], tree):
            found[name].append(i)
    for indexes in found.values():
        indexes.sort()
    return found


def pick_answer(cells: list, indexes: Sequence[int], name: str) -> str | None:
    """The answer cell among the cells assigning `name`: the one whose grade_id is `name`, else one
    with nbgrader metadata, else the first; its source, or None when no cell assigns it."""
    candidates = [cells[i] for i in indexes]
    for rank in (lambda c: nbgrader_meta(c).get("grade_id") == name, lambda c: bool(nbgrader_meta(c)), lambda c: True):
        for cell in candidates:
            if rank(cell):
                return cell_source(cell)
    return None


class BadNotebook(ValueError):
    """The notebook cannot be graded; the message says why, in words a student understands."""


def find_notebook(submission_dir: Path, assignment_id: str) -> Path | None:
    """`<assignment_id>.ipynb`, else the folder's only notebook, else None. Only regular files
    count (lstat): a notebook linked to a classmate's counts as missing."""
    def regular(path: Path) -> bool:
        try:
            return stat.S_ISREG(os.lstat(path).st_mode)
        except OSError:
            return False
    path = Path(submission_dir) / f"{assignment_id}.ipynb"
    if regular(path):
        return path
    found = other_notebooks(submission_dir)
    return found[0] if len(found) == 1 else None


def other_notebooks(submission_dir: Path) -> list[Path]:
    """The folder's notebooks that are regular files (lstat), sorted: a linked one does not count."""
    try:
        with os.scandir(submission_dir) as it:
            return sorted(Path(e.path) for e in it if e.name.endswith(".ipynb") and e.is_file(follow_symlinks=False))
    except OSError:
        return []


def load_cells(notebook: Path) -> list[dict]:
    """The notebook's code and markdown cells as dicts with a text `source` and dict `metadata`,
    checked in shape (any JSON may arrive); BadNotebook says what is wrong."""
    try:
        raw = read_regular(notebook, NOTEBOOK_CAP_BYTES)
    except (OSError, ValueError) as exc:
        raise BadNotebook(f"{notebook.name} cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        data = json.loads(raw)  # not UTF-8: a ValueError too
    except (ValueError, RecursionError):
        raise BadNotebook(f"{notebook.name} is not valid notebook JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise BadNotebook(f"{notebook.name} is not a notebook (no list of cells)")
    cells = []
    for cell in data["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        if isinstance(src, list) and all(isinstance(line, str) for line in src):
            src = "".join(src)
        if not isinstance(src, str):
            continue  # `source: [1, 2]`: not text, cannot hold an answer
        meta = cell.get("metadata")
        meta = meta if isinstance(meta, dict) else {}
        if not isinstance(meta.get("nbgrader"), dict):
            meta = {}
        cells.append({"cell_type": "code", "source": src, "metadata": meta, "records": _records(cell),
                      "shown": _shown_version(cell)})
        if len(cells) >= CELLS_CAP:
            break
    return cells


def _records(cell: dict) -> list[tuple[str, str]]:
    """The (question id, answer) records among a raw cell's outputs, in order; anything malformed
    (wrong types, over-long strings, other output types) is skipped."""
    outputs = cell.get("outputs")
    if not isinstance(outputs, list):
        return []
    found = []
    for output in outputs[:OUTPUTS_CAP]:
        data = output.get("data") if isinstance(output, dict) and output.get("output_type") == "display_data" else None
        record = data.get(RECORD_MIMETYPE) if isinstance(data, dict) else None
        if not isinstance(record, dict):
            continue
        qid, answer = record.get("question"), record.get("answer")
        if isinstance(qid, str) and isinstance(answer, str) and len(qid) <= RECORD_CAP and len(answer) <= RECORD_CAP:
            found.append((qid, answer.strip().upper()))
    return found


VERSION_MIMETYPE = "application/vnd.scalelabs.variant+json"   # = autograder/build/student/_variant.py's MIMETYPE


def _shown_version(cell: dict) -> tuple[str, int] | None:
    """(student id, version index) the notebook's setup said it showed (its first such output), or None.
    Untrusted like any output: it only ever adds a note for the student and staff, never a point."""
    outputs = cell.get("outputs")
    for output in outputs[:OUTPUTS_CAP] if isinstance(outputs, list) else []:
        data = output.get("data") if isinstance(output, dict) else None
        shown = data.get(VERSION_MIMETYPE) if isinstance(data, dict) else None
        if isinstance(shown, dict) and isinstance(shown.get("student"), str) and type(shown.get("variant")) is int \
                and len(shown["student"]) <= RECORD_CAP:
            return shown["student"], shown["variant"]
    return None


def file_records(submission_dir: Path) -> list[tuple[str, str]]:
    """The (question id, answer) pairs of the record file the reveals write beside the notebook;
    [] when it is absent, linked, too big or malformed."""
    try:
        data = json.loads(read_regular(Path(submission_dir) / RECORD_FILE, RECORD_FILE_CAP))
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    return [(qid, answer.strip().upper()) for qid, answer in data.items()
            if isinstance(answer, str) and len(qid) <= RECORD_CAP and len(answer) <= RECORD_CAP]


def submission_cells(submission_dir: Path, assignment_id: str) -> tuple[list[dict], str]:
    """(the notebook's cells as load_cells gives them, the notebook's name); BadNotebook says why not."""
    notebook = find_notebook(submission_dir, assignment_id)
    if notebook is None:
        several = [p.name for p in other_notebooks(submission_dir)]
        if several:   # find_notebook takes a lone notebook of another name, never one of several
            shown = ", ".join(several[:3]) + (f" and {len(several) - 3} more" if len(several) > 3 else "")
            raise BadNotebook(f"the notebook {assignment_id}.ipynb is not in the submission, and the grader cannot "
                              f"tell which of {shown} it is: submit one, named {assignment_id}.ipynb")
        raise BadNotebook(f"the notebook {assignment_id}.ipynb is not in the submission "
                          "(a linked notebook does not count)")
    return load_cells(notebook), notebook.name
