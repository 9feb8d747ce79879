"""Each kind of bad submission gives the affected item(s) 0 with one line a student understands,
grades every other item normally, and never crashes the grader."""
from dataclasses import replace
from pathlib import Path

import pytest

import toy
from autograder.engine.grade import grade_submission
from toy import FAST

A = toy.ASSIGNMENT
REF = toy.reference_source()
REPO = Path(toy.REFERENCE_DIR).parent
SIG = "def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"


def grade(folder):
    return grade_submission(A, folder, "mallory", config=FAST)


def item_lines(result, item):
    return [t for t in result.tests if t.item == item]


def assert_zero_with(result, item, fragment):
    """The item scores 0 and one of its one-line reasons says `fragment` (or one of a tuple of them)."""
    fragments = fragment if isinstance(fragment, tuple) else (fragment,)
    tests = item_lines(result, item)
    assert sum(t.score for t in tests) == 0, [t.output for t in tests]
    assert any(f in t.output and "\n" not in t.output for t in tests for f in fragments), [t.output for t in tests]


def assert_others_full(result, *bad):
    for item, (score, top) in result.item_scores().items():
        if item not in bad and item != "act1_prediction":
            assert score == top, (item, [t.output for t in item_lines(result, item) if t.score < t.max_score])


# --- the whole module is unusable: every function item 0, the question still graded ---

@pytest.mark.parametrize("source, fragment", [
    (None, "collectives.py is not in the submission"),
    (REF + "\ndef broken(:\n    pass\n", "syntax error on line"),
    (REF + "\nraise RuntimeError('boom at import')\n", "importing collectives.py raised RuntimeError: boom at import"),
    (REF + "\nimport sys\nsys.exit(2)\n", "called sys.exit(2) while being imported"),
    (REF + "\nimport os\nos._exit(3)\n", "stopped the worker process (exit code 3"),
    (REF + "\nwhile True:\n    pass\n", "did not finish within"),
    (REF + "\nprint('x' * 10**7)\nimport os\nos.write(1, b'y' * 10**6)\nraise ValueError('late')\n", "raised ValueError: late"),
], ids=["missing-module", "syntax-error", "import-exception", "sys-exit-at-import", "os-exit-at-import",
        "loop-at-import", "flood-then-raise-at-import"])
def test_module_level_failures(submit, source, fragment):
    result = grade(submit(source, toy.key))
    for item in A.functions:
        assert_zero_with(result, item.name, fragment)
    assert result.item_scores()["act1_prediction"] == (1.0, 1.0)


# --- one function is bad: that item 0, the others full marks ---

