"""Lab 07's own expectations of its scenario: the computed keys say what the physics says, the failure
state is reached by the lead's plan only, and the challenge's premise holds (no synchronous plan within
the storage budget reaches the goodput target). The checks every lab shares are in tests/labs/test_labs.py."""
from __future__ import annotations

from autograder.engine.spec import Markdown
from labs.lab07_fault_tolerance import ASSIGNMENT as A
from labs.lab07_fault_tolerance import scenario as S
from reference import fault_tolerance as ft


def test_act1_key_says_30_minutes_is_too_often():
    assert S.ACT1_INTERVAL_S < S.ACT1_YOUNG_S / 1.4
    q = A.question("act1_prediction")
    assert q.options[q.key].startswith("Too often") and f"{S.ACT1_YOUNG_S / 60:.0f} min" in q.options[q.key]


def test_act2_key_is_the_range_holding_young():
    q = A.question("act2_prediction")
    assert 5 * 60 <= S.ACT2_YOUNG_S < 30 * 60 and q.options[q.key].startswith("5 to 30 minutes")


def test_the_failure_state_is_the_leads_plan_and_young_escapes_it():
    # the failure state, stalls above 20 % of the time (errata, kept from the source lab), written out:
    # compared with S.OVERHEAD_BUDGET itself these held for any budget between Young's 4 % and the lead's 29 %
    assert S.OVERHEAD_BUDGET == 0.20
    assert S.ACT2_WRITE_S / S.LEAD_INTERVAL_S > 0.20
    assert S.ACT2_WRITE_S / S.ACT2_YOUNG_S < 0.20


def test_no_synchronous_plan_in_budget_reaches_the_target_and_asynchronous_ones_do():
    best_sync = max(ft.goodput(t, S.ACT2_CHECKPOINT_BYTES / S.STORAGE_BUDGET, S.ACT2_MTBF_S, S.RESTART_S)
                    for t in range(60, 7200, 10))
    # Llama 3's "more than 90% effective training time" written out (any target between the best
    # synchronous plan's 89.4 % and the asynchronous 94.5 % passed when compared with the constant)
    assert S.GOODPUT_TARGET == 0.90
    assert best_sync < 0.90 < S.ACT2_ASYNC_GOODPUT
    assert abs(best_sync - S.BUDGET_SYNC_GOODPUT) < 1e-3


def test_story_numbers_are_rendered():
    story = "\n".join(c.text for c in A.notebook if isinstance(c, Markdown))
    assert "every 30 minutes" in story and "16,384 H100s" in story and "14 TB" in story
    assert "{" not in story.replace("{R/M}", "").replace("{(T+C)/M}", "")
