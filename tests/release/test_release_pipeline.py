"""Release pipeline: notebook cells, public checks (pass on reference, fail on stub), determinism,
staleness of the committed source/ and release/, sample materialisation."""
from __future__ import annotations

import contextlib
import filecmp
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.build import notebook, release

from autograder.classroom import samples
from labs import all_assignments

from release_helpers import REPO, flat_reference

PYTEST = str(Path(sys.executable).parent / "pytest")


def _cells(root, assignment):
    nb = nbformat.read(str(root / "release" / assignment.id / f"{assignment.id}.ipynb"), as_version=4)
    return {c.metadata.nbgrader.grade_id: c for c in nb.cells}, nb


def test_release_folder_holds_stub_provided_public_checks_and_notebook(toy_root, toy_assignment):
    names = sorted(p.name for p in (toy_root / "release" / toy_assignment.id).iterdir())
    assert names == sorted(["collectives.py", "_domain.py", "constants.py", "_properties.py", "_property_kit.py",
                            "_instruments.py", "_measured.py", "_checks.py", "_reveal.py", "_variant.py",
                            "test_collectives.py", "pytest.ini",
                            "README.md",   # what to do, check and hand in (build/student_readme.py)
                            f"{toy_assignment.id}.ipynb"])


def test_notebook_has_one_grade_cell_per_item_with_its_points(toy_root, toy_assignment):
    cells, nb = _cells(toy_root, toy_assignment)
    graded = {gid: c.metadata.nbgrader.points for gid, c in cells.items() if c.metadata.nbgrader.grade}
    expected = {f.name: f.points for f in toy_assignment.functions}
    expected.update({q.id: q.points for q in toy_assignment.questions})
    assert graded == expected
    assert all(c.metadata.nbgrader.schema_version == 3 for c in nb.cells)
    assert all(c.metadata.nbgrader.locked for gid, c in cells.items() if not gid.endswith("-answer"))


def test_answer_cell_is_editable_none_and_no_key_anywhere(toy_root, toy_assignment):
    cells, nb = _cells(toy_root, toy_assignment)
    q = toy_assignment.questions[0]
    answer = cells[f"{q.id}-answer"]
    assert answer.metadata.nbgrader.solution and not answer.metadata.nbgrader.locked
    assert answer.source == f'{q.id} = None  # your answer: "A", "B", "C" or "D"'
    text = (toy_root / "release" / toy_assignment.id / f"{toy_assignment.id}.ipynb").read_text()
    assert f'{q.id} = \\"{q.key}\\"' not in text and f'"key"' not in text


def test_setup_cell_imports_module_constants_numpy_matplotlib(toy_root, toy_assignment):
    cells, _ = _cells(toy_root, toy_assignment)
    assert cells["setup"].source.splitlines()[1:5] == [
        "import collectives", "import constants", "import numpy as np", "import matplotlib.pyplot as plt"]
    # the toy's reveal records its prediction: the setup imports the shipped recorder, in one line
    assert cells["setup"].source.splitlines()[-1].startswith("from _reveal import reveal")


@pytest.mark.parametrize("answer, ran", [(None, False), ("B", True)])
def test_prediction_lock(answer, ran, monkeypatch):
    from autograder.build.student import _reveal
    shown = []
    monkeypatch.setattr(_reveal, "_display", shown.append)
    source = notebook.locked_source('print("ran")', ("act1_prediction",))
    reminder = "Answer act1_prediction above first, then run this cell"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(source, {"act1_prediction": answer, "reveal": _reveal.reveal})
    assert out.getvalue() == ("ran\n" if ran else "")
    assert (not ran) == any(b["text/plain"].startswith(reminder) for b in shown)
    shown.clear()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(source, {"reveal": _reveal.reveal})  # the answer cell was deleted: still only the reminder
    assert out.getvalue() == "" and shown[0]["text/plain"].startswith(reminder)


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """`pytest` in the folder, as a student runs it (the folder's pytest.ini sets the options)."""
    return subprocess.run([PYTEST, "-p", "no:randomly", *args], cwd=folder, capture_output=True, text=True,
                          env={"PATH": str(Path(sys.executable).parent), "PYTHONNOUSERSITE": "1"})


