"""Honest predictions, notebook side: a reveal records the first answer of its predictions (record
file + an output the engine grades), a re-run keeps it, explanations print after the reveal and are
not readable before it; a real released notebook executed headless (nbclient) proves it end to end."""
from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder.build import leakscan, predictions
from autograder.classroom import samples
from autograder.engine.questions import grade_question
from autograder.engine.submission import RECORD_MIMETYPE

import release_toy as toy
from release_helpers import REPO, execute_notebook


def _reveal(assignment, explain=True) -> str:
    cell = next(c for c in assignment.notebook if getattr(c, "requires", ()))
    return predictions.locked_source(cell.source, cell.requires, assignment, cell.requires if explain else ())


def _run(source: str, namespace: dict) -> tuple[str, list]:
    """Run a notebook cell's source as the kernel would; (stdout, displayed records)."""
    shown = []
    namespace.setdefault("collectives", __import__("reference.collectives", fromlist=["x"]))
    exec(predictions.setup_prelude(toy.make()), namespace)
    out = io.StringIO()
    import IPython.display
    original = IPython.display.display
    IPython.display.display = lambda data, raw=False: shown.append(data)
    try:
        with contextlib.redirect_stdout(out):
            exec(source, namespace)
    finally:
        IPython.display.display = original
    return out.getvalue(), shown


def test_the_reveal_records_the_first_answer_and_keeps_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = toy.make()
    q = a.questions[0]
    wrong = samples.wrong_letter(q.options, q.key)
    source = _reveal(a)
    namespace = {"act1_prediction": None}
    out, shown = _run(source, namespace)
    assert out == "answer act1_prediction above first\n" and not shown
    assert not (tmp_path / predictions.RECORD_FILE).exists()

    namespace["act1_prediction"] = " " + wrong.lower()
    out, shown = _run(source, namespace)
    assert json.loads((tmp_path / predictions.RECORD_FILE).read_text()) == {"act1_prediction": wrong}
    assert shown[0][RECORD_MIMETYPE] == {"question": "act1_prediction", "answer": wrong}
    assert f"recorded as {wrong} (changing it now does not change your grade)" in shown[0]["text/plain"]
    assert "ring:" in out  # the reveal itself ran

    # changed after the reveal, in a fresh kernel (a new namespace): the file keeps the first answer
    out, shown = _run(source, {"act1_prediction": q.key})
    assert shown[0][RECORD_MIMETYPE]["answer"] == wrong and f"act1_prediction is now '{q.key}'" in shown[0]["text/plain"]
    assert json.loads((tmp_path / predictions.RECORD_FILE).read_text()) == {"act1_prediction": wrong}
    # the file deleted, same kernel: the kernel's memory keeps it
    (tmp_path / predictions.RECORD_FILE).unlink()
    namespace["act1_prediction"] = q.key
    assert _run(source, namespace)[1][0][RECORD_MIMETYPE]["answer"] == wrong


@pytest.mark.parametrize("answer", ["Z", "AB", 2, ""])
def test_an_answer_that_is_no_option_records_nothing_and_reveals_nothing(tmp_path, monkeypatch, answer):
    monkeypatch.chdir(tmp_path)
    out, shown = _run(_reveal(toy.make()), {"act1_prediction": answer})
    assert "is not one of the options A, B, C, D" in out and "ring:" not in out and not shown
    assert not (tmp_path / predictions.RECORD_FILE).exists()


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"act1_prediction": 3}', '{"act1_prediction": "Z"}'])
def test_a_damaged_record_file_is_replaced_by_the_answer(tmp_path, monkeypatch, content):
    monkeypatch.chdir(tmp_path)
    (tmp_path / predictions.RECORD_FILE).write_text(content)
    out, shown = _run(_reveal(toy.make()), {"act1_prediction": "b"})
    assert shown[0][RECORD_MIMETYPE]["answer"] == "B" and "ring:" in out


