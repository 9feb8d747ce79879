"""Every released notebook as a student uses it: JupyterLab in headless Chromium, a copy of the
released folder whose module is the reference solution (and the computed answers), Run All, no error
output anywhere, a screenshot per notebook under the test's tmp folder; every instrument rendered as
widgets, one control moved per instrument and its readout seen to change. The instrument demo (a test
notebook on Lab 06, never released) has every control moved, in JupyterLab and in Jupyter Notebook 7.
The student's first screen of every lab (the title, not code), a prediction of every lab answered
before the functions are written (no key, no traceback, Run All completes, the grade cells stay
hidden), and Lab 06 as a student meets it: the reveal once they are written (one card per option, the recorded answer
marked), and a notebook whose outputs were cleared graded as unrecorded.

Skips only where chromium cannot start (SCALELABS_CHROMIUM names another executable); with CI=true
that is a failure (tests/browser/test_browser_availability.py).
"""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import demo_notebook  # noqa: E402
import jupyter_browser as jb  # noqa: E402

from autograder.classroom import samples  # noqa: E402
from autograder.classroom.samples import reference_submission  # noqa: E402
from autograder.engine.questions import UNRECORDED, grade_question  # noqa: E402
from autograder.engine.submission import RECORD_FILE  # noqa: E402
from labs import all_assignments, load  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
LABS = sorted(all_assignments())
STUDENT = "browser-student"   # the id typed in every notebook here: its version is what the page shows
TWO = ("alice", "bob")        # two students of Lab 06 in different versions (issue 45)
# a markdown output (a version's text shown by _variant.show): JupyterLab puts both classes on one element
SHOWN_MARKDOWN = ".jp-OutputArea-output.jp-RenderedMarkdown"
VIEWPORT = {"width": 1280, "height": 900}


@pytest.fixture(scope="module", autouse=True)
def browser():
    """Chromium, first of all (autouse): where it cannot start the module skips before building anything."""
    yield from jb.chromium_or_skip()


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A folder per lab (the released folder + reference module + keyed answers), the demo notebook
    beside Lab 06's, and one more demo folder whose module is the untouched stub."""
    root = tmp_path_factory.mktemp("browser-course")
    for lab in LABS:
        reference_submission(load(lab), root / lab, release_dir=REPO / "release" / lab, student=STUDENT)
    demo_notebook.write(root / "lab06_collectives")
    stub = root / "stub06"
    shutil.copytree(REPO / "release" / "lab06_collectives", stub)
    demo_notebook.write(stub)
    lab06 = load("lab06_collectives")
    written = reference_submission(lab06, root / "written06", REPO / "release" / "lab06_collectives", recorded=False,
                                   student=STUDENT)
    samples.write_answers(lab06, written / "lab06_collectives.ipynb",
                          {q.id: "@wrong" for q in lab06.questions if q.kind == "prediction"}, student=STUDENT)
    for lab in LABS:   # the untouched stub, every prediction answered
        a = load(lab)
        folder = shutil.copytree(REPO / "release" / lab, root / f"answered-{lab}")
        samples.write_answers(a, folder / f"{lab}.ipynb", {q.id: "@wrong" for q in a.questions if q.kind == "prediction"},
                              student=STUDENT)
    for student in TWO:   # two students' copies of Lab 06, only their ids typed
        folder = shutil.copytree(REPO / "release" / "lab06_collectives", root / f"{student}06")
        samples.write_answers(lab06, folder / "lab06_collectives.ipynb", {}, student=student)
    return root


@pytest.fixture(scope="module")
def server(course, tmp_path_factory, browser):
    running = jb.JupyterServer(course, tmp_path_factory.mktemp("jupyter-home")).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def context(browser):
    """One browser profile for the module: JupyterLab's scripts load from its cache after the first page."""
    profile = browser.new_context(viewport=VIEWPORT)
    yield profile
    profile.close()


