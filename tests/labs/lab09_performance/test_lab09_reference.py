"""reference/performance.py against independent published values, its own properties and its input checks.

Anchors: Amdahl (Hennessy & Patterson, Computer Architecture 5th ed., sec. 1.9 example: 10x on 40 %
of the time gives 1/0.64 = 1.5625); the lab's correct figures recomputed by hand
(labs/lab09_performance/errata.md: 1/0.92 = 1.087, time -8.0 %, ceiling 1.136,
1/0.925, 1/0.85, 37.8 % / 41.2 % MFU, the cost grid); Gustafson, CACM 31(5) 1988 (1024 processors,
s = 0.4-0.8 %: scaled speedups 1016-1020); PaLM (Chowdhery et al. 2022, App. B: 540B at
238.3K tokens/s on 6144 TPU v4 at 275 TFLOP/s, 6N + 12LHQT FLOP/token -> 46.2 % MFU); the H100
ridge point 989e12 / 3.35e12 ~ 295 FLOP/byte (the lab's MathPeek value, anchors sec. E).
"""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference import constants as C
from reference import performance as P

FAST = settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))

ACT2 = {"compute": 0.45, "allreduce": 0.30, "pipeline_bubble": 0.15, "data_loading": 0.10}


# --- anchors -----------------------------------------------------------------------------------

def test_amdahl_anchors():
    assert P.amdahl_speedup(0.4, 10) == pytest.approx(1.5625, rel=1e-12)          # Hennessy & Patterson
    assert round(P.amdahl_speedup(0.12, 3), 3) == 1.087                            # the lab's +8.7 %
    assert round(P.amdahl_speedup(0.45, 2), 2) == 1.29                             # the lab's 2x AllReduce


def test_amdahl_limit_anchors():
    assert round(P.amdahl_limit(0.12), 3) == 1.136                                 # the lab's +13.6 % ceiling
    assert P.amdahl_limit(0.9) == pytest.approx(10.0)                             # 10 % serial: at most 10x
    assert P.amdahl_limit(1.0) == math.inf


def test_step_time_reduction_is_the_8_percent():
    assert P.step_time_reduction(0.12, 3) == pytest.approx(0.08, rel=1e-12)
    # ... and it is not the throughput gain the lab compares it with
    assert P.amdahl_speedup(0.12, 3) - 1 == pytest.approx(0.0870, abs=1e-4)


def test_multi_component_anchors():
    # the lab's (correct) Act II figures: m 4 -> 8 halves the bubble; 2x AllReduce compression
    assert P.multi_component_speedup(ACT2, {"pipeline_bubble": 2}) == pytest.approx(1 / 0.925)
    assert round(P.multi_component_speedup(ACT2, {"allreduce": 2}), 3) == 1.176
    # the analysis' global maximum of the lab's sliders (m = 32, r = 4, w = 16): 35 / 0.59375 = 58.95 %
    best = P.multi_component_speedup(ACT2, {"pipeline_bubble": 32 / 4, "allreduce": 4, "data_loading": 2})
    assert round(35 * best, 2) == 58.95


def test_hotspot_anchors():
    act1 = {"attention": 0.12, "allreduce": 0.45, "optimizer": 0.18, "data_loading": 0.15, "kernel_launch": 0.10}
    assert P.hotspot(act1) == "allreduce"
    assert P.hotspot(ACT2) == "compute"
    assert P.hotspot({"a": 0.5, "b": 0.5}) == "a"                                 # tie: first in order


def test_gustafson_anchors():
    assert round(P.gustafson_speedup(1024, 0.004)) == 1020                        # the paper's figures
    assert round(P.gustafson_speedup(1024, 0.008)) == 1016
    # by hand, 1024 - s x 1023: rounded to the paper's integers, n - s x n (1019.904) passed as well
    assert P.gustafson_speedup(1024, 0.004) == pytest.approx(1019.908, rel=1e-12)
    assert P.gustafson_speedup(1024, 0.008) == pytest.approx(1015.816, rel=1e-12)


def test_roofline_anchors():
    assert round(P.ridge_point(C.H100_PEAK_FLOPS_BF16, C.H100_HBM_BANDWIDTH)) == 295
    assert P.roofline_flops(100, C.H100_PEAK_FLOPS_BF16, C.H100_HBM_BANDWIDTH) == pytest.approx(335e12)
    assert P.roofline_flops(1000, C.H100_PEAK_FLOPS_BF16, C.H100_HBM_BANDWIDTH) == C.H100_PEAK_FLOPS_BF16


def test_mfu_palm_anchor():
    flops_per_token = 6 * 540.35e9 + 12 * 118 * 48 * 256 * 2048
    assert round(P.mfu(238.3e3, flops_per_token, 6144, 275e12), 3) == 0.462


def test_mfu_gain_anchors():
    # the lab: m 4 -> 8 gives 37.8 % MFU (+2.8 points), 2x AllReduce 41.2 % (+6.2 points)
    assert round(100 * P.mfu_gain(0.35, 0.15, 2), 1) == 2.8
    assert round(100 * (0.35 + P.mfu_gain(0.35, 0.15, 2)), 1) == 37.8
    assert round(100 * P.mfu_gain(0.35, 0.30, 2), 1) == 6.2


