"""The late work as a person reads it in Chromium (issue 38): a student's feedback page names the raw score
(before late work) and the final score (after it), the due date that applied and where it came from, and a
disagreement between Gradescope's due date and the course's; the class report shows both scores. A
screenshot of each page is saved under the test's tmp folder (`late-feedback.png`, `late-report.png`)."""
from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "release"))
import jupyter_browser as jb  # noqa: E402
import release_toy as toy  # noqa: E402

from autograder.classroom.deadlines import PlatformDates, SubmissionTime, deadlines_from_table  # noqa: E402
from autograder.classroom.feedback import render_feedback  # noqa: E402
from autograder.classroom.report import write_report  # noqa: E402
from autograder.engine.results import Result, TestResult  # noqa: E402

DUE = datetime(2026, 11, 20, 23, 59, tzinfo=timezone.utc)
MOVED = DUE + timedelta(days=1)          # the class's due date, moved in Gradescope


@pytest.fixture(scope="module")
def browser():
    yield from jb.chromium_or_skip()


def graded(assignment, student: str, share: float, hours_late: float) -> dict:
    """A results file as grade-batch writes it: `share` of every item's points, handed in `hours_late`
    after Gradescope's (moved) due date, under a 10 %-a-day policy."""
    deadlines = deadlines_from_table({"timezone": "America/Los_Angeles", "policy": "per_day", "penalty_percent": 10,
                                      assignment.id: {"due": DUE}}, "scalelabs.toml", {assignment.id})
    late = deadlines.assess(assignment.id, student, SubmissionTime(MOVED + timedelta(hours=hours_late), "Gradescope created_at"),
                            platform=PlatformDates("Gradescope", MOVED, None, {student: MOVED}))
    result = Result(assignment.id, student, [TestResult(item, "hidden checks", "hidden", points * share, float(points), "ok")
                                             for item, points in assignment.item_points.items()], "ran in a sandbox", "bubblewrap")
    return result.to_gradescope() | {"scalelabs": {"assignment": assignment.id, "student": student, "view": "after",
                                                   "max_score": assignment.total_points, "late": late.to_json()}}


def shown(browser, page_path: Path, shot: Path) -> str:
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    try:
        page.goto(page_path.as_uri())
        page.screenshot(path=str(shot), full_page=True)
        return " ".join(page.inner_text("body").split())
    finally:
        page.close()


def test_a_late_students_page_and_the_class_report_name_the_raw_and_the_final_score(browser, tmp_path):
    assignment = toy.make()
    gina = graded(assignment, "gina", 0.7, 27)       # 1 d 3 h late: 20 % of 7
    page = tmp_path / "gina.html"
    page.write_text(render_feedback(assignment.title, "gina", gina))
    text = shown(browser, page, tmp_path / "late-feedback.png")
    assert "raw score (before late work) 7.00 / 10.00, final score (after late work) 5.60 / 10.00" in text, text
    assert "Gradescope's due date; submitted" in text and "20 % of the raw score 7 = 1.4 points; final score 5.6 / 10" in text
    assert "is not the [deadlines] due date 2026-11-20 15:59 -08:00: Gradescope's applies" in text

    grades = tmp_path / "grades"
    (grades / "results").mkdir(parents=True)
    for student, data in {"gina": gina, "hal": graded(assignment, "hal", 0.9, -2)}.items():
        (grades / "results" / f"{student}.json").write_text(json.dumps(data))
    report = shown(browser, write_report(assignment, grades)["html"], tmp_path / "late-report.png")
    assert "Raw scores (before late work): mean 8.00" in report and "final scores (after late work): mean 7.30" in report
    assert "hours late raw score penalty final score gina 27.00 7 1.4 5.6" in report, report
    assert "raw score final score engine's score scored by hand needs attention gina 7.00 5.60 7.00" in report, report
