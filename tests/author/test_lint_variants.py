"""`scalelabs lint`'s variants rule on declarations broken on purpose (Lab 06's, in-process): a version
whose key is not unique, one whose options collide, one whose key is not robust, one where the story's
claim is false, too few versions, a name scenario.py does not assign: each fails the rule, naming the
version, its inputs and the fix; the lab's own declaration passes."""
from __future__ import annotations

from dataclasses import replace

import pytest

from autograder.author import lint
from labs import load
from labs.variants import LabVariants

LAB = "lab06_collectives"
OWN = load(LAB).variants.vary


def _lab(vary: dict, count: int = 8) -> lint.Lab:
    """Lab 06 with another variants declaration (its own files untouched)."""
    variants = LabVariants(f"labs.{LAB}", vary, count)
    assignment = replace(load(LAB), variants=variants)
    variants.base = assignment
    return lint.Lab(LAB, assignment)


def _problems(vary: dict, count: int = 8) -> list[str]:
    return [str(p) for p in lint.run_rule(_lab(vary, count), "variants")]


def test_the_labs_own_declaration_passes():
    assert _problems(OWN) == []


def test_a_version_whose_key_is_not_unique_fails():
    """At 512 GPUs the byte ratio (n) lies in no option's range; with overlapping ranges it lies in two."""
    found = _problems({**OWN, "N_GPUS": (32, 64, 128, 512)})
    assert found and all("labs/lab06_collectives/variants.py:" in f and ": variants: version " in f for f in found)
    assert any("does not compute at N_GPUS=512" in f and "its key is not unique" in f for f in found), found
    overlapping = ((1, 4), (4, 400), (40, 100), (100, 400))
    found = _problems({**OWN, "ACT1_RANGES": (overlapping, ((1, 4), (4, 40), (40, 100), (100, 400)))})
    assert any("ACT1_RANGES" in f and "overlaps" in f for f in found), found


def test_a_version_whose_options_collide_fails():
    """Two ranges alike (4x to 40x twice): two options claim the same values; ranges that round alike
    (4.0 to 40.0 and 4.04 to 40.4 both read "between 4x and 40x" once formatted) read alike."""
    colliding = ((1, 4), (4, 40), (4, 40), (100, 400))
    found = _problems({**OWN, "ACT1_RANGES": (colliding, ((1, 4), (4, 40), (40, 100), (100, 400)))})
    assert any("ACT1_RANGES" in f and "two options collide" in f for f in found), found
    assert all("(fix: " in f for f in found)
    from autograder.author.versions import option_problems
    from autograder.engine.spec import Question
    q = Question("q", "prediction", "?", {"A": "between 4× and 40× — modest", "B": "between 4× and 40× — overlap",
                                         "C": "between 1× and 4× — none"}, "A", 1)
    assert [m for m, _ in option_problems(q)] == ["q: its key is not unique: options A and B read alike "
                                                  "('between 4× and 40× — modest')"]


def test_a_version_whose_key_is_not_robust_fails():
    """A cluster ratio at a range's edge: 5 % more of every float input moves the key (here the range
    bounds themselves are the floats nudged)."""
    edge = ((1.0, 4.0), (4.0, 32.5), (32.5, 100.0), (100.0, 400.0))   # n = 32 sits 1.5 % under a bound
    found = _problems({**OWN, "ACT1_RANGES": (edge, ((1, 4), (4, 40), (40, 100), (100, 400)))})
    assert any("is not robust" in f and "act1_prediction" in f for f in found), found


def test_a_version_where_the_storys_claim_is_false_fails():
    """The story says the big gradients' share is under the failure line: on a 1 % MFU it is not."""
    found = _problems({**OWN, "MFU": (0.5, 0.01)})
    assert any("does not compute at" in f and "MFU=0.01" in f and "AssertionError" in f for f in found), found


@pytest.mark.parametrize("vary, count, words", [
    (OWN, 4, "COUNT = 4: fewer than 8 versions"),
    ({"N_GPUS": (32, 64)}, 8, "fewer than the 7 other versions COUNT asks for"),
    ({**OWN, "NOT_A_NAME": (1, 2)}, 8, "NOT_A_NAME is not an input of scenario.py"),
    ({**OWN, "WORKLOAD_SIZES.x": (1, 2)}, 8, "WORKLOAD_SIZES.x is not an input of scenario.py"),
    ({**OWN, "CLUSTER.alpha_s": (1e-6, 2e-6)}, 8, "CLUSTER is not a dict(...) or {...} literal"),
])
def test_a_declaration_that_cannot_give_its_versions_fails(vary, count, words):
    found = _problems(vary, count)
    assert any(words in f for f in found), found
