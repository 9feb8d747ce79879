"""The engine discriminates: reference full marks, untouched stub 0, plausible wrong formulas lose
points, correct implementations written differently keep full marks; grading is reproducible."""
import json
import os
import subprocess
import sys

import pytest

import toy
from autograder.engine.checks import seed_for
from autograder.engine.draw import sample_inputs
from autograder.engine.grade import grade_submission
from toy import FAST

A = toy.ASSIGNMENT
REF = toy.reference_source()


def grade(folder, student="alice", **kw):
    return grade_submission(A, folder, student, config=FAST, **kw)


def test_reference_gets_full_marks(submit):
    result = grade(submit(REF, toy.key))
    assert result.score == result.max_score == A.total_points
    assert result.to_gradescope()["score"] == sum(t["score"] for t in result.to_gradescope()["tests"])
    assert all(t.name.startswith(f"{t.item}: ") for t in result.tests)


def test_untouched_stub_gets_zero_with_not_implemented(submit):
    result = grade(submit(toy.stub_source()))
    assert result.score == 0
    for item in A.functions:
        assert any("not implemented" in t.output for t in result.tests if t.item == item.name)


WRONG = {
    "ring_allreduce_time": [  # the whole message per step; latency counted once
        "def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
        "    return 2 * (n - 1) * (alpha_s + message_bytes / bandwidth)\n",
        "def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
        "    return alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth\n",
    ],
    "tree_allreduce_time": [  # floor instead of ceil of log2 n; one direction only
        "import math\ndef tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
        "    return 2 * int(math.log2(n)) * (alpha_s + message_bytes / bandwidth)\n",
        "def tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
        "    return (n - 1).bit_length() * (alpha_s + message_bytes / bandwidth)\n",
    ],
    "best_allreduce_algorithm": [  # a size threshold instead of comparing the two times
        "def best_allreduce_algorithm(message_bytes, n, alpha_s, bandwidth):\n"
        "    return 'ring' if message_bytes > 1e6 else 'tree'\n",
        "def best_allreduce_algorithm(message_bytes, n, alpha_s, bandwidth):\n"
        "    return 'tree' if ring_allreduce_time(message_bytes, n, alpha_s, bandwidth) <= "
        "tree_allreduce_time(message_bytes, n, alpha_s, bandwidth) else 'ring'\n",
    ],
    "comm_fraction": [  # communication over compute, a ratio not a share
        "def comm_fraction(comm_s, compute_s):\n    return comm_s / compute_s if compute_s else 1.0\n",
        "def comm_fraction(comm_s, compute_s):\n    return compute_s / (comm_s + compute_s)\n",
    ],
}


@pytest.mark.parametrize("name, body", [(n, b) for n, bodies in WRONG.items() for b in bodies])
def test_plausible_wrong_formula_loses_points_on_that_item_only(submit, name, body):
    result = grade(submit(toy.with_function(REF, name, body)))
    scores = result.item_scores()
    assert scores[name][0] < scores[name][1]
    # best_allreduce_algorithm calls the student's own ring and tree functions
    dependents = {name, "act1_prediction"} | ({"best_allreduce_algorithm"} if "tree" in name or "ring" in name else set())
    assert all(s == m for item, (s, m) in scores.items() if item not in dependents)


CORRECT = {
    "ring_allreduce_time": [
        "import numpy as np\ndef ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
        "    steps = np.int64(n) - 1\n    return np.float64(alpha_s) * 2 * steps + (2 * steps * message_bytes) / (n * bandwidth)\n",
        "def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
        "    if n == 1:\n        return 0\n    return 2 * (n - 1) * (alpha_s + message_bytes / (n * bandwidth))\n",
    ],
    "tree_allreduce_time": [
        "import math\ndef tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
        "    return 2 * math.ceil(math.log2(n)) * (alpha_s + message_bytes / bandwidth)\n",
        "def tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
        "    depth, reach = 0, 1\n    while reach < n:\n        depth, reach = depth + 1, 2 * reach\n"
        "    return 2 * depth * alpha_s + 2 * depth * message_bytes / bandwidth\n",
    ],
    "comm_fraction": [
        "import numpy as np\ndef comm_fraction(comm_s, compute_s):\n    return np.array(comm_s) / np.add(comm_s, compute_s)\n",
        "def comm_fraction(comm_s, compute_s):\n    return 1 if compute_s == 0 else 1 - compute_s / (comm_s + compute_s)\n",
    ],
}


