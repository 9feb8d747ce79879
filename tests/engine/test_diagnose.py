"""autograder.engine.diagnose: when a wrong model is named, and when nothing is said."""
from __future__ import annotations

import dataclasses

import pytest

from autograder.engine.diagnose import MIN_OBSERVATIONS, diagnose
from autograder.engine.spec import Misconception
from labs.slips import at, scaled
from reference import collectives as ref
from tests.engine import toy

CALLS = [dict(message_bytes=m, n=n, alpha_s=1e-6, bandwidth=50e9) for m, n in ((1e3, 2), (1e6, 8), (1e9, 128), (5e9, 3))]
DOUBLE = Misconception("a factor of two", "twice\nthe time", "Act I", scaled(ref.ring_allreduce_time, 2))
NO_ALPHA = Misconception("no latency", "no\nalpha", "Act I", at(ref.ring_allreduce_time, alpha_s=0.0))
ALSO_DOUBLE = Misconception("two times", "again\ntwice", "Act II", lambda **k: 2 * ref.ring_allreduce_time(**k))


def observed(fn, calls=CALLS):
    return [(kw, fn(**kw)) for kw in calls]


def run(models, obs):
    return diagnose(models, obs, ref.ring_allreduce_time, rel_tol=1e-9, abs_tol=1e-12)


def test_the_matching_model_is_named():
    assert run([NO_ALPHA, DOUBLE], observed(lambda **k: 2 * ref.ring_allreduce_time(**k))) is DOUBLE


def test_of_two_matching_models_the_first_declared_wins():
    obs = observed(lambda **k: 2 * ref.ring_allreduce_time(**k))
    assert run([ALSO_DOUBLE, DOUBLE], obs) is ALSO_DOUBLE
    assert run([DOUBLE, ALSO_DOUBLE], obs) is DOUBLE


def test_one_value_off_the_model_names_nothing():
    obs = observed(lambda **k: 2 * ref.ring_allreduce_time(**k))
    obs[-1] = (obs[-1][0], obs[-1][1] * (1 + 1e-6))
    assert run([DOUBLE], obs) is None


def test_too_few_observations_name_nothing():
    obs = observed(lambda **k: 2 * ref.ring_allreduce_time(**k), CALLS[:MIN_OBSERVATIONS - 1])
    assert run([DOUBLE], obs) is None


def test_three_observations_are_enough_and_two_are_not():
    """The documented minimum is 3 numeric values (written here, not read from MIN_OBSERVATIONS): a
    student whose three observed values all match a model is told the misconception, at two nothing."""
    doubled = lambda **k: 2 * ref.ring_allreduce_time(**k)   # noqa: E731
    assert run([DOUBLE], observed(doubled, CALLS[:3])) is DOUBLE
    assert run([DOUBLE], observed(doubled, CALLS[:2])) is None


def test_right_numbers_are_never_diagnosed():
    # alpha_s = 0 everywhere: the "no latency" model equals the reference on these inputs
    calls = [{**kw, "alpha_s": 0.0} for kw in CALLS]
    assert run([NO_ALPHA], observed(ref.ring_allreduce_time, calls)) is None


def test_a_model_that_raises_is_no_evidence():
    def broken(**k):
        raise ZeroDivisionError
    assert run([dataclasses.replace(DOUBLE, model=broken)], observed(scaled(ref.ring_allreduce_time, 2))) is None


def test_non_numeric_values_are_not_evidence():
    assert run([DOUBLE], [(kw, "ring") for kw in CALLS]) is None


def test_misconceptions_for_an_unknown_function_are_refused_by_name():
    with pytest.raises(ValueError, match="no_such_function"):
        dataclasses.replace(toy.ASSIGNMENT, misconceptions={"no_such_function": [DOUBLE]})
