"""The lab06_collectives demo class, checked in-process (the engine grades it in the demo tests)."""
from __future__ import annotations

import json
import math
import sys
import types
from pathlib import Path

import pytest

from labs.lab06_collectives import ASSIGNMENT as A

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "samples" / A.id
WRONG_IN_PARTLY = {"naive_allreduce_time", "rabenseifner_allreduce_time", "ring_tree_crossover_bytes"}


def load(student: str) -> types.ModuleType:
    """A sample module, imported next to the provided _domain.py as in the released folder."""
    module = types.ModuleType(f"sample_{student}")
    sys.path.insert(0, str(REPO / "reference"))     # the provided _domain.py / constants.py
    try:
        exec(compile((SAMPLES / student / "collectives.py").read_text(), f"{student}/collectives.py", "exec"),
             module.__dict__)
    finally:
        sys.path.remove(str(REPO / "reference"))
    return module


def differing(module) -> set[str]:
    """Function items whose worked examples disagree with the reference."""
    out = set()
    for item in A.functions:
        for example in item.examples:
            want = getattr(A.reference, item.name)(**example.kwargs)
            got = getattr(module, item.name)(**example.kwargs)
            if isinstance(want, str) and got != want or not isinstance(want, str) and not math.isclose(
                    got, want, rel_tol=item.rel_tol, abs_tol=item.abs_tol):
                out.add(item.name)
    return out


def test_the_five_students_exist():
    assert sorted(p.name for p in SAMPLES.iterdir()) == ["broken", "correct", "partly_wrong", "untouched",
                                                        "wrong_predictions"]
    assert not (SAMPLES / "untouched" / "collectives.py").exists()


@pytest.mark.parametrize("student", ["correct", "wrong_predictions"])
def test_correct_code_matches_the_reference(student):
    assert differing(load(student)) == set()


def test_partly_wrong_has_the_labs_mistakes():
    assert differing(load("partly_wrong")) == WRONG_IN_PARTLY


def test_broken_does_not_compile():
    with pytest.raises(SyntaxError):
        load("broken")


def test_answers_never_type_a_letter():
    qids = {q.id for q in A.questions}
    for path in SAMPLES.glob("*/answers.json"):
        answers = json.loads(path.read_text())
        assert set(answers) <= qids, path
        for value in answers.values():
            assert value in ("@key", "@wrong") or set(value) == {"source"}, (path, value)
    wrong = json.loads((SAMPLES / "wrong_predictions" / "answers.json").read_text())
    assert isinstance(wrong["act1_prediction"], dict)
    assert all(v == "@key" for v in json.loads((SAMPLES / "correct" / "answers.json").read_text()).values())