@pytest.fixture
def page(context, server):
    tab = context.new_page()
    yield tab
    tab.close()
    server.shut_down_kernels()


def run_and_check(page, server, notebook: Path, shots: Path, ui: str = "lab", every_control: bool = False):
    """Open, Run All, check no error, move controls; returns (moves, NotebookPage)."""
    nb = jb.NotebookPage(page, server, notebook, ui).open()
    nb.run_all()
    assert nb.error_outputs() == [], f"{notebook.name}: error output on the page"
    problems, _ = jb.saved_problems(notebook)
    assert problems == [], f"{notebook.name}: error output in the saved notebook"
    expected = jb.saved_instruments(notebook)
    assert nb.unrendered_widgets() == [], f"{notebook.name}: controls shown as text, not widgets"
    assert nb.instruments().count() == len(expected) == nb.readouts(), \
        f"{notebook.name}: {nb.instruments().count()} instruments on the page, {nb.readouts()} readouts, " \
        f"{len(expected)} in the kernel's outputs: {expected}"
    nb.screenshot_notebook(shots / f"{notebook.stem}-{ui}.png")
    moves = []
    for index in range(len(expected)):
        controls = nb.controls(index)
        assert controls, f"{notebook.name}: instrument {index} has no controls"
        for control in controls if every_control else controls[:1]:
            before = nb.readout(index)
            how = nb.move(control)
            after = nb.wait_for_readout_change(index, before, how)
            moves.append((index, how, before, after))
        nb.instruments().nth(index).locator("xpath=ancestor::div[contains(@class,'jp-Cell')][1]").screenshot(
            path=str(shots / f"{notebook.stem}-{ui}-instrument{index}-moved.png"))
    assert nb.error_outputs() == [], f"{notebook.name}: error output after moving the controls"
    nb.save()
    assert jb.saved_problems(notebook) == ([], []), f"{notebook.name}: the saved notebook shows an error"
    return moves, nb


# One xdist group (not in tests/conftest.py's SPLIT_BY_PARAM): one JupyterLab and one chromium for all of it.
@pytest.mark.parametrize("released", LABS)
def test_released_notebook_runs_all_without_error_and_its_instruments_respond(released, course, server, page, tmp_path):
    moves, _ = run_and_check(page, server, course / released / f"{released}.ipynb", tmp_path)
    print(f"{released}: {len(moves)} instruments moved; screenshots in {tmp_path}")


@pytest.mark.parametrize("ui", ["lab", "notebook"])
def test_instrument_demo_every_control_redraws_from_the_students_functions(ui, course, server, page, tmp_path):
    notebook = course / "lab06_collectives" / demo_notebook.NAME
    moves, nb = run_and_check(page, server, notebook, tmp_path, ui=ui, every_control=True)
    assert len(jb.saved_instruments(notebook)) == demo_notebook.INSTRUMENTS
    kinds = [how.split()[0] for _, how, _, _ in moves]
    assert sorted(set(kinds)) == ["buttons", "checkbox", "dropdown", "slider"], kinds
    # the first control is GPUs n: one step right from the scenario's 128 is 256
    assert moves[0][2].startswith("ring at n = 128:") and moves[0][3].startswith("ring at n = 256:"), moves[0]
    # the instrument code is collapsed: a student sees the instrument, not its source
    if ui == "lab":
        assert page.locator(".jp-InputPlaceholder").count() == demo_notebook.INSTRUMENTS
    print(f"demo in {ui}: moves {[(i, how) for i, how, _, _ in moves]}; screenshots in {tmp_path}")


