"""One submission, read once: its file tree (walked without trusting it, autograder.engine.filetree)
and its notebook's cells, which the sandbox, the questions and the design challenges all take.

The notebook is untrusted JSON: read at most NOTEBOOK_CAP_BYTES, never executed, checked in shape
(any JSON may arrive); a notebook that cannot be read gives every question and challenge 0 with the
reason (`Submission.problem`). Prediction records (autograder.build.predictions) are read from the
cells' outputs and from the record file the reveals write beside the notebook.
"""
from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from autograder.engine.filetree import Tree, read_regular, walk_submission

NOTEBOOK_CAP_BYTES = 20 << 20   # a notebook larger than this is not read
CELLS_CAP = 5000                 # code cells looked at
OUTPUTS_CAP = 100                # outputs of one cell looked at for prediction records
RECORD_CAP = 64                  # characters of a record's question id or answer
RECORD_MIMETYPE = "application/vnd.scalelabs.prediction+json"  # = autograder.build.predictions.MIMETYPE
RECORD_FILE = ".scalelabs_predictions.json"  # the kernel's copy of the records (predictions.RECORD_FILE)
RECORD_FILE_CAP = 64 << 10       # bytes of the record file read


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


def read_submission(folder: Path, assignment_id: str | None = None) -> Submission:
    """The submission record of `folder`: its tree, and with `assignment_id` its notebook's cells
    and prediction records (submission_cells, file_records)."""
    folder = Path(folder)
    tree = walk_submission(folder)
    if assignment_id is None:
        return Submission(folder, tree)
    try:
        cells, name = submission_cells(folder, assignment_id)
    except BadNotebook as exc:
        return Submission(folder, tree, problem=str(exc), records=file_records(folder))
    return Submission(folder, tree, cells, name, "", file_records(folder))


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
        cells.append({"cell_type": "code", "source": src, "metadata": meta, "records": _records(cell)})
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
