"""Lab 09 graded items: worked examples at the scenario's inputs, hidden domains and hidden properties.

Expected values are never typed: the engine computes them from reference/ at grading time.
"""
from __future__ import annotations

from functools import partial

from hypothesis import strategies as st

from autograder.engine.spec import FunctionItem, Property
from labs.authoring import anchored, decades, examples, public_properties
from labs.lab09_performance import properties as public
from labs.lab09_performance.scenario import (A1_HOT, CHEAP_PREFETCH_WEEKS, ACT1_EXAMPLE_PART, ACT1_KERNEL_FACTOR, ACT1_PROFILE,
                                             ACT2_PROFILE, BASE_MFU, BUDGET_WEEKS, COSTS, FACTORS,
                                             FIX_NAMES, FLOPS_PER_TOKEN, GUSTAFSON_EXAMPLE, HBM_BANDWIDTH,
                                             HP_EXAMPLE, LEAD_PLAN, N_GPUS, PALM, PALM_PARAMS, PARAMS, PEAK_FLOPS,
                                             PLAN_COSTS, RIDGE, ROOFLINE_INTENSITIES, SERIAL_SHARE,
                                             SMALL_BUDGET_WEEKS, TOKENS_PER_S)
from reference import performance as ref

_public = partial(public_properties, public.PROPERTIES)

# Graded functions whose stub docstring may state its closed form (issue 29, derive then check): a
# definition or a published count a student is not asked to derive; at most a third of the lab's
# functions (`scalelabs lint`'s derive rule). Every other function's formula is in the reference's
# Formula: paragraph, which the stub leaves out.
DEFINITIONS = ("roofline_flops", "ridge_point", "mfu", "budget_left_weeks")

# --- hidden domains: wider than the released strategies (properties.py) and drawn differently -------
FRACTION = st.one_of(st.floats(0.0, 1.0), st.floats(0.9, 1.0), st.floats(0.0, 0.1))   # more weight near the ends
# Factors near 1 are left out: there f(1 - 1/k) and f - f/k (both correct) cancel differently and
# disagree beyond 1e-9 relative on a result near 0.
FACTOR = st.one_of(st.floats(0.05, 0.95), st.floats(1.05, 100.0), decades(0.03, 3))
_PARTS = ("compute", "allreduce", "pipeline_bubble", "data_loading", "optimizer", "checkpoint", "kernels", "logging")


def _profile_of(weights: list[int]) -> dict[str, float]:
    total = sum(weights)
    return {name: w / total for name, w in zip(_PARTS, weights)}


# 2 to 8 named parts with distinct shares (the released profiles: part0..part5), so "the largest" is unambiguous
PROFILE = st.lists(st.integers(1, 10_000), min_size=2, max_size=len(_PARTS), unique=True).map(_profile_of)


@st.composite
def _multi_domain(draw):
    profile = draw(PROFILE)
    names = draw(st.lists(st.sampled_from(sorted(profile)), unique=True))
    return {"profile": profile, "factors": {n: draw(FACTOR) for n in names}}


@st.composite
def _fixes(draw):
    profile = draw(PROFILE)
    names = draw(st.lists(st.sampled_from(sorted(profile)), min_size=1, unique=True))
    return {"profile": profile, "factors": {n: draw(st.one_of(st.floats(1.05, 10.0), decades(0.03, 1.5))) for n in names},
            "cost_weeks": {n: draw(st.one_of(st.floats(0.1, 20.0), decades(-1, 1.5))) for n in names},
            "budget_weeks": draw(st.one_of(st.floats(0.0, 25.0), st.floats(0.0, 40.0)))}


_PROFILE_ANCHORS = ({"compute": 0.375, "allreduce": 0.375, "data_loading": 0.25},    # a tie: the first named
                    {"data_loading": 0.25, "compute": 0.375, "allreduce": 0.375})
_hotspot_domain = anchored(PROFILE.map(lambda p: {"profile": p}), *({"profile": p} for p in _PROFILE_ANCHORS))
_THIRDS = {"compute": 0.5, "allreduce": 0.25, "data_loading": 0.25}
# anchors: the best fix costs exactly the budget (affordable), two fixes tie (the first in `factors`),
# an affordable fix that gains nothing (factor 1: "none"), nothing affordable
_fix_domain = anchored(
    _fixes(),
    dict(profile=_THIRDS, factors={"allreduce": 1.25, "data_loading": 8.0}, cost_weeks={"allreduce": 1.0, "data_loading": 2.0},
         budget_weeks=2.0),
    dict(profile=_THIRDS, factors={"data_loading": 2.0, "allreduce": 2.0}, cost_weeks={"data_loading": 1.0, "allreduce": 1.0},
         budget_weeks=4.0),
    dict(profile=_THIRDS, factors={"compute": 1.0}, cost_weeks={"compute": 1.0}, budget_weeks=2.0),
    dict(profile=_THIRDS, factors={"compute": 2.0}, cost_weeks={"compute": 2.5}, budget_weeks=2.0))


