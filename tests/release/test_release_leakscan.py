"""Leak scan: the committed release/ is clean, and each kind of leak planted in a copy is caught."""
from __future__ import annotations

import importlib
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.build import leakscan
from autograder.build.publictests import KIT_FILE
from autograder.build.release import STUDENT_FILES
from labs import all_assignments

from release_helpers import REPO
import release_toy as toy


@pytest.fixture(scope="module")
def toy_secrets(toy_assignment):
    return leakscan.secrets_for([toy_assignment], {toy_assignment.id: Path(toy.__file__)})


def _scan_recording(monkeypatch, paths, **kw) -> tuple[list[str], set[Path]]:
    """scan(paths), and the set of files it actually read (every file passes through readable_text)."""
    read: set[Path] = set()
    original = leakscan.readable_text

    def recording(path):
        read.add(Path(path).resolve())
        return original(path)
    monkeypatch.setattr(leakscan, "readable_text", recording)
    return leakscan.scan(paths, **kw), read


def _shipped(folder: Path, assignment) -> set[Path]:
    """What a student receives of a lab: module, notebook, public tests (test file and properties)."""
    names = [f"{assignment.module}.py", f"{assignment.id}.ipynb", f"test_{assignment.module}.py", "_properties.py",
             KIT_FILE,
             *(f"{p}.py" for p in assignment.provided), *STUDENT_FILES]
    return {(folder / assignment.id / name).resolve() for name in names}


@pytest.mark.parametrize("tree", ["release", "source"])
def test_committed_tree_is_clean_and_every_shipped_file_was_scanned(tree, monkeypatch):
    problems, read = _scan_recording(monkeypatch, [REPO / tree])
    assert problems == []
    labs = all_assignments().values()
    assert len(labs) >= 5
    for assignment in labs:
        expected = _shipped(REPO / tree, assignment)
        assert all(p.is_file() for p in expected), sorted(p for p in expected if not p.is_file())
        assert expected <= read, f"{assignment.id}: not scanned: {sorted(expected - read)}"
    assert read == {p.resolve() for p in (REPO / tree).rglob("*") if p.is_file()}


@pytest.mark.parametrize("assignment", list(all_assignments().values()), ids=lambda a: a.id)
def test_leak_planted_in_a_nested_folder_of_the_committed_release_is_caught(assignment, tmp_path):
    """A solution line of the lab's reference, two folders down in a copy of its release."""
    copy = tmp_path / "release"
    shutil.copytree(REPO / "release" / assignment.id, copy / assignment.id)
    line = sorted(leakscan.solution_lines(Path(assignment.reference.__file__).read_text()))[0]
    nested = copy / assignment.id / "notes" / "old"
    nested.mkdir(parents=True)
    (nested / "scratch.py").write_text(f"# kept from the solution\n{line}\n")
    problems = leakscan.scan([copy], [assignment])
    assert problems and all("notes/old/scratch.py: solution: " in p for p in problems), problems


def test_toy_release_is_clean(toy_root, toy_secrets):
    assert leakscan.scan([toy_root / "release", toy_root / "source"], secrets=toy_secrets) == []


def test_a_solution_line_of_16_characters_is_secret_and_one_of_15_is_not():
    """The documented floor (16 characters once spaces and comments are gone, written here, not read
    from MIN_CHARS): `return alpha * b + 15` (16) is a solution line wherever it ships, `return beta * b
    + 15` (15) is too short to tell from any student's code."""
    reference = ("def f(alpha, beta, b):\n    ### BEGIN SOLUTION\n    return alpha * b + 15   # sixteen\n"
                 "    return beta * b + 15\n    ### END SOLUTION\n")
    assert leakscan.solution_lines(reference) == {"returnalpha*b+15"}
    secrets = leakscan.Secrets(solution_lines=leakscan.solution_lines(reference))
    page = "<pre>return alpha * b + 15\nreturn beta * b + 15</pre>"
    assert leakscan.scan_text("page.html", page, secrets) == ["page.html: solution: returnalpha*b+15"]


def test_every_declared_lab_has_solution_lines_and_keys():
    for assignment in all_assignments().values():
        secrets = leakscan.secrets_for([assignment])
        assert secrets.solution_lines and len(secrets.keys) == len(assignment.questions)
        assert secrets.declaration_lines, f"{assignment.id}: declaration not found"


def _set_answer(folder: Path, assignment, source: str):
    path = folder / f"{assignment.id}.ipynb"
    nb = nbformat.read(str(path), as_version=4)
    for cell in nb.cells:
        if cell.metadata.nbgrader.grade_id.endswith("-answer"):
            cell.source = source
    nbformat.write(nb, str(path))


def _append(path: Path, text: str):
    path.write_text(path.read_text() + text)


