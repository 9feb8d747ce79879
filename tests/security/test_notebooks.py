"""Any notebook: odd shapes, invalid JSON, huge expressions, 40k cells, deep nesting -- a clear
reason and 0 for the questions, no crash, the functions still graded, the class untouched."""
import ast
import json
import os

import pytest

import toy
from attack import FULL, grade_class, grade_json, honest
from autograder.engine.questions import grade_questions
from autograder.engine.submission import read_submission

REF = toy.reference_source()
NB = f"{toy.ASSIGNMENT_ID}.ipynb"
ANSWER = f'act1_prediction = "{toy.key}"'


def cell(source, metadata=None):
    return {"cell_type": "code", "metadata": {} if metadata is None else metadata, "outputs": [],
            "execution_count": None, "source": source}


def nb(cells):
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


NOTEBOOKS = {
    "source-ints": (nb([cell([1, 2])]), "no answer cell"),
    "top-level-list": (json.dumps([cell(ANSWER)]), "is not a notebook"),
    "cells-not-a-list": (json.dumps({"cells": {"a": 1}}), "is not a notebook"),
    "metadata-list": (nb([cell('act1_prediction = "Q"', metadata=[1, 2]), "junk", 7]), "is not one of the options"),
    "nbgrader-metadata-str": (nb([cell('act1_prediction = "Z"', metadata={"nbgrader": "x"})]), "is not one of the options"),
    "huge-expression": (nb([cell("act1_prediction = " + "(" * 100_000 + '"A"' + ")" * 100_000)]), "not short, valid Python"),
    "long-sum": (nb([cell("act1_prediction = " + "1+" * 100_000 + "1")]), "not short, valid Python"),
    "invalid-json": ('{"cells": [', "not valid notebook JSON"),
    "nested-json": ("[" * 200_000 + "]" * 200_000, "not valid notebook JSON"),
    "not-utf8": (b"\xff\xfe{}".decode("latin-1"), "not valid notebook JSON"),
    "40k-cells": (nb([cell(f"x{i} = {i}") for i in range(40_000)] + [cell(ANSWER)]), "no answer cell"),
}


def write(folder, text):
    (folder / NB).write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode())


@pytest.mark.parametrize("name", list(NOTEBOOKS))
def test_odd_notebook_scores_zero_with_a_reason_in_bounded_time(tmp_path, name):
    text, reason = NOTEBOOKS[name]
    folder = toy.make_submission(tmp_path / name, None, toy.key)
    write(folder, text)
    start = os.times()
    [(score, feedback, *_)] = grade_questions(toy.ASSIGNMENT.questions, read_submission(folder, toy.ASSIGNMENT_ID))
    end = os.times()
    assert (end.user + end.system) - (start.user + start.system) < 5  # CPU seconds: bounded work, any load
    assert score == 0 and reason in feedback, feedback


def hostile(folder, count=1990, size=10_000):
    """`count` parseable code cells of `size` characters added to the folder's notebook, each assigning
    the question a wrong letter at top level and naming it on every line (issue 26: 1,990 such cells
    were parsed once per question, 4.4 CPU s for Lab 06's four, outside every budget)."""
    head = f'act1_prediction = "{toy.WRONG_LETTER}"\n'
    filler = "".join(f"x{i} = {i}  # act1_prediction\n" for i in range(size))
    data = json.loads((folder / NB).read_text())
    data["cells"][1:1] = [cell((head + filler)[:size]) for _ in range(count)]     # before the answer cell
    (folder / NB).write_text(json.dumps(data))
    return folder


def parse_lengths(monkeypatch) -> list[int]:
    """The length of every source ast.parse is given from now on, in the grader's process."""
    parsed = []
    real_parse = ast.parse

    def counting(source, *args, **kwargs):
        parsed.append(len(source))
        return real_parse(source, *args, **kwargs)
    monkeypatch.setattr(ast, "parse", counting)
    return parsed


def test_a_notebook_is_parsed_once_within_its_budget(tmp_path, monkeypatch):
    """Each cell that names a question is parsed once for all questions and challenges, the cells
    tagged with a question's grade id first, and at most 200,000 characters in all (the documented
    budget, submission.PARSE_BUDGET_CHARS): the student's own tagged answer still counts."""
    folder = hostile(toy.make_submission(tmp_path / "mallory", REF, toy.key))
    parsed = parse_lengths(monkeypatch)
    [grade] = grade_questions(toy.ASSIGNMENT.questions, read_submission(folder, toy.ASSIGNMENT_ID, ["act1_prediction"]),
                              "correctness")     # the key, not any committed letter, earns the point
    assert grade.score == 1 and "correct" in grade.feedback, grade.feedback
    assert sum(parsed) <= 200_000 + 100, sum(parsed)     # + the answer cell parsed again for its value


def test_the_class_is_graded_through_grade_batch(tmp_path):
    root = tmp_path / "class"
    honest(root)
    for name in ("top-level-list", "huge-expression", "nested-json", "40k-cells", "source-ints"):
        write(toy.make_submission(root / name, REF, toy.key), NOTEBOOKS[name][0])
    hostile(toy.make_submission(root / "cells-naming-the-question", REF, toy.key))
    results, _ = grade_class(root, tmp_path / "out")
    assert results["honest"]["score"] == FULL
    assert results.pop("cells-naming-the-question")["score"] == FULL     # its own tagged answer
    for name, data in results.items():
        if name != "honest":
            assert data["score"] == FULL - 1, (name, data["tests"][-1])


def test_grade_does_not_crash_on_a_top_level_list(tmp_path):
    folder = toy.make_submission(tmp_path / "m", REF, toy.key)
    write(folder, NOTEBOOKS["top-level-list"][0])
    data = grade_json(folder)
    assert data["score"] == FULL - 1 and "is not a notebook" in data["tests"][-1]["output"]


def test_a_labs_notebook_is_parsed_once_for_every_question_and_challenge(tmp_path, monkeypatch):
    """grade_submission indexes the answer cells of all of a lab's questions and challenges in one pass
    (read_submission's names): 1,990 cells of 10,000 characters naming every one of Lab 06's questions
    cost at most the one budget, and the correct submission keeps its full marks."""
    from autograder.classroom.samples import reference_submission
    from autograder.engine.grade import grade_submission
    from labs import load
    lab = load("lab06_collectives")
    folder = reference_submission(lab, tmp_path / "ada", student="ada")
    notebook = folder / f"{lab.id}.ipynb"
    names = [q.id for q in lab.questions] + [c.id for c in lab.challenges]
    head = "".join(f'{n} = "A"\n' for n in names)
    filler = "".join(f"x{i} = {i}  # {' '.join(names)}\n" for i in range(10_000))
    data = json.loads(notebook.read_text())
    data["cells"] += [cell((head + filler)[:10_000]) for _ in range(1990)]
    notebook.write_text(json.dumps(data))
    parsed = parse_lengths(monkeypatch)
    result = grade_submission(lab, folder, "ada")
    assert result.score == lab.total_points
    assert sum(n for n in parsed if n == 10_000) <= 200_000, len(parsed)
