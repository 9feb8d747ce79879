"""Honest predictions, notebook side: a reveal records the first answer of its predictions (the
kernel, the record file, an output the engine grades, and the saved notebook read back), a re-run,
a restart or a deleted record file keeps it; it shows no key and no explanation until the student's
functions have computed its numbers, and a missing function stops it cleanly; the explanations
are not readable before the reveal. A real released notebook executed headless (nbclient) proves it
end to end: the stub with every prediction answered runs to the end with no error and no key, the
reference shows the explanations, and clearing the outputs leaves the prediction unrecorded."""
from __future__ import annotations

import dataclasses
import importlib
import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.build import leakscan, predictions
from autograder.build.release import STUDENT_DIR
from autograder.classroom import samples
from autograder.engine.questions import UNRECORDED, grade_question
from autograder.engine.submission import RECORD_MIMETYPE

import release_toy as toy
from release_helpers import REPO, execute_notebook

MIMETYPE = RECORD_MIMETYPE


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    """A stand-in kernel in a lab folder: runs a cell's source in a namespace (one per "kernel
    start"), collecting what the reveal displays; the shipped _reveal.py and _instruments.py import
    from the toolkit folder."""
    monkeypatch.chdir(tmp_path)
    for name in ("_reveal.py", "_instruments.py"):
        shutil.copyfile(STUDENT_DIR / name, tmp_path / name)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("_reveal", "_instruments", "collectives"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import _reveal
    shown: list[dict] = []
    monkeypatch.setattr(_reveal, "_display", shown.append)

    class Kernel:
        folder = tmp_path

        def __init__(self):
            self.namespace = self.restart()

        def restart(self) -> dict:
            self.namespace = {"collectives": __import__("reference.collectives", fromlist=["x"])}
            exec(predictions.setup_prelude(toy.make()), self.namespace)
            return self.namespace

        def run(self, source: str, **answers) -> list[dict]:
            self.namespace.update(answers)
            del shown[:]
            exec(source, self.namespace)
            return list(shown)

    return Kernel()


def _reveal(assignment, explain=True, source=None) -> str:
    cell = next(c for c in assignment.notebook if getattr(c, "requires", ()))
    return predictions.locked_source(cell.source if source is None else source, cell.requires, assignment,
                                     cell.requires if explain else ())


def _records(shown) -> list[str]:
    return [b[MIMETYPE]["answer"] for b in shown if MIMETYPE in b]


def _text(shown) -> str:
    return "\n".join(b.get("text/plain", "") + b.get("text/html", "") + b.get("text/markdown", "") for b in shown)


def test_the_reveal_records_the_first_answer_and_keeps_it(kernel, capsys):
    a = toy.make()
    q = a.questions[0]
    wrong = samples.wrong_letter(q.options, q.key)
    source = _reveal(a)
    shown = kernel.run(source, act1_prediction=None)
    assert "Answer act1_prediction above first" in _text(shown) and not _records(shown)
    assert capsys.readouterr().out == "" and not (kernel.folder / predictions.RECORD_FILE).exists()

    shown = kernel.run(source, act1_prediction=" " + wrong.lower())     # "b" is "B"
    assert json.loads((kernel.folder / predictions.RECORD_FILE).read_text()) == {"act1_prediction": wrong}
    assert _records(shown) == [wrong]
    assert f"Your prediction for act1_prediction: {wrong} ({q.options[wrong]})" in shown[0]["text/plain"]
    assert "(not one of the options)" not in _text(shown) and "ring:" in capsys.readouterr().out

    # a restart (a fresh namespace) with the answer changed: the file keeps the first answer, and the
    # card speaks of the recorded one, naming the current one
    kernel.restart()
    shown = kernel.run(source, act1_prediction=q.key)
    assert _records(shown) == [wrong]
    assert f"Your answer cell now says {q.key!r}; the recorded {wrong} still counts" in shown[0]["text/plain"]
    # the file deleted, same kernel: the kernel's memory keeps it
    (kernel.folder / predictions.RECORD_FILE).unlink()
    assert _records(kernel.run(source, act1_prediction=q.key)) == [wrong]


def test_a_deleted_record_file_and_a_restart_keep_the_answer_of_the_saved_notebook(kernel):
    """The record file deleted and the kernel restarted: the saved notebook's outputs still hold the
    record (the reveal reads them back), so re-running does not record a new answer."""
    a = toy.make()
    q = a.questions[0]
    wrong = samples.wrong_letter(q.options, q.key)
    source = _reveal(a)
    shown = kernel.run(source, act1_prediction=wrong)
    saved = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source, outputs=[
        nbformat.v4.new_output("display_data", data=b) for b in shown if MIMETYPE in b])])
    nbformat.write(saved, kernel.folder / f"{a.id}.ipynb")
    (kernel.folder / predictions.RECORD_FILE).unlink()
    kernel.restart()
    assert _records(kernel.run(source, act1_prediction=q.key)) == [wrong]
    # without the saved notebook (and the file, and the memory) the new answer is recorded
    (kernel.folder / f"{a.id}.ipynb").unlink()
    (kernel.folder / predictions.RECORD_FILE).unlink()
    kernel.restart()
    assert _records(kernel.run(source, act1_prediction=q.key)) == [q.key]


