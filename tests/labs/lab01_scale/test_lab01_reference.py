"""Lab 01 reference (reference/scaling.py): published anchors, properties, input validation.

Anchors are independent of the reference: the project's own worked AllReduce example (not from nccl-tests), the Megatron-LM
throughput headline, Chinchilla's 6ND, and the Act II numbers recomputed by hand from the source
lab's scenario (labs/lab01_scale/errata.md).
"""
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference import scaling as S

FEW = settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
ACT2 = dict(capex_per_gpu=40_000, watts_per_gpu=700, pue=1.4, usd_per_kwh=0.10, staff_usd_per_gpu_year=2_000)


def _f(lo, hi):
    return st.floats(lo, hi, allow_subnormal=False)


# --- anchors -------------------------------------------------------------------------------------

def test_training_time_chinchilla_6nd_on_one_h100():
    # Chinchilla 70B on 1.4T tokens: C = 6ND = 5.88e23 FLOP (Hoffmann et al. 2022); at 50% of the
    # dense 989 TFLOP/s that is 5.88e23 / 4.945e14 s = 1.18908e9 s = 37.7 years of 365 days
    t = S.training_time_s(5.88e23, 1, 989e12, 0.5)
    assert t == pytest.approx(1.189079878665e9, rel=1e-9)
    assert t / (365 * 86400) == pytest.approx(37.705, abs=1e-3)


def test_training_time_source_lab_arithmetic():
    # the lab: 2.2e24 / 989.5e12 / (86,400 x 365) = 70.50 years (analysis section 7)
    assert S.training_time_s(2.2e24, 1, 1979e12, 0.5) / (86400 * 365) == pytest.approx(70.502, abs=1e-3)


def test_training_time_megatron_headline():
    # Narayanan et al. 2021: 3072 A100s at 163 TFLOP/s each (52% of 312) deliver ~502 PFLOP/s, so
    # one hour of that aggregate work takes about one hour
    assert S.training_time_s(502e15 * 3600, 3072, 312e12, 163 / 312) == pytest.approx(3600, rel=3e-3)


def test_speedup_worked_example():
    # the project's worked example (nccl-tests' busbw model, its numbers ours): n = 8, 1e9 B, 100e9 B/s, alpha 5 us -> 0.01757 s; with
    # 8 s of compute on one GPU a step on 8 takes 1 + 0.01757 s
    assert S.data_parallel_speedup(8.0, 8, 1e9, 5e-6, 100e9) == pytest.approx(8 / 1.01757, rel=1e-9)


def test_speedup_halves_when_compute_equals_lab_mathpeek_allreduce():
    # the lab's MathPeek: 175B FP16 = 350 GB over 1024 GPUs; at the real NDR 50 GB/s (not 400 GB/s)
    # the ring takes 2 x 1023/1024 x 7 s = 13.986 s (analysis: "13.99 s"). If each GPU's compute
    # share takes exactly as long, half the time is communication: speedup n / 2.
    ring_s = 2 * 1023 / 1024 * 350e9 / 50e9
    assert ring_s == pytest.approx(13.99, abs=5e-3)
    assert S.data_parallel_speedup(1024 * ring_s, 1024, 350e9, 0.0, 50e9) == pytest.approx(512, rel=1e-12)


def test_scaling_efficiency_anchors():
    assert S.scaling_efficiency(320, 1000) == pytest.approx(0.32, rel=1e-12)   # the lab's default sliders
    assert S.scaling_efficiency(8 / 1.01757, 8) == pytest.approx(1 / 1.01757, rel=1e-12)


def test_act2_costs_match_the_analysis():
    # analysis section 7: 0.6 x 8760 x 3 x 1000 x 2.10 = $33.1128M; reserved $35.8722M;
    # on-prem 40.0 + 1.10376 + 0.441504 + 6.0 = $47.545264M; continuous use $55.188M / $48.57544M
    assert S.on_demand_cost(1000, 3, 2.10, 0.6) == pytest.approx(33.1128e6, rel=1e-12)
    assert S.on_demand_cost(1000, 3, 2.10, 1.0) == pytest.approx(55.188e6, rel=1e-12)
    assert S.reserved_cost(1000, 3, 2.10, 0.35) == pytest.approx(35.8722e6, rel=1e-12)
    on_prem = dict(n_gpus=1000, years=3, **{k: v for k, v in ACT2.items()})
    assert S.on_prem_cost(utilization=0.6, **on_prem) == pytest.approx(47.545264e6, rel=1e-12)
    assert S.on_prem_cost(utilization=1.0, **on_prem) == pytest.approx(48.57544e6, rel=1e-12)


def test_energy_identity_barroso():
    # energy cost = IT power x hours x PUE x price (Barroso et al., ch. 6): 1 kW for 1000 h at PUE 1.5
    # and $0.10/kWh is $150, on top of nothing else
    assert S.on_prem_cost(1, 1000 / 8760, 0, 1000, 1.5, 0.10, 1.0, 0) == pytest.approx(150.0, rel=1e-12)


