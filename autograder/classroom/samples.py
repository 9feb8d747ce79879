"""The demo class: materialise a sample student's submission over the released assignment.

A lab folder's `labs/<id>/samples.toml` declares each student as differences from the reference:
its answers ("key", "wrong", or {source = "raw cell"}) and its module: the reference in the
solved form (flat imports, no solution markers) with `labs/<id>/samples/<student>.py` appended, whose defs
rebind only the functions the student gets wrong (a syntax error there breaks the whole import,
as a student's would), or "stub" for the untouched release.

A samples folder (every lab has a samples.toml; tests use a folder for ad-hoc students of assignments
without a lab folder): `samples/<id>/<student>/` holds an optional `<module>.py` (absent = the untouched stub) and an
`answers.json`: `{"act1_prediction": "B" | "@key" | "@wrong" | {"source": "raw cell source"}}`
(a design challenge's answer is always `{"source": ...}`).
A sample student ran its notebook: each prediction's reveal shows the record of the answer its cell
gave the kernel (`write_answers(record=True)`), unless its samples.toml entry says `recorded = false`
(a student who cleared the outputs, or never ran the reveals: its predictions are unrecorded).
"@key" is the declaration's computed key and "@wrong" a deterministic wrong letter, so no key
letter is typed anywhere. samples/ and release/ are the course's (autograder/course.py); the
reference modules are the installed package's.
"""
from __future__ import annotations

import ast
import json
import re
import shutil
import tomllib
from pathlib import Path

import nbformat

from autograder.course import course_root
from autograder.engine.challenges import design_source
from autograder.engine.submission import RECORD_MIMETYPE
from autograder.engine.spec import Assignment
from autograder.build.stubgen import flat_imports, solved_module
from labs import lab_folder, load

# What a samples.toml table may say of a student (docs/adding-a-lab.md): its answers, its module
# ("reference" + samples/<student>.py, or the released "stub"), the functions it gets wrong, whether its
# module compiles, how many constraints of each design challenge its design meets, and the least share
# a function keeps that it does not redefine but that calls one it gets wrong.
SAMPLE_KEYS = ("answers", "module", "wrong", "compiles", "recorded", "constraints_met", "collateral")

# samples.toml's answer words -> the old answers.json markers answer_source understands
_ANSWER_WORDS = {"key": "@key", "wrong": "@wrong"}


def wrong_letter(options, key: str) -> str:
    """The option after the key (cyclically): wrong, and the same every time."""
    letters = list(options)
    return letters[(letters.index(key) + 1) % len(letters)]


def answer_source(assignment: Assignment, qid: str, value) -> str:
    if isinstance(value, dict):
        return value["source"]
    q = assignment.question(qid)
    letter = {"@key": q.key, "@wrong": wrong_letter(q.options, q.key)}.get(value, value)
    return f'{qid} = "{letter}"'


def answer_cell(nb, qid: str):
    """The notebook's answer cell for `qid` (by grade id, else by its assignment)."""
    for cell in nb.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == f"{qid}-answer":
            return cell
    for cell in nb.cells:
        if cell.cell_type == "code" and re.match(rf"\s*{re.escape(qid)}\s*=", cell.source):
            return cell
    raise KeyError(f"no answer cell for {qid!r}")


_CONSTANT_NODES = (ast.Expression, ast.Constant, ast.IfExp, ast.BoolOp, ast.And, ast.Or, ast.Compare, ast.Eq,
                   ast.NotEq, ast.BinOp, ast.Add, ast.Mult, ast.UnaryOp, ast.Not, ast.Load, ast.Subscript, ast.Slice)


