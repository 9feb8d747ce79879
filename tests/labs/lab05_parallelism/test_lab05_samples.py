"""The demo class of lab05_parallelism (samples/lab05_parallelism/), checked in-process without
the engine: `correct` matches the reference on every hidden domain, `partly_wrong` differs on
exactly its three mistaken functions (and the two built on them), `broken` does not import, `untouched` has no module, and
the answers use only "@key" / "@wrong" / raw source."""
from __future__ import annotations

import importlib.util
import json
import math
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings

from autograder.engine.challenges import answer_line, grade_answer
from labs.lab05_parallelism import ASSIGNMENT
from reference import parallelism as ref

ROOT = Path(__file__).parents[3]
SAMPLES = ROOT / "samples" / "lab05_parallelism"
STUDENTS = ["broken", "correct", "partly_wrong", "untouched", "wrong_predictions"]
PARTLY_WRONG = {"data_parallel_step_time", "model_state_bytes_per_gpu", "pipeline_bubble_fraction"}
# ...and the two functions built on the wrong model states and bubble inherit the mistakes.
PARTLY_WRONG_INHERITED = {"peak_memory_bytes_per_gpu", "best_3d_config"}


@pytest.fixture(scope="module")
def load(tmp_path_factory):
    provided = tmp_path_factory.mktemp("provided")
    for name in ASSIGNMENT.provided:
        shutil.copyfile(ROOT / "reference" / f"{name}.py", provided / f"{name}.py")
    sys.path.insert(0, str(provided))

    def _load(student):
        spec = importlib.util.spec_from_file_location(f"lab05_sample_{student}", SAMPLES / student / "parallelism.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    yield _load
    sys.path.remove(str(provided))


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a == b and type(a) is type(b)


def _differs_on_domain(module, item) -> bool:
    diffs = []

    @settings(max_examples=30, deadline=None, database=None)
    @given(item.domain)
    def run(kwargs):
        if not _same(getattr(ref, item.name)(**kwargs), getattr(module, item.name)(**kwargs)):
            diffs.append(kwargs)
    run()
    examples = any(not _same(getattr(ref, item.name)(**e.kwargs), getattr(module, item.name)(**e.kwargs))
                   for e in item.examples)
    return bool(diffs) or examples


def test_class_layout_and_answers():
    assert sorted(p.name for p in SAMPLES.iterdir()) == STUDENTS
    qids = {q.id for q in ASSIGNMENT.questions}
    cids = {c.id for c in ASSIGNMENT.challenges}
    for student in STUDENTS:
        answers = json.loads((SAMPLES / student / "answers.json").read_text())
        assert set(answers) <= qids | cids
        for value in answers.values():
            assert value in ("@key", "@wrong") or set(value) == {"source"}
    assert not (SAMPLES / "untouched" / "parallelism.py").exists()
    correct = json.loads((SAMPLES / "correct" / "answers.json").read_text())
    assert {q: correct[q] for q in qids} == {q: "@key" for q in sorted(qids)} and set(correct) == qids | cids


def test_correct_matches_reference_everywhere(load):
    module = load("correct")
    for item in ASSIGNMENT.functions:
        assert not _differs_on_domain(module, item), item.name
    assert (SAMPLES / "wrong_predictions" / "parallelism.py").read_text() == (SAMPLES / "correct" / "parallelism.py").read_text()


def test_partly_wrong_differs_on_exactly_its_mistakes(load):
    module = load("partly_wrong")
    wrong = {item.name for item in ASSIGNMENT.functions if _differs_on_domain(module, item)}
    assert wrong == PARTLY_WRONG | PARTLY_WRONG_INHERITED


def test_broken_does_not_import(load):
    with pytest.raises(SyntaxError):
        load("broken")


def test_design_challenge_scores_what_each_sample_wrote():
    """correct: TP=8 PP=32 (not the reference's layout); partly_wrong: the source lab's keyed TP=8
    PP=4, out of memory (2 of 3 constraints); wrong_predictions: TP written as text (0); broken and
    untouched: unanswered (0). Read and graded as the engine does, from each answers.json source."""
    challenge = ASSIGNMENT.challenges[0]
    share = {"correct": 1, "partly_wrong": 2 / 3, "wrong_predictions": 0, "broken": 0, "untouched": 0}
    for student, fraction in share.items():
        answer = json.loads((SAMPLES / student / "answers.json").read_text()).get(challenge.id)
        grade = grade_answer(challenge, answer["source"] if answer else answer_line(challenge))
        assert grade.score == pytest.approx(fraction * challenge.points), (student, grade.feedback)
