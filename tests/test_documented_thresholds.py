"""Thresholds pinned to their documented values (issue 31, kind 4), not built from the constant under
test: each limit the grader or a lab decides by is compared with the number its documentation states
(read from the document itself) and with that number written here. A test that reads `OUTPUT_CAP` to
check outputs stay under `OUTPUT_CAP` passes whatever the cap becomes; these fail when the code and
its documentation part ways, or when both move.
"""
import re
from pathlib import Path

import pytest

from autograder.course import find_course

DOCS = find_course(Path(__file__)) / "docs"
ARCHITECTURE = (DOCS / "ARCHITECTURE.md").read_text(encoding="utf-8")
PHYSICS = (DOCS / "physics.md").read_text(encoding="utf-8")


def _row(text: str, first_cell: str) -> str:
    """The markdown table row whose first cell is `first_cell` (backticks and all)."""
    found = [line for line in text.splitlines() if line.startswith(f"| {first_cell} |")]
    assert len(found) == 1, f"no single row {first_cell!r}"
    return found[0]


def _number(pattern: str, text: str) -> float:
    match = re.search(pattern, text)
    assert match, pattern
    return float(match.group(1).replace(",", ""))


def test_feedback_caps_are_the_documented_ones():
    from autograder.engine.checks import VALUE_CAP
    from autograder.engine.grade import OUTPUT_CAP
    from autograder.engine.sandbox.replies import MESSAGE_CAP
    row = _row(ARCHITECTURE, "feedback")
    assert VALUE_CAP == _number(r"[Aa] value shown is its repr cut at ([\d,]+) characters", row) == 100
    assert MESSAGE_CAP == _number(r"student text \(exception messages, prints\) is cut at ([\d,]+) characters", row) == 200
    assert OUTPUT_CAP == 1024 * _number(r"each test's output at ([\d,]+) KB", row) == 4096


def test_submission_caps_are_the_documented_ones():
    from autograder.engine.filetree import COPY_CAP_BYTES, TREE_BYTES_CAP, TREE_DEPTH_CAP, TREE_FILES_CAP
    from autograder.engine.submission import NOTEBOOK_CAP_BYTES, OUTPUTS_CAP
    tree, notebook = _row(ARCHITECTURE, "submission tree"), _row(ARCHITECTURE, "notebook")
    assert TREE_DEPTH_CAP == _number(r"depth \((\d+)\)", tree) == 16
    assert TREE_FILES_CAP == _number(r"entries \(([\d,]+)\)", tree) == 2000
    assert COPY_CAP_BYTES == _number(r"sizes \((\d+) MB a file", tree) * 2 ** 20 == 20 * 2 ** 20
    assert TREE_BYTES_CAP == _number(r"(\d+) MB in all", tree) * 2 ** 20 == 100 * 2 ** 20
    assert NOTEBOOK_CAP_BYTES == _number(r"at most (\d+) MB", notebook) * 2 ** 20 == 20 * 2 ** 20
    assert OUTPUTS_CAP == _number(r"the first (\d+) outputs of a cell", notebook) == 100


def test_the_physics_gate_asks_what_its_documentation_says():
    """ARCHITECTURE's credit row: half of the hidden inputs, and the input-blind answer's plus a third
    of the rest (the numbers behind every gate decision: tests/security/test_few_valued_gate.py)."""
    from autograder.engine import scoring
    row = _row(ARCHITECTURE, "credit")
    assert "at least half of the hidden check's inputs" in row and scoring.MIN_HIDDEN_SHARE == 0.5
    assert "plus a third of the rest" in row and scoring.MARGIN == pytest.approx(1 / 3)
    assert scoring.needed_matches(60, 0) == 30 and scoring.needed_matches(60, 45) == 50


def test_each_labs_failure_threshold_is_the_documented_one():
    """physics.md: comm_fraction "above 0.5 is the lab's failure state", comm_overhead_ratio "above 1 is
    the danger state", budget_left_weeks "below 0 is over budget"; the scenarios decide by these."""
    from labs.lab02_interconnect import scenario as lab02
    from labs.lab06_collectives import scenario as lab06
    assert lab06.FAILURE_FRACTION == _number(r"above ([\d.]+) is the lab's failure state",
                                             _row(PHYSICS, "`comm_fraction(comm_s, compute_s)`")) == 0.5
    assert lab02.DANGER_RATIO == _number(r"above ([\d.]+) is the danger state",
                                         _row(PHYSICS, "`comm_overhead_ratio(comm_s, compute_s)`")) == 1.0
    assert "below 0 is over budget" in _row(PHYSICS, "`budget_left_weeks(cost_weeks, budget_weeks)`")


def test_each_labs_scenario_limits_are_the_source_labs():
    """The limits a lab's story and keys are computed against, as the source labs and the errata state
    them: Lab 01's $50M cloud cap, Lab 05's (and Lab 02's design challenge's) 10 % bubble ceiling on an
    80 GiB H100 (physics.md), Lab 09's 8 engineer-weeks and its 50 % MFU target (the source lab's "industry"
    50-60 %, which no published run the course cites reaches: the story quotes 41-47 %, issue 43)."""
    from labs.lab01_scale import scenario as lab01
    from labs.lab02_interconnect.challenges import BUBBLE_CEILING
    from labs.lab05_parallelism import scenario as lab05
    from labs.lab09_performance import scenario as lab09
    errata = {lab: (DOCS.parent / "labs" / lab / "errata.md").read_text(encoding="utf-8")
              for lab in ("lab01_scale", "lab05_parallelism")}
    assert lab01.BUDGET_USD == 1e6 * _number(r"\$(\d+)M (?:cloud cap|budget)", errata["lab01_scale"]) == 50e6
    assert lab05.ACT2["bubble_ceiling"] == _number(r"under the (\d+)% ceiling", errata["lab05_parallelism"]) / 100 == 0.10
    assert BUBBLE_CEILING == 0.10 and lab05.ACT2["capacity_bytes"] == 80 * 2**30   # the datasheet's "80GB": GiB
    assert lab09.BUDGET_WEEKS == 8.0 and lab09.PUBLISHED_MFU == (0.41, 0.47) and lab09.MFU_TARGET == 0.50