@pytest.mark.parametrize("answer", ["Z", "AB", 2, ""])
def test_an_answer_that_is_no_option_records_nothing_and_reveals_nothing(kernel, capsys, answer):
    shown = kernel.run(_reveal(toy.make()), act1_prediction=answer)
    assert "is not one of the options A, B, C, D" in _text(shown) and not _records(shown)
    assert "ring:" not in capsys.readouterr().out
    assert not (kernel.folder / predictions.RECORD_FILE).exists()


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"act1_prediction": 3}', '{"act1_prediction": "Z"}'])
def test_a_damaged_record_file_is_replaced_by_the_answer(kernel, capsys, content):
    (kernel.folder / predictions.RECORD_FILE).write_text(content)
    shown = kernel.run(_reveal(toy.make()), act1_prediction="b")
    assert _records(shown) == ["B"] and "ring:" in capsys.readouterr().out


def test_explanations_show_after_the_functions_ran_one_card_per_option(kernel):
    a = toy.make()
    q = a.questions[0]
    shown = kernel.run(_reveal(a), act1_prediction="A")
    cards = [b["text/html"] for b in shown if "scalelabs-option" in b.get("text/html", "")]
    assert len(cards) == 1 and cards[0].count('class="scalelabs-option"') == len(q.options)
    for letter, why in q.why.items():
        assert f"  {letter}. {q.options[letter]}" in shown[-1]["text/plain"] and why in shown[-1]["text/plain"]
    assert f'data-letter="A"' in cards[0] and "your prediction" in cards[0] and "best answer" in cards[0]
    # a reveal that is not the last of its prediction explains nothing
    assert not any(why in _text(kernel.run(_reveal(a, explain=False), act1_prediction="A")) for why in q.why.values())
    # the toy's one reveal is the last to require the prediction: its built cell explains
    assert predictions.explained_here(a.notebook, 2) == ("act1_prediction",)


def test_under_correctness_the_reveal_records_and_measures_but_the_best_answer_waits(kernel, capsys):
    """A course grading predictions for correctness: the reveal records the prediction and runs the
    lab's code (the measurement), then says the best answer comes with the feedback: no key, no
    explanation, no card per option, in what it shows or in what it carries."""
    a = toy.make()
    q = a.questions[0]
    cell = next(c for c in a.notebook if getattr(c, "requires", ()))
    source = predictions.locked_source(cell.source, cell.requires, a, cell.requires, predictions="correctness")
    shown = kernel.run(source, act1_prediction="A")
    text = _text(shown)
    assert _records(shown) == ["A"] and "ring:" in capsys.readouterr().out
    assert "come with your feedback after the due date" in text
    assert "best answer" not in text.replace("the best answer to", "") and "scalelabs-option" not in text
    assert not any(why in text for why in q.why.values())
    carried = predictions.decode(source.split("'")[-2])
    assert "key" not in carried["questions"][q.id] and "why" not in carried["questions"][q.id]