def test_breakeven_matches_the_analysis():
    # (GPC + 2000 Y) / (8760 Y (P - 0.098)): 0.8743 at Y = 3, 2.39 at Y = 1 (never), 0.684 at Y = 4,
    # 0.570 at Y = 5
    for years, expected in [(3, 0.8743), (1, 2.3949), (4, 0.6843), (5, 0.5702)]:
        assert S.breakeven_utilization(years, 2.10, **ACT2) == pytest.approx(expected, abs=1e-4)
        closed = (40_000 + 2_000 * years) / (8760 * years * (2.10 - 0.098))
        assert S.breakeven_utilization(years, 2.10, **ACT2) == pytest.approx(closed, rel=1e-12)


def test_an_idle_gpu_draws_its_idle_share_and_both_bills_meet_at_the_breakeven():
    """on_prem_cost: a busy GPU draws watts_per_gpu, an idle one idle_power_fraction of it. One 1 kW GPU
    for a year at half use and half idle power, PUE 1, 0.5 USD/kWh: 8,760 h x 0.5 USD x (0.5 + 0.5 x 0.5)
    = 3,285 USD of energy. At breakeven_utilization (which counts the idle draw too) the on-prem and
    on-demand bills are equal."""
    plant = dict(capex_per_gpu=0.0, watts_per_gpu=1000.0, pue=1.0, usd_per_kwh=0.5, staff_usd_per_gpu_year=0.0)
    assert S.on_prem_cost(1, 1.0, utilization=0.5, idle_power_fraction=0.5, **plant) == 3285.0
    assert S.on_prem_cost(1, 1.0, utilization=0.5, **plant) == 2190.0          # idle draws nothing by default
    plant = dict(ACT2, idle_power_fraction=0.3)
    u = S.breakeven_utilization(3, 2.10, **plant)
    assert 0 < u < 1
    assert S.on_prem_cost(8, 3, utilization=u, **plant) == pytest.approx(S.on_demand_cost(8, 3, 2.10, u), rel=1e-12)


def test_breakeven_infinite_when_price_below_energy():
    assert S.breakeven_utilization(3, 0.097, **ACT2) == math.inf     # just under the 0.098 of energy
    assert S.breakeven_utilization(3, 0.05, **ACT2) == math.inf


def test_cheapest_option_anchors():
    common = dict(n_gpus=1000, usd_per_gpu_hour=2.10, reserved_discount=0.35, **ACT2)
    assert S.cheapest_option(years=3, utilization=0.6, **common) == "on_demand"  # the lab's defaults
    assert S.cheapest_option(years=3, utilization=1.0, **common) == "reserved"   # running continuously
    assert S.cheapest_option(years=5, utilization=0.6, **common) == "on_prem"    # 52.6M < 55.2M < 59.8M


# --- properties of the model (the declared ones hold: tests/labs/test_labs.py, full marks) ---------

@FEW
@given(compute=_f(1.0, 1e4), n=st.integers(1, 8192), grad=_f(1e6, 1e12), alpha=_f(0, 1e-5), bw=_f(1e9, 1e12))
def test_efficiency_falls_with_n(compute, n, grad, alpha, bw):
    # the point of Act I: with a fixed AllReduce cost, more GPUs never raise the efficiency
    e = S.scaling_efficiency(S.data_parallel_speedup(compute, n, grad, alpha, bw), n)
    e2 = S.scaling_efficiency(S.data_parallel_speedup(compute, 2 * n, grad, alpha, bw), 2 * n)
    assert e2 <= e * (1 + 1e-12) and 0 < e2 <= 1


@FEW
@given(compute=_f(1.0, 1e4), n=st.integers(1, 8192), grad=_f(0, 1e12), bw=_f(1e9, 1e12))
def test_more_gpus_help_only_while_compute_exceeds_twice_the_transfer(compute, n, grad, bw):
    # without latency a step takes 2M/B + (T1 - 2M/B)/n: adding a GPU helps iff T1 > 2M/B
    s1 = S.data_parallel_speedup(compute, n, grad, 0.0, bw)
    s2 = S.data_parallel_speedup(compute, n + 1, grad, 0.0, bw)
    if compute > 2 * grad / bw * (1 + 1e-9):
        assert s2 >= s1
    elif compute < 2 * grad / bw * (1 - 1e-9):
        assert s2 <= s1


@FEW
@given(n=st.integers(1, 5000), years=_f(0.1, 10), price=_f(0.1, 10), d=_f(0.01, 0.9), u=_f(0, 1))
def test_reserved_beats_on_demand_above_one_minus_discount(n, years, price, d, u):
    od, res = S.on_demand_cost(n, years, price, u), S.reserved_cost(n, years, price, d)
    assert math.isclose(od, res / (1 - d) * u, rel_tol=1e-9, abs_tol=1e-6)
    if u > (1 - d) + 1e-9:
        assert res < od
    elif u < (1 - d) - 1e-9:
        assert od < res


@FEW
@given(years=_f(0.5, 10), price=_f(0.5, 10), capex=_f(0, 80_000), watts=_f(100, 1500), pue=_f(1, 2),
       kwh=_f(0.01, 0.4), staff=_f(0, 10_000), idle=_f(0, 0.8), n=st.integers(1, 3000))