# The hidden "best is best" property draws only costs and a budget over the Act II parts and fixes:
# few draws keep hypothesis' shrinking of a failure short.
_FIX_COSTS = st.fixed_dictionaries({
    "profile": st.just(ACT2_PROFILE), "factors": st.just(FACTORS),
    "cost_weeks": st.fixed_dictionaries({n: st.floats(0.1, 20.0) for n in FACTORS}),
    "budget_weeks": st.floats(0.0, 25.0)})

# every Act II part; anchor: a plan that spends exactly the budget (0 left: it fits)
_PLAN = st.dictionaries(st.sampled_from([*LEAD_PLAN, "compute", "optimizer"]), st.one_of(st.floats(0.0, 20.0), decades(-2, 1.5)))
_BUDGET_DOMAIN = anchored(st.fixed_dictionaries(dict(cost_weeks=_PLAN, budget_weeks=st.one_of(st.floats(0.0, 50.0), decades(-1, 2)))),
                          dict(cost_weeks={"pipeline": 2.5, "allreduce": 5.5}, budget_weeks=8.0))
_kw = st.fixed_dictionaries


# --- hidden properties (they may call the trusted reference) ------------------------------------------

def _best_is_best(f, d):
    got = f(**d)
    rates = {n: (ref.amdahl_speedup(d["profile"][n], k) - 1) / d["cost_weeks"][n]
             for n, k in d["factors"].items() if d["cost_weeks"][n] <= d["budget_weeks"]}
    if got == "none":
        assert not rates, f"'none' although {sorted(rates)} fit the budget"
    else:
        assert got in rates, f"{got!r} is not an affordable fix"
        assert rates[got] >= max(rates.values()) * (1 - 1e-9), \
            f"{got!r} gains {rates[got]} per week; another affordable fix gains {max(rates.values())}"


def _hotspot_not_alphabetical(f, d):
    # the last name alphabetically is the smallest share: max(profile) without key= picks it
    profile = {"z_small": 0.1, "a_large": 0.6, "m_mid": 0.3}
    assert f(profile=profile) == "a_large", "the hotspot is the largest share, not the last name"


# --- graded items ------------------------------------------------------------------------------------
_K = f"{ACT1_KERNEL_FACTOR:g}x"
_PART, _SHARE = ACT1_EXAMPLE_PART, ACT1_PROFILE[ACT1_EXAMPLE_PART]
_NO_PIPELINE = {n: k for n, k in FACTORS.items() if n != "pipeline_bubble"}
_NO_PIPELINE_COSTS = {n: COSTS[n] for n in _NO_PIPELINE}
_H100 = dict(peak_flops=PEAK_FLOPS, bandwidth=HBM_BANDWIDTH)

