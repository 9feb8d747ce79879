"""What only Lab 01 expects of its scenario: the keys say what the physics says, the failure state is
reached, the story's headline figures recomputed independently of the declaration."""
import pytest

from labs.lab01_scale import questions as Q
from labs.lab01_scale import scenario as S
from reference import scaling


def test_act1_key_is_the_range_holding_the_speedup_and_efficiency_falls_with_n():
    lo, mid, _ = S.SPEEDUP_CUTS
    assert lo <= S.SPEEDUP < mid
    assert Q.ACT1_OPTIONS[Q.ACT1_PREDICTION.key].startswith(f"{lo:,}-{mid:,}x")
    # strong scaling: efficiency falls with N (the lab's N*E*(1-C) kept it constant)
    eight = scaling.data_parallel_speedup(S.STEP_S_1GPU, 8, S.GRAD_BYTES, S.ALPHA_S, S.BANDWIDTH) / 8
    assert 0 < S.EFFICIENCY < eight < 1


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
