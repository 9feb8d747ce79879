"""The instrument toolkit shipped to students (autograder/build/student/_instruments.py), without a
browser: what a draw shows at the scenario, the message that replaces a traceback for each way a
student's function can fail, the controls' checks, moving a widget, and the demo notebook run
headless (nbclient, as nbconvert or CI would) with the reference, with the stub and without ipywidgets.
"""
from __future__ import annotations

import base64
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).parent))

import demo_notebook  # noqa: E402

import reference.collectives as ref  # noqa: E402
from reference import constants as C  # noqa: E402
from autograder.build.release import STUDENT_DIR  # noqa: E402
from autograder.classroom.samples import reference_submission  # noqa: E402
from labs import load  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TOOLKIT = STUDENT_DIR / "_instruments.py"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

STUDENT = '''\
def ok(x):
    return 2.0 * x

def stub(x):
    raise NotImplementedError()

def outer(x):
    return stub(x) + 1.0

def buggy(x):
    return _helper(x)

def _helper(x):
    return 1.0 / (x - x)

def no_return(x):
    2.0 * x

def text(x):
    return "ring"
'''


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module   # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def kit(tmp_path):
    """(toolkit, student module) loaded from one lab-like folder, as a notebook kernel sees them."""
    shutil.copyfile(TOOLKIT, tmp_path / "_instruments.py")
    (tmp_path / "physics.py").write_text(STUDENT)
    tag = tmp_path.name.replace("-", "_")
    return _load(tmp_path / "_instruments.py", f"instruments_{tag}"), _load(tmp_path / "physics.py", f"physics_{tag}")


def _instrument(kit, body):
    """An instrument over x (a slider, scenario 3) whose draw plots and reads out body(physics, x)."""
    toolkit, physics = kit

    def draw(fig, x):
        y = body(physics, x)
        fig.subplots().plot([0, x], [0, y])
        return f"y = {y:.3g}"
    return toolkit.Instrument(draw, x=toolkit.Slider("x", 1, 10, value=3))


def test_scenario_draw_is_a_png_and_the_readout_of_the_students_function(kit):
    inst = _instrument(kit, lambda p, x: p.ok(x))
    frame = inst.render()
    assert frame.problem is None and frame.png.startswith(PNG_MAGIC)
    assert frame.readout == "y = 6"
    assert inst.render().png == frame.png, "the same values must draw the same bytes"
    moved = inst.render(x=4)
    assert moved.readout == "y = 8" and moved.png != frame.png


def test_stub_names_the_function_to_implement(kit):
    frame = _instrument(kit, lambda p, x: p.stub(x)).render()
    assert frame.png is None and frame.details is None
    assert frame.problem == f"Implement physics.stub to see this instrument."


def test_implemented_function_calling_a_stub_names_the_stub(kit):
    assert _instrument(kit, lambda p, x: p.outer(x)).render().problem == "Implement physics.stub to see this instrument."


def test_a_bug_names_the_function_called_where_it_broke_and_the_settings(kit):
    frame = _instrument(kit, lambda p, x: p.buggy(x)).render()
    assert frame.problem.startswith("physics.buggy raised ZeroDivisionError: float division by zero (physics.py, line 14, "
                                    "in _helper) at x = 3.")
    assert frame.details is None, "a student's own bug needs no staff traceback"


def test_a_missing_return_is_named(kit):
    frame = _instrument(kit, lambda p, x: p.no_return(x)).render()
    assert frame.problem.startswith("physics.no_return returned None at x = 3: it must return its result")
    assert "Traceback" in frame.details


def test_a_wrong_kind_of_return_is_shown_with_the_function_that_returned_it(kit):
    frame = _instrument(kit, lambda p, x: p.text(x) * 2.0).render()
    assert "your last function called, physics.text, returned 'ring'" in frame.problem