def _plant(kind, folder, assignment):
    stub = folder / "collectives.py"
    q = assignment.questions[0]
    if kind == "marker":
        _append(stub, "### BEGIN HIDDEN TESTS\n")
    elif kind == "solution":
        _append(stub, "def x(alpha_s, message_bytes, bandwidth):\n    return alpha_s + message_bytes / bandwidth\n")
    elif kind == "key":
        _set_answer(folder, assignment, f'{q.id} = "{q.key}"')
    elif kind == "declaration":
        line = next(l for l in Path(toy.__file__).read_text().splitlines() if l.startswith("ALPHA, BW"))
        _append(folder / "test_collectives.py", line + "\n")
    elif kind == "import":
        _append(folder / "test_collectives.py", "from reference.collectives import p2p_time\n")
    elif kind == "feedback-html":
        (folder / "feedback.html").write_text(
            '<pre><span class="k">return</span> <span class="n">alpha_s</span> <span class="o">+</span> '
            '<span class="n">message_bytes</span> / <span class="n">bandwidth</span></pre>')


@pytest.mark.parametrize("kind", ["marker", "solution", "key", "declaration", "import", "feedback-html"])
def test_planted_leak_is_caught(kind, toy_root, toy_assignment, toy_secrets, tmp_path):
    folder = tmp_path / toy_assignment.id
    shutil.copytree(toy_root / "release" / toy_assignment.id, folder)
    _plant(kind, folder, toy_assignment)
    problems = leakscan.scan([folder], secrets=toy_secrets)
    expected = {"feedback-html": "solution"}.get(kind, kind)
    assert problems and all(f": {expected}: " in p for p in problems), problems


def test_a_students_own_correct_answer_is_not_a_leak_in_feedback(toy_root, toy_assignment, toy_secrets, tmp_path):
    folder = tmp_path / "fb"
    shutil.copytree(toy_root / "release" / toy_assignment.id, folder)
    q = toy_assignment.questions[0]
    _set_answer(folder, toy_assignment, f'{q.id} = "{q.key}"')
    assert leakscan.scan([folder], secrets=toy_secrets, keys=False) == []
    assert leakscan.scan([folder], secrets=toy_secrets)  # but it is one in a release


def test_feedback_quoting_the_students_own_code_is_not_a_leak_but_other_solution_code_is(toy_secrets, tmp_path):
    line = sorted(toy_secrets.solution_lines)[0]
    page = tmp_path / "feedback.html"
    page.write_text(f"<pre>Traceback: SyntaxError in your module\n    {line}\n</pre>")
    mine = tmp_path / "submitted.py"
    mine.write_text(f"def f():\n    {line}\n")
    assert leakscan.scan([page], secrets=toy_secrets) != []                       # no owner: flagged
    assert leakscan.scan([page], secrets=toy_secrets, own=[mine]) == []           # the student wrote it
    mine.write_text("def f():\n    return 0\n")
    assert leakscan.scan([page], secrets=toy_secrets, own=[mine]) != []           # the student did not


@pytest.mark.parametrize("assignment", [a for a in all_assignments().values() if a.challenges], ids=lambda a: a.id)
def test_a_challenges_reference_design_or_check_code_in_a_release_is_caught(assignment, tmp_path):
    """The staff's reference design in the answer cell (a key leak; a student's own is not one in
    feedback), and a line of the challenge's staff-side check in a shipped file (a declaration leak)."""
    from autograder.classroom.samples import write_answers
    from autograder.engine.challenges import design_source
    challenge = assignment.challenges[0]
    copy = tmp_path / assignment.id
    shutil.copytree(REPO / "release" / assignment.id, copy)
    write_answers(assignment, copy / f"{assignment.id}.ipynb",
                  {challenge.id: {"source": design_source(challenge, challenge.reference_answer)}})
    assert leakscan.scan([copy], [assignment]) == [f"{copy / assignment.id}.ipynb: key: the reference design "
                                                   f"of {challenge.id}"]
    assert leakscan.scan([copy], [assignment], keys=False) == []
    check_code = Path(importlib.import_module(f"labs.{assignment.id}.challenges").__file__).read_text()
    line = sorted(leakscan.declaration_lines(check_code))[0]
    (copy / "notes.py").write_text(line + "\n")
    assert any("notes.py: declaration: " in p for p in leakscan.scan([copy], [assignment], keys=False))


# --- every part of a shipped notebook (issue 31, kind 6) ---------------------------------------------

def _colour(line: str) -> str:
    """A code line as IPython's traceback shows it: terminal colour codes between the tokens."""
    return " ".join(f"\x1b[38;5;241m{token}\x1b[39m" if not token.isidentifier() else f"\x1b[39m{token}"
                    for token in line.split())


def _html(line: str) -> str:
    """A code line as an HTML output renders it: highlighted tokens, escaped characters."""
    return "<pre>" + " ".join(f'<span class="n">{token.replace("<", "&lt;").replace("&", "&amp;")}</span>'
                              for token in line.split()) + "</pre>"


