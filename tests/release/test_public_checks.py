"""The public checks as a student reads them (issue 29): `pytest` in a released folder whose module
has a wrong function prints a short report per function (the call, expected, got; a property's
meaning and smallest failing input; the student's own line when their code raised), at most 15
lines in all for one wrong function, and leaves no `.hypothesis/` in the folder. Every lab."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.build import publictests
from labs import all_assignments

from release_helpers import REPO, flat_reference

PYTEST = str(Path(sys.executable).parent / "pytest")
LABS = sorted(all_assignments())
MOST_LINES = 15          # everything pytest prints for one wrong function
MOST_REPORT_LINES = 10   # one function's failure report


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """`pytest` in the folder, as a student runs it: no option but the folder's pytest.ini."""
    return subprocess.run([PYTEST, *args], cwd=folder, capture_output=True, text=True,
                          env={"PATH": str(Path(sys.executable).parent), "PYTHONNOUSERSITE": "1", "HOME": str(folder)})


def numeric_functions(assignment) -> list[str]:
    """The functions whose worked examples all give numbers (not a name or a verdict)."""
    rows = publictests.example_rows(assignment)
    return [f.name for f in assignment.functions
            if all(isinstance(r[3], float) or (isinstance(r[3], int) and not isinstance(r[3], bool))
                   for r in rows if r[0] == f.name) and any(r[0] == f.name for r in rows)]


def solved_folder(assignment, dest: Path, appended: str = "") -> Path:
    """The released folder with the reference solution as the student's module, `appended` after it."""
    shutil.copytree(REPO / "release" / assignment.id, dest)
    flat_reference(dest)
    if appended:
        module = dest / f"{assignment.module}.py"
        module.write_text(module.read_text(encoding="utf-8") + "\n\n" + appended, encoding="utf-8")
    return dest


def scaled(names, factor=1.5) -> str:
    """Defs that rebind each function to return `factor` times the right result."""
    return "".join(f"_right_{n} = {n}\n\n\ndef {n}(*args, **kwargs):\n    return {factor} * _right_{n}(*args, **kwargs)\n\n\n"
                   for n in names)


def reports(stdout: str) -> dict[str, list[str]]:
    """function -> the lines of its failure report (pytest's section under its header)."""
    found, current = {}, None
    for line in stdout.splitlines():
        header = re.match(r"^_+ test_public_checks\[(\w+)\] _+$", line)
        if header:
            current = found.setdefault(header.group(1), [])
        elif re.match(r"^=+ ", line):
            current = None
        elif current is not None:
            current.append(line)
    return found


@pytest.fixture(scope="module", params=LABS)
def wrong_module(request, tmp_path_factory):
    """A lab's released folder whose module is the reference but for three functions: one 1.5 times
    the right value, one right on the worked examples only (its properties fail), one that raises
    in the student's own line. (assignment, folder, (scaled, property-only, raising), raising line)."""
    assignment = all_assignments()[request.param]
    numeric = numeric_functions(assignment)
    scaled_name = numeric[0]
    property_name = next(n for n in numeric[1:] if any(p.public for p in assignment.function(n).properties))
    raising_name = next(n for n in numeric[1:] if n != property_name)
    examples = [r[2] for r in publictests.example_rows(assignment) if r[0] == property_name]
    appended = (scaled([scaled_name])
                + f"_right_{property_name} = {property_name}\n\n\ndef {property_name}(**kwargs):\n"
                  f"    right = _right_{property_name}(**kwargs)\n"
                  f"    return right if kwargs in {examples!r} else 1.5 * right + 1.0\n\n\n"
                + f"def {raising_name}(*args, **kwargs):\n    ratio = 1.0 / 0\n    return ratio\n")
    folder = solved_folder(assignment, tmp_path_factory.mktemp(request.param) / request.param, appended)
    line = (folder / f"{assignment.module}.py").read_text(encoding="utf-8").splitlines().index("    ratio = 1.0 / 0") + 1
    return assignment, folder, (scaled_name, property_name, raising_name), line


def test_a_wrong_function_prints_at_most_15_lines_call_expected_got(wrong_module):
    assignment, folder, (name, _, _), _ = wrong_module
    done = _pytest(folder, "-k", f"[{name}]")
    lines = done.stdout.rstrip("\n").splitlines()
    assert done.returncode == 1 and len(lines) <= MOST_LINES, done.stdout
    report = "\n".join(reports(done.stdout)[name])
    assert f"{assignment.module}.{name}: " in report and "  call:     " + name + "(" in report
    assert re.search(r"^  expected: .+\n  got:      .+$", report, re.M), report
    assert "Traceback" not in done.stdout and "_checks.py" not in done.stdout
    assert not (folder / ".hypothesis").exists() and done.stderr == ""
    print(f"{assignment.id}: {len(lines)} lines of pytest output for a wrong {name}")


def test_each_failing_function_gets_a_short_report_the_others_pass(wrong_module):
    """One `pytest`: the three wrong functions fail with a report each (a property's with its meaning
    and the smallest failing input; a raising one with the student's own line), and so do those that
    call them (Lab 05's peak memory calls its model states); the others pass."""
    assignment, folder, (scaled_name, property_name, raising_name), line = wrong_module
    done = _pytest(folder)
    found = reports(done.stdout)
    assert {scaled_name, property_name, raising_name} <= set(found), done.stdout[-3000:]
    assert f"{len(assignment.functions) - len(found)} passed" in done.stdout, done.stdout[-500:]
    for name, lines in found.items():
        assert 2 <= len(lines) <= MOST_REPORT_LINES and lines[0].startswith(f"{assignment.module}.{name}: "), lines
    report = "\n".join(found[property_name])
    meanings = [p.meaning for p in assignment.function(property_name).properties if p.public]
    assert re.search(r"^  property: .+\n  meaning:  .+\n  smallest failing input: " + property_name + r"\(\w+=",
                     report, re.M), report
    assert any(m[:60] in " ".join(report.split()) for m in meanings), report
    report = "\n".join(found[raising_name])
    assert "  raised:   ZeroDivisionError: float division by zero" in report, report
    assert f"  at:       {assignment.module}.py, line {line} (in {raising_name}): ratio = 1.0 / 0" in report, report
    assert "Traceback" not in done.stdout and not (folder / ".hypothesis").exists()


@pytest.mark.parametrize("returned, expected", [(1, True), (0, False), (0.0, False), ("True", True), (1, "1")])
def test_a_worked_example_wants_the_type_it_shows(returned, expected):
    """A verdict (Lab 05's tp_crosses_node: True) is not met by 1, nor a name by a number: the public
    check fails where grading would, showing what came back, instead of passing a function the hidden
    check then fails."""
    from autograder.build.student import _checks
    with pytest.raises(_checks.CheckFailed) as failed:
        _checks.worked_example(lambda **kwargs: returned, "tp_crosses_node", "TP=16 on 8-GPU DGX nodes",
                               {"tp": 16, "gpus_per_node": 8}, expected, 1e-9, 0.0)
    assert f"  expected: {expected!r}" in failed.value.lines and f"  got:      {returned!r}" in failed.value.lines