def test_a_fault_of_the_instrument_itself_says_so_and_keeps_the_traceback_for_staff(kit):
    toolkit, _ = kit

    def draw(fig, x):
        return {"a": 1}["b"]
    frame = toolkit.Instrument(draw, x=toolkit.Slider("x", 1, 10, value=3)).render()
    assert frame.problem == "This instrument could not draw (KeyError: 'b') at x = 3."
    assert "KeyError" in frame.details


@pytest.mark.parametrize("make, message", [
    (lambda t: t.Slider("n", 1, 10, value=11), "control 'n': value 11 is outside [1, 10]"),
    (lambda t: t.Slider("n", 5, 5, value=5), "control 'n': low 5 must be below high 5"),
    (lambda t: t.LogSlider("bytes", 0, 1e9, value=1e6), "control 'bytes': low must be > 0 on a log slider"),
    (lambda t: t.Steps("n", [2, 4, 8], value=16), "control 'n': value 16 is not one of ['2', '4', '8']"),
    (lambda t: t.Dropdown("link", {"NDR": 50e9, "HDR": 25e9}, value=50e9), "control 'link': value 50000000000.0 is not one of ['NDR', 'HDR']"),
    (lambda t: t.Dropdown("link", [], value=None), "control 'link': no options"),
    (lambda t: t.Toggle("tree", value=1), "control 'tree': value must be True or False, got 1"),
    (lambda t: t.Slider("", 1, 10, value=3), "a control needs a label"),
])
def test_a_control_that_cannot_hold_its_scenario_is_refused_with_its_name(kit, make, message):
    toolkit, _ = kit
    with pytest.raises(ValueError) as error:
        make(toolkit)
    assert message in str(error.value)


def test_draw_must_take_every_control(kit):
    toolkit, _ = kit
    with pytest.raises(TypeError, match=r"one parameter per control \['n', 'm'\]"):
        toolkit.Instrument(lambda fig, n: None, n=toolkit.Slider("n", 1, 4, value=2), m=toolkit.Toggle("m", value=True))
    with pytest.raises(TypeError, match=r"\['n'\] must be controls"):
        toolkit.Instrument(lambda fig, n: None, n=3)


def test_widgets_start_at_the_scenario_and_moving_one_redraws(kit):
    toolkit, physics = kit
    seen = []

    def draw(fig, x, n, scale, link, log):
        seen.append((x, n, scale, link, log))
        return f"{physics.ok(x) * scale:.3g} on {link}"
    inst = toolkit.Instrument(draw, x=toolkit.Slider("x", 1, 10, value=3),
                              n=toolkit.Steps("n", [2, 4, 8], value=4),
                              scale=toolkit.Dropdown("scale", {"one": 1.0, "ten": 10.0}, value="ten"),
                              link=toolkit.Buttons("link", ["NDR", "HDR"], value="HDR"),
                              log=toolkit.Toggle("log", value=False))
    inst.show()   # outside a kernel: builds the widgets, displays as text
    assert {name: w.value for name, w in inst.widgets.items()} == dict(x=3, n=4, scale=10.0, link="HDR", log=False)
    assert seen == [(3, 4, 10.0, "HDR", False)] and inst.frame.readout == "60 on HDR"
    inst.widgets["x"].value = 5
    assert inst.frame.readout == "100 on HDR"
    assert inst.set(link="NDR").readout == "100 on NDR"
    assert seen[-1] == (5, 4, 10.0, "NDR", False)


# --- the demo notebook, headless --------------------------------------------------------------------
def _run(folder: Path, env: dict | None = None) -> list[dict]:
    """Execute the demo notebook in `folder` (nbclient); per instrument: controls text, png, readout."""
    nb = nbformat.read(str(folder / demo_notebook.NAME), as_version=4)
    client = NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(folder)}})
    client.execute(env={**os.environ, **(env or {})})   # the kernel's environment
    instruments, errors = [], []
    for cell in nb.cells:
        outputs = [o for o in cell.get("outputs", []) if o.output_type == "display_data"]
        errors += [o for o in cell.get("outputs", []) if o.output_type == "error" or o.get("name") == "stderr"]
        if outputs and outputs[0].data.get("text/plain", "").startswith("Controls ("):
            assert len(outputs) == 3, [o.data.get("text/plain") for o in outputs]
            png = outputs[1].data.get("image/png")
            instruments.append(dict(controls=outputs[0].data["text/plain"], png=png and base64.b64decode(png),
                                    readout=outputs[2].data["text/plain"]))
    assert errors == [], errors
    return instruments


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    folder = reference_submission(load("lab06_collectives"), tmp_path_factory.mktemp("solved"),
                                  release_dir=REPO / "release" / "lab06_collectives")
    demo_notebook.write(folder)
    return folder


