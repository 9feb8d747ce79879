"""Worker replies are untrusted: student code that rewrites the worker's reply loop earns nothing,
crashes nothing, and the item's failure does not end the submission's grading."""
import json

import pytest

import toy
from attack import FULL, FUNCTION_POINTS, forge, function_score, grade_class, grade_json, honest, outputs
from autograder.engine.config import GradingConfig
from autograder.engine.grade import grade_submission

from attack import constant_module

CONSTANT = constant_module()   # returns each item's first example value: examples pass, nothing else
REF = toy.reference_source()

FORGERIES = {
    # all([]) is True: the batch of hidden inputs "passes" with no replies at all
    "empty-batch": 'def _handle(self, r, orig):\n    return {"ok": True, "replies": []} if r.get("op") == "call_many" else orig(self, r)\n',
    "short-batch": ('def _handle(self, r, orig):\n    if r.get("op") == "call_many":\n'
                    '        return {"ok": True, "replies": [{"ok": True, "value": 1.0}]}\n    return orig(self, r)\n'),
    "not-a-dict": 'def _handle(self, r, orig):\n    return [1, 2] if r.get("op") != "import" else orig(self, r)\n',
    "no-params": 'def _handle(self, r, orig):\n    return {"ok": True} if r.get("op") == "signature" else orig(self, r)\n',
    "dict-value": ('def _handle(self, r, orig):\n    if r.get("op") in ("call", "call_many"):\n'
                   '        return {"ok": True, "value": {"x": 1}, "replies": [{"ok": True, "value": {"x": 1}}] * 30}\n'
                   '    return orig(self, r)\n'),
    "nested-200k": ('import json as _json\n_dumps = _json.dumps\n'
                    'class _J:\n    loads = staticmethod(_json.loads)\n'
                    '    @staticmethod\n    def dumps(v):\n'
                    '        return "[" * 200000 + "]" * 200000 if v.get("ok") and "ready" not in v and v != {"ok": True, "output": ""} else _dumps(v)\n'
                    '_m.json = _J\n'
                    'def _handle(self, r, orig):\n    return orig(self, r)\n'),
    "huge-line": ('def _handle(self, r, orig):\n    if r.get("op") in ("call", "call_many"):\n'
                  '        return {"ok": True, "value": 1.0, "pad": "x" * (6 << 20)}\n    return orig(self, r)\n'),
    "huge-message": ('def _handle(self, r, orig):\n    if r.get("op") in ("call", "call_many"):\n'
                     '        return {"ok": False, "error": {"kind": "exception", "message": "y" * 2000000}}\n'
                     '    return orig(self, r)\n'),
}


def forged(name: str, base: str = CONSTANT) -> str:
    return base + "\n" + forge(FORGERIES[name])


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    honest(root)
    for name in FORGERIES:
        toy.make_submission(root / name, forged(name), toy.key)
    results, _ = grade_class(root, tmp_path_factory.mktemp("out"))
    return results


def test_honest_classmate_keeps_full_marks(batch):
    assert batch["honest"]["score"] == FULL


@pytest.mark.parametrize("name", list(FORGERIES))
def test_forged_replies_earn_no_function_points_in_grade_batch(batch, name):
    data = batch[name]
    assert function_score(data) == 0, [(t["name"], t["score"]) for t in data["tests"] if t["score"]]
    assert data["score"] == 1.0  # the question, answered right, is still graded
    assert len(json.dumps(data)) < 100_000


@pytest.mark.parametrize("name", ["empty-batch", "not-a-dict", "no-params", "nested-200k"])
def test_malformed_reply_is_a_clear_item_failure(batch, name):
    text = outputs(batch[name])
    assert "malformed reply" in text or "corrupted the grader's channel" in text, text[:2000]


def test_forged_batch_on_correct_code_is_not_a_pass_through_scalelabs_grade(tmp_path):
    """The reference code plus an empty batch reply: the forgery must not turn into the hidden share
    (40 %); the honest examples still pass. Through the real CLI, which must not crash."""
    folder = toy.make_submission(tmp_path / "m", forged("empty-batch", REF), toy.key)
    data = grade_json(folder)
    hidden = [t for t in data["tests"] if t["name"].endswith("hidden checks")]
    assert hidden and all(t["score"] == 0 for t in hidden), hidden
    assert function_score(data) <= 0.6 * FUNCTION_POINTS + 1e-9


def test_nested_reply_does_not_crash_scalelabs_grade(tmp_path):
    data = grade_json(toy.make_submission(tmp_path / "m", forged("nested-200k"), toy.key))
    assert function_score(data) == 0


def test_one_items_grader_failure_does_not_end_the_submission(tmp_path, monkeypatch):
    """Any exception while grading one item (here: the grader itself, forced) fails that item with
    a reason; the other items and the question are still graded."""
    from autograder.engine.checks import ItemGrading

    real = ItemGrading.run

    def broken(self, public):
        if self.item.name == "tree_allreduce_time":
            raise RecursionError("maximum recursion depth exceeded")
        return real(self, public)

    monkeypatch.setattr(ItemGrading, "run", broken)
    result = grade_submission(toy.ASSIGNMENT, honest(tmp_path), "honest", config=GradingConfig(call_timeout_s=1.0))
    scores = result.item_scores()
    assert scores["tree_allreduce_time"] == (0.0, 3.0)
    assert "could not grade this item" in next(t.output for t in result.tests if t.item == "tree_allreduce_time")
    assert result.score == FULL - 3
