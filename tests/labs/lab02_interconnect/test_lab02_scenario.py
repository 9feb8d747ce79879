"""Lab 02's own expectations of its scenario: the computed keys say what the physics says, the story
is the danger state, nothing gives a key away, and the demo class's design answers score their share
(the checks every lab shares are in tests/labs/test_labs.py)."""
from __future__ import annotations

import math
import re

import pytest

from autograder.engine.spec import Markdown
from labs.lab02_interconnect import ASSIGNMENT as A
from labs.lab02_interconnect import scenario as S
from reference import interconnect as ic


def test_act1_key_is_the_range_holding_the_recomputed_slowdown():
    nv = S.COMPUTE_S + ic.intra_node_allreduce_time(140e9, 8, 450e9)
    pcie = S.COMPUTE_S + ic.intra_node_allreduce_time(140e9, 8, 16e9 * 16 * 128 / 130 / 8)   # PCI-SIG Gen4 x16
    assert math.isclose(S.PCIE_SLOWDOWN, pcie / nv)
    q = A.question("act1_prediction")
    low, high = map(float, re.search(r"\((\d+(?:\.\d+)?)× to (\d+(?:\.\d+)?)×\)", q.options[q.key]).groups())
    assert low <= S.PCIE_SLOWDOWN < high


def test_act2_keys_name_the_bandwidth_cliff_and_min_ib_links():
    assert "bandwidth cliff" in A.question("act2_prediction").options[A.question("act2_prediction").key]
    q = A.question("act2_reflection")
    assert S.LINKS_AT_MAX == ic.min_ib_links(140e9, 8, 64, 450e9, 50e9, S.COMPUTE_S)
    assert q.options[q.key].startswith(f"{S.LINKS_AT_MAX} links")
    # off the danger line on both sides (issue 30: the stages-added model's 4 links sat at 0.995)
    ratio = lambda links: ic.comm_overhead_ratio(ic.hierarchical_allreduce_time(140e9, 8, 64, 450e9, links * 50e9),
                                                 S.COMPUTE_S)
    assert S.LINKS_AT_MAX == 3 and ratio(3) < 0.97 and ratio(2) > 1.03


def test_the_story_is_the_danger_state_and_its_numbers_are_computed():
    text = " ".join(c.text for c in A.notebook if isinstance(c, Markdown))
    assert S.STORY_RATIO > 1.0    # communication longer than compute (docs/physics.md), written out
    assert f"{S.STORY_SPEEDUP:.1f}×" in text and f"{S.CLIFF:.1f}×" in text
    assert math.isclose(ic.hierarchical_allreduce_time(140e9, 8, 1, 450e9, 50e9),
                        ic.intra_node_allreduce_time(140e9, 8, 450e9))  # one node: no IB term


def test_no_text_cites_what_students_never_saw_and_the_remedy_points_to_the_challenge():
    texts = [c.text for c in A.notebook if isinstance(c, Markdown)] + [q.prompt for q in A.questions]
    assert not any("original lab" in t for t in texts)
    # Act II's takeaway (shown with the reflection's grade) names the remedy and points to the challenge
    takeaway = A.question("act2_reflection").takeaway
    assert "pipeline parallelism" in takeaway and "design challenge" in takeaway


def test_every_option_explains_itself_and_no_key_is_the_conspicuously_long_one():
    for q in A.questions:
        assert set(q.why) == set(q.options) and all(q.why.values()), q.id
        lengths = [len(t) for t in q.options.values()]
        assert max(lengths) <= 1.6 * min(lengths), q.id
    assert not all(len(q.options[q.key]) == max(map(len, q.options.values())) for q in A.questions)


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    from autograder.classroom.samples import grade_class
    return grade_class(A, tmp_path_factory.mktemp("class"))


def test_design_challenge_scores_what_each_sample_wrote(scores):
    """correct: a 4-stage cut (not the reference's); partly_wrong: 16 stages with 16 micro-batches,
    whose bubble puts it in the danger state (1 of 3 constraints); wrong_predictions: 2.5 stages (0);
    broken and untouched: unanswered (0)."""
    challenge = A.challenges[0]
    share = {"correct": 1, "partly_wrong": 1 / 3, "wrong_predictions": 0, "broken": 0, "untouched": 0}
    for student, fraction in share.items():
        assert scores[student][challenge.id] == pytest.approx((fraction * challenge.points, challenge.points)), student