def test_a_missing_function_stops_the_reveal_cleanly_without_a_key(kernel):
    """The student's function still raises NotImplementedError: the reveal records the prediction,
    names the function to implement, shows no key and no explanation, and raises nothing (Run All
    goes on); a function of theirs that raises is named with its line."""
    a = toy.make()
    q = a.questions[0]
    (kernel.folder / "collectives.py").write_text(
        "def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n    raise NotImplementedError()\n\n\n"
        "def tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n    return 1 / (n - n)\n")
    kernel.namespace["collectives"] = importlib.import_module("collectives")   # the student's, in the folder
    shown = kernel.run(_reveal(a), act1_prediction=q.key)
    text = _text(shown)
    assert _records(shown) == [q.key]
    assert "Implement collectives.ring_allreduce_time to see this reveal." in text
    assert "best answer" not in text and not any(why in text for why in q.why.values())
    shown = kernel.run(_reveal(a, source="collectives.tree_allreduce_time(1.0, 8, 0.0, 1.0)"), act1_prediction=q.key)
    assert "collectives.tree_allreduce_time raised ZeroDivisionError" in _text(shown)
    assert "collectives.py, line 6" in _text(shown) and "best answer" not in _text(shown)


def test_a_reveal_reading_what_a_stopped_cell_never_computed_says_so(kernel):
    """An earlier cell stopped at a function to implement, so a name the reveal reads is undefined:
    the reveal says to implement what the cells above name (Labs 01 and 02 printed 'could not run
    (NameError ...)'), records the prediction and shows no key."""
    a = toy.make()
    q = a.questions[0]
    shown = kernel.run(_reveal(a, source="print(step_seconds_of_a_stopped_cell)"), act1_prediction=q.key)
    text = _text(shown)
    assert _records(shown) == [q.key]
    assert "This reveal needs step_seconds_of_a_stopped_cell, which a cell above computes with your functions" in text
    assert "could not run" not in text and "best answer" not in text


def test_an_instrument_that_cannot_draw_keeps_the_explanations_back(kernel):
    a = toy.make()
    q = a.questions[0]
    source = ("from _instruments import Instrument, Steps\n"
              "def draw(fig, n):\n    raise NotImplementedError()\n"
              "Instrument(draw, n=Steps('n', [2, 4], value=2)).render()\n"
              "import _instruments; _instruments.shown_problems.append('Implement collectives.x to see this instrument.')")
    shown = kernel.run(_reveal(a, source=source), act1_prediction=q.key)
    assert "The explanations appear here once your functions draw the instrument above" in _text(shown)
    assert not any(why in _text(shown) for why in q.why.values())


def test_reflections_are_locked_but_never_recorded_or_explained(kernel, capsys):
    a = toy.make()
    reflection = dataclasses.replace(a.questions[0], kind="reflection")
    a = dataclasses.replace(a, questions=[reflection])
    source = _reveal(a)
    shown = kernel.run(source, act1_prediction="B")
    assert not _records(shown) and not any(why in _text(shown) for why in reflection.why.values())
    assert "ring:" in capsys.readouterr().out and not (kernel.folder / predictions.RECORD_FILE).exists()
    assert predictions.reveal_data(a, ["act1_prediction"], ["act1_prediction"])["questions"]["act1_prediction"] \
        == {"kind": "reflection", "options": dict(reflection.options)}   # no key, no why shipped


def test_a_prediction_without_a_reveal_cell_gets_one(toy_assignment):
    """Every prediction has a record to grade: the builder adds a reveal after the answer of a
    prediction no Code cell requires."""
    from autograder.build.notebook import build_notebook
    a = dataclasses.replace(toy_assignment, notebook=[c for c in toy_assignment.notebook if not getattr(c, "requires", ())])
    cells = build_notebook(a).cells
    ids = [c.id for c in cells]
    assert ids.index("reveal-act1_prediction") == ids.index("act1_prediction-answer") + 1
    assert "with reveal(globals(), ('act1_prediction',)" in cells[ids.index("reveal-act1_prediction")].source


def test_explanations_are_not_readable_in_the_released_notebook(toy_root, toy_assignment):
    """Released: the explanations' plaintext appears nowhere (they are encoded in the reveal), the
    leak scan passes, and it catches an explanation or a key planted in plain text."""
    released = toy_root / "release" / toy_assignment.id
    text = leakscan.readable_text(released / f"{toy_assignment.id}.ipynb")
    q = toy_assignment.questions[0]
    assert q.why and not any(why in text or why[:30] in text for why in q.why.values())
    blob = next(c.source for c in nbformat.read(released / f"{toy_assignment.id}.ipynb", 4).cells
                if "with reveal(globals()" in c.source).split("'")[-2]
    assert predictions.decode(blob)["questions"][q.id] == {"kind": "prediction", "options": dict(q.options),
                                                            "key": q.key, "why": dict(q.why)}
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
STUDENT = "ada"   # the id the notebooks below are run under (typed in their student_id cell)