def test_instrument_over_a_stub_names_the_function_to_implement_instead_of_a_traceback(course, server, page, tmp_path):
    notebook = course / "stub06" / demo_notebook.NAME
    nb = jb.NotebookPage(page, server, notebook).open()
    nb.run_all()
    problems = page.locator(".scalelabs-instrument-problem")
    assert problems.count() == demo_notebook.INSTRUMENTS
    assert problems.nth(0).inner_text().strip().endswith(
        "Implement collectives.naive_allreduce_time to see this instrument.")
    assert problems.nth(1).inner_text().strip().endswith(
        "Implement collectives.ring_allreduce_time to see this instrument.")
    assert page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').count() == 0
    # the page check of the other tests sees these as errors (so it would catch an instrument failing)
    assert len([p for p in nb.error_outputs() if "scalelabs-instrument-problem" in p]) == demo_notebook.INSTRUMENTS
    nb.screenshot_notebook(tmp_path / "stub-demo.png")


# --- the lab as a student meets it (issue 29) -------------------------------------------------------

def _visible(page, selector: str) -> list:
    """The elements matching `selector` the page shows (laid out, not under a collapsed heading)."""
    loc = page.locator(selector)
    return [loc.nth(i) for i in range(loc.count()) if loc.nth(i).is_visible()]


@pytest.mark.parametrize("released", LABS)
def test_the_first_screen_is_the_labs_title_and_story_not_code(released, course, server, page, tmp_path):
    nb = jb.NotebookPage(page, server, course / released / f"{released}.ipynb").open()
    page.wait_for_timeout(500)
    page.screenshot(path=str(tmp_path / f"{released}-first-screen.png"))
    title = page.locator(".jp-Cell").first.locator("h1")
    box = title.bounding_box()
    assert box is not None and 0 <= box["y"] < VIEWPORT["height"] / 2, f"{released}: title at {box}"
    first = page.locator(".jp-Cell").first
    assert "jp-MarkdownCell" in (first.get_attribute("class") or ""), f"{released}: the first cell is not the story"
    # no code line of the setup or of a grade cell on the first screen (the setup is collapsed)
    shown = page.locator(".jp-Cell .jp-InputArea-editor:visible .cm-line")
    on_screen = [shown.nth(i).inner_text() for i in range(shown.count())
                 if (b := shown.nth(i).bounding_box()) and b["y"] < VIEWPORT["height"]]
    assert not any(line.startswith(("import ", "from ", "def ")) for line in on_screen), on_screen
    assert not nb.error_outputs()


MATHS_SENTINEL = "Sentinel maths: $x^2$"   # typeset once MathJax has run over the notebook


@pytest.mark.parametrize("released", LABS)
def test_dollar_amounts_in_markdown_render_as_money_not_maths(released, course, server, page, tmp_path):
    """JupyterLab typesets the text between two `$` of a markdown cell or markdown output: every dollar
    amount of every markdown cell, and of every text the kernel shows in the student's version (a lab
    with variants shows its story and prompts by running), shows as "$<digits>" and nothing but a maths
    sentinel (appended, so we know MathJax ran) holds a MathJax element. Lab 01's Act II story reads
    "$<the version's price> per GPU-hour"."""
    import nbformat
    folder = shutil.copytree(course / released, course / f"dollars-{released}")   # its own predictions record
    notebook = folder / f"{released}.ipynb"   # the reference module, the keys and STUDENT's id typed
    nb_file = nbformat.read(notebook, as_version=4)
    nb_file.cells.append(nbformat.v4.new_markdown_cell(MATHS_SENTINEL))
    nbformat.write(nb_file, notebook)
    nb = jb.NotebookPage(page, server, notebook).open()
    if any(c.cell_type == "code" and "\nshow(" in c.source for c in nb_file.cells):
        nb.run_all()   # the student's version of each text that varies is a markdown output of its cell
    rendered = page.locator(f".jp-MarkdownCell .jp-RenderedMarkdown, {SHOWN_MARKDOWN}")
    maths = "mjx-container, .MathJax, .katex"
    page.wait_for_function("s => [...document.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown')]"
                           ".some(c => c.innerText.includes('Sentinel') && c.querySelector(s))", arg=maths,
                           timeout=jb.SERVER_START_S * 1000)
    page.wait_for_timeout(500)
    texts = [rendered.nth(i).inner_text() for i in range(rendered.count())]
    typeset = [t[:160] for i, t in enumerate(texts) if "Sentinel" not in t and rendered.nth(i).locator(maths).count()]
    assert typeset == [], f"{released}: markdown typeset as maths: {typeset}"
    sources = [c.source for c in nb_file.cells if c.cell_type == "markdown" and "\\$" in c.source]
    money = [t for t in texts if re.search(r"\$\d", t)]
    assert len(money) >= len(sources), f"{released}: {len(sources)} markdown cells hold dollars, {len(money)} show them"
    if released == "lab01_scale":
        lab = load(released)
        price = lab.variants.values(samples.version(lab, STUDENT).variant)["USD_PER_GPU_HOUR"]   # STUDENT's version
        story = page.locator(f".jp-MarkdownCell, {SHOWN_MARKDOWN}", has_text=f"on-demand cloud at ${price:.2f} per GPU-hour")
        assert story.count() == 1, f"Act II does not read ${price:.2f} per GPU-hour: " \
                                   f"{[t[:300] for t in texts if 'GPU-hour' in t]}"
        story.first.screenshot(path=str(tmp_path / "lab01-act2-story.png"))
        print(f"Act II story screenshot: {tmp_path / 'lab01-act2-story.png'}")