@pytest.fixture(scope="module")
def solved_run(solved):
    return _run(solved)


@pytest.fixture(scope="module")
def no_ipywidgets(tmp_path_factory):
    """A PYTHONPATH entry whose `ipywidgets` cannot be imported (a machine without it)."""
    folder = tmp_path_factory.mktemp("no-ipywidgets")
    (folder / "ipywidgets").mkdir()
    (folder / "ipywidgets" / "__init__.py").write_text('raise ImportError("ipywidgets is not installed")\n')
    return {"PYTHONPATH": str(folder)}


def test_headless_run_draws_each_instrument_once_at_the_scenario(solved_run):
    assert len(solved_run) == demo_notebook.INSTRUMENTS
    first = solved_run[0]
    assert first["controls"] == ("Controls (move them in JupyterLab or Jupyter Notebook): GPUs n = 128, "
                                 "message (bytes) = 1.4e+11, link = InfiniBand NDR, show the binary tree = True")
    ring_s = ref.ring_allreduce_time(1.4e11, 128, C.IB_ALPHA_S, C.IB_NDR400_BANDWIDTH)
    latency_s = ref.ring_allreduce_time(0.0, 128, C.IB_ALPHA_S, C.IB_NDR400_BANDWIDTH)
    assert first["readout"].splitlines()[0] == (f"ring at n = 128: {ring_s:.4g} s = latency {latency_s:.4g} s + "
                                                f"bandwidth {ring_s - latency_s:.4g} s")
    crossover = ref.ring_tree_crossover_bytes(128, C.IB_ALPHA_S, C.IB_NDR400_BANDWIDTH)
    assert solved_run[1]["readout"] == f"ring-tree crossover at 128 GPUs: {crossover:.4g} bytes"
    assert all(i["png"].startswith(PNG_MAGIC) for i in solved_run)


def test_without_ipywidgets_the_same_figures_are_drawn_and_the_controls_said_fixed(solved, solved_run, no_ipywidgets):
    again = _run(solved, no_ipywidgets)
    assert [i["png"] for i in again] == [i["png"] for i in solved_run], "a second headless run must draw the same bytes"
    assert [i["readout"] for i in again] == [i["readout"] for i in solved_run]
    assert all(i["controls"].startswith("Controls (fixed: install ipywidgets to move them): ") for i in again)


def test_headless_run_over_the_stub_names_the_functions_to_implement(tmp_path):
    shutil.copytree(REPO / "release" / "lab06_collectives", tmp_path, dirs_exist_ok=True)
    demo_notebook.write(tmp_path)
    run = _run(tmp_path)
    assert [(i["png"], i["readout"]) for i in run] == [
        (None, "Implement collectives.naive_allreduce_time to see this instrument."),
        (None, "Implement collectives.ring_allreduce_time to see this instrument.")]


def test_public_checks_of_a_released_folder_need_no_ipywidgets(solved, no_ipywidgets):
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist"], cwd=solved, capture_output=True,
                          text=True, env={"PATH": str(Path(sys.executable).parent), **no_ipywidgets})
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout + done.stderr


def test_every_released_folder_ships_the_toolkit_unchanged():
    for folder in sorted((REPO / "release").iterdir()):
        assert (folder / "_instruments.py").read_bytes() == TOOLKIT.read_bytes(), folder.name
