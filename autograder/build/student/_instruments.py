"""Instruments: controls over a figure and a readout that YOUR functions compute.

Shipped with every lab (you do not need to edit it). A notebook cell builds an instrument from a
draw function and its controls; moving a control calls the draw function again with the new values:

    from _instruments import Instrument, Steps, LogSlider, Dropdown

    def draw(fig, n, message_bytes, link):
        alpha_s, bandwidth = LINKS[link]
        t = collectives.ring_allreduce_time(message_bytes, n, alpha_s, bandwidth)
        fig.subplots().bar(["ring"], [t])
        return f"ring AllReduce: {t:.3g} s"            # the readout under the figure

    Instrument(draw, n=Steps("GPUs n", [2, 4, 8, 16], value=8),
               message_bytes=LogSlider("message (bytes)", 1e3, 1e12, value=1e9),
               link=Dropdown("link", list(LINKS), value="NDR")).show()

Every control starts at the lab's scenario, so a run without a widget frontend (nbconvert, nbgrader,
CI) draws the scenario's figure once, the same every time. If one of your functions raises (the
stub's NotImplementedError, or a bug), the instrument names the function to implement or fix
instead of showing a traceback. Needs ipywidgets 8 for the controls (JupyterLab or Jupyter
Notebook); without it the instrument draws the scenario and says the controls are fixed.
"""
from __future__ import annotations

import functools
import html
import inspect
import io
import math
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

__all__ = ["Instrument", "Slider", "LogSlider", "Steps", "Dropdown", "Buttons", "Toggle", "Frame"]

# The lab folder: a frame of a module here (other than the provided `_*.py` helpers) is the student's.
_FOLDER = Path(__file__).resolve().parent
_DPI = 100
_WIDTH = "480px"
# CSS classes the browser test looks for (tests/browser/): one controls box and one readout per instrument.
CONTROLS_CLASS = "scalelabs-instrument"
READOUT_CLASS = "scalelabs-readout"
PROBLEM_CLASS = "scalelabs-instrument-problem"
# What each instrument shown in this kernel could not draw (None: it drew), in order: a reveal
# (_reveal.py) explains a prediction only once the instruments it showed have drawn.
shown_problems: list[str | None] = []


