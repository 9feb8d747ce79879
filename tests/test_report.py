"""`scalelabs report`: the class report's numbers equal the results files, and the page, opened in
headless Chromium, shows every section with every plot decoded.

The class: Lab 06's sample students plus two students handing in the lab's wrong implementations
(tests/labs/lab06_collectives/impls/wrong_a.py, wrong_b.py), so misconceptions and failed properties
are there to count; graded with grade-batch like a TA would.
"""
from __future__ import annotations

import base64
import csv
import io
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from autograder.classroom.batch import grade_batch
from autograder.classroom.demo import materialise_class
from autograder.classroom.report import write_report
from labs import load

REPO = Path(__file__).resolve().parents[1]
LAB = "lab06_collectives"
ASSIGNMENT = load(LAB)
SECTIONS = ("scores", "items", "analysis", "distractors", "misconceptions", "questions", "predictions", "students",
            "properties")
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="module")
def grades(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("class") / "submissions"
    materialise_class(LAB, root, REPO)
    for impl in ("wrong_a", "wrong_b"):
        shutil.copytree(root / "correct", root / impl)
        shutil.copyfile(REPO / "tests" / "labs" / LAB / "impls" / f"{impl}.py", root / impl / f"{ASSIGNMENT.module}.py")
    out = root.parent / "grades"
    summary = grade_batch(LAB, root, out, jobs=2)
    assert not summary.failed
    (out / "results" / "stray.json").write_text('{"not": "ours"}')   # a file a TA dropped there
    write_report(ASSIGNMENT, out)
    return out


def _results(grades: Path) -> dict[str, dict]:
    """The results files as raw JSON, read here without the code under test."""
    return {p.stem: json.loads(p.read_text()) for p in (grades / "results").glob("*.json") if p.stem != "stray"}


def test_a_report_of_another_lab_from_these_results_is_refused_and_keeps_the_report(grades):
    """`scalelabs report lab01_scale` on Lab 06's grades wrote a Lab 01 report of Lab 06's scores
    (29 of 26 points) over Lab 06's report."""
    before = (grades / "report.json").read_bytes()
    proc = subprocess.run([sys.executable, "-c", "from autograder.cli import main; main()", "report",
                           "lab01_scale", str(grades)], capture_output=True, text=True, cwd=REPO)
    message = " ".join(proc.stderr.split())
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert f"holds a result of {LAB}, not lab01_scale" in message, message
    assert (grades / "report.json").read_bytes() == before


def test_the_counts_equal_the_results_files(grades):
    results = _results(grades)
    report = json.loads((grades / "report.json").read_text())
    assert report["scores"] == pytest.approx({s: r["score"] for s, r in results.items()})
    assert report["unreadable"] == ["stray.json"]

    tests = {s: [(t["extra_data"], t["score"], t["max_score"], t["output"]) for t in r["tests"]] for s, r in results.items()}
    for row in report["items"]:
        full = sum(1 for s in tests
                   if sum(x[1] for x in tests[s] if x[0]["item"] == row["item"]) >= row["points"] - 1e-9)
        assert row["full_marks"] == full, row["item"]
        got = [sum(x[1] for x in tests[s] if x[0]["item"] == row["item"]) for s in tests]
        assert row["mean_score"] == pytest.approx(sum(got) / len(got)), row["item"]   # over every student

    named = Counter((e["item"], e["misconception"]) for s in tests for e, *_ in tests[s] if e["misconception"])
    assert {(f["item"], f["misconception"]): len(f["students"]) for f in report["misconceptions"]} == named
    assert len(named) >= 20   # the two wrong implementations: one named wrong model per numeric function

    moved = 0   # answers the student's version showed under another letter than the lab as written
    for q in report["questions"]:
        # counted by option identity (its letter in the lab as written), whatever letter each version showed
        given = Counter(e.get("option") or e["answer"] for s in tests for e, *_ in tests[s] if e["item"] == q["question"])
        moved += sum(1 for s in tests for e, *_ in tests[s] if e["item"] == q["question"] and e.get("option")
                     and e["option"] != e["answer"])
        assert {k: v for k, v in q["counts"].items() if v} == dict(given), q["question"]
        assert q["key"] == ASSIGNMENT.question(q["question"]).key
        # a prediction without a record: listed by name (the sample class's cleared_outputs), counted in "none"
        unrecorded = sorted(s for s in tests for e, _, _, output in tests[s]
                            if e["item"] == q["question"] and output.startswith("unrecorded:"))
        assert sorted(q["unrecorded"]) == unrecorded, q["question"]
        assert ("cleared_outputs" in unrecorded) == (q["kind"] == "prediction"), q["question"]

    assert moved or ASSIGNMENT.variants is None   # the class spans versions: the identity is what is counted
    failed = Counter((e["item"], e["check"]) for s in tests for e, score, top, output in tests[s]
                     if e["kind"] == "property" and output.startswith("Property failed: "))
    assert {(f["item"], f["property"]): len(f["students"]) for f in report["properties"]} == failed
    assert failed

    for pair in report["predictions"]:
        p, r = ASSIGNMENT.question(pair["prediction"]), ASSIGNMENT.question(pair["reflection"])
        answers = {s: {e["item"]: e.get("option") or e["answer"] for e, *_ in tests[s]} for s in tests}   # identities
        both = [(a[p.id] == p.key, a[r.id] == r.key) for a in answers.values() if a[p.id] and a[r.id]]
        assert pair["counts"]["wrong/right"] == sum(1 for pr, rr in both if not pr and rr)
        assert sum(pair["counts"].values()) == len(both)
    assert [(p["prediction"], p["reflection"]) for p in report["predictions"]] == [
        ("act1_prediction", "act1_reflection"), ("act2_prediction", "act2_reflection")]


def _numpy_analysis(grades: Path) -> dict:
    """The item analysis of the results files, computed here with numpy from the raw JSON alone: item
    scores (a prediction on whether its answer is the key), difficulty, item-rest r, Kelley's 27 % groups
    (by total to the micro-point, ties by student id), D, Cronbach's alpha and alpha without each item,
    and each option's share of the upper group, the lower group and everyone."""
    results = _results(grades)
    ids = sorted(results)
    items, points = ASSIGNMENT.item_ids, np.array([ASSIGNMENT.item_points[i] for i in ASSIGNMENT.item_ids])
    keys = {q.id: q.key for q in ASSIGNMENT.questions}
    # each answer by its option identity (its letter in the lab as written): students of other versions saw it
    # under another letter (issue 45)
    answers = {q: {s: next((t["extra_data"].get("option") or t["extra_data"]["answer"] for t in results[s]["tests"]
                            if t["extra_data"]["item"] == q), "") for s in ids} for q in keys}
    x = np.array([[sum(t["score"] for t in results[s]["tests"] if t["extra_data"]["item"] == i) for i in items]
                  for s in ids])
    predictions = {q.id for q in ASSIGNMENT.questions if q.kind == "prediction"}
    for j, item in enumerate(items):
        if item in predictions:
            x[:, j] = [points[j] if answers[item][s] == keys[item] else 0.0 for s in ids]
    n, k = x.shape
    total = np.round(x.sum(axis=1), 6)
    rest = total[:, None] - x
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.array([np.corrcoef(x[:, j], rest[:, j])[0, 1] for j in range(k)])
    g = int(np.floor(0.27 * n + 0.5))
    order = np.lexsort((np.array(ids), total))
    upper, lower = order[n - g:], order[:g]

    def alpha(m):
        return m.shape[1] / (m.shape[1] - 1) * (1 - m.var(axis=0).sum() / m.sum(axis=1).var())

    share = lambda group, q, o: np.mean([answers[q][ids[i]] == o for i in group])   # noqa: E731
    return {"n": n, "k": k, "group": g, "difficulty": x.mean(axis=0) / points, "item_rest": r,
            "D": (x[upper].mean(axis=0) - x[lower].mean(axis=0)) / points, "alpha": alpha(x),
            "alpha_if_deleted": np.array([alpha(np.delete(x, j, axis=1)) for j in range(k)]),
            "options": {q.id: {o: (share(upper, q.id, o), share(lower, q.id, o), share(range(n), q.id, o))
                               for o in [*q.options, ""]} for q in ASSIGNMENT.questions}}


def test_the_item_analysis_equals_an_independent_numpy_computation(grades):
    """The sample class's difficulty, item-rest r, D, alpha, alpha without each item and option shares in
    report.json equal a numpy computation from the results files to 1e-9; the flags are the ones the
    numbers call for."""
    want = _numpy_analysis(grades)
    report = json.loads((grades / "report.json").read_text())
    assert want["n"] == len(report["scores"]) == 8 and report["group_size"] == want["group"] == 2
    assert report["alpha"] == pytest.approx(want["alpha"], abs=1e-9)
    same = lambda got, expected: (got is None and np.isnan(expected)) or abs(got - expected) <= 1e-9  # noqa: E731
    for j, row in enumerate(report["items"]):
        for field, key in (("difficulty", "difficulty"), ("item_rest", "item_rest"), ("discrimination", "D"),
                           ("alpha_if_deleted", "alpha_if_deleted")):
            assert same(row[field], want[key][j]), (row["item"], field, row[field], want[key][j])
        expected = set()
        if want["D"][j] < -1e-9 or (not np.isnan(want["item_rest"][j]) and want["item_rest"][j] < -1e-9):
            expected.add("negative")
        if want["difficulty"][j] > 0.95:
            expected.add("too easy")
        if want["difficulty"][j] < 0.05:
            expected.add("too hard")
        if want["alpha_if_deleted"][j] > want["alpha"] + 1e-9:
            expected.add("removing")
        got = {kind for f in row["flags"] for kind in ("negative", "too easy", "too hard", "removing")
               if f.startswith(kind)}
        assert got == expected, (row["item"], row["flags"])
    predictions = [row for row in report["items"] if row["kind"] == "prediction"]
    assert any(row["difficulty"] < row["mean_score"] / row["points"] for row in predictions)   # on the key
    for table in report["distractors"]:
        for option in table["options"]:
            u, lo, everyone = want["options"][table["question"]][option["option"]]
            assert (option["upper"], option["lower"], option["everyone"]) == pytest.approx((u, lo, everyone), abs=1e-9)
            assert option["flawed"] == (bool(option["option"]) and not option["key"] and u > lo), option


def test_the_csv_holds_the_same_numbers(grades):
    report = json.loads((grades / "report.json").read_text())
    rows = list(csv.DictReader((grades / "report.csv").open()))
    misconceptions = {(r["item"], r["what"]): int(r["count"]) for r in rows if r["section"] == "misconception"}
    assert misconceptions == {(f["item"], f["misconception"]): len(f["students"]) for f in report["misconceptions"]}
    scores = {r["item"]: float(r["count"]) for r in rows if r["section"] == "score"}
    assert scores == pytest.approx(report["scores"])
    unrecorded = {r["item"]: int(r["count"]) for r in rows if r["section"] == "unrecorded"}
    assert unrecorded == {q["question"]: len(q["unrecorded"]) for q in report["questions"] if q["kind"] == "prediction"}
    assert all(unrecorded.values())


def test_the_page_in_headless_chromium_shows_every_section_and_plot(grades, tmp_path):
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install -y chromium"
    page_path = grades / "report.html"
    html = page_path.read_text()
    # self-contained: every image inline, nothing fetched, no script
    assert re.findall(r'src="([^"]{0,22})', html) and all(src.startswith("data:image/png;base64,")
                                                          for src in re.findall(r'src="([^"]{0,22})', html))
    assert "<script" not in html and "<link" not in html
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.goto(page_path.as_uri())
            images = page.evaluate("[...document.images].map(i => [i.alt, i.complete, i.naturalWidth, i.naturalHeight])")
            heights = {s: page.evaluate(f"document.getElementById('{s}')?.getBoundingClientRect().height ?? 0")
                       for s in SECTIONS}
            students = page.inner_text("#students")
            analysis = page.inner_text("#analysis")
            warning_shown = page.is_visible("#analysis .warning")
            flagged = page.evaluate("document.querySelectorAll('#analysis tr.flagged').length")
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert all(h > 40 for h in heights.values()), heights
    # every student of the record, and who needs a person with the reason (the sample's broken module)
    assert all(student in students for student in _results(grades)), students
    assert "1 needs a person" in students and "collectives.py does not import" in students, students
    # the item analysis of a class of 8: every statistic shown, under a warning that says why to doubt them
    report = json.loads((grades / "report.json").read_text())
    assert warning_shown and "8 students: under 10, one student moves every number below" in analysis, analysis
    assert f"Cronbach's alpha of the lab: {report['alpha']:.3f}, over 8 students and 19 items" in analysis, analysis
    assert "Upper and lower groups: 2 students each" in analysis
    assert flagged == sum(1 for r in report["items"] if r["flags"]) > 0
    assert all(line in analysis for r in report["items"] for line in r["flags"])
    assert len(images) >= 4, images     # scores, items, misconceptions, questions
    broken = [alt for alt, complete, width, height in images if not (complete and width > 50 and height > 50)]
    assert not broken, f"images that did not decode: {broken}"
    for uri in re.findall(r'src="data:image/png;base64,([^"]+)"', html):   # each PNG whole, not only its header
        Image.open(io.BytesIO(base64.b64decode(uri))).load()
    shot = Image.open(tmp_path / "report.png").convert("L")
    assert shot.size[1] > 2000 and shot.getextrema()[0] < 100   # a long page with dark ink on it


def test_cli_report_writes_the_files_and_refuses_an_empty_folder(grades, tmp_path):
    scalelabs = [sys.executable, "-c", "from autograder.cli import main; main()"]
    done = subprocess.run([*scalelabs, "report", LAB, str(grades)], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert str(grades / "report.html") in done.stdout
    (tmp_path / "empty" / "results").mkdir(parents=True)
    done = subprocess.run([*scalelabs, "report", LAB, str(tmp_path / "empty")], capture_output=True, text=True,
                          cwd=tmp_path)
    assert done.returncode == 2 and "no results of lab06_collectives" in done.stderr
    done = subprocess.run([*scalelabs, "report", LAB], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 2 and f"grades folder {tmp_path / 'grades' / LAB} does not exist" in done.stderr