def kernel_value(source: str, qid: str):
    """What a kernel running the answer cell `source` would hold in `qid`: the value of a cell that
    assigns it an expression of constants (`"B"`, `'B' if True else 'C'`), else None. Sample answers
    are staff-written, but this evaluates only constant expressions all the same."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    assigned = [node.value for node in tree.body if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == qid for t in node.targets)]
    if not assigned:
        return None
    expression = ast.Expression(assigned[-1])
    if not all(isinstance(node, _CONSTANT_NODES) for node in ast.walk(expression)):
        return None
    try:
        return eval(compile(expression, "<answer>", "eval"), {"__builtins__": {}})
    except Exception:
        return None


def reveal_cells(nb, qid: str) -> list:
    """The notebook's reveal cells of `qid` (autograder.build.predictions.locked_source)."""
    pattern = re.compile(r"^with reveal\(globals\(\), \(([^)]*)\)", re.M)
    return [cell for cell in nb.cells if cell.cell_type == "code"
            and any(qid in [q.strip(" '\"") for q in m.group(1).split(",")] for m in pattern.finditer(cell.source))]


def record_output(qid: str, letter: str) -> nbformat.NotebookNode:
    """The output a reveal leaves when it records `letter` for `qid` (autograder/build/student/_reveal.py)."""
    return nbformat.v4.new_output("display_data", data={
        RECORD_MIMETYPE: {"question": qid, "answer": letter},
        "text/plain": f"Your prediction for {qid}: {letter}, recorded: this is the answer graded."})


def version(assignment: Assignment, student: str | None) -> Assignment:
    """The student's version of the lab (the course's `[grading] variants`; autograder.engine.variants),
    whose keys "@key" means; the lab as written for no student."""
    from autograder.engine.config import load_config
    from autograder.engine.variants import base_of, for_student
    return base_of(assignment) if student is None else for_student(assignment, student, load_config())


def write_id(nb, student: str) -> None:
    """The student's id in the notebook's `student_id` cell, where it has one (a lab with variants)."""
    from autograder.build.versions import ID_CELL
    for cell in nb.cells:
        if cell.get("id") == ID_CELL:
            cell.source = f"student_id = {student!r}"


def write_answers(assignment: Assignment, notebook_path: Path, answers: dict, *, record: bool = False,
                  student: str | None = None) -> None:
    """Write the answers into their cells, "@key" and "@wrong" those of the student's version (the lab
    as written without a student; `assignment` itself when it is a version); `record`: also as a
    student who then ran the reveals, whose every reveal of a prediction shows the record of the value
    its answer cell gave the kernel (nothing where that is no option, as the reveal records nothing
    then). The student's id goes into the notebook's `student_id` cell."""
    if student is not None or not assignment.variant:
        assignment = version(assignment, student)
    nb = nbformat.read(str(notebook_path), as_version=4)
    if student is not None:
        write_id(nb, student)
    for qid, value in answers.items():
        source = answer_source(assignment, qid, value)
        answer_cell(nb, qid).source = source
        q = next((q for q in assignment.questions if q.id == qid), None)
        if record and q is not None and q.kind == "prediction":
            value = kernel_value(source, qid)
            letter = value.strip().upper() if isinstance(value, str) else ""
            for cell in reveal_cells(nb, qid) if letter in q.options else ():
                cell.outputs = [o for o in cell.get("outputs", []) if RECORD_MIMETYPE not in o.get("data", {})] \
                    + [record_output(qid, letter)]
    nbformat.write(nb, str(notebook_path))


def sample_class(assignment_id: str) -> dict[str, dict] | None:
    """student -> its samples.toml table, or None when the assignment has no lab folder samples.toml."""
    folder = lab_folder(assignment_id)
    toml = folder / "samples.toml" if folder else None
    if toml is None or not toml.is_file():
        return None
    declared = tomllib.loads(toml.read_text(encoding="utf-8"))
    for student, entry in declared.items():
        unknown = set(entry) - set(SAMPLE_KEYS)
        if unknown or entry.get("module", "reference") not in ("reference", "stub"):
            raise ValueError(f"{toml}: student {student!r} has unknown keys {sorted(unknown)} or module "
                             f"{entry.get('module')!r} (expected {', '.join(SAMPLE_KEYS)}; module = reference|stub)")
        for key, kind in (("constraints_met", int), ("collateral", float)):
            for name, value in entry.get(key, {}).items():
                if isinstance(value, bool) or not isinstance(value, (int, kind)) or value < 0:
                    raise ValueError(f"{toml}: {student}.{key}.{name} = {value!r}: a number >= 0 "
                                     f"({'constraints its design meets' if kind is int else 'least share it keeps'})")
        for qid, value in entry.get("answers", {}).items():
            if not (isinstance(value, str) and value in _ANSWER_WORDS
                    or isinstance(value, dict) and set(value) == {"source"}
                    or isinstance(value, dict) and value == {"design": "reference"}):
                raise ValueError(f"{toml}: {student}.{qid} = {value!r}: answers are \"key\", \"wrong\", "
                                 "{source = \"...\"} or {design = \"reference\"}; a letter is never typed")
    return declared