def test_public_checks_pass_on_reference_and_fail_on_stub(toy_root, toy_assignment, tmp_path):
    released = toy_root / "release" / toy_assignment.id
    stub_copy = tmp_path / "stub"
    shutil.copytree(released, stub_copy)
    done = _pytest(stub_copy)
    assert done.returncode == 1, done.stdout
    assert "0 passed" in done.stdout or " passed" not in done.stdout, done.stdout

    solved = tmp_path / "solved"
    shutil.copytree(released, solved)
    flat_reference(solved)  # the reference, flattened like the released folder
    done = _pytest(solved)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(toy_assignment.functions)} passed" in done.stdout  # one test per function


def test_public_checks_do_not_need_reference_or_autograder(toy_root, toy_assignment):
    text = (toy_root / "release" / toy_assignment.id / "test_collectives.py").read_text()
    assert "reference" not in text and "autograder" not in text


def test_release_is_deterministic(toy_root, toy_assignment, tmp_path):
    again = tmp_path / "again"
    release.release_one(toy_assignment, again, __import__("release_toy").PROPERTIES_PATH)
    for step in ("source", "release"):
        _assert_same_tree(toy_root / step / toy_assignment.id, again / step / toy_assignment.id)


@pytest.fixture(scope="module")
def fresh_build(tmp_path_factory):
    """Every declared assignment released into a temporary root (one nbgrader process)."""
    root = tmp_path_factory.mktemp("fresh")
    if all_assignments():
        release.release(None, root=root)
    return root


def _assert_same_tree(a: Path, b: Path):
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b, f"{a} and {b} hold different files"
    for rel in files_a:
        assert filecmp.cmp(a / rel, b / rel, shallow=False), f"{rel} differs: rerun `scalelabs release`"


@pytest.mark.parametrize("assignment_id", sorted(all_assignments()) or ["(none declared)"])
def test_committed_source_and_release_are_not_stale(assignment_id, fresh_build):
    if assignment_id not in all_assignments():
        pytest.skip("no assignment declared yet")
    for step in ("source", "release"):
        _assert_same_tree(fresh_build / step / assignment_id, REPO / step / assignment_id)


def test_materialise_overlays_module_and_answers(toy_root, toy_assignment, tmp_path):
    sample = tmp_path / "samples" / "ada"
    sample.mkdir(parents=True)
    (sample / "collectives.py").write_text("# ada's module\n")
    (sample / "answers.json").write_text(json.dumps({"act1_prediction": "@wrong"}))
    other = tmp_path / "samples" / "bob"
    other.mkdir()
    (other / "answers.json").write_text(json.dumps({"act1_prediction": {"source": "act1_prediction = pick()"}}))
    kw = dict(assignment=toy_assignment, release_dir=toy_root / "release" / toy_assignment.id,
              samples_dir=tmp_path / "samples")
    q = toy_assignment.questions[0]

    ada = samples.materialise(toy_assignment.id, "ada", tmp_path / "out" / "ada", **kw)
    assert (ada / "collectives.py").read_text() == "# ada's module\n"
    cells, _ = _cells_of(ada / f"{toy_assignment.id}.ipynb")
    wrong = cells[f"{q.id}-answer"].source
    assert wrong.startswith(f'{q.id} = "') and wrong != f'{q.id} = "{q.key}"'

    bob = samples.materialise(toy_assignment.id, "bob", tmp_path / "out" / "bob", **kw)
    assert "NotImplementedError" in (bob / "collectives.py").read_text()  # absent module = stub
    cells, _ = _cells_of(bob / f"{toy_assignment.id}.ipynb")
    assert cells[f"{q.id}-answer"].source == "act1_prediction = pick()"
    assert samples.answer_source(toy_assignment, q.id, "@key") == f'{q.id} = "{q.key}"'


