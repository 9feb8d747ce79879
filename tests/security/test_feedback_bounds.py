"""Bounded feedback: every value shown is capped (~100 characters), each test's output ~4 KB, one
student's results.json and feedback page under 1 MB; a wrong type says its type, never its content
(a string that collects the hidden inputs is not echoed). Through grade-batch and grade --json."""
import json
import re

import pytest

import toy
from attack import FULL, forge, grade_class, grade_json, honest
from autograder.engine.checks import VALUE_CAP
from autograder.engine.grade import OUTPUT_CAP
from autograder.engine.sandbox.replies import MESSAGE_CAP

REF = toy.reference_source()
SIG = "def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"

ATTACKS = {
    # returns the repr of every input it has seen: the hidden inputs, collected
    "collector": toy.with_function(REF, "ring_allreduce_time",
                                   SIG + "    _SEEN.append((message_bytes, n, alpha_s, bandwidth))\n    return repr(_SEEN)[-9000:]\n")
                 + "\n_SEEN = []\n",
    "big-list": toy.with_function(REF, "ring_allreduce_time", SIG + "    return [float(n)] * 10000\n"),
    "long-string": toy.with_function(REF, "best_allreduce_algorithm",
                                     "def best_allreduce_algorithm(message_bytes, n, alpha_s, bandwidth):\n"
                                     "    return 'ring' + 'x' * 9000\n"),
    "loud": toy.with_function(REF, "ring_allreduce_time",
                              SIG + "    print('p' * 10**6)\n    raise ValueError('m' * 10**6)\n"),
    # past the worker's own caps: a forged reply of ~3.5 MB (10,000 strings of 350 characters)
    "forged-4mb": REF + "\n" + forge(
        'def _handle(self, r, orig):\n'
        '    if r.get("op") == "call" and r.get("name") == "ring_allreduce_time":\n'
        '        return {"ok": True, "value": ["z" * 350] * 10000}\n'
        '    if r.get("op") == "call_many" and r.get("name") == "ring_allreduce_time":\n'
        '        return {"ok": True, "replies": [{"ok": True, "value": ["z" * 350] * 300}] * len(r["kwargs_list"])}\n'
        '    return orig(self, r)\n'),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    out = tmp_path_factory.mktemp("out")
    honest(root)
    for name, source in ATTACKS.items():
        toy.make_submission(root / name, source, toy.key)
    results, _ = grade_class(root, out)
    return results, out


def test_honest_classmate_is_untouched(graded):
    assert graded[0]["honest"]["score"] == FULL


@pytest.mark.parametrize("name", list(ATTACKS))
def test_every_output_and_file_is_bounded(graded, name):
    results, out = graded
    data = results[name]
    assert (out / "results" / f"{name}.json").stat().st_size < 1 << 20
    assert (out / "feedback" / f"{name}.html").stat().st_size < 1 << 20
    for t in data["tests"]:
        assert len(t["output"]) <= OUTPUT_CAP, t["name"]
        # every attack's text is one character repeated: a value shown is cut at VALUE_CAP, a
        # message or print of the student's at MESSAGE_CAP
        assert not re.search(r"([a-z])\1{%d,}" % max(VALUE_CAP, MESSAGE_CAP), t["output"]), (t["name"], t["output"][:300])
    assert data["score"] <= FULL - 1  # each attack loses at least the points of its broken function


def test_collected_hidden_inputs_are_not_echoed(graded):
    tests = [t for t in graded[0]["collector"]["tests"] if t["name"].startswith("ring_allreduce_time")]
    text = "\n".join(t["output"] for t in tests)
    assert "returned a str of" in text and "[(" not in text, text[:1500]


def test_wrong_type_says_its_type(graded):
    text = "\n".join(t["output"] for t in graded[0]["big-list"]["tests"])
    assert "returned a list of 10000 elements" in text and "[1.0, 1.0" not in text


def test_grade_json_is_bounded_too(tmp_path):
    data = grade_json(toy.make_submission(tmp_path / "m", ATTACKS["loud"], toy.key))
    assert len(json.dumps(data)) < 100_000
    assert all(len(t["output"]) <= OUTPUT_CAP for t in data["tests"])
