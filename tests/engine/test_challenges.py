"""Design challenges (autograder.engine.challenges): a literal design read from the notebook without
running it, graded per constraint by a trusted check; hostile answers score 0 with a reason and
never crash the grader; the record travels as kind "challenge" through results.json."""
from __future__ import annotations

import dataclasses
import json

import nbformat
import pytest

import toy
from autograder.build.notebook import build_notebook
from autograder.engine.challenges import (DesignChallenge, Field, Invalid, Verdict, grade_challenges,
                                          parse_design)
from autograder.engine.grade import grade_submission
from autograder.engine.submission import read_submission
from autograder.engine.results import Result
from autograder.engine.spec import Answer, Challenge, Code, FunctionGrades, Markdown


def _check(design):
    """A toy scenario: a box of `width` x `depth` must hold 12 units and cost at most 10."""
    if design["width"] == 7:
        raise Invalid("width 7 does not fit the shelf")
    if design["width"] == 5:
        raise ZeroDivisionError("a bug in the staff check")   # the grader must survive its own bugs too
    area = design["width"] * design["depth"]
    cost = design["width"] + design["depth"]
    return [Verdict(area >= 12, f"area {area:g}"), Verdict(cost <= 10, f"cost {cost:g}"),
            Verdict(design["depth"] <= 4, f"depth {design['depth']:g}")]


BOX = DesignChallenge(
    id="box_design", points=3.0, prompt="Design a box.",
    fields=(Field("width", "units wide", 1, 20), Field("depth", "units deep", 0.5, 8.0, integer=False)),
    constraints=("holds 12 units", "costs at most 10", "at most 4 deep"), check=_check,
    reference_answer=dict(width=4, depth=3.0))
ASSIGNMENT = dataclasses.replace(toy.ASSIGNMENT, challenges=[BOX])


def _notebook_dir(tmp_path, source: str | None, raw: str | None = None):
    cells = [nbformat.v4.new_markdown_cell("story")]
    if source is not None:
        cells.append(nbformat.v4.new_code_cell(source, metadata={"nbgrader": {"grade_id": "box_design-answer"}}))
    (tmp_path / f"{toy.ASSIGNMENT_ID}.ipynb").write_text(raw if raw is not None else
                                                         nbformat.writes(nbformat.v4.new_notebook(cells=cells)))
    return tmp_path


def _grade(tmp_path, source, raw=None):
    return grade_challenges([BOX], read_submission(_notebook_dir(tmp_path, source, raw), toy.ASSIGNMENT_ID))[0]


@pytest.mark.parametrize("source", [
    "box_design = dict(width=4, depth=3.0)",
    'box_design = {"width": 4, "depth": 3}  # my box',
    "box_design = dict(depth=+3.0, width=4.0)",          # any order; a whole float for a count
    "# a 4 x 3 box\nbox_design = dict(width=4, depth=3)\n",
])
def test_several_spellings_of_a_valid_design_get_full_marks(tmp_path, source):
    grade = _grade(tmp_path, source)
    assert grade.score == 3.0 and "3 of 3 constraints met" in grade.feedback
    assert grade.answer == "width=4 depth=3.0" or grade.answer == "width=4 depth=3"


@pytest.mark.parametrize("design, score, missed", [
    ("dict(width=6, depth=2)", 3.0, []),                      # a second right answer
    ("dict(width=2, depth=4)", 2.0, ["holds 12 units: area 8"]),
    ("dict(width=8, depth=4)", 2.0, ["costs at most 10: cost 12"]),
    ("dict(width=2, depth=6.5)", 2.0, ["at most 4 deep: depth 6.5"]),
    ("dict(width=1, depth=8)", 1.0, ["holds 12 units: area 8", "at most 4 deep: depth 8"]),
])
def test_each_missed_constraint_loses_its_share_and_is_named_with_its_number(tmp_path, design, score, missed):
    grade = _grade(tmp_path, f"box_design = {design}")
    assert grade.score == pytest.approx(score)
    lines = [line.strip() for line in grade.feedback.splitlines()]
    assert sorted(line for line in lines if line.startswith("MISSED")) == sorted(f"MISSED: {m}" for m in missed)
    assert sum(line.startswith("met: ") for line in lines) == 3 - len(missed)


