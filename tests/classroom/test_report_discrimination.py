"""Each item's discrimination in the class report: full-mark rate of the upper 27 % by score less that
of the lower 27 % (the report from every door: tests/doors/test_late_work_doors.py)."""
from __future__ import annotations

from autograder.classroom.report import discrimination


def test_an_item_only_the_strong_get_right_discriminates():
    totals = [float(t) for t in range(1, 12)]             # 11 students: groups of 3
    got = [0.0] * 8 + [2.0] * 3                            # full marks for the top three only
    assert discrimination(totals, got, 2.0) == 1.0
    assert discrimination(totals, list(reversed(got)), 2.0) == -1.0   # only the weakest: a suspect item


def test_an_item_everyone_gets_right_separates_no_one():
    totals = [float(t) for t in range(1, 12)]
    assert discrimination(totals, [2.0] * 11, 2.0) == 0.0
    assert discrimination(totals, [1.9] * 11, 2.0) == 0.0  # partial credit is not full marks


def test_too_small_a_class_has_none():
    assert discrimination([1.0, 2.0, 3.0], [0.0, 0.0, 1.0], 1.0) is None


def test_the_groups_are_27_percent_rounded_to_the_nearest_student():
    """Kelley's groups of a class of 6 or 7 are two students each (27 % of 6 is 1.62): an item only the
    single strongest student got right is half the upper group's rate, not all of it."""
    for size in (6, 7):
        totals = [float(t) for t in range(1, size + 1)]
        got = [0.0] * (size - 1) + [2.0]
        assert discrimination(totals, got, 2.0) == 0.5, size
    assert discrimination([1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 1.0], 1.0) == 1.0   # 4 students: groups of one


def test_a_gradebook_that_cannot_be_read_leaves_the_engines_scores_and_the_page_says_why(tmp_path):
    """The class report of a record whose gradebook is gone (a moved course, a --db typo): the engine's
    scores from the results files, and the page names the database and why, instead of a traceback."""
    import json

    from autograder.classroom.report import build_report, render_report
    from autograder.engine.results import Result, TestResult
    from labs import load

    lab = load("lab06_collectives")
    item = lab.item_ids[0]
    data = Result(lab.id, "ann", [TestResult(item, "hidden checks", "hidden", 1.5, lab.item_points[item], "")]
                  ).to_gradescope()
    data["scalelabs"] = {"assignment": lab.id, "student": "ann", "max_score": lab.total_points}
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "ann.json").write_text(json.dumps(data))
    gone = f"sqlite:///{tmp_path / 'moved' / 'gradebook.db'}"
    report = build_report(lab, tmp_path, gone)
    assert report.scores == {"ann": 1.5} and report.gradebook == ""
    assert report.record_problem.startswith(f"the gradebook {gone} could not be read")
    page = " ".join(render_report(report).split())
    assert "Scores are the engine's, from the results files (the gradebook " in page and gone in page