def expected_challenge_share(entry: dict, challenge) -> float:
    """The share of a design challenge's points a sample student's design earns, as its samples.toml
    declares it: `constraints_met` (unlisted: 0) over the challenge's constraints."""
    return entry.get("constraints_met", {}).get(challenge.id, 0) / len(challenge.constraints)


def sample_module(assignment: Assignment, student: str) -> str | None:
    """The text of a lab-folder sample student's module; None for the untouched stub."""
    entry = sample_class(assignment.id)[student]
    if entry.get("module", "reference") == "stub":
        return None
    # no solution markers: a student's file never has them, and feedback quotes the student's code
    text = solved_module(Path(assignment.reference.__file__).read_text(encoding="utf-8"))
    diff = lab_folder(assignment.id) / "samples" / f"{student}.py"
    if diff.is_file():
        text = text.rstrip("\n") + f"\n\n\n# --- {student}: what it gets wrong ---\n" + diff.read_text(encoding="utf-8")
    return text


def solved_dependencies(assignment: Assignment) -> dict[str, str]:
    """file name -> solved text of every reference module the solved module imports beyond the
    provided ones (Lab 02's ring term is Lab 06's `collectives`): a student who solved the lab has
    those functions too, so the demo submission carries them beside its module (staff-only)."""
    from autograder.build.release import REFERENCE_DIR

    needed, todo = {}, [assignment.reference.__name__.rpartition(".")[2]]
    while todo:
        text = (REFERENCE_DIR / f"{todo.pop()}.py").read_text(encoding="utf-8")
        for name in re.findall(r"^\s*from \.(\w+) import ", text, re.M):
            if name not in assignment.provided and name != assignment.module and f"{name}.py" not in needed:
                needed[f"{name}.py"] = solved_module((REFERENCE_DIR / f"{name}.py").read_text(encoding="utf-8"))
                todo.append(name)
    return needed


def _materialise_declared(assignment: Assignment, student: str, dest: Path, release_dir: Path,
                          graded_as: str | None = None) -> Path:
    declared = sample_class(assignment.id)
    graded_as = graded_as or student
    if student not in declared:
        raise FileNotFoundError(f"no sample student {student!r} in {lab_folder(assignment.id) / 'samples.toml'}")
    shutil.copytree(release_dir, dest, dirs_exist_ok=True)
    module = sample_module(assignment, student)
    if module is not None:
        (dest / f"{assignment.module}.py").write_text(module, encoding="utf-8")
        for name, text in solved_dependencies(assignment).items():
            (dest / name).write_text(text, encoding="utf-8")
    answers = {qid: _ANSWER_WORDS[value] if isinstance(value, str) else _design(value, assignment, graded_as, qid)
               for qid, value in declared[student].get("answers", {}).items()}
    write_answers(assignment, dest / f"{assignment.id}.ipynb", answers,
                  record=declared[student].get("recorded", True), student=graded_as)
    return dest


def _design(value: dict, assignment: Assignment, student: str, cid: str) -> dict:
    """A sample's raw answer cell; `{design = "reference"}`: the reference design of the student's version."""
    if "design" not in value:
        return value
    c = version(assignment, student).challenge(cid)
    return {"source": design_source(c, c.reference_answer)}