def test_explanations_print_after_the_reveal_only_where_explained(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = toy.make()
    q = a.questions[0]
    out, _ = _run(_reveal(a), {"act1_prediction": "A"})
    for letter, why in q.why.items():
        assert f"  {letter}{' (the best answer)' if letter == q.key else ''}: {why}" in out
    out, _ = _run(_reveal(a, explain=False), {"act1_prediction": "A"})
    assert not any(why in out for why in q.why.values())
    # the toy's one reveal is the last to require the prediction: its built cell explains
    assert predictions.explained_here(a.notebook, 2) == ("act1_prediction",)


def test_reflections_are_locked_but_never_recorded_or_explained():
    import dataclasses
    a = toy.make()
    reflection = dataclasses.replace(a.questions[0], kind="reflection")
    a = dataclasses.replace(a, questions=[reflection])
    source = _reveal(a)
    assert "_scalelabs_reveal" not in source and "else:" in source
    assert predictions.setup_prelude(a) == "" and not predictions.revealed(a)


def test_explanations_are_not_readable_in_the_released_notebook(toy_root, toy_assignment):
    """Released: the explanations' plaintext appears nowhere (they are encoded in the reveal), the
    leak scan passes, and it catches an explanation or a key planted in plain text."""
    released = toy_root / "release" / toy_assignment.id
    text = leakscan.readable_text(released / f"{toy_assignment.id}.ipynb")
    q = toy_assignment.questions[0]
    assert q.why and not any(why in text or why[:30] in text for why in q.why.values())
    blob = next(c.source for c in nbformat.read(released / f"{toy_assignment.id}.ipynb", 4).cells
                if "_scalelabs_reveal(globals()" in c.source).split("'")[-2]
    assert predictions.decode_why(blob) == {q.id: {"key": q.key, "why": dict(q.why)}}
    secrets = leakscan.secrets_for([toy_assignment], {toy_assignment.id: Path(toy.__file__)})
    assert leakscan.scan([released], secrets=secrets) == []
    for planted, kind in ((f"# {q.why[q.key]}", "explanation"), (f'{q.id} = "{q.key}"', "key")):
        nb = nbformat.read(released / f"{toy_assignment.id}.ipynb", 4)
        nb.cells[-1].source += "\n" + planted
        copy = released.parent / "planted.ipynb"
        nbformat.write(nb, copy)
        try:
            found = leakscan.scan([copy], secrets=secrets)
        finally:
            copy.unlink()
        assert any(f": {kind}: " in p for p in found), (kind, found)


# --- a real lab, executed headless as a student would ---

LAB = "lab06_collectives"


def _records(nb) -> list[dict]:
    return [o["data"][RECORD_MIMETYPE] for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if RECORD_MIMETYPE in o.get("data", {})]


@pytest.fixture(scope="module")
def executed_lab(tmp_path_factory):
    """lab06's committed release, the reference module, the keys answered, executed by nbclient;
    then act1_prediction changed to a wrong letter and the notebook executed again."""
    from labs import load
    lab = load(LAB)
    folder = samples.reference_submission(lab, tmp_path_factory.mktemp("lab") / LAB, REPO / "release" / LAB)
    notebook = folder / f"{LAB}.ipynb"
    first = execute_notebook(notebook)
    record_after_first = json.loads((folder / predictions.RECORD_FILE).read_text())
    q = lab.question("act1_prediction")
    samples.write_answers(lab, notebook, {q.id: "@wrong"})
    second = execute_notebook(notebook)
    return lab, folder, first, record_after_first, second


def test_a_real_notebook_records_at_its_reveal_and_a_rerun_keeps_the_first_answer(executed_lab):
    lab, folder, first, record_after_first, second = executed_lab
    predicted = [q for q in lab.questions if q.kind == "prediction"]
    assert record_after_first == {q.id: q.key for q in predicted}
    assert {r["question"]: r["answer"] for r in _records(first)} == {q.id: q.key for q in predicted}
    q = lab.question("act1_prediction")
    after = [r for r in _records(second) if r["question"] == q.id]
    assert after and all(r["answer"] == q.key for r in after)
    assert json.loads((folder / predictions.RECORD_FILE).read_text()) == record_after_first
    errors = [o for c in second.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    text = "\n".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                     for c in second.cells for o in c.get("outputs", []))
    assert f"Your prediction for {q.id} is recorded as {q.key} (changing it now does not change your grade)" in text


def test_the_engine_grades_the_first_answer_of_the_executed_notebook(executed_lab):
    lab, folder, *_ = executed_lab
    q = lab.question("act1_prediction")
    wrong = samples.wrong_letter(q.options, q.key)
    graded = grade_question(q, folder, lab.id)
    assert graded.score == q.points and graded.answer == q.key
    assert f"you changed {q.id} from {q.key} to {wrong} after its reveal; your first answer {q.key} counts" in graded.feedback
    stripped = folder.parent / "no-record"
    shutil.copytree(folder, stripped)
    nb = nbformat.read(stripped / f"{LAB}.ipynb", 4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    nbformat.write(nb, stripped / f"{LAB}.ipynb")
    assert grade_question(q, stripped, lab.id).score == q.points  # outputs cleared: the record file
    (stripped / predictions.RECORD_FILE).unlink()
    assert grade_question(q, stripped, lab.id).score == 0  # no record: the answer cell, as today
