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


def _door_shaped() -> dict:
    """The Gradescope door's per-item record of _result() (what a Gradescope export holds)."""
    from types import SimpleNamespace

    from autograder.doors import gradescope
    from autograder.engine.config import FeedbackPolicy

    lab = SimpleNamespace(id="lab", item_ids=["ring_allreduce_time", "act1_prediction"],
                          item_points={"ring_allreduce_time": 2.5, "act1_prediction": 2.0}, total_points=4.5)
    return gradescope.results_json(lab, _result(), FeedbackPolicy(gradescope="before"))


# each a malformed results.json (or a test of one) and what the refusal names
MALFORMED = {
    "no record": (lambda d: d["tests"][1].pop("extra_data"), "ring_allreduce_time: hidden checks"),
    "no kind": (lambda d: d["tests"][0]["extra_data"].pop("kind"), "has no scalelabs record"),
    "record not an object": (lambda d: d["tests"][2].update(extra_data=["item", "check", "kind"]), "act1_prediction"),
    "score not a number": (lambda d: d["tests"][0].update(score="lots"), "lots"),
    "no max_score": (lambda d: d["tests"][2].pop("max_score"), "max_score"),
    "score null": (lambda d: d["tests"][1].update(score=None), "NoneType"),
    "test not an object": (lambda d: d["tests"].insert(1, "p2p_time: 3/3"), "p2p_time: 3/3"),
    "tests not a list": (lambda d: d.update(tests={"a": 1}), "a list of tests"),
    "no tests": (lambda d: d.pop("tests"), "a list of tests"),
    "a door's test amid ours": (lambda d: d["tests"][0]["extra_data"].update(scalelabs={"item": "x", "checks": []}),
                                "ring_allreduce_time: hidden checks"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_the_merges_quick_check_refuses_what_the_record_refuses_in_its_words(case):
    """record_item_scores (what merge and grade-batch's resume check each result with, without building
    the record) refuses each malformed record as Result.from_gradescope does, with the same message
    naming what is wrong; a quicker check that let one through would put a wrong score in the gradebook."""
    from autograder.engine.results import record_item_scores

    change, names = MALFORMED[case]
    data = json.loads(json.dumps(_result().to_gradescope()))
    change(data)
    with pytest.raises((ValueError, TypeError, KeyError)) as record:
        Result.from_gradescope(data).item_scores()
    with pytest.raises(type(record.value)) as quick:
        record_item_scores(data)
    assert str(quick.value) == str(record.value) and names in str(quick.value)


def test_the_merges_quick_check_scores_as_the_record_does():
    from autograder.engine.results import record_item_scores

    odd = _result().to_gradescope()
    odd["tests"][0]["extra_data"]["scalelabs"] = {"checks": "not a list"}    # not a door's test: ours
    for data in (_result().to_gradescope(), _door_shaped(), {"tests": [], "score": 0}, odd):
        data = json.loads(json.dumps(data))
        assert record_item_scores(data) == {i: s for i, (s, _) in Result.from_gradescope(data).item_scores().items()}
    assert record_item_scores(_result().to_gradescope()) == {"ring_allreduce_time": 0.5, "act1_prediction": 2.0}