@pytest.mark.parametrize("name, body", [(n, b) for n, bodies in CORRECT.items() for b in bodies])
def test_correct_but_differently_written_gets_full_marks(submit, name, body):
    result = grade(submit(toy.with_function(REF, name, body)))
    score, top = result.item_scores()[name]
    assert score == top, [t.output for t in result.tests if t.item == name and t.score < t.max_score]


def test_same_student_twice_gives_identical_json(submit):
    folder = submit(toy.with_function(REF, *list(WRONG.items())[0][0:1], WRONG["ring_allreduce_time"][0]))
    first, second = (json.dumps(grade(folder, "carol").to_gradescope()) for _ in range(2))
    assert first == second


def test_grading_under_load_gives_identical_json(submit):
    """More busy processes than cores must not change a result: no timing decides a verdict (the
    batched calls, the fallback to single calls and hypothesis' shrinking give the same JSON)."""
    wrong = toy.with_function(REF, "ring_allreduce_time", WRONG["ring_allreduce_time"][1])
    folder = submit(toy.with_function(wrong, "comm_fraction", WRONG["comm_fraction"][1]))
    quiet = json.dumps(grade(folder, "dana").to_gradescope())
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * (os.cpu_count() or 1) + 1)]
    try:
        loaded = json.dumps(grade(folder, "dana").to_gradescope())
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert quiet == loaded
    assert '"score": 0.0' in quiet    # the failures (and their shrunk counterexamples) are part of it


def test_correct_module_is_graded_in_one_round_trip_per_check(submit, monkeypatch):
    """Every hidden input and every call a property makes reach the worker in one batch per check;
    only the worked examples are single calls."""
    from autograder.engine.sandbox import Sandbox

    requests = {"call": 0, "call_many": 0}
    for op in requests:
        def counted(self, *args, _op=op, _real=getattr(Sandbox, op)):
            requests[_op] += 1
            return _real(self, *args)
        monkeypatch.setattr(Sandbox, op, counted)
    result = grade(submit(REF, toy.key))
    assert result.score == result.max_score
    assert requests["call"] == sum(len(item.examples) for item in A.functions)
    assert requests["call_many"] == sum(1 + len(item.properties) for item in A.functions)


def test_two_students_get_different_hidden_inputs():
    item = A.function("ring_allreduce_time")
    inputs = {s: sample_inputs(item.domain, seed_for(A.id, s, item.name, "hidden"), 30) for s in ("alice", "bob")}
    assert inputs["alice"] != inputs["bob"]
    assert inputs["alice"] == sample_inputs(item.domain, seed_for(A.id, "alice", item.name, "hidden"), 30)


def test_failed_property_reports_meaning_and_shrunk_call(submit):
    result = grade(submit(toy.with_function(REF, "ring_allreduce_time", WRONG["ring_allreduce_time"][1])))
    prop = next(t for t in result.tests if t.name == "ring_allreduce_time: zero for a single rank")
    assert prop.score == 0
    assert "With one rank there is nothing to reduce" in prop.output
    assert "ring_allreduce_time(message_bytes=" in prop.output and ", n=1, alpha_s=" in prop.output
    assert "returned" in prop.output


def test_failed_hidden_check_shows_the_shrunk_smallest_input(submit):
    """The sampled input that fails is large and random; the feedback shows hypothesis' shrunk one:
    two ranks, a one-byte message, no latency (the smallest input on which the formula is wrong)."""
    result = grade(submit(toy.with_function(REF, "ring_allreduce_time", WRONG["ring_allreduce_time"][0])), "erin")
    hidden = next(t for t in result.tests if t.name == "ring_allreduce_time: hidden checks")
    assert hidden.score == 0
    assert hidden.output.startswith("ring_allreduce_time(message_bytes=1.0, n=2, alpha_s=0.0, bandwidth="), hidden.output


def test_the_shrinker_starts_from_the_failure_the_grader_found(submit, monkeypatch):
    """hypothesis replays the failing sampled input's own choice sequence and shrinks it: it draws no
    inputs of its own to find a failure again, and the counterexample is as small as ever."""
    from autograder.engine import draw

    def own_draws(*args):
        raise AssertionError("hypothesis drew its own inputs to find the failure again")
    monkeypatch.setattr(draw, "draw_inputs", own_draws)
    result = grade(submit(toy.with_function(REF, "ring_allreduce_time", WRONG["ring_allreduce_time"][0])), "erin")
    hidden = next(t for t in result.tests if t.name == "ring_allreduce_time: hidden checks")
    assert hidden.output.startswith("ring_allreduce_time(message_bytes=1.0, n=2, alpha_s=0.0, bandwidth="), hidden.output