def materialise(assignment_id: str, student: str, dest: Path, *, assignment: Assignment | None = None,
                release_dir: Path | None = None, samples_dir: Path | None = None, graded_as: str | None = None) -> Path:
    """dest/ = release/<id>/ + the student's module + the student's answers; returns dest. `graded_as`: the
    id a door grades the sample under, when not its name (a PrairieLearn seed's id): a declared sample's
    answers are then written in that id's version, and that id typed in its notebook."""
    if assignment is None:
        assignment = load(assignment_id)
    release_dir = Path(release_dir or course_root() / "release" / assignment_id)
    if sample_class(assignment_id) is not None:
        return _materialise_declared(assignment, student, Path(dest), release_dir, graded_as)
    sample = Path(samples_dir or course_root() / "samples" / assignment_id) / student
    if not sample.is_dir():
        raise FileNotFoundError(f"no sample student {student!r} in {sample.parent}")
    dest = Path(dest)
    shutil.copytree(release_dir, dest, dirs_exist_ok=True)
    module = sample / f"{assignment.module}.py"
    if module.exists():
        shutil.copyfile(module, dest / module.name)
    answers_file = sample / "answers.json"
    if answers_file.exists():
        write_answers(assignment, dest / f"{assignment_id}.ipynb", json.loads(answers_file.read_text()), record=True,
                      student=student)
    return dest


def students(assignment_id: str, samples_dir: Path | None = None) -> list[str]:
    declared = sample_class(assignment_id)
    if declared is not None:
        return sorted(declared)
    root = Path(samples_dir or course_root() / "samples" / assignment_id)
    return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def flat_reference_modules(dest: Path) -> None:
    """Every reference module into `dest`, relative imports made flat (staff-only solution build)."""
    from autograder.build.release import REFERENCE_DIR

    for path in REFERENCE_DIR.glob("*.py"):
        if path.name != "__init__.py":
            (Path(dest) / path.name).write_text(flat_imports(path.read_text()))


def reference_answers(assignment: Assignment) -> dict:
    """The answers that earn every question and challenge point: the computed keys and each
    challenge's declared reference design."""
    return ({q.id: "@key" for q in assignment.questions}
            | {c.id: {"source": design_source(c, c.reference_answer)} for c in assignment.challenges})


def reference_submission(assignment: Assignment, dest: Path, release_dir: Path | None = None, *,
                         recorded: bool = True, student: str | None = None) -> Path:
    """A staff-only submission that should earn full marks when graded as `student` (None: in the lab
    as written): the reference, the computed keys of the student's version (their predictions
    recorded, as after running the reveals, unless `recorded` is false) and a valid design for each
    challenge of it."""
    dest = Path(dest)
    shutil.copytree(Path(release_dir or course_root() / "release" / assignment.id), dest, dirs_exist_ok=True)
    flat_reference_modules(dest)
    mine = version(assignment, student)
    write_answers(mine, dest / f"{assignment.id}.ipynb", reference_answers(mine), record=recorded)
    if student is not None:
        nb = nbformat.read(str(dest / f"{assignment.id}.ipynb"), as_version=4)
        write_id(nb, student)
        nbformat.write(nb, str(dest / f"{assignment.id}.ipynb"))
    return dest


def grade_class(assignment: Assignment, workdir: Path, samples_dir: Path | None = None) -> dict[str, dict]:
    """student -> item scores of the sample class, graded in-process over a freshly built source
    folder (so the result does not depend on release/ having been regenerated)."""
    from autograder.engine.grade import grade_submission
    from autograder.build.release import build_source

    workdir = Path(workdir)
    source = build_source(assignment, workdir / "course")
    return {student: grade_submission(assignment, materialise(assignment.id, student, workdir / "subs" / student,
                                                              assignment=assignment, release_dir=source,
                                                              samples_dir=samples_dir), student).item_scores()
            for student in students(assignment.id, samples_dir)}
