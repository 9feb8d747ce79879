"""What only Lab 01 expects of its scenario: the keys say what the physics says, the failure state is
reached, the story's headline figures recomputed independently of the declaration."""
import re

import pytest

from autograder.engine.spec import Answer, Markdown
from labs.lab01_scale import ASSIGNMENT
from labs.lab01_scale import questions as Q
from labs.lab01_scale import scenario as S
from reference import scaling
from reference.cluster import ring_link


def test_act1_key_is_the_range_holding_the_speedup_and_efficiency_falls_with_n():
    _, mid, hi = S.SPEEDUP_CUTS
    assert mid <= S.SPEEDUP < hi
    assert Q.ACT1_OPTIONS[Q.ACT1_PREDICTION.key].startswith(f"{mid:,}-{hi:,}x")
    # strong scaling: efficiency falls with N (the lab's N*E*(1-C) kept it constant)
    eight = scaling.data_parallel_speedup(S.STEP_S_1GPU, 8, S.GRAD_BYTES, **ring_link(8)) / 8
    assert 0 < S.EFFICIENCY < eight < 1


def test_the_fleet_runs_its_ring_on_the_dgx_nodes_nics_not_one_nic_per_gpu():
    # issue 30: 125 DGX H100 nodes, 8 NICs each, one ring per NIC: 400 GB/s per rank; the flat ring at one
    # NIC per GPU (the source lab's, and this lab's until then) gives the 312.8x the lab keyed
    assert S.BANDWIDTH == 400e9 and S.LINK_FLEET == ring_link(S.N_FLEET)
    assert 780 < S.SPEEDUP < 790 and 312 < S.FLAT_SPEEDUP < 313
    assert S.LARGE_FLEET_EFFICIENCY < 0.5       # the wall is still there, further out


def test_act2_key_is_the_cheapest_path_and_the_lab_keyed_reserved_wrongly():
    assert S.CHEAPEST == "on_demand" and S.SPREAD > S.TIE_SPREAD
    assert Q.ACT2_OPTIONS[Q.ACT2_PREDICTION.key].startswith("On-demand is cheapest")
    assert S.COSTS["reserved"] > S.COSTS["on_demand"]   # the source lab keyed "reserved" at its own 60%


def test_reflection_keys_carry_the_corrected_physics():
    assert "AllReduce" in Q.ACT1_REFLECTION.options[Q.ACT1_REFLECTION.key]
    assert "Capex and staff" in Q.ACT2_REFLECTION.options[Q.ACT2_REFLECTION.key]


def test_story_numbers_and_the_failure_state():
    assert S.TOTAL_FLOPS == pytest.approx(5.88e23)
    assert S.YEARS_1GPU == pytest.approx(5.88e23 / (989e12 * 0.5) / (8760 * 3600))
    assert S.IDEAL_DAYS == pytest.approx(S.YEARS_1GPU * 365 / 1000)
    assert S.BREAKEVEN == pytest.approx(46_000 / (8760 * 3 * (2.10 - 0.098)))
    assert S.BUDGET_UTILIZATION == pytest.approx(50e6 / (1000 * 8760 * 3 * 2.10)) and S.BUDGET_UTILIZATION < 1
    assert round(S.BREAKEVEN_LONG, 2) == 0.57 and S.BREAKEVEN_SHORT > 1   # the what-ifs


# --- nothing given away, nothing rendered as LaTeX ---------------------------------------------------

def _markdown_texts():
    """Every text a student reads as markdown: the notebook's, the question prompts and options, the
    challenge prompt."""
    texts = [c.text for c in ASSIGNMENT.notebook if isinstance(c, Markdown)]
    texts += [q.prompt for q in ASSIGNMENT.questions] + [t for q in ASSIGNMENT.questions for t in q.options.values()]
    return texts + [c.prompt for c in ASSIGNMENT.challenges]


def test_every_dollar_in_markdown_is_escaped():
    """JupyterLab reads a pair of bare $ as LaTeX ("$2.10 ... $40,000" became an italic formula)."""
    bare = [text[:80] for text in _markdown_texts() if re.search(r"(?<!\\)\$", text)]
    assert not bare, bare


def test_options_have_comparable_lengths_and_the_key_is_not_always_the_longest():
    longest_is_key = []
    for q in ASSIGNMENT.questions:
        lengths = {letter: len(text) for letter, text in q.options.items()}
        assert max(lengths.values()) <= 1.6 * min(lengths.values()), (q.id, lengths)
        longest_is_key.append(max(lengths, key=lengths.get) == q.key)
        assert set(q.why) == set(q.options), q.id   # every option explained at the reveal
    assert not all(longest_is_key)


def _text_before(qid: str) -> str:
    """Everything a student can read before the question `qid` is asked (setup, markdown, earlier
    prompts): code cells after an answer stay locked until it is given."""
    seen = [ASSIGNMENT.setup]
    for cell in ASSIGNMENT.notebook:
        if isinstance(cell, Answer):
            if cell.question_id == qid:
                return "\n".join(seen)
            seen.append(ASSIGNMENT.question(cell.question_id).prompt)
        elif isinstance(cell, Markdown):
            seen.append(cell.text)
    raise AssertionError(f"{qid} is never asked")


def test_no_text_before_a_prediction_states_its_key():
    before1 = _text_before("act1_prediction")
    assert f"{S.SPEEDUP:,.0f}x" not in before1 and f"{S.REAL_DAYS:.1f} days" not in before1
    assert f"{S.EFFICIENCY:.0%}" not in before1
    before2 = _text_before("act2_prediction")
    assert not any(f"{usd / 1e6:,.1f}M" in before2 for usd in S.COSTS.values())
    assert f"{S.BREAKEVEN:.0%}" not in before2 and "cheapest: on_demand" not in before2
    # the Lab 01 cue above the reflection's one specific option (issue 14)
    assert "Which of the two did adding GPUs shrink" not in _text_before("act1_reflection")
