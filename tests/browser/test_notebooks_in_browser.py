"""Every released notebook as a student uses it: JupyterLab in headless Chromium, a copy of the
released folder whose module is the reference solution (and the computed answers), Run All, no error
output anywhere, a screenshot per notebook under the test's tmp folder; every instrument rendered as
widgets, one control moved per instrument and its readout seen to change. The instrument demo (a test
notebook on Lab 06, never released) has every control moved, in JupyterLab and in Jupyter Notebook 7.

Skips only where chromium cannot start (SCALELABS_CHROMIUM names another executable); with CI=true
that is a failure (tests/browser/test_browser_availability.py).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import demo_notebook  # noqa: E402
import jupyter_browser as jb  # noqa: E402

from autograder.classroom.samples import reference_submission  # noqa: E402
from labs import all_assignments, load  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
LABS = sorted(all_assignments())
VIEWPORT = {"width": 1280, "height": 900}


@pytest.fixture(scope="module", autouse=True)
def browser():
    """Chromium, first of all (autouse): where it cannot start the module skips before building anything."""
    opened = jb.chromium()
    try:
        instance = opened.__enter__()
    except jb.BrowserUnavailable as exc:
        if jb.in_ci():
            pytest.fail(f"CI=true and the browser test cannot run: {exc}", pytrace=False)
        pytest.skip(f"chromium cannot start here: {exc}")
    yield instance
    opened.__exit__(None, None, None)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A folder per lab (the released folder + reference module + keyed answers), the demo notebook
    beside Lab 06's, and one more demo folder whose module is the untouched stub."""
    root = tmp_path_factory.mktemp("browser-course")
    for lab in LABS:
        reference_submission(load(lab), root / lab, release_dir=REPO / "release" / lab)
    demo_notebook.write(root / "lab06_collectives")
    stub = root / "stub06"
    shutil.copytree(REPO / "release" / "lab06_collectives", stub)
    demo_notebook.write(stub)
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


# One xdist group (not in tests/conftest.py's SPLIT_BY_LAB): one JupyterLab and one chromium for all of it.
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
