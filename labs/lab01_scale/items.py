"""Lab 01 graded items: worked examples at the scenario's inputs, hidden domains and hidden properties.

Expected values are never typed: the engine computes them from reference/ at grading time.
"""
from __future__ import annotations

import math
from functools import partial

from hypothesis import strategies as st

import reference.scaling as ref
from autograder.engine import spec
from labs.authoring import anchored, decades, public_properties
from labs.lab01_scale import properties as public
from labs.lab01_scale.scenario import (CAPEX_PER_GPU, FIT_GPUS, FLEET_GPUS, FULL_UTILIZATION, SYNC_BYTES,
                                       LAB_IDLE_POWER_FRACTION, LAB_N, LAB_SPEEDUP, LAB_TOTAL_FLOPS, LARGE_FLEET,
                                       LONG_YEARS, MFU, N_FLEET, NDR_GBIT, PARAMS, PEAK_FLOPS, PLANT, PUE,
                                       RESERVED_DISCOUNT, SHORT_YEARS, SPARSE_PEAK_FLOPS, SPEEDUP,
                                       STAFF_USD_PER_GPU_YEAR, STEP_S_1GPU, TOKENS_PER_STEP, TOTAL_FLOPS,
                                       USD_PER_GPU_HOUR, USD_PER_KWH, UTILIZATION, WATTS_PER_GPU, YEARS)
from reference.cluster import ring_link

# --- graded functions ----------------------------------------------------------------------------
_public = partial(public_properties, public.PROPERTIES)

# Graded functions whose stub docstring may state its closed form (issue 29, derive then check): a
# definition or a published count a student is not asked to derive; at most a third of the lab's
# functions (`scalelabs lint`'s derive rule). Every other function's formula is in the reference's
# Formula: paragraph, which the stub leaves out.
DEFINITIONS = ("training_time_s", "scaling_efficiency")


_f = public._f  # floats without subnormals


def _equal_cost_at_breakeven(f, d):
    u = f(**d)
    if not (isinstance(u, float) and 0 < u <= 1):
        return  # no breakeven inside [0, 1]: the other checks cover those cases
    on_demand = ref.on_demand_cost(1, d["years"], d["usd_per_gpu_hour"], u)
    on_prem = ref.on_prem_cost(1, d["years"], d["capex_per_gpu"], d["watts_per_gpu"], d["pue"], d["usd_per_kwh"],
                               u, d["staff_usd_per_gpu_year"], d["idle_power_fraction"])
    assert math.isclose(on_demand, on_prem, rel_tol=1e-6), (
        f"at your breakeven {u} on-demand costs {on_demand} USD per GPU but on-prem {on_prem}: not equal")


def _more_bandwidth_never_slower(f, d):
    slow, fast = f(**d), f(**{**d, "bandwidth": 2 * d["bandwidth"]})
    assert fast >= slow * (1 - 1e-9), f"doubling the bandwidth lowered the speedup: {slow} -> {fast}"


# --- hidden domains: wider than the released strategies (properties.py) and drawn differently -------
_PLANT_DOMAIN = dict(capex_per_gpu=st.one_of(_f(5_000, 80_000), decades(3, 5.3)), watts_per_gpu=_f(100, 2_500),
                     pue=st.one_of(_f(1.0, 2.0), _f(1.0, 1.2)), usd_per_kwh=st.one_of(_f(0.03, 0.40), decades(-2, 0)),
                     staff_usd_per_gpu_year=st.one_of(_f(0, 10_000), _f(0, 60_000)),
                     idle_power_fraction=st.one_of(_f(0, 0.6), _f(0, 1)))
_GPUS = st.one_of(st.integers(1, 64), st.integers(1, 100_000))        # half of the draws up to 64
_YEARS = st.one_of(_f(0, 10), decades(-2, 1.3))
_PRICE = st.one_of(_f(0, 40), decades(-2, 1.5))
_FRACTION = st.one_of(_f(0, 1), _f(0.9, 1), _f(0, 0.1))                # more weight near either end