def test_best_fix_anchor():
    # the analysis: with the code's cost model the pipeline (m = 8, 0.9 wk) is the highest-ROI single
    # lever, ahead of 2x AllReduce (3.5 wk) and 16 prefetch workers (4.0 wk)
    factors = {"pipeline_bubble": 2.0, "allreduce": 2.0, "data_loading": 2.0}
    costs = {"pipeline_bubble": 0.9, "allreduce": 3.5, "data_loading": 4.0}
    assert P.best_fix(ACT2, factors, costs, 8.0) == "pipeline_bubble"
    assert P.best_fix(ACT2, factors, costs, 0.5) == "none"
    without = {k: v for k, v in costs.items() if k != "pipeline_bubble"}
    assert P.best_fix(ACT2, {k: factors[k] for k in without}, without, 8.0) == "allreduce"


def test_budget_left_anchors():
    # the analysis' grid: (m = 14, r = 4) costs exactly 8.0 and fits; (32, 4, 16) costs 13.8
    assert P.budget_left_weeks({"pipeline": 0.5 + 10 * 0.1, "allreduce": 2.0 + 3 * 1.5}, 8.0) == pytest.approx(0.0, abs=1e-12)
    assert P.budget_left_weeks({"pipeline": 0.5 + 28 * 0.1, "allreduce": 6.5, "data": 4.0}, 8.0) == pytest.approx(-5.8)


# --- identities from the analysis (the declared properties hold: tests/labs/test_labs.py, full marks) ---

@FAST
@given(st.floats(0, 0.99), st.floats(1, 100), st.floats(1, 100))
def test_same_part_composes(f, k1, k2):
    """Two speedups of one part compose (analysis P6): S(f,k1) * S(f', k2) = S(f, k1 k2), f' its new share."""
    s1 = P.amdahl_speedup(f, k1)
    f_new = f / k1 * s1
    assert s1 * P.amdahl_speedup(min(f_new, 1.0), k2) == pytest.approx(P.amdahl_speedup(f, k1 * k2), rel=1e-9)


@FAST
@given(st.floats(0, 1), st.floats(0.1, 100))
def test_reduction_is_one_minus_inverse_speedup(f, k):
    assert P.step_time_reduction(f, k) == pytest.approx(1 - 1 / P.amdahl_speedup(f, k), rel=1e-9, abs=1e-12)


@FAST
@given(st.floats(0.01, 0.49), st.floats(1.01, 100))
def test_hotspot_gains_most(small, k):
    """Analysis P9: at equal k >= 1 the larger share gives the larger speedup."""
    profile = {"small": small, "big": 1 - small}
    assert P.hotspot(profile) == "big"
    assert P.amdahl_speedup(profile["big"], k) > P.amdahl_speedup(small, k)


@FAST
@given(st.integers(1, 10_000), st.floats(0, 1))
def test_gustafson_is_amdahl_of_the_scaled_work(n, s):
    """Gustafson's s is the parallel run's serial share; the same run's work done serially, sped up n x on
    its parallel part, gives back n - s(n - 1)."""
    serial_time, parallel_time = s, (1 - s) * n           # on one processor
    share = parallel_time / (serial_time + parallel_time)
    assert P.amdahl_speedup(share, n) == pytest.approx(P.gustafson_speedup(n, s), rel=1e-9)


# --- input checks name the parameter --------------------------------------------------------------

BAD_CALLS = [   # NaN, infinities, negatives, bools, strings: tests/test_physics_contract.py
    (P.amdahl_speedup, dict(fraction=1.2, factor=2), "fraction"),
    (P.amdahl_speedup, dict(fraction=0.5, factor=0), "factor"),
    (P.step_time_reduction, dict(fraction=12, factor=3), "fraction"),
    (P.multi_component_speedup, dict(profile={"a": 0.5, "b": 0.6}, factors={}), "profile"),
    (P.multi_component_speedup, dict(profile={"a": 0.5, "b": 0.5}, factors={"c": 2}), "factors"),
    (P.multi_component_speedup, dict(profile={"a": 0.5, "b": 0.5}, factors={"a": 0}), "factors"),
    (P.hotspot, dict(profile={}), "profile"),
    (P.hotspot, dict(profile={"a": 45, "b": 55}), "profile"),
    (P.gustafson_speedup, dict(n=0, serial_fraction=0.1), "n"),
    (P.gustafson_speedup, dict(n=8, serial_fraction=1.5), "serial_fraction"),
    (P.roofline_flops, dict(intensity=1, peak_flops=1e15, bandwidth=0), "bandwidth"),
    (P.ridge_point, dict(peak_flops=0, bandwidth=1e12), "peak_flops"),
    (P.mfu, dict(tokens_per_s=1, flops_per_token=1e9, n_gpus=0, peak_flops=1e15), "n_gpus"),
    (P.mfu_gain, dict(base_mfu=35, fraction=0.1, factor=2), "base_mfu"),
    (P.mfu_gain, dict(base_mfu=0.35, fraction=0.1, factor=0), "factor"),
    (P.best_fix, dict(profile=ACT2, factors={"compute": 2}, cost_weeks={"compute": 0}, budget_weeks=8), "cost_weeks"),
    (P.best_fix, dict(profile=ACT2, factors={"compute": 2}, cost_weeks={"allreduce": 1}, budget_weeks=8), "cost_weeks"),
    (P.best_fix, dict(profile=ACT2, factors={"gpu": 2}, cost_weeks={"gpu": 1}, budget_weeks=8), "factors"),
    (P.budget_left_weeks, dict(cost_weeks={"a": -1}, budget_weeks=8), "cost_weeks"),
]


@pytest.mark.parametrize("fn, kwargs, name", BAD_CALLS, ids=[f"{f.__name__}-{n}-{i}" for i, (f, _, n) in enumerate(BAD_CALLS)])
def test_bad_input_names_the_parameter(fn, kwargs, name):
    with pytest.raises(ValueError, match=name):
        fn(**kwargs)