def _saved_records(nb) -> list[dict]:
    return [o["data"][RECORD_MIMETYPE] for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if RECORD_MIMETYPE in o.get("data", {})]


def _all_text(nb) -> str:
    return "\n".join(str(o.get("text", "")) + "".join(str(v) for k, v in o.get("data", {}).items() if k != "image/png")
                     for c in nb.cells for o in c.get("outputs", []))


@pytest.fixture(scope="module")
def executed_lab(tmp_path_factory):
    """lab06's committed release, the reference module, the keys answered, executed by nbclient;
    then act1_prediction changed to a wrong letter, the record file deleted and the notebook
    executed again (a fresh kernel)."""
    from labs import load
    lab = samples.version(load(LAB), STUDENT)   # the version the student's id gives (its notebook shows it)
    folder = samples.reference_submission(lab, tmp_path_factory.mktemp("lab") / LAB, REPO / "release" / LAB,
                                          recorded=False, student=STUDENT)
    notebook = folder / f"{LAB}.ipynb"
    first = execute_notebook(notebook)
    record_after_first = json.loads((folder / predictions.RECORD_FILE).read_text())
    q = lab.question("act1_prediction")
    samples.write_answers(lab, notebook, {q.id: "@wrong"}, student=STUDENT)
    (folder / predictions.RECORD_FILE).unlink()
    second = execute_notebook(notebook)
    return lab, folder, first, record_after_first, second


def test_a_real_notebook_records_at_its_reveal_and_a_rerun_keeps_the_first_answer(executed_lab):
    lab, folder, first, record_after_first, second = executed_lab
    predicted = [q for q in lab.questions if q.kind == "prediction"]
    assert record_after_first == {q.id: q.key for q in predicted}
    assert {r["question"]: r["answer"] for r in _saved_records(first)} == {q.id: q.key for q in predicted}
    q = lab.question("act1_prediction")
    after = [r for r in _saved_records(second) if r["question"] == q.id]
    assert after and all(r["answer"] == q.key for r in after)
    assert json.loads((folder / predictions.RECORD_FILE).read_text()) == record_after_first   # from the saved notebook
    assert not [o for c in second.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    text = _all_text(second)
    assert f"Your prediction for {q.id}: {q.key}" in text and "the recorded " + q.key + " still counts" in text
    assert all(why in text for why in q.why.values())   # the reference computed the numbers: explained


def test_the_engine_grades_the_first_answer_and_a_cleared_notebook_is_unrecorded(executed_lab):
    lab, folder, *_ = executed_lab
    q = lab.question("act1_prediction")
    wrong = samples.wrong_letter(q.options, q.key)
    graded = grade_question(q, folder, lab.id, "correctness")
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
    for mode in ("commitment", "correctness"):   # no record at all: unrecorded, never the answer cell
        graded = grade_question(q, stripped, lab.id, mode)
        assert graded.score == 0 and graded.answer == "" and graded.feedback.startswith(UNRECORDED), graded


@pytest.mark.parametrize("lab_id", sorted(__import__("labs").all_assignments()))
def test_the_stub_with_every_prediction_answered_runs_to_the_end_with_no_key_shown(lab_id, tmp_path):
    """Done when (issue 29): Run All of the untouched stub with every prediction answered (a wrong
    letter) ends without an error output, and no key or explanation is shown; each prediction is
    recorded."""
    from labs import load
    lab = samples.version(load(lab_id), STUDENT)
    folder = tmp_path / lab_id
    shutil.copytree(REPO / "release" / lab_id, folder)
    notebook = folder / f"{lab_id}.ipynb"
    predicted = [q for q in lab.questions if q.kind == "prediction"]
    samples.write_answers(lab, notebook, {q.id: "@wrong" for q in predicted}, student=STUDENT)
    nb = execute_notebook(notebook)
    outputs = [o for c in nb.cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    assert not [o for o in outputs if o.get("output_type") == "stream" and o.get("name") == "stderr"]
    text = _all_text(nb)
    assert "could not run" not in text and "could not draw" not in text   # each stop names what to implement
    for q in predicted:
        assert not any(why in text for why in q.why.values()), q.id
        assert "best answer" not in text
    assert {r["question"] for r in _saved_records(nb)} == {q.id for q in predicted}