def _not_near_no_breakeven(d) -> bool:
    # near price == marginal energy the breakeven's denominator cancels, and equally correct
    # algebraic forms differ in the last digits amplified by 1/denominator: keep 5% away from it
    energy = d["watts_per_gpu"] / 1000 * d["pue"] * d["usd_per_kwh"] * (1 - d["idle_power_fraction"])
    return abs(d["usd_per_gpu_hour"] - energy) > 0.05 * d["usd_per_gpu_hour"]


def _no_near_tie(d) -> bool:
    # on-demand equals reserved at U = 1 - discount; near a tie the winner depends on rounding
    costs = sorted([ref.on_demand_cost(d["n_gpus"], d["years"], d["usd_per_gpu_hour"], d["utilization"]),
                    ref.reserved_cost(d["n_gpus"], d["years"], d["usd_per_gpu_hour"], d["reserved_discount"]),
                    ref.on_prem_cost(d["n_gpus"], d["years"], d["capex_per_gpu"], d["watts_per_gpu"], d["pue"],
                                     d["usd_per_kwh"], d["utilization"], d["staff_usd_per_gpu_year"],
                                     d["idle_power_fraction"])])
    return costs[1] - costs[0] > 1e-6 * costs[1]


_STEP_KW = dict(compute_s_1gpu=STEP_S_1GPU, grad_bytes=SYNC_BYTES)   # ZeRO-3's exchange, as an AllReduce
_step = lambda n: dict(n=n, **_STEP_KW, **ring_link(n))     # the DGX H100 cluster's ring link at n GPUs
_FLEET_KW = dict(n_gpus=FLEET_GPUS, years=YEARS, usd_per_gpu_hour=USD_PER_GPU_HOUR)
_ON_PREM_KW = dict(n_gpus=FLEET_GPUS, years=YEARS, capex_per_gpu=CAPEX_PER_GPU, watts_per_gpu=WATTS_PER_GPU,
                   pue=PUE, usd_per_kwh=USD_PER_KWH, staff_usd_per_gpu_year=STAFF_USD_PER_GPU_YEAR)
_BREAKEVEN_KW = dict(usd_per_gpu_hour=USD_PER_GPU_HOUR, **PLANT)
_CHEAPEST_KW = dict(n_gpus=FLEET_GPUS, years=YEARS, usd_per_gpu_hour=USD_PER_GPU_HOUR,
                    reserved_discount=RESERVED_DISCOUNT, **PLANT)



def _cheapest_domain():
    # A fleet and its prices, then a utilization within 20 % of one of that fleet's own decision points
    # (the reserved/on-demand tie at 1 - discount, the on-prem breakeven against on-demand, on-prem
    # meeting reserved), where a cost slightly off changes the answer, and the utilization alone tells
    # little (the points move with every price): no fixed threshold does much better than the most
    # common answer. Anchor: an exact tie of on-demand and reserved (U = 1 - discount, values exact in
    # binary), which goes to on-demand, the first in the tie-break order.
    # plants where energy is a real share of the cost (a cost model that gets energy wrong shows)
    plant = dict(_PLANT_DOMAIN, capex_per_gpu=decades(3, 5), usd_per_kwh=decades(-1.5, 0), watts_per_gpu=_f(300, 2_500))
    fleet = st.fixed_dictionaries(dict(n_gpus=_GPUS, years=_f(0.5, 8), usd_per_gpu_hour=decades(-0.3, 1),
                                       reserved_discount=_f(0, 0.7), **plant))

    def near(d):
        plant = {k: d[k] for k in _PLANT_DOMAIN}
        # on-prem's cost is affine in U: where it meets reserved's (which U does not change)
        at = lambda u: ref.on_prem_cost(1, d["years"], utilization=u, **plant)  # noqa: E731
        reserved = ref.reserved_cost(1, d["years"], d["usd_per_gpu_hour"], d["reserved_discount"])
        slope = at(1.0) - at(0.0)
        points = [1 - d["reserved_discount"], ref.breakeven_utilization(d["years"], d["usd_per_gpu_hour"], **plant),
                  (reserved - at(0.0)) / slope if slope > 0 else math.inf]
        points = [p for p in points if 0.02 < p < 1]
        if not points:
            return _f(0.02, 1).map(lambda u: {**d, "utilization": u})
        return st.tuples(st.sampled_from(points), _f(-0.08, 0.08)).map(
            lambda pu: {**d, "utilization": min(1.0, max(0.02, pu[0] * 10 ** pu[1]))})
    tie = dict(n_gpus=1, years=1.0, utilization=0.75, usd_per_gpu_hour=2.0, reserved_discount=0.25,
               capex_per_gpu=1e6, watts_per_gpu=700.0, pue=1.25, usd_per_kwh=0.125, staff_usd_per_gpu_year=0.0,
               idle_power_fraction=0.0)
    return anchored(fleet.flatmap(near).filter(_no_near_tie), tie)


