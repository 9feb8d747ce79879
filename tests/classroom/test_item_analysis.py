"""The class report's item analysis on a class built to have what it must find: a reflection only the
weakest students get right (negative discrimination), a reflection whose wrong option the strongest
students choose (a flawed distractor), and predictions graded on commitment (every recorded answer full
marks) that are analysed on whether they matched the key. Results files are written directly (no
grading): twelve students whose totals rank them s01 (weakest) to s12 (strongest).

The statistics' agreement with an independent numpy computation on a graded class: tests/test_report.py.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from autograder.classroom.report import build_report, render_report, report_csv
from autograder.classroom.samples import wrong_letter
from autograder.engine.results import Result, TestResult
from labs import load

LAB = load("lab06_collectives")
STUDENTS = [f"s{i:02d}" for i in range(1, 13)]          # ability = the number
NEGATIVE, FLAWED = "act1_reflection", "act2_reflection"


def _answer(qid: str, ability: int) -> str:
    q = LAB.question(qid)
    wrong, other = wrong_letter(q.options, q.key), wrong_letter(q.options, wrong_letter(q.options, q.key))
    if qid == NEGATIVE:           # only the weakest four choose the key
        return q.key if ability <= 4 else wrong
    if qid == FLAWED:             # the strongest three choose one wrong option, the weakest three another
        return wrong if ability >= 10 else (q.key if ability >= 4 else other)
    threshold = {"act1_prediction": 6, "act2_prediction": 4, "measurement_reflection": 3}[qid]
    return q.key if ability >= threshold else wrong


def _result(student: str) -> dict:
    ability = int(student[1:])
    tests = [TestResult(f.name, "hidden checks", "hidden", float(f.points) if ability > 1 + j % 10 else 0.0,
                        float(f.points), "") for j, f in enumerate(LAB.functions)]
    for q in LAB.questions:
        answer = _answer(q.id, ability)
        # predictions on commitment: a recorded answer, right or wrong, earns the points
        score = float(q.points) if q.kind == "prediction" or answer == q.key else 0.0
        tests.append(TestResult(q.id, q.kind, q.kind, score, float(q.points), f"answered {answer}", answer))
    data = Result(LAB.id, student, tests).to_gradescope()
    data["scalelabs"] = {"assignment": LAB.id, "student": student, "max_score": LAB.total_points}
    return data


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("flagged")
    (folder / "results").mkdir()
    for student in STUDENTS:
        (folder / "results" / f"{student}.json").write_text(json.dumps(_result(student)))
    return build_report(LAB, folder)


def _items(report) -> dict:
    return {r.item: r for r in report.items}


def test_the_item_only_the_weakest_get_right_is_flagged_for_negative_discrimination(report):
    item = _items(report)[NEGATIVE]
    assert item.discrimination == pytest.approx(-1.0)      # upper 3 all wrong, lower 3 all right
    assert item.item_rest < 0
    assert any(f.startswith("negative discrimination (D = -1.00, item-rest r = -") for f in item.flags), item.flags
    # the items that rank the class as its totals do are not
    for r in report.items:
        if r.item not in (NEGATIVE, FLAWED):
            assert r.discrimination > 0 and not any("negative" in f for f in r.flags), (r.item, r.flags)


def test_the_wrong_option_the_strongest_choose_is_flagged_as_a_flawed_distractor(report):
    q = LAB.question(FLAWED)
    flawed = wrong_letter(q.options, q.key)
    item = _items(report)[FLAWED]
    assert f"option {flawed} draws the upper group more than the lower (100 % against 0 %): ambiguous, or a second " \
           "right answer; check the key" in item.flags
    table = next(d for d in report.distractors if d.question == FLAWED)
    shares = {o.option: (o.upper, o.lower, o.everyone, o.key, o.flawed) for o in table.options}
    assert shares[flawed] == (1.0, 0.0, pytest.approx(3 / 12), False, True)
    assert shares[q.key][:2] == (0.0, 0.0) and shares[q.key][3] and not shares[q.key][4]
    assert [o.option for o in table.options] == [*q.options, ""]           # every option, then "no answer"
    # a distractor the weakest choose is how a distractor should work: no flag (the negative item's wrong
    # option, which the strongest choose, is flagged too)
    assert {r.item for r in report.items for f in r.flags if "draws the upper group" in f} == {FLAWED, NEGATIVE}


def test_predictions_graded_on_commitment_are_analysed_on_the_key(report):
    for qid, right in (("act1_prediction", 7), ("act2_prediction", 9)):
        item = _items(report)[qid]
        assert item.mean_score == LAB.question(qid).points and item.full_marks == 12   # the grade: all full
        assert item.difficulty == pytest.approx(right / 12)                           # the analysis: the key
        assert item.discrimination == pytest.approx(1.0)


def test_the_page_and_the_csv_show_both_flags_with_their_reasons(report):
    page = " ".join(render_report(report).split())
    assert "items to look at:" in page
    for r in (_items(report)[NEGATIVE], _items(report)[FLAWED]):
        for line in r.flags:
            assert f"<strong>{r.item}</strong>: {line}" in page.replace("&#39;", "'"), line
    assert "under 10" not in page and report.small_class == ""                   # twelve students: no warning
    rows = list(csv.DictReader(report_csv(report).splitlines()))
    flags = {(r["item"], r["what"].split(" ")[0]) for r in rows if r["section"] == "flag"}
    assert {(NEGATIVE, "negative"), (FLAWED, "option")} <= flags
    alpha = next(r for r in rows if r["section"] == "alpha")
    assert float(alpha["count"]) == pytest.approx(report.alpha) and "12 students, 19 items" in alpha["what"]


def test_a_class_under_ten_shows_its_statistics_with_a_warning(tmp_path):
    (tmp_path / "results").mkdir()
    for student in STUDENTS[::2]:                                                  # six students
        (tmp_path / "results" / f"{student}.json").write_text(json.dumps(_result(student)))
    report = build_report(LAB, tmp_path)
    assert report.small_class.startswith("6 students: under 10")
    assert report.alpha is not None and report.group_size == 2
    assert all(r.discrimination is not None for r in report.items)
    page = " ".join(render_report(report).split())
    assert "6 students: under 10, one student moves every number below" in page and "Cronbach's alpha" in page


def test_alpha_is_not_defined_for_a_class_of_one_and_the_page_says_why(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "s05.json").write_text(json.dumps(_result("s05")))
    report = build_report(LAB, tmp_path)
    assert report.alpha is None and report.alpha_note == "1 student: alpha needs at least 2"
    assert report.group_size == 0 and all(r.item_rest is None and r.discrimination is None for r in report.items)
    page = " ".join(render_report(report).split())
    assert "not defined (1 student: alpha needs at least 2)" in page