@pytest.mark.parametrize("released", LABS)
def test_a_prediction_answered_before_the_functions_are_written_shows_no_key(released, course, server, page, tmp_path):
    """The untouched stub, every prediction answered: Run All completes, no error or traceback, no key
    or explanation, each reveal says which function to implement; the grade cells stay hidden."""
    notebook = course / f"answered-{released}" / f"{released}.ipynb"
    nb = jb.NotebookPage(page, server, notebook).open()
    nb.run_all()
    nb.screenshot_notebook(tmp_path / f"{released}-answered-with-the-stub.png")
    problems, unrun = jb.saved_problems(notebook)
    assert unrun == [] and not [p for p in problems if "instrument problem" not in p and "reveal problem" not in p]
    assert page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]').count() == 0
    text = page.locator(".jp-Notebook").inner_text()
    lab = samples.version(load(released), STUDENT)
    assert "best answer" not in text and "Traceback" not in text
    assert not any(why in text for q in lab.questions for why in q.why.values())
    stops = page.locator(".scalelabs-reveal-problem")
    predicted = [q for q in lab.questions if q.kind == "prediction"]
    assert stops.count() >= len(predicted) and \
        all(re.search(r"Implement \w+\.\w+ to see this|This reveal needs \w+, which a cell above computes",
                  stops.nth(i).inner_text()) for i in range(stops.count()))
    for q in predicted:
        assert page.locator(".scalelabs-reveal").filter(has_text=f"Your prediction for {q.id}").count() >= 1, q.id
    print(f"{released}: Run All with the stub ran {len(predicted)} predictions to their records, "
          f"{stops.count()} reveals name the function to implement, no error output, no key")
    cells = page.locator(".jp-Notebook .jp-Cell")   # the grade cells, under the collapsed Grades heading
    assert cells.count() - len(_visible(page, ".jp-Notebook .jp-Cell")) == len(lab.item_ids)


def test_the_reveal_after_the_functions_are_written_explains_every_option(course, server, page, tmp_path):
    """The reference module, the predictions answered wrong: each last reveal shows one card per
    option, the recorded answer marked as the student's and the key as the best answer."""
    notebook = course / "written06" / "lab06_collectives.ipynb"
    nb = jb.NotebookPage(page, server, notebook).open()
    nb.run_all()
    assert nb.error_outputs() == [] and jb.saved_problems(notebook) == ([], [])
    lab = samples.version(load("lab06_collectives"), STUDENT)   # the letters the page shows
    for q in (q for q in lab.questions if q.kind == "prediction"):
        wrong = samples.wrong_letter(q.options, q.key)
        card = page.locator(".scalelabs-reveal").filter(has_text=f"Why each option of {q.id}")
        assert card.count() == 1, q.id
        options = card.locator(".scalelabs-option")
        assert options.count() == len(q.options)
        mine = card.locator(f'.scalelabs-option[data-letter="{wrong}"]').inner_text()
        best = card.locator(f'.scalelabs-option[data-letter="{q.key}"]').inner_text()
        assert "your prediction" in mine and q.why[wrong] in mine and "best answer" in best
        card.screenshot(path=str(tmp_path / f"{q.id}-cards.png"))
    nb.screenshot_notebook(tmp_path / "written.png")