FUNCTIONS = [
    spec.FunctionItem(
        "training_time_s", 2.0,
        [spec.Example(f"Act I: {TOTAL_FLOPS:.3g} FLOP (6ND, Chinchilla {PARAMS / 1e9:.0f}B) at one H100's pace, {MFU:.0%} MFU",
                      dict(total_flops=TOTAL_FLOPS, n_gpus=1, peak_flops=PEAK_FLOPS, mfu=MFU)),
         spec.Example(f"Act I: the same on {N_FLEET:,} H100s with perfect scaling",
                      dict(total_flops=TOTAL_FLOPS, n_gpus=N_FLEET, peak_flops=PEAK_FLOPS, mfu=MFU)),
         spec.Example(f"the source lab's arithmetic: {LAB_TOTAL_FLOPS:.2g} FLOP at {MFU:.0%} of the sparse "
                      f"{SPARSE_PEAK_FLOPS / 1e12:,.0f} TFLOP/s",
                      dict(total_flops=LAB_TOTAL_FLOPS, n_gpus=1, peak_flops=SPARSE_PEAK_FLOPS, mfu=MFU))],
        domain=st.fixed_dictionaries(dict(total_flops=decades(12, 27), n_gpus=_GPUS,
                                          peak_flops=decades(12, 16), mfu=_f(0.01, 1.0))),
        properties=_public("training_time_s")),
    spec.FunctionItem(
        "data_parallel_speedup", 4.0,
        [spec.Example(f"Act I: one {TOKENS_PER_STEP / 1e6:.0f}M-token step on {N_FLEET:,} H100s in DGX nodes",
                      _step(N_FLEET)),
         spec.Example(f"Act I: the same step on {FIT_GPUS} H100s, the fewest that hold the model", _step(FIT_GPUS)),
         spec.Example(f"Act I: the same step on {LARGE_FLEET:,} H100s, one sequence each", _step(LARGE_FLEET)),
         spec.Example("n = 1: nothing to exchange, S = 1", _step(1))],
        domain=st.fixed_dictionaries(dict(compute_s_1gpu=decades(-3, 6), n=st.one_of(st.integers(1, 64), st.integers(1, 65_536)),
                                          grad_bytes=st.one_of(decades(3, 13), _f(0, 1e12)),
                                          alpha_s=st.one_of(decades(-8, -3), _f(0, 1e-4)), bandwidth=decades(8, 13))),
        properties=_public("data_parallel_speedup") + [spec.Property(
            "more bandwidth never hurts", "A faster link can only shorten the AllReduce, so the speedup cannot fall.",
            st.fixed_dictionaries(dict(compute_s_1gpu=_f(1e-2, 1e5), n=st.integers(1, 16_384),
                                       grad_bytes=_f(0, 1e12), alpha_s=_f(0, 1e-4), bandwidth=_f(1e9, 1e12))),
            _more_bandwidth_never_slower, public=False)]),
    spec.FunctionItem(
        "scaling_efficiency", 1.0,
        [spec.Example(f"Act I: the speedup on {N_FLEET:,} H100s", dict(speedup=SPEEDUP, n=N_FLEET)),
         spec.Example(f"the source lab's default: {LAB_SPEEDUP:.0f}x on {LAB_N:,} GPUs", dict(speedup=LAB_SPEEDUP, n=LAB_N))],
        domain=st.fixed_dictionaries(dict(speedup=decades(-3, 5), n=st.one_of(st.integers(1, 64), st.integers(1, 200_000)))),
        properties=_public("scaling_efficiency")),
    spec.FunctionItem(
        "on_demand_cost", 2.0,
        [spec.Example(f"Act II: {FLEET_GPUS:,} GPUs, {YEARS} years, {UTILIZATION:.0%} busy",
                      dict(utilization=UTILIZATION, **_FLEET_KW)),
         spec.Example("Act II: running continuously (the failure state)", dict(utilization=FULL_UTILIZATION, **_FLEET_KW))],
        domain=st.fixed_dictionaries(dict(n_gpus=_GPUS, years=_YEARS, usd_per_gpu_hour=_PRICE, utilization=_FRACTION)),
        properties=_public("on_demand_cost")),
    spec.FunctionItem(
        "reserved_cost", 2.0,
        [spec.Example(f"Act II: {RESERVED_DISCOUNT:.0%} discount on every committed hour",
                      dict(discount=RESERVED_DISCOUNT, **_FLEET_KW))],
        domain=st.fixed_dictionaries(dict(n_gpus=_GPUS, years=_YEARS, usd_per_gpu_hour=_PRICE, discount=_FRACTION)),
        properties=_public("reserved_cost")),
    spec.FunctionItem(
        "on_prem_cost", 3.0,
        [spec.Example(f"Act II: on-prem at {UTILIZATION:.0%} utilization", dict(utilization=UTILIZATION, **_ON_PREM_KW)),
         spec.Example("Act II: on-prem running continuously", dict(utilization=FULL_UTILIZATION, **_ON_PREM_KW)),
         spec.Example(f"the source lab's reflection claim: idle GPUs draw {LAB_IDLE_POWER_FRACTION:.0%} of TDP",
                      dict(utilization=UTILIZATION, idle_power_fraction=LAB_IDLE_POWER_FRACTION, **_ON_PREM_KW))],
        domain=st.fixed_dictionaries(dict(n_gpus=_GPUS, years=_YEARS, utilization=_FRACTION, **_PLANT_DOMAIN)),
        properties=_public("on_prem_cost")),
    spec.FunctionItem(
        "breakeven_utilization", 3.0,
        [spec.Example(f"Act II: {YEARS} years at ${USD_PER_GPU_HOUR:.2f}/GPU-hour", dict(years=YEARS, **_BREAKEVEN_KW)),
         spec.Example(f"a {SHORT_YEARS}-year horizon: on-prem never pays off", dict(years=SHORT_YEARS, **_BREAKEVEN_KW)),
         spec.Example(f"a {LONG_YEARS}-year horizon", dict(years=LONG_YEARS, **_BREAKEVEN_KW))],
        # math.inf (a cloud hour cheaper than a busy GPU's energy) is checked by a property and the
        # hidden domain, not by a worked example: the released public tests write values with repr()
        # anchor: a price exactly the busy GPU's energy (1 kW x PUE 1 x 0.5 USD/kWh): never pays off
        domain=anchored(st.fixed_dictionaries(dict(years=st.one_of(_f(0.5, 8), decades(-1, 1.2)),
                                                   usd_per_gpu_hour=decades(-1.3, 1.3), **_PLANT_DOMAIN))
                        .filter(_not_near_no_breakeven),
                        dict(years=3.0, usd_per_gpu_hour=0.5, capex_per_gpu=30_000.0, watts_per_gpu=1000.0, pue=1.0,
                             usd_per_kwh=0.5, staff_usd_per_gpu_year=0.0, idle_power_fraction=0.0)),
        properties=_public("breakeven_utilization") + [spec.Property(
            "costs equal at the breakeven",
            "At the breakeven utilization on-demand and on-prem cost exactly the same.",
            st.fixed_dictionaries(dict(years=_f(0.5, 8), usd_per_gpu_hour=_f(0.5, 10), **_PLANT_DOMAIN)),
            _equal_cost_at_breakeven, public=False)]),
    spec.FunctionItem(
        "cheapest_option", 3.0,
        [spec.Example(f"Act II: {UTILIZATION:.0%} utilization", dict(utilization=UTILIZATION, **_CHEAPEST_KW)),
         spec.Example("Act II: running continuously", dict(utilization=FULL_UTILIZATION, **_CHEAPEST_KW)),
         spec.Example(f"a {LONG_YEARS}-year horizon at {UTILIZATION:.0%}",
                      dict(utilization=UTILIZATION, **{**_CHEAPEST_KW, "years": LONG_YEARS}))],
        domain=_cheapest_domain(),
        properties=_public("cheapest_option")),
]
