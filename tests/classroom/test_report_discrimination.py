"""Each item's discrimination in the class report: the mean score of the upper 27 % of the class by total
less that of the lower 27 %, over the item's points (the report from every door: tests/doors/
test_late_work_doors.py; the whole item analysis against numpy: tests/test_report.py)."""
from __future__ import annotations

from autograder.classroom.itemstats import discrimination, group_size, groups


def _class(got: list[float]) -> tuple[dict, dict]:
    """Students s01.. with totals 1, 2, ... and the item scores `got`, in that order."""
    ids = [f"s{i:02d}" for i in range(1, len(got) + 1)]
    return dict(zip(ids, map(float, range(1, len(got) + 1)))), dict(zip(ids, got))


def test_an_item_only_the_strong_get_right_discriminates():
    totals, got = _class([0.0] * 8 + [2.0] * 3)            # 11 students: groups of 3
    assert discrimination(totals, got, 2.0) == 1.0
    totals, got = _class([2.0] * 3 + [0.0] * 8)
    assert discrimination(totals, got, 2.0) == -1.0         # only the weakest: a suspect item


def test_an_item_everyone_gets_the_same_on_separates_no_one():
    assert discrimination(*_class([2.0] * 11), 2.0) == 0.0
    assert discrimination(*_class([1.9] * 11), 2.0) == 0.0


def test_partial_credit_counts_by_its_share_of_the_points():
    totals, got = _class([0.0] * 8 + [1.0] * 3)
    assert discrimination(totals, got, 2.0) == 0.5          # the upper group has half the points, the lower none


def test_a_class_of_one_has_none_and_two_have_groups_of_one():
    assert discrimination(*_class([1.0]), 1.0) is None
    assert discrimination(*_class([0.0, 1.0]), 1.0) == 1.0
    assert [group_size(n) for n in (1, 2, 3, 4, 6, 7, 11, 50)] == [0, 1, 1, 1, 2, 2, 3, 14]   # 13.5 rounds up


def test_the_groups_are_27_percent_rounded_to_the_nearest_student():
    """Kelley's groups of a class of 6 or 7 are two students each (27 % of 6 is 1.62): an item only the
    single strongest student got right is half the upper group's rate, not all of it."""
    for size in (6, 7):
        assert discrimination(*_class([0.0] * (size - 1) + [2.0]), 2.0) == 0.5, size
    assert discrimination(*_class([0.0, 0.0, 0.0, 1.0]), 1.0) == 1.0   # 4 students: groups of one


def test_ties_at_the_edge_of_a_group_go_by_student_id_whatever_the_order_given():
    assert groups({"bea": 1.0, "di": 9.0, "al": 1.0, "cy": 5.0}) == (["di"], ["al"])
    assert groups({"bea": 1.0, "di": 9.0, "al": 1.0 + 1e-12, "cy": 5.0}) == (["di"], ["al"])   # to the micro-point
    assert groups({"al": 1.0, "bea": 1.0, "cy": 1.0, "di": 1.0}) == (["di"], ["al"])
    assert groups(dict(reversed(list({"al": 1.0, "bea": 1.0, "cy": 1.0, "di": 1.0}.items())))) == (["di"], ["al"])


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