def _format(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


class Control:
    """One control: a label, its scenario value and the ipywidgets widget that moves it."""

    def __init__(self, label: str, value):
        if not isinstance(label, str) or not label:
            raise ValueError(f"a control needs a label (a non-empty str), got {label!r}")
        self.label = label
        self.value = value

    def widget(self, widgets):
        raise NotImplementedError

    def _style(self) -> dict:
        return dict(description=self.label, style={"description_width": "initial"},
                    layout={"width": _WIDTH})


def _number(name: str, label: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"control {label!r}: {name} must be a finite number, got {value!r}")
    return value


class Slider(Control):
    """A linear slider from `low` to `high` in steps of `step`; whole numbers give an int slider."""

    def __init__(self, label: str, low, high, *, value, step=None, readout_format: str | None = None):
        super().__init__(label, value)
        for name, x in (("low", low), ("high", high), ("value", value)):
            _number(name, label, x)
        if step is not None:
            _number("step", label, step)
        if not low < high:
            raise ValueError(f"control {label!r}: low {low!r} must be below high {high!r}")
        if not low <= value <= high:
            raise ValueError(f"control {label!r}: value {value!r} is outside [{low!r}, {high!r}]")
        self.whole = all(isinstance(x, int) for x in (low, high, value, step if step is not None else 1))
        self.low, self.high, self.readout_format = low, high, readout_format
        self.step = step if step is not None else (1 if self.whole else (high - low) / 100)

    def widget(self, widgets):
        kind = widgets.IntSlider if self.whole else widgets.FloatSlider
        extra = {"readout_format": self.readout_format} if self.readout_format else {}
        return kind(value=self.value, min=self.low, max=self.high, step=self.step,
                    continuous_update=False, **extra, **self._style())


class LogSlider(Control):
    """A slider over `low`..`high` (both > 0) spaced by powers of ten, `steps_per_decade` a decade."""

    def __init__(self, label: str, low: float, high: float, *, value: float, steps_per_decade: int = 10,
                 readout_format: str = ".3s"):
        super().__init__(label, value)
        for name, x in (("low", low), ("high", high), ("value", value)):
            if _number(name, label, x) <= 0:
                raise ValueError(f"control {label!r}: {name} must be > 0 on a log slider, got {x!r}")
        if not low < high:
            raise ValueError(f"control {label!r}: low {low!r} must be below high {high!r}")
        if not low <= value <= high:
            raise ValueError(f"control {label!r}: value {value!r} is outside [{low!r}, {high!r}]")
        if isinstance(steps_per_decade, bool) or not isinstance(steps_per_decade, int) or steps_per_decade < 1:
            raise ValueError(f"control {label!r}: steps_per_decade must be a whole number >= 1, "
                             f"got {steps_per_decade!r}")
        self.low, self.high = low, high
        self.steps_per_decade, self.readout_format = steps_per_decade, readout_format

    def widget(self, widgets):
        return widgets.FloatLogSlider(value=self.value, base=10, min=math.log10(self.low),
                                      max=math.log10(self.high), step=1 / self.steps_per_decade,
                                      readout_format=self.readout_format, continuous_update=False,
                                      **self._style())


def _choices(label: str, options, value) -> list[tuple[str, Any]]:
    """(text, value) pairs from a list of choices (value = the choice) or a {text: value} dict."""
    if isinstance(options, Mapping):
        pairs = [(str(k), v) for k, v in options.items()]
    elif isinstance(options, (list, tuple)):
        pairs = [(_format(v), v) for v in options]
    else:
        raise ValueError(f"control {label!r}: options must be a list or a dict, got {type(options).__name__}")
    if not pairs:
        raise ValueError(f"control {label!r}: no options")
    if len({text for text, _ in pairs}) != len(pairs):
        raise ValueError(f"control {label!r}: two options read the same: {[t for t, _ in pairs]}")
    return pairs


class _Choice(Control):
    """Choose one of `options`: a list (the draw function gets the choice) or a {label: value} dict
    (it gets the value; `value=` names the label)."""

    def __init__(self, label: str, options: Sequence | Mapping, *, value):
        pairs = _choices(label, options, value)
        texts = [t for t, _ in pairs]
        if isinstance(options, Mapping):
            if value not in options:
                raise ValueError(f"control {label!r}: value {value!r} is not one of {texts}")
            self.index = list(options).index(value)
        else:
            matches = [i for i, (_, v) in enumerate(pairs) if v == value]
            if not matches:
                raise ValueError(f"control {label!r}: value {value!r} is not one of {texts}")
            self.index = matches[0]
        super().__init__(label, pairs[self.index][1])
        self.pairs = pairs

    def _kwargs(self) -> dict:
        return dict(options=self.pairs, index=self.index, **self._style())


class Steps(_Choice):
    """A slider over a list of values (e.g. powers of two)."""

    def widget(self, widgets):
        return widgets.SelectionSlider(continuous_update=False, **self._kwargs())


class Dropdown(_Choice):
    """A drop-down list."""

    def widget(self, widgets):
        return widgets.Dropdown(**self._kwargs())


class Buttons(_Choice):
    """A row of buttons, one pressed."""

    def widget(self, widgets):
        kwargs = self._kwargs()
        kwargs.pop("layout")   # buttons size themselves
        return widgets.ToggleButtons(**kwargs)


class Toggle(Control):
    """A check box: True or False."""

    def __init__(self, label: str, *, value: bool):
        if not isinstance(value, bool):
            raise ValueError(f"control {label!r}: value must be True or False, got {value!r}")
        super().__init__(label, value)

    def widget(self, widgets):
        return widgets.Checkbox(value=self.value, indent=False, **self._style())


@dataclass(frozen=True)
class Frame:
    """One drawing: the figure as PNG bytes and the readout text, or a problem to show instead."""
    png: bytes | None
    readout: str
    problem: str | None = None
    details: str | None = None   # the traceback, for a failure that is not the student's function


@functools.lru_cache(maxsize=4096)
def _is_student_file(filename: str) -> bool:
    """A module of the lab folder the student writes (not a provided `_*.py` helper, not a cell)."""
    path = Path(filename)
    if not path.is_absolute():
        path = Path.cwd() / path
    return path.parent.resolve() == _FOLDER and path.suffix == ".py" and not path.name.startswith("_")


def _student_name(code) -> str:
    return f"{Path(code.co_filename).stem}.{code.co_name}"


def _student_frames(tb) -> list:
    return [(frame, line) for frame, line in traceback.walk_tb(tb) if _is_student_file(frame.f_code.co_filename)]


def _calls_returning(draw: Callable, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
    """(function, returned value) of every call into a student module while `draw` runs once more.
    Only used after a failure that no student frame explains, so normal drawing pays nothing."""
    calls: list[tuple[str, Any]] = []

    def profile(frame, event, arg):
        if event == "return" and _is_student_file(frame.f_code.co_filename):
            calls.append((_student_name(frame.f_code), arg))

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        draw(*args, **kwargs)
    except Exception:
        pass
    finally:
        sys.setprofile(previous)
    return calls


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _short(value, limit: int = 80) -> str:
    return _cut(repr(value), limit)


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {_cut(str(exc), 200)}"


def explain(exc: BaseException, settings: str, rerun: Callable[[], list[tuple[str, Any]]]) -> tuple[str, str | None]:
    """(message for the student, traceback for staff or None) for an exception raised while drawing."""
    frames = _student_frames(exc.__traceback__)
    if type(exc) is NameError and getattr(exc, "name", None) and not frames:
        # a name the notebook's own code reads that a cell above stopped before computing (it named
        # the function to implement): not a fault of this instrument
        return (f"This instrument needs {exc.name}, which a cell above computes with your functions: implement "
                "the functions the cells above name, then run the notebook again.", None)
    if isinstance(exc, NotImplementedError) and frames:
        # the innermost student frame is the stub that raised (maybe called by an implemented one)
        return f"Implement {_student_name(frames[-1][0].f_code)} to see this instrument.", None
    if frames:
        called, (inner, line) = frames[0][0], frames[-1]
        where = f"{Path(inner.f_code.co_filename).name}, line {line}"
        if inner is not called:
            where += f", in {inner.f_code.co_name}"
        return (f"{_student_name(called.f_code)} raised {_error(exc)} ({where}) at {settings}. "
                "Fix it to see this instrument.", None)
    details = "".join(traceback.format_exception(exc))
    calls = rerun()
    nones = [name for name, value in calls if value is None]
    if nones:
        return (f"{nones[0]} returned None at {settings}: it must return its result "
                "(is a `return` missing?).", details)
    if calls:
        name, value = calls[-1]
        return (f"This instrument could not draw ({_error(exc)}) at {settings}; "
                f"your last function called, {name}, returned {_short(value)}. Check what it returns.", details)
    return f"This instrument could not draw ({_error(exc)}) at {settings}.", details


class Instrument:
    """`draw(fig, **values)` under `controls` (name=Control, each name a parameter of draw).

    `draw` gets a fresh matplotlib Figure (no pyplot state) and the controls' current values; it
    adds axes with `fig.subplots(...)` and returns the readout text (or None). `figsize` is in inches.
    """

    def __init__(self, draw: Callable[..., str | None], *, figsize: tuple[float, float] = (8, 4.5),
                 **controls: Control):
        if not callable(draw):
            raise TypeError(f"Instrument needs a draw function, got {draw!r}")
        bad = [name for name, c in controls.items() if not isinstance(c, Control)]
        if bad:
            raise TypeError(f"Instrument: {bad} must be controls (Slider, LogSlider, Steps, Dropdown, "
                            "Buttons or Toggle)")
        try:
            inspect.signature(draw).bind(None, **{name: c.value for name, c in controls.items()})
        except TypeError as exc:
            raise TypeError(f"Instrument: draw{inspect.signature(draw)} must take the figure and one "
                            f"parameter per control {list(controls)}: {exc}") from None
        self.draw, self.figsize, self.controls = draw, figsize, dict(controls)
        self.values = {name: c.value for name, c in controls.items()}
        self.widgets: dict[str, Any] = {}
        self.frame: Frame | None = None
        self._figure_display = self._readout_display = None

    def settings(self, values: Mapping[str, Any] | None = None) -> str:
        values = self.values if values is None else values
        return ", ".join(f"{self.controls[n].label} = {_format(v)}" for n, v in values.items()) or "the scenario"

    def render(self, **values) -> Frame:
        """Draw once at the scenario updated by `values` (no display): the PNG and the readout, or
        the problem to show."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise TypeError(f"Instrument.render: no control named {sorted(unknown)}; controls: {list(self.controls)}")
        values = {**self.values, **values}
        from matplotlib.figure import Figure

        fig = Figure(figsize=self.figsize, dpi=_DPI, layout="constrained")
        try:
            readout = self.draw(fig, **values)
        except Exception as exc:
            problem, details = explain(exc, self.settings(values),
                                       lambda: _calls_returning(self.draw, (Figure(figsize=self.figsize),), values))
            return Frame(None, "", problem, details)
        buffer = io.BytesIO()
        # no Software/date metadata: the same values give the same bytes
        fig.savefig(buffer, format="png", dpi=_DPI, metadata={"Software": None})
        return Frame(buffer.getvalue(), "" if readout is None else str(readout))

    # --- display -------------------------------------------------------------------------------
    def _figure_bundle(self, frame: Frame) -> dict:
        if frame.png is None:
            return {"text/plain": ""}
        return {"image/png": frame.png, "text/plain": f"<figure: {self.settings()}>"}

    def _readout_bundle(self, frame: Frame) -> dict:
        if frame.problem is not None:
            staff = ("" if frame.details is None else
                     f"<details><summary>details for course staff</summary><pre>{html.escape(frame.details)}</pre></details>")
            return {"text/plain": frame.problem,
                    "text/html": f'<div class="{PROBLEM_CLASS}" style="border-left: 4px solid #d9822b; '
                                 f'padding: 4px 10px; background: #fff6ec">&#9888; {html.escape(frame.problem)}'
                                 f"{staff}</div>"}
        return {"text/plain": frame.readout,
                "text/html": f'<pre class="{READOUT_CLASS}">{html.escape(frame.readout)}</pre>'}

    def _controls_bundle(self, box) -> dict:
        bundle = box._repr_mimebundle_() if box is not None else {}
        note = ("move them in JupyterLab or Jupyter Notebook" if box is not None
                else "fixed: install ipywidgets to move them")
        bundle["text/plain"] = f"Controls ({note}): {self.settings()}"
        return bundle

    def _controls(self):
        try:
            import ipywidgets as widgets
        except ImportError:
            return None
        self.widgets = {name: c.widget(widgets) for name, c in self.controls.items()}
        for w in self.widgets.values():
            w.observe(self._moved, names="value")
        box = widgets.VBox(list(self.widgets.values()))
        box.add_class(CONTROLS_CLASS)
        return box

    def show(self) -> "Instrument":
        """Display the controls, the figure and the readout at the current values."""
        from IPython.display import display

        self.frame = self.render()
        shown_problems.append(self.frame.problem)
        display(self._controls_bundle(self._controls()), raw=True)
        self._figure_display = display(self._figure_bundle(self.frame), raw=True, display_id=True)
        self._readout_display = display(self._readout_bundle(self.frame), raw=True, display_id=True)
        return self

    def _moved(self, change) -> None:
        name = next(n for n, w in self.widgets.items() if w is change["owner"])
        self.values[name] = change["new"]
        self.redraw()

    def redraw(self) -> Frame:
        """Draw at the current values and update what show() displayed."""
        self.frame = self.render()
        if self._figure_display is not None:
            self._figure_display.update(self._figure_bundle(self.frame), raw=True)
            self._readout_display.update(self._readout_bundle(self.frame), raw=True)
        return self.frame

    def set(self, **values) -> Frame:
        """Move controls from code (as a student would with the mouse) and redraw."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise TypeError(f"Instrument.set: no control named {sorted(unknown)}; controls: {list(self.controls)}")
        if self.widgets:
            for name, value in values.items():
                self.widgets[name].value = value   # observe -> _moved -> redraw
            return self.frame
        self.values.update(values)
        return self.redraw()