def test_cleared_outputs_leave_the_predictions_unrecorded(course, server, page, tmp_path):
    """After the reveals ran (the previous test's notebook, run again here), a student clears every
    output in JupyterLab, saves and hands in the notebook alone: grading reports each prediction as
    unrecorded, with no points, never graded from the answer cell."""
    folder = course / "written06"
    notebook = folder / "lab06_collectives.ipynb"
    nb = jb.NotebookPage(page, server, notebook).open()
    nb.run_all()
    lab = samples.version(load("lab06_collectives"), STUDENT)
    predictions = [q for q in lab.questions if q.kind == "prediction"]
    before = [grade_question(q, folder, lab.id) for q in predictions]
    assert all(g.score == q.points for g, q in zip(before, predictions)), before
    nb.menu("Edit", "Clear Outputs of All Cells", "Clear All Outputs")
    nb.save()
    handed_in = tmp_path / "handed-in"
    handed_in.mkdir()
    shutil.copyfile(notebook, handed_in / notebook.name)
    graded = [grade_question(q, handed_in, lab.id) for q in predictions]
    assert all(g.score == 0 and g.feedback.startswith(UNRECORDED) for g in graded), graded
    (folder / RECORD_FILE).unlink()
    assert all(grade_question(q, folder, lab.id).score == 0 for q in predictions)


def test_two_students_see_their_own_numbers_and_option_orders(course, server, page, tmp_path):
    """Lab 06 as two classmates of different versions meet it in JupyterLab (issue 45): each typed their
    id; Run All shows each their own id and version, the story's cluster in their own numbers and the
    first prediction's options in their own order, as the engine grades them (the screenshots show it)."""
    from autograder.engine.variants import for_student
    lab = load("lab06_collectives")
    seen = {}
    for student in TWO:
        notebook = course / f"{student}06" / "lab06_collectives.ipynb"
        nb = jb.NotebookPage(page, server, notebook).open()
        nb.run_all()
        assert nb.error_outputs() == [], student
        version = for_student(lab, student)
        card = page.locator(".scalelabs-variant").first.inner_text()
        assert f"Your id: {student}" in card and f"version {version.variant + 1} of {lab.variant_count}" in card
        story = page.locator(SHOWN_MARKDOWN, has_text="A systems researcher writes").inner_text()
        n_gpus = lab.variants.values(version.variant)["N_GPUS"]
        assert f"on our {n_gpus} GPUs" in story, (student, story[:400])
        q = version.question("act1_prediction")
        prompt = page.locator(SHOWN_MARKDOWN, has_text="Prediction.").first
        shown = prompt.inner_text()
        order = [letter for _, letter in sorted((shown.index(text[:40]), letter) for letter, text in q.options.items())]
        assert order == list(q.options), (student, shown[:600])   # A, B, C, D as this student's version lays them out
        seen[student] = (n_gpus, [q.option_identity(letter) for letter in q.options])
        prompt.screenshot(path=str(tmp_path / f"{student}-act1-prediction.png"))
        page.screenshot(path=str(tmp_path / f"{student}-top.png"))
    assert seen[TWO[0]] != seen[TWO[1]] and seen[TWO[0]][1] != seen[TWO[1]][1], seen
    print(f"two students: {seen}; screenshots in {tmp_path}")