def _cells_of(path: Path):
    nb = nbformat.read(str(path), as_version=4)
    return {c.metadata.nbgrader.grade_id: c for c in nb.cells}, nb


@pytest.mark.parametrize("assignment_id", sorted(all_assignments()) or ["(none declared)"])
def test_committed_public_checks_pass_on_reference_and_examples_fail_on_stub(assignment_id, tmp_path):
    if assignment_id not in all_assignments():
        pytest.skip("no assignment declared yet")
    released = REPO / "release" / assignment_id
    solved = tmp_path / "solved"
    shutil.copytree(released, solved)
    flat_reference(solved)
    done = _pytest(solved)
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout + done.stderr
    stub = tmp_path / "stub"
    shutil.copytree(released, stub)
    done = _pytest(stub)
    assert done.returncode == 1 and " passed" not in done.stdout, done.stdout


@pytest.mark.parametrize("assignment_id", sorted(all_assignments()))
def test_a_stub_function_fails_its_public_checks_in_one_line_each(assignment_id, tmp_path):
    """A student who has written nothing yet, or one function, runs `pytest`: each check of a function
    still raising NotImplementedError fails with one line naming it (not a traceback apiece, not a
    hypothesis run), and the checks of the written function run as usual."""
    assignment = all_assignments()[assignment_id]
    stub = tmp_path / "stub"
    shutil.copytree(REPO / "release" / assignment_id, stub)
    done = _pytest(stub)
    failed = re.findall(r"^FAILED .*$", done.stdout, re.M)
    assert done.returncode == 1 and failed and " passed" not in done.stdout, done.stdout[-3000:]
    one_liners = re.findall(rf"^{assignment.module}\.(\w+) is not written yet \(it raises NotImplementedError\)",
                            done.stdout, re.M)
    assert len(one_liners) == len(failed), done.stdout[-3000:]
    assert "Traceback" not in done.stdout and "raise NotImplementedError" not in done.stdout
    # one function written (the reference's): its checks pass, the rest still say "not written yet"
    first = assignment.functions[0].name
    written = tmp_path / "written"
    shutil.copytree(stub, written)
    flat_reference(written)
    module = (written / f"{assignment.module}.py").read_text(encoding="utf-8")
    stub_module = (stub / f"{assignment.module}.py").read_text(encoding="utf-8")
    start = module.index(f"def {first}(")
    end = module.find("\ndef ", start + 1)
    ours = module[start:end if end > 0 else None]
    stub_start = stub_module.index(f"def {first}(")
    stub_end = stub_module.find("\ndef ", stub_start + 1)
    rest = stub_module[stub_end:] if stub_end > 0 else "\n"       # the first may be the module's only function
    (written / f"{assignment.module}.py").write_text(stub_module[:stub_start] + ours + rest, encoding="utf-8")
    done = _pytest(written)
    others = {f.name for f in assignment.functions} - {first}
    assert done.returncode == (1 if others else 0) and re.search(r"\b[1-9]\d* passed", done.stdout), \
        done.stdout[-3000:]
    named = set(re.findall(rf"^{assignment.module}\.(\w+) is not written yet", done.stdout, re.M))
    assert first not in named and named == others, named


def test_a_file_no_longer_built_does_not_stay_in_source(toy_assignment, tmp_path):
    """source/<id>/ is built from scratch: a file an earlier build wrote (a provided module since
    dropped from the lab) is gone, so nbgrader never releases it again."""
    stale = tmp_path / "source" / toy_assignment.id / "_old_helper.py"
    stale.parent.mkdir(parents=True)
    stale.write_text("ANSWER = 42\n")
    source_dir = release.build_source(toy_assignment, tmp_path, __import__("release_toy").PROPERTIES_PATH)
    assert not stale.exists()
    assert (source_dir / f"{toy_assignment.module}.py").is_file()
