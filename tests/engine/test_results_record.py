"""The typed record of results.json: written and read back whole, so nothing parses test names."""
from __future__ import annotations

import json

import pytest

from autograder.classroom.batch import load_result
from autograder.classroom.gradebook import item_scores
from autograder.engine.results import Result, TestResult


def _result() -> Result:
    # a check name with colons and an item id that is not a prefix of its name's first colon field
    return Result("lab", "ada", [
        TestResult("ring_allreduce_time", "worked example: Act I: 140 GB", "example", 0.5, 0.5, "ok"),
        TestResult("ring_allreduce_time", "hidden checks", "hidden", 0.0, 2.0, "got 3, expected 2"),
        TestResult("act1_prediction", "prediction", "prediction", 2.0, 2.0, "correct", answer="B"),
    ], output="graded in bubblewrap", sandbox_mode="bwrap")


def test_round_trip_keeps_every_field():
    data = json.loads(json.dumps(_result().to_gradescope()))
    back = Result.from_gradescope(data, "lab", "ada")
    assert back.tests == _result().tests
    assert back.item_scores() == {"ring_allreduce_time": (0.5, 2.5), "act1_prediction": (2.0, 2.0)}
    assert data["tests"][0]["name"] == "ring_allreduce_time: worked example: Act I: 140 GB"


def test_item_comes_from_the_record_not_the_name():
    data = _result().to_gradescope()
    data["tests"][0]["name"] = "something else: entirely"
    assert item_scores(data) == {"ring_allreduce_time": 0.5, "act1_prediction": 2.0}


def test_a_test_without_its_record_is_refused_by_name():
    data = _result().to_gradescope()
    del data["tests"][1]["extra_data"]
    with pytest.raises(ValueError, match="ring_allreduce_time: hidden checks"):
        Result.from_gradescope(data)


def test_a_results_file_without_records_is_graded_again(tmp_path):
    data = dict(_result().to_gradescope(), scalelabs={"assignment": "lab", "student": "ada"})
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(data))
    for t in data["tests"]:
        t.pop("extra_data")
    bad.write_text(json.dumps(data))
    assert load_result(good) is not None and load_result(bad) is None
