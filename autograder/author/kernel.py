"""A lab's built notebook run as a student's kernel would run it, with the reference standing in for
the student's module: what the lab tests and `scalelabs lint` read (printed readouts, the text a
student sees before each question). Headless: matplotlib's Agg backend, plt.show closing figures.
"""
from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from autograder.build.notebook import build_notebook  # noqa: E402
from autograder.build.publictests import write_public_tests  # noqa: E402
from autograder.build.release import copy_student_files  # noqa: E402
from autograder.classroom import samples  # noqa: E402


@contextlib.contextmanager
def student_kernel(tmp: Path, assignment=None):
    """A namespace like a student's kernel: the flat reference modules importable from `tmp` as the
    student's module next to the shipped helpers (the instrument toolkit) and, given the assignment,
    its public checks (the grade cells import them), `tmp` the working folder (reveals write their
    record file there), plt.show closing figures."""
    tmp.mkdir(parents=True, exist_ok=True)
    samples.flat_reference_modules(tmp)
    copy_student_files(tmp)   # the instrument toolkit, as released
    if assignment is not None:
        try:
            write_public_tests(assignment, tmp)
        except Exception:   # a worked example the reference refuses: lint's items rule names it; the grade
            pass            # cells then fail on their import, as a broken release would
    names = {p.stem for p in tmp.glob("*.py")}
    saved = {n: sys.modules.pop(n) for n in list(sys.modules) if n in names}
    sys.path.insert(0, str(tmp))
    show = plt.show
    plt.show = lambda *args, **kwargs: plt.close("all")
    try:
        yield
    finally:
        plt.show = show
        sys.path.remove(str(tmp))
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)
        plt.close("all")


@contextlib.contextmanager
def mock_display():
    """IPython's display outside a kernel prints whole mime bundles (PNG bytes); print only text/plain."""
    import IPython.display

    real = IPython.display.display

    def display(*objs, raw=False, **kwargs):
        for obj in objs:
            print(obj.get("text/plain", "") if raw and isinstance(obj, dict) else obj)
    IPython.display.display = display
    try:
        yield
    finally:
        IPython.display.display = real


@contextlib.contextmanager
def figures_drawn_not_encoded():
    """A reader of the notebook's text (the give-away guard) needs no picture: while inside, a figure's
    savefig draws every artist once on an Agg canvas, without the constrained layout's passes or the PNG
    (the bytes written are a placeholder), so a figure that cannot draw still fails the cell as it would
    in the notebook; about half of the guard's run, and the instruments' readouts are computed as before."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    real = Figure.savefig

    def drawn(self, fname, **kwargs):
        self.set_layout_engine("none")
        FigureCanvasAgg(self).draw()
        if hasattr(fname, "write"):
            fname.write(b"")
    Figure.savefig = drawn
    try:
        yield
    finally:
        Figure.savefig = real


def run_notebook(a, tmp: Path, answers: dict) -> str:
    """Execute the built notebook's code cells in order with these answer cell values; the output."""
    out, namespace = io.StringIO(), {}
    with student_kernel(tmp, a), contextlib.chdir(tmp), contextlib.redirect_stdout(out), mock_display():
        for cell in build_notebook(a).cells:
            if cell.cell_type != "code":
                continue
            qid = cell.metadata["nbgrader"]["grade_id"].removesuffix("-answer")
            source = f"{qid} = {answers[qid]!r}" if qid in answers else cell.source
            exec(compile(source, cell.id, "exec"), namespace)
    return out.getvalue()