CASES = {
    "missing-function": ("", "has no function ring_allreduce_time"),
    "wrong-signature": ("def ring_allreduce_time(n, message_bytes, alpha_s, bandwidth):\n    return 0.0\n",
                        "has parameters (n, message_bytes, alpha_s, bandwidth); expected (message_bytes, n, alpha_s, bandwidth)"),
    "exception-in-call": (SIG + "    return 1 / 0\n", "raised ZeroDivisionError"),
    "not-implemented": (SIG + "    raise NotImplementedError()\n", "not implemented yet"),
    "returns-none": (SIG + "    return None\n", "returned None"),
    "returns-dict": (SIG + "    return {'t': 1.0}\n", "returned a dict, expected a number"),
    "returns-nan": (SIG + "    return float('nan')\n", "returned nan"),
    "returns-inf": (SIG + "    return float('inf')\n", "returned inf"),
    "rigged-eq": ("class Anything:\n    def __eq__(self, other):\n        return True\n"
                  "    __hash__ = object.__hash__\n" + SIG + "    return Anything()\n",
                  "returned a Anything, expected a number"),
    "float-subclass": ("class Sly(float):\n    def __eq__(self, other):\n        return True\n" + SIG
                       + "    return Sly(1.0)\n", "returned a Sly, expected a number"),
    # lying values that are not floats: a numpy scalar whose .item() returns itself, an awaitable
    "numpy-item-lies": ("import numpy as np\nclass Sly(np.float64):\n    def item(self):\n        return self\n"
                        + SIG + "    return Sly(1.0)\n", "returned a Sly, expected a number"),
    "coroutine": ("async " + SIG + "    return 1.0\n", "returned a coroutine, expected a number"),
    # an exception whose str() raises, and one a worker loop would not catch as Exception
    "exception-str-raises": ("class Sly(Exception):\n    def __str__(self):\n        raise RuntimeError('no')\n"
                             + SIG + "    raise Sly()\n", "raised Sly: <unprintable>"),
    "keyboard-interrupt": (SIG + "    raise KeyboardInterrupt()\n", "raised KeyboardInterrupt"),
    "infinite-loop": (SIG + "    while True:\n        pass\n", "did not finish within 1 s"),
    "memory-bomb": (SIG + "    return float(len(bytearray(2**40)))\n", "ran out of memory"),
    "sys-exit-at-call": (SIG + "    import sys\n    sys.exit(0)\n", "called sys.exit(0)"),
    "os-exit-at-call": (SIG + "    import os\n    os._exit(0)\n", "stopped the worker process"),
    # Refused by the worker's guard, or (for a checkout under /tmp, hidden by the jail's private /tmp)
    # simply absent: either way the student's code never reads it.
    "open-reference": (SIG + f"    return float(len(open({str(REPO / 'reference' / 'collectives.py')!r}).read()))\n",
                       ("does not allow reading", "No such file or directory")),
    "network": (SIG + "    import socket\n    socket.create_connection(('127.0.0.1', 80))\n    return 0.0\n",
                "does not allow importing socket"),
    "write-outside-tmp": (SIG + f"    open({str(REPO / 'pwned.txt')!r}, 'w').write('x')\n    return 0.0\n",
                          ("does not allow writing", "No such file or directory")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_one_bad_function(submit, case):
    body, fragment = CASES[case]
    source = toy.with_function(REF, "ring_allreduce_time", body) if body else \
        toy.with_function(REF, "ring_allreduce_time", "")
    result = grade(submit(source, toy.key))
    assert_zero_with(result, "ring_allreduce_time", fragment)
    assert_others_full(result, "ring_allreduce_time", "best_allreduce_algorithm")
    assert result.item_scores()["act1_prediction"] == (1.0, 1.0)
    assert not (REPO / "pwned.txt").exists()


def test_gradual_memory_bomb_hits_the_memory_limit(submit):
    bomb = SIG + "    blocks = []\n    while True:\n        blocks.append(bytearray(16 * 2**20))\n"
    config = replace(FAST, memory_mb=256, call_timeout_s=10.0)
    result = grade_submission(A, submit(toy.with_function(REF, "ring_allreduce_time", bomb)), "m", config=config)
    assert_zero_with(result, "ring_allreduce_time", "ran out of memory")
    assert result.item_scores()["comm_fraction"] == (2.0, 2.0)


def test_output_flood_in_a_correct_function_is_harmless(submit):
    flood = ("import os, sys\n" + SIG + "    print('x' * 10**6)\n    sys.stderr.write('y' * 10**6)\n"
             "    os.write(1, b'z' * 10**5)\n    os.write(2, b'w' * 10**5)\n"
             "    return 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth\n")
    result = grade(submit(toy.with_function(REF, "ring_allreduce_time", flood), toy.key))
    assert result.score == result.max_score


def test_failure_after_flood_shows_capped_output(submit):
    noisy = SIG + "    print('debug ' * 10**5)\n    raise RuntimeError('oops')\n"
    result = grade(submit(toy.with_function(REF, "ring_allreduce_time", noisy), toy.key))
    text = " ".join(t.output for t in item_lines(result, "ring_allreduce_time"))
    assert "raised RuntimeError: oops" in text and len(text) < 5000


def test_timeout_on_drawn_inputs_fails_fast_and_later_items_are_graded(submit):
    """Only big n loops: the examples pass; the first check that draws a big n (a public property: every
    public check runs before the hidden ones) times out once and names the call, no shrinking on a dead
    worker; the item's remaining checks, the hidden one included, are not run; later items are graded."""
    slow = SIG + ("    if n > 2000:\n        while True:\n            pass\n"
                  "    return 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth\n")
    source = toy.with_function(REF, "ring_allreduce_time", slow)
    result = grade(submit(source, toy.key))
    lines = item_lines(result, "ring_allreduce_time")
    assert [t.score > 0 for t in lines if t.kind == "example"] == [False, False]   # passed, no credit: the gate
    timed_out = next(t for t in lines if "did not finish" in t.output and not t.output.startswith("not run"))
    # the limit the worker is given (and the student is told) is the configured one; when it runs
    # out is wall-clock time, which a test does not measure, but the limit it waits for is pinned here
    assert timed_out.name == "ring_allreduce_time: monotone in message size"
    assert timed_out.output.startswith(f"ring_allreduce_time did not finish within {FAST.call_timeout_s:g} s")
    assert "n=" in timed_out.output and timed_out.score == 0
    # the grader's own words, not the student's: the same line before the due date
    assert timed_out.shown("before").startswith(f"ring_allreduce_time did not finish within {FAST.call_timeout_s:g} s")
    hidden = next(t for t in lines if t.kind == "hidden")
    assert hidden.output == f"not run: ring_allreduce_time did not finish within {FAST.call_timeout_s:g} s (an infinite loop?)"
    assert result.item_scores()["tree_allreduce_time"] == (3.0, 3.0)


def test_a_slow_call_is_stopped_at_the_configured_limit_not_later(submit):
    """A call that would finish, but only after three times the 1 s limit, is stopped at the limit:
    a grader that waited longer would let it finish and pass it (a slow student then scores full
    marks, a hung one holds the class for that much longer). Load cannot make a 3 s sleep end
    within 1 s, so this holds on a busy machine."""
    slow = SIG + ("    if n > 2000:\n        import time\n        time.sleep(3 * %r)\n"
                  "    return 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth\n") % FAST.call_timeout_s
    result = grade(submit(toy.with_function(REF, "ring_allreduce_time", slow), toy.key))
    said = f"ring_allreduce_time did not finish within {FAST.call_timeout_s:g} s"
    assert any(t.output.startswith(said) for t in item_lines(result, "ring_allreduce_time")), \
        [t.output for t in item_lines(result, "ring_allreduce_time")]
    assert result.item_scores()["ring_allreduce_time"][0] < result.item_scores()["ring_allreduce_time"][1]


def test_budget_exhaustion_zeroes_every_function_check_but_not_the_questions(submit):
    """The first item loops forever: the 0.5 s budget runs out inside it, so every check of every
    function item scores 0 and says why (the budget, not the student's maths); the prediction is
    read from the notebook, outside the sandbox, and keeps its point."""
    loop = SIG + "    while True:\n        pass\n"
    result = grade_submission(A, submit(toy.with_function(REF, "ring_allreduce_time", loop), toy.key), "m",
                              config=FAST, budget_s=0.5)
    functions = {f.name for f in A.functions}
    zeroed = [t for t in result.tests if t.item in functions]
    assert {t.item for t in zeroed} == functions
    assert all(t.score == 0 and "time budget" in t.output for t in zeroed), [(t.name, t.output) for t in zeroed]
    assert result.item_scores()["act1_prediction"] == (1.0, 1.0)
    assert result.score == 1.0 and result.max_score == A.total_points


@pytest.mark.parametrize("count, ending", [(3, "c3 did not finish"), (4, "c3 did not finish (and 1 more)")])
def test_the_timeouts_needing_attention_name_three_then_count_the_rest(count, ending):
    """A TA reads one line of timeouts per student: three named, the rest counted, never "(and 0 more)"."""
    from autograder.engine.attention import needs_person
    timeouts = [f"c{i} did not finish" for i in range(1, count + 1)]
    assert needs_person("mod", None, "", timeouts, []) == ["timeout: " + "; ".join(timeouts[:3]).replace(
        "c3 did not finish", ending)]
