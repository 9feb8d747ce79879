"""The public checks of your functions, as `pytest` runs them (shipped with every lab; you do not
need to edit it).

One test per function: its worked examples first (values computed from the course's solution when
the lab was released), then its properties (`_properties.py`: what must hold over many inputs,
tried by hypothesis, which shrinks a failure to the smallest input it can find). A function that
fails prints one short report instead of a traceback: the call, what was expected and what it
returned (or the line of yours that raised), and for a property what it means and the smallest
failing input; then how many of its other checks fail too.
"""
from __future__ import annotations

import atexit
import math
import os
import shutil
import tempfile
import traceback
from pathlib import Path
from typing import Any, Callable, Sequence

# hypothesis keeps a cache folder (`.hypothesis/`) in the current folder; keep it out of your lab
# folder. Read when hypothesis first stores something, so this runs before any check.
if "HYPOTHESIS_STORAGE_DIRECTORY" not in os.environ:
    _CACHE = tempfile.mkdtemp(prefix="scalelabs-hypothesis-")
    atexit.register(shutil.rmtree, _CACHE, True)
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = _CACHE

_FOLDER = Path(__file__).resolve().parent
LINE_CAP = 160   # characters of one line of a report


class CheckFailed(Exception):
    """One check of a function failed: `lines` say how, for a student."""

    def __init__(self, lines: Sequence[str]):
        super().__init__("\n".join(lines))
        self.lines = list(lines)


def _cut(text: str, limit: int = LINE_CAP) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _is_yours(filename: str) -> bool:
    """A module of your lab folder (not a provided `_*.py` helper, not a test file)."""
    path = Path(filename)
    return (path.suffix == ".py" and path.resolve().parent == _FOLDER and not path.name.startswith(("_", "test_")))


def your_line(exc: BaseException) -> str | None:
    """"collectives.py, line 57: return ..." for the innermost frame of your code in exc's traceback."""
    frames = [(frame, line) for frame, line in traceback.walk_tb(exc.__traceback__)
              if _is_yours(frame.f_code.co_filename)]
    if not frames:
        return None
    frame, line = frames[-1]
    import linecache
    source = linecache.getline(frame.f_code.co_filename, line).strip()
    where = f"{Path(frame.f_code.co_filename).name}, line {line}"
    if frame.f_code.co_name != "<module>":
        where += f" (in {frame.f_code.co_name})"
    return f"{where}: {source}" if source else where


def call_text(function: str, kwargs: dict) -> str:
    return f"{function}(" + ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) + ")"


def raised_lines(exc: BaseException) -> list[str]:
    lines = [f"  raised:   {_cut(f'{type(exc).__name__}: {exc}')}"]
    line = your_line(exc)
    if line:
        lines.append(f"  at:       {_cut(line)}")
    return lines


def matches(got: Any, expected: Any, rel_tol: float, abs_tol: float) -> bool:
    if isinstance(expected, (bool, str)):
        return type(got) is type(expected) and got == expected
    return (isinstance(got, (int, float)) and not isinstance(got, bool)
            and math.isclose(got, expected, rel_tol=rel_tol, abs_tol=abs_tol))


def worked_example(f: Callable, function: str, label: str, kwargs: dict, expected: Any,
                   rel_tol: float, abs_tol: float) -> None:
    """CheckFailed unless f(**kwargs) is `expected` (numbers within the tolerances)."""
    head = [f"  worked example: {_cut(label)}", f"  call:     {_cut(call_text(function, kwargs))}"]
    try:
        got = f(**kwargs)
    except Exception as exc:
        raise CheckFailed(head + [f"  expected: {expected!r}"] + raised_lines(exc)) from None
    if not matches(got, expected, rel_tol, abs_tol):
        raise CheckFailed(head + [f"  expected: {expected!r}", f"  got:      {_cut(repr(got))}"])


def property_check(f: Callable, function: str, prop: dict, examples: int) -> None:
    """CheckFailed when hypothesis finds inputs breaking the property: its meaning, the call it made
    at the smallest failing input it found, what came back and what failed there."""
    from hypothesis import HealthCheck, given, settings

    calls: list[list] = []   # per example tried: [call text, returned value or the exception]

    def spy(*args, **kwargs):
        call = [call_text(function, kwargs) if not args else f"{function}{args!r}", None]
        calls.append(call)
        call[1] = f(*args, **kwargs)
        return call[1]

    @settings(database=None, deadline=None, derandomize=True, report_multiple_bugs=False, print_blob=False,
              max_examples=prop.get("max_examples") or examples, suppress_health_check=list(HealthCheck))
    @given(prop["strategy"])
    def run(drawn):
        calls.clear()
        prop["check"](spy, drawn)

    try:
        run()
    except Exception as exc:
        # hypothesis replays the smallest failing input last: `calls` are the property's calls there
        lines = [f"  property: {_cut(prop['name'])}", f"  meaning:  {_cut(prop['meaning'], 2 * LINE_CAP)}"]
        if calls:
            lines.append(f"  smallest failing input: {_cut(calls[-1][0], 2 * LINE_CAP)}")
        if your_line(exc) is not None or not isinstance(exc, AssertionError):
            lines += raised_lines(exc)
        else:
            if calls:
                lines.append(f"  got:      {_cut(repr(calls[-1][1]))}")
            lines.append(f"  failed:   {_cut(str(exc).splitlines()[0] if str(exc) else 'the property does not hold')}")
        raise CheckFailed(lines) from None


def not_written(f: Callable, kwargs: dict) -> bool:
    """True while f is still the stub: it raises NotImplementedError on its first worked example."""
    try:
        f(**kwargs)
    except NotImplementedError:
        return True
    except Exception:
        return False
    return False


def check_function(module, function: str, examples: Sequence[tuple], properties: Sequence[dict],
                   property_examples: int) -> None:
    """Every public check of `module.function`; one short pytest failure at the first that fails."""
    import pytest

    f = getattr(module, function, None)
    name = f"{module.__name__}.{function}"
    if not callable(f):
        pytest.fail(f"{name} is missing: define it in {module.__name__}.py (see its docstring)", pytrace=False)
    mine = [e for e in examples if e[0] == function]
    props = [p for p in properties if p["item"] == function]
    if not_written(f, mine[0][2] if mine else {}):
        pytest.fail(f"{name} is not written yet (it raises NotImplementedError): its checks run once it "
                    "returns a value", pytrace=False)
    failures: list[list[str]] = []
    failed_examples = failed_properties = 0
    for _, label, kwargs, expected, rel_tol, abs_tol in mine:
        try:
            worked_example(f, function, label, dict(kwargs), expected, rel_tol, abs_tol)
        except CheckFailed as failed:
            failed_examples += 1
            failures.append(failed.lines)
    for prop in props:
        try:
            property_check(f, function, prop, property_examples)
        except CheckFailed as failed:
            failed_properties += 1
            failures.append(failed.lines)
    if failures:
        counts = [f"{failed_examples} of {len(mine)} worked examples"] if failed_examples else []
        counts += [f"{failed_properties} of {len(props)} properties"] if failed_properties else []
        verb = "fails" if len(failures) == 1 else "fail"
        first = " The first:" if len(failures) > 1 else ""
        pytest.fail("\n".join([f"{name}: {' and '.join(counts)} {verb}.{first}", *failures[0]]), pytrace=False)
