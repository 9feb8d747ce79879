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

import pytest
from PIL import Image

from autograder.classroom.batch import grade_batch
from autograder.classroom.demo import materialise_class
from autograder.classroom.report import write_report
from labs import load

REPO = Path(__file__).resolve().parents[1]
LAB = "lab06_collectives"
ASSIGNMENT = load(LAB)
SECTIONS = ("scores", "items", "misconceptions", "questions", "predictions", "students", "properties")
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
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert all(h > 40 for h in heights.values()), heights
    # every student of the record, and who needs a person with the reason (the sample's broken module)
    assert all(student in students for student in _results(grades)), students
    assert "1 needs a person" in students and "collectives.py does not import" in students, students
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
