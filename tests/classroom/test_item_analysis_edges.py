"""The item analysis at its edges, as an instructor checking the report by hand builds them (issue 42's
review): an item everyone gets full marks on and one no one scores on (no variance), against numpy on
the score matrix. Results files are written directly, no grading (the sample class graded against
numpy: tests/test_report.py; negative and flawed items: tests/classroom/test_item_analysis.py).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from autograder.classroom.report import build_report, render_report
from autograder.engine.results import Result, TestResult
from labs import load

LAB = load("lab06_collectives")
FUNCTIONS = [f.name for f in LAB.functions]
EVERYONE, NO_ONE = FUNCTIONS[0], FUNCTIONS[1]          # full marks for all; 0 for all
LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 0.25, 0.75)


def _tests(level: float) -> list[TestResult]:
    """A student's functions at `level` of their points (EVERYONE full, NO_ONE nothing), every question
    right from level 0.5 up, so the totals and the items rank together."""
    tests = []
    for f in LAB.functions:
        share = 1.0 if f.name == EVERYONE else 0.0 if f.name == NO_ONE else level
        tests.append(TestResult(f.name, "hidden checks", "hidden", round(f.points * share, 6), float(f.points), ""))
    for q in LAB.questions:
        answer = q.key if level >= 0.5 else next(o for o in q.options if o != q.key)
        tests.append(TestResult(q.id, q.kind, q.kind, float(q.points) * (answer == q.key), float(q.points),
                                f"answered {answer}", answer))
    return tests


@pytest.fixture(scope="module")
def edges(tmp_path_factory):
    folder = tmp_path_factory.mktemp("edges")
    (folder / "results").mkdir()
    matrix = {}
    for i, level in enumerate(LEVELS):
        student, tests = f"s{i:02d}", _tests(level)
        data = Result(LAB.id, student, tests).to_gradescope()
        data["scalelabs"] = {"assignment": LAB.id, "student": student, "max_score": LAB.total_points}
        (folder / "results" / f"{student}.json").write_text(json.dumps(data))
        matrix[student] = [sum(t.score for t in tests if t.item == item) for item in LAB.item_ids]
    return build_report(LAB, folder), np.array([matrix[s] for s in sorted(matrix)])


def _alpha(m: np.ndarray) -> float:
    return m.shape[1] / (m.shape[1] - 1) * (1 - m.var(axis=0).sum() / m.sum(axis=1).var())


def test_an_item_no_one_scores_differently_on_is_flagged_for_what_it_is_not_for_measuring_something_else(edges):
    """Before: an item everyone gets full marks on (and one no one scores on) carried, beside "too easy"
    ("too hard"), "removing it raises alpha ...: it does not measure what the rest of the lab measures".
    An item with no variance measures nothing; alpha rises without it only through k/(k-1)."""
    report, _ = edges
    items = {r.item: r for r in report.items}
    for item, why in ((EVERYONE, "too easy"), (NO_ONE, "too hard")):
        r = items[item]
        assert r.item_rest is None and r.discrimination == 0.0
        assert any(f.startswith(why) for f in r.flags), r.flags
        raised = [f for f in r.flags if f.startswith("removing it raises alpha")]
        assert r.alpha_if_deleted > report.alpha and len(raised) == 1, r.flags     # still flagged: alpha rises
        assert "does not measure what the rest of the lab measures" not in raised[0], raised
        assert "no student scores differently on it" in raised[0] and "k/(k-1)" in raised[0], raised
    # an item that varies keeps the reason that holds for it
    for r in report.items:
        if r.item not in (EVERYONE, NO_ONE):
            assert not any("no student scores differently" in f for f in r.flags), (r.item, r.flags)


def test_the_constant_items_flag_quotes_the_alphas_numpy_computes_and_the_page_lists_it(edges):
    report, x = edges
    page = " ".join(render_report(report).split()).replace("&#39;", "'")
    by_item = {r.item: r for r in report.items}
    assert report.alpha == pytest.approx(_alpha(x), abs=1e-9)
    for item in (EVERYONE, NO_ONE):
        without = _alpha(np.delete(x, LAB.item_ids.index(item), axis=1))
        assert by_item[item].alpha_if_deleted == pytest.approx(without, abs=1e-9)
        line = next(f for f in by_item[item].flags if f.startswith("removing it raises alpha"))
        assert f"from {report.alpha:.3f} to {without:.3f}" in line, line
        assert f"<strong>{item}</strong>: {line}" in page
