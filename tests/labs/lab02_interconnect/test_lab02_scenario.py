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


GRADIENT = 2 * 2.7e9    # GPT-3 2.7B's FP16 gradient (Brown et al. 2020, Table 2.1)


def test_act1_key_is_the_range_holding_the_recomputed_slowdown():
    compute = 6 * 2.7e9 * 2048 / (989e12 * 0.45)
    assert math.isclose(S.COMPUTE_S, compute)
    nv = compute + ic.intra_node_allreduce_time(GRADIENT, 8, 450e9)
    pcie = compute + ic.intra_node_allreduce_time(GRADIENT, 8, 16e9 * 16 * 128 / 130 / 8)   # PCI-SIG Gen4 x16
    assert math.isclose(S.PCIE_SLOWDOWN, pcie / nv)
    q = A.question("act1_prediction")
    low, high = map(float, re.search(r"\((\d+(?:\.\d+)?)× to (\d+(?:\.\d+)?)×\)", q.options[q.key]).groups())
    assert low <= S.PCIE_SLOWDOWN < high


def test_act2_keys_name_the_bandwidth_cliff_and_min_ib_links():
    assert "bandwidth cliff" in A.question("act2_prediction").options[A.question("act2_prediction").key]
    q = A.question("act2_reflection")
    # the NICs planned at 80 % of their 50 GB/s (issue 43)
    assert S.LINKS_AT_MAX == ic.min_ib_links(GRADIENT, 8, 64, 450e9, 0.8 * 50e9, S.COMPUTE_S)
    assert q.options[q.key].startswith(f"{S.LINKS_AT_MAX} links")
    # off the danger line on both sides (issue 30: the stages-added model's 4 links sat at 0.995)
    ratio = lambda links: ic.comm_overhead_ratio(ic.hierarchical_allreduce_time(GRADIENT, 8, 64, 450e9,
                                                                                links * 0.8 * 50e9), S.COMPUTE_S)
    assert S.LINKS_AT_MAX == 4 and ratio(4) < 0.97 and ratio(3) > 1.03


def test_the_story_is_the_danger_state_and_its_numbers_are_computed():
    text = " ".join(c.text for c in A.notebook if isinstance(c, Markdown))
    assert S.STORY_RATIO > 1.0    # communication longer than compute (docs/physics.md), written out
    assert f"{S.STORY_SPEEDUP:.1f}×" in text and f"{S.CLIFF:.1f}×" in text
    assert math.isclose(ic.hierarchical_allreduce_time(GRADIENT, 8, 1, 450e9, 50e9),
                        ic.intra_node_allreduce_time(GRADIENT, 8, 450e9))  # one node: no IB term


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
    """correct: a 4-stage cut (not the reference's); partly_wrong: 8 stages with 16 micro-batches,
    out of the danger state but with a 30 % bubble and too much traffic (1 of 3 constraints); wrong_predictions: 2.5 stages (0);
    broken and untouched: unanswered (0)."""
    challenge = A.challenges[0]
    share = {"correct": 1, "partly_wrong": 1 / 3, "wrong_predictions": 0, "broken": 0, "untouched": 0}
    for student, fraction in share.items():
        assert scores[student][challenge.id] == pytest.approx((fraction * challenge.points, challenge.points)), student


# --- issue 43: the story fits in memory, the design key survives NICs below line rate -----------------------

def test_the_story_fits_in_one_h100s_memory():
    """Every GPU of Acts I and II holds the whole model (plain data parallelism, its ring moving the gradient
    alone): 16 bytes of mixed-precision Adam a parameter plus one sequence's activations (Korthikanti et al.
    2022) must fit the H100's 80 GiB. The story's 70B model needed 1.12 TB a GPU."""
    from reference.constants import H100_HBM_CAPACITY_BYTES as capacity
    from reference.parallelism import model_state_bytes_per_gpu, peak_memory_bytes_per_gpu

    states = model_state_bytes_per_gpu(S.PARAMS)
    assert states <= capacity, f"{states / 1e9:,.0f} GB of model states per GPU"
    peak = peak_memory_bytes_per_gpu(S.PARAMS, S.LAYERS, S.TOKENS_PER_GPU_STEP, 1, S.HIDDEN, S.HEADS)
    assert peak <= capacity, f"{peak / 1e9:,.1f} GB per GPU"
    assert S.MEMORY_BYTES == pytest.approx(peak)
    text = " ".join(c.text for c in A.notebook if isinstance(c, Markdown))
    assert f"{S.MEMORY_BYTES / 1e9:.0f} GB" in text     # the story names what one GPU holds


def test_the_design_key_holds_for_nics_from_80_to_100_percent_of_line_rate():
    """nccl-tests#290: an NDR NIC delivers 46-48 of its 50 GB/s. The keyed link count must keep the cluster
    at least 3 % out of the danger state for any NIC from 80 % of line rate up, and one link fewer must
    not (at the efficiency the question plans for, which its prompt states)."""
    ratio = lambda links, efficiency: ic.comm_overhead_ratio(ic.hierarchical_allreduce_time(
        S.MESSAGE_BYTES, S.GPUS, S.MAX_NODES, S.NVLINK_BW, links * efficiency * S.LINK_BW), S.COMPUTE_S)
    key = S.LINKS_AT_MAX
    assert all(ratio(key, e / 100) <= 0.97 for e in range(80, 101)), [round(ratio(key, e / 100), 3) for e in (80, 90, 100)]
    planned = S.DESIGN_NIC_EFFICIENCY
    assert 0.8 <= planned < 1 and ratio(key - 1, planned) >= 1.03
    q = A.question("act2_reflection")
    assert f"{planned:.0%}" in q.prompt and q.options[q.key].startswith(f"{key} links")