def test_on_prem_wins_above_breakeven_only(years, price, capex, watts, pue, kwh, staff, idle, n):
    u_be = S.breakeven_utilization(years, price, capex, watts, pue, kwh, staff, idle)
    for u in (0.0, 0.25, 0.5, 0.75, 1.0):
        od = S.on_demand_cost(n, years, price, u)
        op = S.on_prem_cost(n, years, capex, watts, pue, kwh, u, staff, idle)
        if u > u_be * (1 + 1e-6):
            assert op < od * (1 + 1e-9)
        elif u < u_be * (1 - 1e-6):
            assert od < op * (1 + 1e-9)


@FEW
@given(n=st.integers(1, 5000), years=_f(0.5, 10), u=_f(0.01, 1), price=_f(0.5, 8), d=_f(0, 0.7),
       capex=_f(0, 80_000), watts=_f(100, 1500), pue=_f(1, 2), kwh=_f(0.01, 0.4), staff=_f(0, 10_000), idle=_f(0, 0.8))
def test_cheapest_option_is_the_minimum(n, years, u, price, d, capex, watts, pue, kwh, staff, idle):
    costs = {"on_demand": S.on_demand_cost(n, years, price, u), "reserved": S.reserved_cost(n, years, price, d),
             "on_prem": S.on_prem_cost(n, years, capex, watts, pue, kwh, u, staff, idle)}
    best = S.cheapest_option(n, years, u, price, d, capex, watts, pue, kwh, staff, idle)
    assert costs[best] == min(costs.values())


def test_training_time_matches_hand_computed_values():
    # 1e21 FLOP on 64 H100s (989 TFLOP/s dense BF16) at 40 % MFU: 1e21 / (64 * 989e12 * 0.4) = 39 497 s
    assert S.training_time_s(1e21, 64, 989e12, 0.4) == pytest.approx(39496.96663, rel=1e-9)
    # GPT-3: 3.14e23 FLOP (Brown et al. 2020) on 1,024 A100s (312 TFLOP/s) at 50 % MFU: 22.75 days
    assert S.training_time_s(3.14e23, 1024, 312e12, 0.5) / 86400 == pytest.approx(22.7505, rel=1e-5)


# --- input validation: ValueError naming the parameter -------------------------------------------

_GOOD = {
    "training_time_s": dict(total_flops=1e21, n_gpus=8, peak_flops=989e12, mfu=0.5),
    "data_parallel_speedup": dict(compute_s_1gpu=10.0, n=8, grad_bytes=1e9, alpha_s=1e-6, bandwidth=50e9),
    "scaling_efficiency": dict(speedup=6.0, n=8),
    "on_demand_cost": dict(n_gpus=8, years=3, usd_per_gpu_hour=2.1, utilization=0.6),
    "reserved_cost": dict(n_gpus=8, years=3, usd_per_gpu_hour=2.1, discount=0.35),
    "on_prem_cost": dict(n_gpus=8, years=3, utilization=0.6, **ACT2),
    "breakeven_utilization": dict(years=3, usd_per_gpu_hour=2.1, **ACT2),
    "cheapest_option": dict(n_gpus=8, years=3, utilization=0.6, usd_per_gpu_hour=2.1, reserved_discount=0.35, **ACT2),
}

_BAD = [   # NaN, infinities, negatives, bools and strings: tests/test_physics_contract.py, every parameter
    ("training_time_s", "n_gpus", 0), ("training_time_s", "peak_flops", 0.0), ("training_time_s", "mfu", 0.0),
    ("training_time_s", "mfu", 50), ("data_parallel_speedup", "compute_s_1gpu", 0.0), ("data_parallel_speedup", "n", 0),
    ("data_parallel_speedup", "bandwidth", 0.0), ("data_parallel_speedup", "n", 2.5), ("scaling_efficiency", "speedup", 0.0),
    ("scaling_efficiency", "n", 0), ("on_demand_cost", "n_gpus", 0), ("on_demand_cost", "utilization", 60),
    ("reserved_cost", "discount", 35), ("on_prem_cost", "pue", 0.9), ("on_prem_cost", "idle_power_fraction", 1.5),
    ("on_prem_cost", "utilization", 1.01), ("breakeven_utilization", "years", 0.0), ("breakeven_utilization", "pue", 0.5),
    ("cheapest_option", "reserved_discount", 1.2), ("cheapest_option", "n_gpus", 0), ("cheapest_option", "pue", 0.0),
]


@pytest.mark.parametrize("fn,param,value", _BAD, ids=lambda x: str(x))
def test_invalid_input_names_the_parameter(fn, param, value):
    with pytest.raises(ValueError, match=param):
        getattr(S, fn)(**{**_GOOD[fn], param: value})


@pytest.mark.parametrize("fn", sorted(_GOOD))
def test_valid_inputs_pass(fn):
    value = getattr(S, fn)(**_GOOD[fn])
    assert isinstance(value, str) or math.isfinite(value), value