FUNCTIONS = (
    FunctionItem("amdahl_speedup", 2, examples(
        (f"Act I: {_K} on the {_PART} ({_SHARE:.0%} of the step)", dict(fraction=_SHARE, factor=ACT1_KERNEL_FACTOR)),
        (f"Act I: the same {_K} on the hotspot (AllReduce)", dict(fraction=ACT1_PROFILE[A1_HOT], factor=ACT1_KERNEL_FACTOR)),
        (f"Hennessy & Patterson sec. 1.9: {HP_EXAMPLE['factor']:g}x on {100 * HP_EXAMPLE['fraction']:g} % of the time",
         HP_EXAMPLE),
    ), domain=_kw(dict(fraction=FRACTION, factor=FACTOR)), properties=_public("amdahl_speedup")),
    FunctionItem("amdahl_limit", 1, examples(
        (f"Act I: the {_PART}'s ceiling", dict(fraction=_SHARE)),
        ("Act I: AllReduce's ceiling", dict(fraction=ACT1_PROFILE[A1_HOT])),
    ), domain=_kw(dict(fraction=st.one_of(st.floats(0.0, 0.999), st.floats(0.9, 0.999)))), properties=_public("amdahl_limit")),
    FunctionItem("step_time_reduction", 2, examples(
        (f"Act I: {_K} on the {_PART}", dict(fraction=_SHARE, factor=ACT1_KERNEL_FACTOR)),
        (f"Act I: {_K} on AllReduce", dict(fraction=ACT1_PROFILE[A1_HOT], factor=ACT1_KERNEL_FACTOR)),
    ), domain=_kw(dict(fraction=FRACTION, factor=FACTOR)), properties=_public("step_time_reduction")),
    FunctionItem("multi_component_speedup", 2, examples(
        ("Act II: every fix at once", dict(profile=ACT2_PROFILE, factors=FACTORS)),
        ("Act II: the lead's plan", dict(profile=ACT2_PROFILE, factors={n: FACTORS[n] for n in LEAD_PLAN})),
    ), domain=_multi_domain(), properties=_public("multi_component_speedup")),
    FunctionItem("hotspot", 1, examples(
        ("Act I profile", dict(profile=ACT1_PROFILE)),
        ("Act II profile", dict(profile=ACT2_PROFILE)),
    ), domain=_hotspot_domain, properties=[
        *_public("hotspot"),
        Property(name="largest share, not last name", meaning="The hotspot is chosen by share, not by name.",
                 strategy=st.just(None), check=_hotspot_not_alphabetical, public=False),
    ]),
    FunctionItem("gustafson_speedup", 1, examples(
        (f"Gustafson 1988: {GUSTAFSON_EXAMPLE['n']} processors, {100 * GUSTAFSON_EXAMPLE['serial_fraction']:g} % serial",
         GUSTAFSON_EXAMPLE),
        (f"Act II cluster, {100 * SERIAL_SHARE:g} % serial", dict(n=N_GPUS, serial_fraction=SERIAL_SHARE)),
    ), domain=_kw(dict(n=st.one_of(st.integers(1, 64), st.integers(1, 1_000_000)), serial_fraction=FRACTION)),
        properties=_public("gustafson_speedup")),
    FunctionItem("roofline_flops", 1, examples(
        *((f"H100: {i:g} FLOP/byte ({'memory' if i < RIDGE else 'compute'}-bound)", dict(intensity=i, **_H100))
          for i in ROOFLINE_INTENSITIES),
    ), domain=_kw(dict(intensity=st.one_of(decades(-3, 5), st.floats(0.0, 1e4)), peak_flops=decades(11, 17),
                       bandwidth=decades(8, 14))), properties=_public("roofline_flops")),
    FunctionItem("ridge_point", 1, examples(
        ("H100 SXM, dense BF16 on HBM3", _H100),
    ), domain=_kw(dict(peak_flops=decades(11, 17), bandwidth=decades(8, 14))),
        properties=_public("ridge_point")),
    FunctionItem("mfu", 2, examples(
        (f"Act II: {N_GPUS} H100, {PARAMS / 1e9:.0f}B model",
         dict(tokens_per_s=TOKENS_PER_S, flops_per_token=FLOPS_PER_TOKEN, n_gpus=N_GPUS, peak_flops=PEAK_FLOPS)),
        (f"PaLM {PALM_PARAMS / 1e9:.0f}B: {PALM['tokens_per_s'] / 1e3:g}K tokens/s on {PALM['n_gpus']} TPU v4 "
         f"({PALM['peak_flops'] / 1e12:g} TFLOP/s)", PALM),
    ), domain=_kw(dict(tokens_per_s=decades(2, 8), flops_per_token=decades(8, 14),
                       n_gpus=st.one_of(st.integers(1, 64), st.integers(1, 100_000)), peak_flops=decades(12, 16.5))),
        properties=_public("mfu")),
    FunctionItem("mfu_gain", 1, examples(
        *((f"Act II: {FIX_NAMES[n]}", dict(base_mfu=BASE_MFU, fraction=ACT2_PROFILE[n], factor=FACTORS[n]))
          for n in ("pipeline_bubble", "allreduce")),
    ), domain=_kw(dict(base_mfu=st.floats(0.01, 1.0), fraction=st.one_of(st.floats(0.0, 0.95), st.floats(0.0, 0.2)),
                       factor=FACTOR)),
        properties=_public("mfu_gain")),
    FunctionItem("best_fix", 3, examples(
        (f"Act II without the pipeline fix, prefetch for {CHEAP_PREFETCH_WEEKS:g} weeks",
         dict(profile=ACT2_PROFILE, factors=_NO_PIPELINE, budget_weeks=BUDGET_WEEKS,
              cost_weeks={**_NO_PIPELINE_COSTS, "data_loading": CHEAP_PREFETCH_WEEKS})),
        ("Act II: without the pipeline fix",
         dict(profile=ACT2_PROFILE, factors=_NO_PIPELINE, cost_weeks=_NO_PIPELINE_COSTS, budget_weeks=BUDGET_WEEKS)),
        (f"Act II: {SMALL_BUDGET_WEEKS:g} weeks of budget",
         dict(profile=ACT2_PROFILE, factors=FACTORS, cost_weeks=COSTS, budget_weeks=SMALL_BUDGET_WEEKS)),
    ), domain=_fix_domain, properties=[
        *_public("best_fix"),
        Property(name="the most MFU per week among affordable fixes",
                 meaning="No affordable fix gains more MFU per engineer-week than the one chosen.",
                 strategy=_FIX_COSTS, check=_best_is_best, public=False),
    ]),
    FunctionItem("budget_left_weeks", 1, examples(
        ("Act II: the lead's plan (failure state)", dict(cost_weeks=PLAN_COSTS, budget_weeks=BUDGET_WEEKS)),
        ("Act II: the AllReduce fix alone", dict(cost_weeks={"allreduce": COSTS["allreduce"]}, budget_weeks=BUDGET_WEEKS)),
    ), domain=_BUDGET_DOMAIN, properties=_public("budget_left_weeks")),
)
