"""Any notebook: odd shapes, invalid JSON, huge expressions, 40k cells, deep nesting -- a clear
reason and 0 for the questions, no crash, the functions still graded, the class untouched."""
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


def test_the_class_is_graded_through_grade_batch(tmp_path):
    root = tmp_path / "class"
    honest(root)
    for name in ("top-level-list", "huge-expression", "nested-json", "40k-cells", "source-ints"):
        write(toy.make_submission(root / name, REF, toy.key), NOTEBOOKS[name][0])
    results, _ = grade_class(root, tmp_path / "out")
    assert results["honest"]["score"] == FULL
    for name, data in results.items():
        if name != "honest":
            assert data["score"] == FULL - 1, (name, data["tests"][-1])


def test_grade_does_not_crash_on_a_top_level_list(tmp_path):
    folder = toy.make_submission(tmp_path / "m", REF, toy.key)
    write(folder, NOTEBOOKS["top-level-list"][0])
    data = grade_json(folder)
    assert data["score"] == FULL - 1 and "is not a notebook" in data["tests"][-1]["output"]