def test_a_failure_of_fixed_shape_shrinks_to_the_same_counterexample_in_fewer_attempts(monkeypatch):
    """hypothesis' deletion passes cannot shrink keyword arguments of fixed structure (every candidate
    misaligns before the check runs); the grader leaves them out: the same smallest counterexample,
    with fewer of hypothesis' attempts (each draws `n` again)."""
    from contextlib import nullcontext

    from hypothesis import strategies as st

    from autograder.engine import draw

    attempts = []
    decades = lambda low, high: st.floats(low, high).map(lambda e: 10.0 ** e)  # noqa: E731
    strategy = st.fixed_dictionaries({"message_bytes": st.one_of(st.just(0.0), decades(0, 12)),
                                      "n": st.integers(1, 4096).map(lambda n: attempts.append(n) or n),
                                      "bandwidth": decades(9, 12)})

    def shrunk(seed: int) -> tuple[dict, int]:
        attempts.clear()
        seen = []

        def body(kwargs):
            seen.append(kwargs)
            assert kwargs["n"] < 3 or kwargs["message_bytes"] < 10
        with pytest.raises(AssertionError):
            draw.run_drawn(body, strategy, seed, 20)
        return seen[-1], len(attempts)

    for seed in range(3):
        counterexample, fewer = shrunk(seed)
        with monkeypatch.context() as m:
            m.setattr(draw, "without_deletions", nullcontext)    # hypothesis' shrinker, every pass
            every_pass, more = shrunk(seed)
        assert counterexample == every_pass == {"message_bytes": 10.0, "n": 3, "bandwidth": 1e9}
        assert fewer < more, (seed, fewer, more)


def test_failed_hidden_check_shows_inputs_expected_returned_unless_switched_off(submit):
    folder = submit(toy.with_function(REF, "comm_fraction", WRONG["comm_fraction"][1]))
    hidden = lambda r: next(t for t in r.tests if t.name == "comm_fraction: hidden checks")  # noqa: E731
    shown = hidden(grade(folder))
    assert "comm_fraction(comm_s=" in shown.output and "returned" in shown.output and "expected" in shown.output
    hidden_off = hidden(grade(folder, show_expected=False))
    assert "returned" in hidden_off.output and "expected" not in hidden_off.output


def test_a_formula_half_a_percent_off_loses_the_examples_and_the_hidden_check(submit):
    """The tolerance is pinned: 0.5 % too high is wrong (the default is 1e-9 relative), so a ring
    AllReduce scaled by 1.005 fails both worked examples and the hidden check. It matches none of the
    hidden inputs, so the physics gate also withholds the properties it still satisfies (zero for one
    rank, monotone in the message) and says why."""
    assert (toy.ASSIGNMENT.function("ring_allreduce_time").rel_tol, A.function("ring_allreduce_time").abs_tol) \
        == (1e-9, 1e-12)
    off = ("def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
           "    return 1.005 * (2 * (n - 1) * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth)\n")
    result = grade(submit(toy.with_function(REF, "ring_allreduce_time", off)))
    lines = {t.name.split(": ", 1)[1]: t for t in result.tests if t.item == "ring_allreduce_time"}
    failed = {name for name, t in lines.items() if t.score == 0 and "no credit:" not in t.output}
    assert failed == {"worked example (Act I)", "worked example (small message)", "hidden checks"}, failed
    assert "tolerance: relative 1e-09" in lines["hidden checks"].output
    gated = {name for name, t in lines.items() if "no credit:" in t.output}
    assert gated and all(lines[name].score == 0 for name in gated)
    assert result.item_scores()["ring_allreduce_time"] == (0, 4)


def ring_check(submit, source: str, check: str):
    """The named check of ring_allreduce_time when the toy's reference has this ring body."""
    return next(t for t in grade(submit(toy.with_function(REF, "ring_allreduce_time", source))).tests
                if t.name == f"ring_allreduce_time: {check}")


def test_hidden_counterexample_is_shrunk_to_the_edge_of_the_failing_region(submit):
    """Wrong only from 1000 bytes on (and only where the time is not 0): hypothesis shrinks the first
    random failure to the smallest input of that region, which a student can read and retrace."""
    edge = ("def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
            "    t = 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth\n"
            "    return 2 * t if message_bytes >= 1000 else t\n")
    hidden = ring_check(submit, edge, "hidden checks")
    assert hidden.score == 0
    assert hidden.output.splitlines()[0].startswith(
        "ring_allreduce_time(message_bytes=1000.0, n=2, alpha_s=0.0, bandwidth=1000000.0) returned "), hidden.output