PLACES = {
    "stream output": lambda line: {"cells": [{"outputs": [nbformat.v4.new_output("stream", name="stdout", text=line)]}]},
    "display text": lambda line: {"cells": [{"outputs": [nbformat.v4.new_output("display_data", data={"text/plain": line})]}]},
    "display html": lambda line: {"cells": [{"outputs": [nbformat.v4.new_output("display_data", data={"text/html": _html(line)})]}]},
    "display json": lambda line: {"cells": [{"outputs": [nbformat.v4.new_output(
        "display_data", data={"application/json": {"deep": [{"code": line}]}})]}]},
    "execute result": lambda line: {"cells": [{"outputs": [nbformat.v4.new_output(
        "execute_result", data={"text/plain": repr(line)}, execution_count=3)]}]},
    "traceback": lambda line: {"cells": [{"outputs": [nbformat.v4.new_output(
        "error", ename="ValueError", evalue="", traceback=["\x1b[0;31mValueError\x1b[0m", "----> 4 " + _colour(line)])]}]},
    "error value": lambda line: {"cells": [{"outputs": [nbformat.v4.new_output(
        "error", ename="SyntaxError", evalue=line, traceback=[])]}]},
    "display json key": lambda line: {"cells": [{"outputs": [nbformat.v4.new_output(
        "display_data", data={"application/json": {"deep": {line: 1}}})]}]},
    "cell metadata": lambda line: {"cells": [{"metadata": {"tags": ["x"], "scalelabs": {"note": line}}}]},
    "metadata key": lambda line: {"metadata": {"scalelabs": {line: "kept"}}},
    "notebook metadata": lambda line: {"metadata": {"scalelabs": {"hint": line}}},
    "attachment": lambda line: {"cells": [{"cell_type": "markdown", "attachments": {"notes.txt": {
        "text/plain": __import__("base64").b64encode(line.encode()).decode()}}}]},
}


def _planted(notebook: Path, dest: Path, place: str, line: str) -> Path:
    """A copy of `notebook` with `line` in one part of it (merged into the first code cell, or the
    notebook's metadata)."""
    nb = nbformat.read(str(notebook), as_version=4)
    part = PLACES[place](line)
    if "metadata" in part:
        nb.metadata.update(part["metadata"])
    for planted in part.get("cells", []):
        kind = planted.get("cell_type", "code")
        cell = next(c for c in nb.cells if c.cell_type == kind)
        for key, value in planted.items():
            if key == "outputs":
                cell.outputs = list(cell.get("outputs", [])) + value
            elif key == "metadata":
                cell.metadata.update(value)
            elif key == "attachments":
                cell["attachments"] = value
    nbformat.write(nb, str(dest))
    return dest


@pytest.mark.parametrize("assignment", list(all_assignments().values()), ids=lambda a: a.id)
def test_a_solution_line_in_any_part_of_a_shipped_notebook_is_caught(assignment, tmp_path):
    """A line of the lab's reference solution hidden in an output (stream, display as text, HTML or
    JSON, a result, a traceback with its colour codes, an error's value), in metadata or in an
    attachment of the released notebook fails the scan, wherever it is; the notebook as released passes."""
    secrets = leakscan.secrets_for([assignment])
    line = max(secrets.solution_lines, key=len)   # normalised (no spaces): its source line, for realism
    source = next(raw.strip() for raw in Path(assignment.reference.__file__).read_text().splitlines()
                  if leakscan.normalise(raw) == line)
    notebook = REPO / "release" / assignment.id / f"{assignment.id}.ipynb"
    assert leakscan.scan([notebook], secrets=secrets) == []
    missed = []
    for place in sorted(PLACES):
        planted = _planted(notebook, tmp_path / f"{place.replace(' ', '_')}.ipynb", place, source)
        if not any(p.endswith(f": solution: {line}") for p in leakscan.scan([planted], secrets=secrets)):
            missed.append(place)
    assert missed == [], f"{assignment.id}: {source!r} not found in {missed}"


@pytest.mark.parametrize("place", ["traceback", "display html", "cell metadata"])
def test_a_key_in_any_part_of_a_notebook_is_caught(place, toy_root, toy_assignment, toy_secrets, tmp_path):
    q = toy_assignment.questions[0]
    notebook = toy_root / "release" / toy_assignment.id / f"{toy_assignment.id}.ipynb"
    planted = _planted(notebook, tmp_path / "planted.ipynb", place, f'{q.id} = "{q.key}"')
    assert any(": key: " in p for p in leakscan.scan([planted], secrets=toy_secrets)), place


def test_a_notebook_that_is_not_json_is_scanned_as_text(toy_secrets, tmp_path):
    broken = tmp_path / "broken.ipynb"
    broken.write_text('{"cells": [ "return alpha_s + message_bytes / bandwidth"')
    assert any(": solution: " in p for p in leakscan.scan([broken], secrets=toy_secrets))
