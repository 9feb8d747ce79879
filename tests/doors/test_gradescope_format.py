"""What Gradescope draws of results.json: every test's text in markdown (`output_format: "md"`) and a
`status`, as Gradescope's autograder specification defines them ("Test case status", "Output String
Formatting": https://gradescope-autograders.readthedocs.io/en/latest/specs/). The markdown is rendered
here with a CommonMark renderer (markdown-it-py, raw HTML on) to see what a student sees: each check's
name and score in bold, computed values verbatim in a code block, and nothing a student's code prints or
names (HTML, a link, a fence of its own) turns into markup. (Visibility per feedback mode:
test_gradescope_policy.py.)"""
from __future__ import annotations

import jsonschema
import pytest
from markdown_it import MarkdownIt

from autograder.classroom.deadlines import Lateness
from autograder.doors import gradescope
from autograder.engine.config import FeedbackPolicy
from autograder.engine.results import Result, TestResult

from door_helpers import toy

LAB = toy.make()
FORMATS = ["text", "simple_format", "html", "md", "ansi"]      # the specification's output formats
SCHEMA = {   # Gradescope's results.json, the fields this door sets, every test with its format and status
    "type": "object", "required": ["score", "output", "output_format", "tests"],
    "properties": {"output_format": {"enum": FORMATS}, "tests": {"type": "array", "items": {
        "type": "object", "required": ["name", "output", "output_format", "status", "visibility"],
        "properties": {"status": {"enum": ["passed", "failed"]}, "output_format": {"enum": FORMATS},
                       "score": {"type": "number"}, "max_score": {"type": "number"}}}}}}
HOSTILE = "```\n<img src=x onerror=alert(1)> [prize](http://evil.example) **bold** <script>x</script>"


def _result(function_output: str = "ring(n=2) returned 1\nexpected 2") -> Result:
    f, g, q = LAB.functions[0], LAB.functions[1], LAB.questions[0]
    tests = [TestResult(f.name, "worked example (Act I)", "example", 1.0, 1.0, "ring(...) = 5.5"),
             TestResult(f.name, "hidden checks", "hidden", 0.0, float(f.points) - 1.0, function_output),
             TestResult(g.name, "hidden checks", "hidden", float(g.points), float(g.points), "all hidden inputs match"),
             TestResult(q.id, q.kind, q.kind, 0.0, float(q.points), "answered A: not the best answer\n"
                        "Hint: count the bytes * per link, not <the> steps", "A")]
    return Result(LAB.id, "sid-1", tests, "ran in the bubblewrap sandbox\nNot graded from your folder: "
                  "<img src=y onerror=alert(2)>.py (a link)", "bubblewrap")


def _html(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


@pytest.mark.parametrize("mode", ["due_date", "before", "after"])
def test_every_test_is_markdown_with_a_status_gradescope_accepts(mode):
    results = gradescope.results_json(LAB, _result(), FeedbackPolicy(gradescope=mode))
    jsonschema.validate(results, SCHEMA)
    assert results["output_format"] == "md" and all(t["output_format"] == "md" for t in results["tests"])
    f, g, q = LAB.functions[0], LAB.functions[1], LAB.questions[0]
    status = {t["name"]: t["status"] for t in results["tests"]}
    assert (status[f.name], status[g.name], status[q.id]) == ("failed", "passed", "failed")
    assert all(status[i] == "failed" for i in LAB.item_ids if i not in (g.name,))   # no result: 0 points, failed
    for name, value in status.items():   # an item's full view says what the item did
        if name.endswith(gradescope.IN_FULL):
            assert value == status[name[:-len(gradescope.IN_FULL)]]


def test_the_markdown_shows_each_check_bold_values_verbatim_and_sentences_as_text():
    results = gradescope.results_json(LAB, _result(), FeedbackPolicy(gradescope="after"))
    tests = {t["name"]: t for t in results["tests"]}
    f, q = LAB.functions[0], LAB.questions[0]
    page = _html(tests[f.name]["output"])
    assert "<strong>worked example (Act I)</strong>: 1 / 1" in page
    assert '<pre><code class="language-text">ring(n=2) returned 1\nexpected 2\n</code></pre>' in page
    answer = _html(tests[q.id]["output"])
    assert "<p>answered A: not the best answer<br />\nHint: count the bytes * per link, not &lt;the&gt; steps" in answer
    assert "<em>" not in answer and "<the>" not in answer
    summary = _html(results["output"])
    assert f"Score: {results['score']:g} / {LAB.total_points:g}<br />" in summary and f"{f.name}: 1 / {f.points:g}" in summary


def test_nothing_a_student_writes_becomes_markup():
    """A student's exception message with a fence of its own, HTML, a link and emphasis, and a file named
    like an image tag: every character shows as written; no tag, link or emphasis reaches the page."""
    results = gradescope.results_json(LAB, _result(HOSTILE), FeedbackPolicy(gradescope="after"))
    for t in results["tests"] + [results]:
        page = _html(t["output"])
        assert not any(tag in page for tag in ("<img", "<script", "<a ", "<strong>bold")), page
    function = _html({t["name"]: t for t in results["tests"]}[LAB.functions[0].name]["output"])
    assert "```\n&lt;img src=x onerror=alert(1)&gt; [prize](http://evil.example) **bold**" in function
    assert "Not graded from your folder: &lt;img src=y onerror=alert(2)&gt;.py (a link)" in _html(results["output"])


def test_the_late_penalty_is_a_test_with_a_status_too():
    late = Lateness("late", "2026-11-20T23:59:00-08:00", "2026-11-20T23:59:00-08:00", "2026-11-21T10:00:00-08:00",
                    "gradescope", 36060.0, 10.0, "10 % per day late")
    results = gradescope.results_json(LAB, _result(), FeedbackPolicy(), late=late)
    jsonschema.validate(results, SCHEMA)
    penalty = {t["name"]: t for t in results["tests"]}[gradescope.LATE_TEST]
    assert penalty["status"] == "failed" and penalty["score"] < 0 and penalty["output"] in results["output"]
    on_time = gradescope.results_json(LAB, _result(), FeedbackPolicy(), late=Lateness(
        "on_time", late.due, late.lab_due, "2026-11-20T10:00:00-08:00", "gradescope"))
    assert {t["name"]: t for t in on_time["tests"]}[gradescope.LATE_TEST]["status"] == "passed"


def test_an_engine_failure_is_markdown_that_says_why():
    results = gradescope.results_json(LAB, None, FeedbackPolicy(), "sid-1", "the engine could not grade *this*")
    jsonschema.validate(results, SCHEMA)
    assert all(t["status"] == "failed" and "could not grade *this*" in _html(t["output"]) for t in results["tests"])