def test_property_counterexample_is_shrunk_to_the_edge_of_the_failing_region(submit):
    """One rank 'sends' messages of 1 kB and more: 'zero for a single rank' fails on almost every
    drawn input; shrunk, the counterexample is the smallest one (every other argument at its floor)."""
    lonely = ("def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
              "    if n == 1 and message_bytes >= 1000:\n        return message_bytes / bandwidth\n"
              "    return 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth\n")
    prop = ring_check(submit, lonely, "zero for a single rank")
    assert prop.score == 0
    assert "ring_allreduce_time(message_bytes=1000.0, n=1, alpha_s=0.0, bandwidth=1000000.0) returned 0.001" \
        in prop.output, prop.output


def test_a_prefetched_value_answers_only_the_very_call_it_was_fetched_for():
    """The student's values come in one round trip per check, keyed by the call: a call the worker
    would receive differently (1 against 1.0, True against 1, -0.0 against 0.0, another value in a
    list) is asked again, never answered with another call's value."""
    from autograder.engine.checks import StudentFunction

    class Worker:
        """Answers with the repr of what it received, as JSON would carry it."""
        def __init__(self):
            self.live = []

        def call_many(self, name, kwargs_list):
            return [(True, json.dumps(kw)) for kw in kwargs_list]

        def call(self, name, kwargs):
            self.live.append(kwargs)
            return json.dumps(kwargs)

    fetched = [dict(x=1.0), dict(x=True), dict(x=0.0), dict(x=[1, 2]), dict(x=1.0, y="a")]
    asked = [dict(x=1), dict(x=1), dict(x=-0.0), dict(x=[1, 3]), dict(y="a", x=1.0)]
    worker = Worker()
    f = StudentFunction(worker, "f", lambda x, y=None: 0.0)
    assert f.prefetch(fetched)
    assert [f(**kw) for kw in fetched] == [json.dumps(kw) for kw in fetched] and worker.live == []
    assert [f(**kw) for kw in asked] == [json.dumps(kw) for kw in asked]
    assert worker.live[:4] == asked[:4]       # the last, the same keywords in another order, may be either


def test_every_call_a_student_reads_lists_the_arguments_in_the_functions_own_order():
    """However a call is built (a property's check changes an argument last, a strategy or a worked
    example lists them in another order), the counterexample, the worked example and the call an
    aborted check names list the arguments as the function declares them, so a student can paste it."""
    from types import SimpleNamespace

    from autograder.engine.checks import Abort, StudentFunction, aborted_outcome, run_example
    from autograder.engine.sandbox import StudentError

    class Worker:
        def call(self, name, kwargs):
            return 2e-06

    def reference(message_bytes, gpus, bandwidth):
        return 0.0
    f = StudentFunction(Worker(), "intra_node_allreduce_time", reference, ["message_bytes", "gpus", "bandwidth"])
    f(**{"message_bytes": 1000.0, "bandwidth": 1e9, "gpus": 1})
    call = "intra_node_allreduce_time(message_bytes=1000.0, gpus=1, bandwidth=1000000000.0)"
    assert f.describe_calls() == [f"{call} returned 2e-06"]
    shuffled = {"bandwidth": 1e9, "gpus": 1, "message_bytes": 1000.0}
    item = SimpleNamespace(name="intra_node_allreduce_time", rel_tol=1e-9, abs_tol=0.0)
    assert run_example(f, "one GPU", shuffled, item).output == f"{call} returned 2e-06, expected 0.0"
    timeout = Abort(StudentError("timed out after 2 s", "timeout", fatal=True), shuffled)
    assert aborted_outcome("hidden", "hidden inputs", timeout, f).output == f"timed out after 2 s on {call}"


def test_builds_is_drawn_by_the_sampler_and_replays_in_hypothesis():
    """st.builds (a lab's hidden domain may build its kwargs with it) is sampled by the grader itself,
    not handed to hypothesis per input, and each input replays to itself so its failure shrinks."""
    from hypothesis import strategies as st

    from autograder.engine import draw

    strategy = st.builds(dict, n=st.integers(1, 64), bandwidth=st.floats(1e9, 1e12))
    with draw.seed_only(), draw.recording_fallbacks() as fallbacks:
        values, _, choices = draw._sample(strategy, 3, 20)
    assert fallbacks == [] and len(values) == 21
    assert all(set(v) == {"n", "bandwidth"} and 1 <= v["n"] <= 64 for v in values)
    with draw.seed_only():
        assert all(draw._replays_to(strategy, c, v) for c, v in zip(choices, values))
    with draw.seed_only(), draw.recording_fallbacks() as fallbacks:   # a kind it does not draw is named
        draw._sample(st.text(max_size=3), 3, 2)
    assert fallbacks and set(fallbacks) == {"TextStrategy"}