@pytest.mark.parametrize("source, reason", [
    ("box_design = None", "not answered yet"),
    ("box_design = dict(width='4', depth=3)", "width must be a number literal"),
    ("box_design = dict(width=[4], depth=3)", "width must be a number literal"),
    ("box_design = dict(width={'a': {'b': [1]}}, depth=3)", "width must be a number literal"),
    ("box_design = dict(width=2 * 2, depth=3)", "width must be a number literal"),
    ("box_design = dict(width=True, depth=3)", "width must be a number literal"),
    ("box_design = dict(width=W, depth=3)", "width must be a number literal"),
    ("box_design = dict(width=4.5, depth=3)", "width must be a whole number"),
    ("box_design = dict(width=-4, depth=3)", "width must be a whole number from 1 to 20, got -4"),
    ("box_design = dict(width=4, depth=1e999)", "depth must be finite"),
    ("box_design = dict(width=" + "9" * 4000 + ", depth=3)", "width must be a whole number from 1 to 20, got 999"),
    ("box_design = dict(width=" + "9" * 5000 + ", depth=3)", "not short, valid Python"),
    ("box_design = dict(width=4)", "the design lacks depth"),
    ("box_design = dict(width=4, depth=3, height=2)", "'height' is not part of the design"),
    ('box_design = {"width": 4, "width": 5, "depth": 3}', "width is given twice"),
    ("box_design = {**other, 'depth': 3}", "not a literal dict of numbers"),
    ("box_design = {1: 4, 'depth': 3}", "1 is not part of the design"),
    ("box_design = dict(zip(['width', 'depth'], [4, 3]))", "not a literal dict of numbers"),
    ("box_design = (4, 3)", "not a literal dict of numbers"),
    ("box_design = '4 x 3'", "not a literal dict of numbers"),
    ("box_design = dict(width=4, depth=3)\nprint('hi')", "holds something else"),
    ("box_design = dict(width=4, depth=3", "not short, valid Python"),
    ("box_design = dict(" + "(" * 200 + "4" + ")" * 200 + ", depth=3)", "not short, valid Python"),
    ("box_design = dict(width=7, depth=3)", "width 7 does not fit the shelf"),
    ("box_design = dict(width=5, depth=3)", "could not be evaluated (ZeroDivisionError"),
])
def test_malformed_or_hostile_answers_score_zero_with_a_reason(tmp_path, source, reason):
    grade = _grade(tmp_path, source)
    assert grade.score == 0.0 and reason in grade.feedback, grade.feedback
    assert len(grade.feedback) < 500


@pytest.mark.parametrize("raw, reason", [
    ("{not json", "not valid notebook JSON"),
    ("[1, 2]", "not a notebook"),
])
def test_an_unreadable_notebook_scores_zero_with_a_reason(tmp_path, raw, reason):
    grade = _grade(tmp_path, None, raw=raw)
    assert grade.score == 0.0 and reason in grade.feedback


def test_a_check_that_returns_too_few_verdicts_scores_zero_and_says_to_tell_the_staff(tmp_path):
    broken = dataclasses.replace(BOX, check=lambda design: _check(design)[:2])
    grade = grade_challenges([broken], read_submission(
        _notebook_dir(tmp_path, "box_design = dict(width=4, depth=3)"), toy.ASSIGNMENT_ID))[0]
    assert grade.score == 0.0 and "tell the course staff" in grade.feedback


def test_no_notebook_or_no_answer_cell_scores_zero(tmp_path):
    assert "is not in the submission" in grade_challenges([BOX], read_submission(tmp_path, toy.ASSIGNMENT_ID))[0].feedback
    assert "no answer cell for box_design" in _grade(tmp_path, None).feedback


def test_parse_design_returns_the_numbers_in_declaration_types():
    assert parse_design("box_design = dict(depth=2, width=3.0)", BOX) == ({"width": 3, "depth": 2}, "")
    assert type(parse_design("box_design = dict(depth=2, width=3.0)", BOX)[0]["width"]) is int


def test_the_notebook_places_an_unplaced_challenge_where_the_acts_end():
    a = dataclasses.replace(ASSIGNMENT, notebook=[Markdown("story"), Answer("act1_prediction"), Code("print(1)"),
                                                  Markdown("## math peek"), FunctionGrades()])
    nb = build_notebook(a)
    ids = [c.id for c in nb.cells]
    # after the last answer and the code that follows it (the prediction's own reveal, then the
    # lab's code), before the next markdown; its grade cell with the others under Grades
    assert ids[ids.index("act1_prediction-answer") + 1:ids.index("md-003") + 1] == [
        "reveal-act1_prediction", "code-002", "box_design-prompt", "box_design-answer", "md-003"]
    assert ids[ids.index("grades-heading") + 1:ids.index("grades-heading") + 3] == ["act1_prediction", "box_design"]
    cells = {c.id: c for c in nb.cells}
    assert cells["box_design-answer"].source.startswith("box_design = None")
    assert cells["box_design"].metadata["nbgrader"]["points"] == 3.0
    prompt = cells["box_design-prompt"].source
    assert all(c in prompt for c in BOX.constraints) and "a whole number from 1 to 20" in prompt
    placed = dataclasses.replace(ASSIGNMENT, notebook=[Challenge("box_design"), Answer("act1_prediction"),
                                                                  FunctionGrades()])
    assert [c.id for c in build_notebook(placed).cells][:3] == ["setup", "box_design-prompt", "box_design-answer"]


def test_grade_submission_records_the_challenge_and_results_json_keeps_it(tmp_path):
    folder = toy.make_submission(tmp_path / "s", toy.reference_source(), answer=toy.ASSIGNMENT.questions[0].key)
    nb = json.loads((folder / f"{toy.ASSIGNMENT_ID}.ipynb").read_text())
    nb["cells"].append(nbformat.v4.new_code_cell("box_design = dict(width=2, depth=4)"))
    (folder / f"{toy.ASSIGNMENT_ID}.ipynb").write_text(json.dumps(nb))
    result = grade_submission(ASSIGNMENT, folder, "s")
    (record,) = [t for t in result.tests if t.item == "box_design"]
    assert (record.kind, record.score, record.max_score, record.answer) == ("challenge", 2.0, 3.0, "width=2 depth=4")
    assert result.item_scores()["box_design"] == (2.0, 3.0)
    assert result.max_score == pytest.approx(ASSIGNMENT.total_points) and ASSIGNMENT.item_ids[-1] == "box_design"
    back = Result.from_gradescope(json.loads(json.dumps(result.to_gradescope())))
    assert back.tests == result.tests
