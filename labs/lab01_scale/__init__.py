"""Lab 01 — the scale illusion and fleet TCO (`lab01_scale`, stub `scaling.py`).

Source lab: `source_lab` below (Vol II Lab 01, The Scale Illusion).
Every number a student sees is computed here from reference/ at the scenario inputs below; the
changes against the source lab are listed in docs/errata/lab01_scale.md.
"""
from __future__ import annotations

import math
from functools import partial

from hypothesis import strategies as st

import reference.scaling as ref
from autograder.engine import spec
from reference import constants as C
from reference.collectives import ring_allreduce_time, training_step_flops

from labs.authoring import public_properties
from labs.lab01_scale import properties as public
from labs.lab01_scale.misconceptions import MISCONCEPTIONS

# --- Act I scenario: a Chinchilla-scale model (Hoffmann et al. 2022, arXiv:2203.15556) -----------
PARAMS = 70e9                  # Chinchilla 70B
TOKENS = 1.4e12                # its training set, 20 tokens per parameter
TOKENS_PER_STEP = 3e6          # Chinchilla's batch grew from 1.5M to 3M tokens (Table 4); we use 3M
MFU = 0.5                      # the lab's 50%, now of the dense peak (PaLM reached 46.2%)
PEAK_FLOPS = C.H100_PEAK_FLOPS_BF16
N_FLEET = 1000
GRAD_BYTES = PARAMS * C.FP16_BYTES            # bf16 gradients, all-reduced every step
ALPHA_S, BANDWIDTH = C.IB_ALPHA_S, C.IB_NDR400_BANDWIDTH  # one 400 Gb/s NDR port per GPU (DGX H100)
NDR_GBIT = BANDWIDTH * 8 / 1e9  # the port's rating in Gb/s, from the cited bytes/s
SECONDS_PER_DAY = 86400
SECONDS_PER_YEAR = C.HOURS_PER_YEAR * 3600
FLOPS_PER_PARAM_TOKEN = training_step_flops(1, 1)   # the 6 of 6ND, from the reference formula
LAB_TOTAL_FLOPS = 2.2e24       # the lab's "GPT-4 scale" figure (errata: not used for the story)
# Worked-example inputs (each formatted into its example's label, never typed twice)
NODE_GPUS = C.GPUS_PER_DGX_H100  # one DGX H100 node
LARGE_FLEET = 4096
LAB_SPEEDUP, LAB_N = 320.0, 1000  # the source lab's default speedup and cluster
LAB_IDLE_POWER_FRACTION = 0.5  # the source lab's reflection claim: idle GPUs draw half their TDP
SHORT_YEARS, LONG_YEARS = 1, 5
# Act I prediction: ranges of the speedup on N_FLEET GPUs; the key is the range holding the value
SPEEDUP_CUTS = (200, 400, 800)

TOTAL_FLOPS = training_step_flops(PARAMS, TOKENS)          # 6ND = 5.88e23 FLOP
STEP_FLOPS = training_step_flops(PARAMS, TOKENS_PER_STEP)
STEP_S_1GPU = ref.training_time_s(STEP_FLOPS, 1, PEAK_FLOPS, MFU)
SPEEDUP = ref.data_parallel_speedup(STEP_S_1GPU, N_FLEET, GRAD_BYTES, ALPHA_S, BANDWIDTH)
EFFICIENCY = ref.scaling_efficiency(SPEEDUP, N_FLEET)
YEARS_1GPU = ref.training_time_s(TOTAL_FLOPS, 1, PEAK_FLOPS, MFU) / SECONDS_PER_YEAR
IDEAL_DAYS = ref.training_time_s(TOTAL_FLOPS, N_FLEET, PEAK_FLOPS, MFU) / SECONDS_PER_DAY
REAL_DAYS = ref.training_time_s(TOTAL_FLOPS, 1, PEAK_FLOPS, MFU) / SPEEDUP / SECONDS_PER_DAY
RING_S_8 = ring_allreduce_time(GRAD_BYTES, 8, ALPHA_S, BANDWIDTH)
RING_S_FLEET = ring_allreduce_time(GRAD_BYTES, N_FLEET, ALPHA_S, BANDWIDTH)

# --- Act II scenario: the CFO's 3-year fleet (the lab's defaults, stated in the story) ----------
FLEET_GPUS = N_FLEET            # the VP's fleet of Act I
YEARS = 3
USD_PER_GPU_HOUR = 2.10        # on-demand list price
RESERVED_DISCOUNT = 0.35
CAPEX_PER_GPU = 40_000
WATTS_PER_GPU = C.H100_TDP_W
PUE = 1.4                      # facility / IT power, cooling included
USD_PER_KWH = 0.10
STAFF_USD_PER_ENGINEER = 200_000  # a year
GPUS_PER_ENGINEER = 100
STAFF_USD_PER_GPU_YEAR = STAFF_USD_PER_ENGINEER / GPUS_PER_ENGINEER
UTILIZATION = 0.60             # the scheduler's measured busy share: the question's stated utilization
BUDGET_USD = 50e6              # the board's cap on cloud spend: the failure state
LOW_UTILIZATION = 0.20         # the Act II reflection's example
FULL_UTILIZATION = 1.0         # the CFO's plan: the fleet runs continuously (the failure state)
TIE_SPREAD = 0.20              # Act II option design: "all three within 20%" holds below this spread
PLANT = dict(capex_per_gpu=CAPEX_PER_GPU, watts_per_gpu=WATTS_PER_GPU, pue=PUE, usd_per_kwh=USD_PER_KWH,
             staff_usd_per_gpu_year=STAFF_USD_PER_GPU_YEAR)


def on_demand_usd(utilization: float) -> float:
    return ref.on_demand_cost(FLEET_GPUS, YEARS, USD_PER_GPU_HOUR, utilization)


def on_prem_usd(utilization: float) -> float:
    return ref.on_prem_cost(FLEET_GPUS, YEARS, CAPEX_PER_GPU, WATTS_PER_GPU, PUE, USD_PER_KWH, utilization,
                            STAFF_USD_PER_GPU_YEAR)


def usd_per_productive_gpu_hour(total_usd: float, utilization: float) -> float:
    return total_usd / (FLEET_GPUS * YEARS * C.HOURS_PER_YEAR * utilization)


RESERVED_USD = ref.reserved_cost(FLEET_GPUS, YEARS, USD_PER_GPU_HOUR, RESERVED_DISCOUNT)
COSTS = {"on_demand": on_demand_usd(UTILIZATION), "reserved": RESERVED_USD, "on_prem": on_prem_usd(UTILIZATION)}
CHEAPEST = ref.cheapest_option(FLEET_GPUS, YEARS, UTILIZATION, USD_PER_GPU_HOUR, RESERVED_DISCOUNT, **PLANT)
SPREAD = (max(COSTS.values()) - min(COSTS.values())) / min(COSTS.values())
BREAKEVEN = ref.breakeven_utilization(YEARS, USD_PER_GPU_HOUR, **PLANT)
FIXED_USD = on_prem_usd(0.0)                      # capex + staff: what an idle fleet costs
ENERGY_USD_PER_HOUR = (on_prem_usd(FULL_UTILIZATION) - FIXED_USD) / (FLEET_GPUS * YEARS * C.HOURS_PER_YEAR)
ON_DEMAND_FULL_USD = on_demand_usd(FULL_UTILIZATION)
BUDGET_UTILIZATION = BUDGET_USD / ON_DEMAND_FULL_USD  # on-demand is linear in U: the highest U within budget


def _m(usd: float) -> str:
    return f"${usd / 1e6:,.1f}M"


# --- questions -----------------------------------------------------------------------------------
def _range_texts() -> list[str]:
    lo, mid, hi = SPEEDUP_CUTS
    n = N_FLEET
    return [f"{hi:,}x or more: near-linear scaling (efficiency {hi / n:.0%}+); a {NDR_GBIT:.0f} Gb/s fabric keeps up",
            f"{mid:,}-{hi:,}x: efficiency {mid / n:.0%}-{hi / n:.0%}, the gradient exchange mostly hides behind compute",
            f"{lo:,}-{mid:,}x: efficiency {lo / n:.0%}-{mid / n:.0%}, synchronisation costs about as much as the compute",
            f"under {lo:,}x: efficiency below {lo / n:.0%}, communication dominates every step"]


def _range_index(speedup: float) -> int:
    lo, mid, hi = SPEEDUP_CUTS
    return 0 if speedup >= hi else 1 if speedup >= mid else 2 if speedup >= lo else 3


# offsets spread the keys over B-D: the notebook prompt shows `qid = "A"` as its format example
_act1_options, _act1_key = spec.letters(_range_texts(), _range_index(SPEEDUP), offset=0)

_reflect1_texts = [
    "GPUs run slower when connected over a network",
    f"Gradient synchronisation: the ring AllReduce of the {GRAD_BYTES / 1e9:,.0f} GB gradient takes about as long "
    "at any N, while each GPU's share of the compute shrinks as 1/N",
    "Power delivery limits per-GPU performance at large cluster sizes",
    "Larger models always have lower MFU regardless of cluster size",
]
# the premise of the key: the AllReduce hardly changes from one node to the fleet, compute shrinks 1/N
assert RING_S_FLEET < 1.2 * RING_S_8 and STEP_S_1GPU / N_FLEET < RING_S_FLEET
_reflect1_options, _reflect1_key = spec.letters(_reflect1_texts, 1, offset=2)  # conceptual: index 1, premise asserted above

_act2_texts = [
    "On-demand is cheapest: you pay only for the hours the fleet is busy",
    f"On-prem is cheapest: after the purchase a busy GPU-hour costs only ${ENERGY_USD_PER_HOUR:.3f} of energy",
    "Reserved is cheapest: the discount on every committed hour beats list price for the hours used",
    f"All three paths are within {TIE_SPREAD:.0%} of each other over {YEARS} years",
]
_act2_index = 3 if SPREAD < TIE_SPREAD else {"on_demand": 0, "on_prem": 1, "reserved": 2}[CHEAPEST]
_act2_options, _act2_key = spec.letters(_act2_texts, _act2_index, offset=3)

_reflect2_texts = [
    "On-prem hardware degrades faster at low utilization, increasing maintenance costs",
    f"Capex and staff ({_m(FIXED_USD)}) are paid whether the GPUs are busy or idle, so fewer busy hours "
    "carry the same fixed cost",
    "On-demand pricing scales with utilization, so both have proportional costs",
    "Idle GPUs keep drawing full power, so the on-prem energy bill does not fall with utilization",
]
_OP_LOW = usd_per_productive_gpu_hour(on_prem_usd(LOW_UTILIZATION), LOW_UTILIZATION)
_OP_FULL = usd_per_productive_gpu_hour(on_prem_usd(FULL_UTILIZATION), FULL_UTILIZATION)
# Conceptual reflection, key chosen by hand (index 1, the fixed cost); its premises, checked: the fixed
# capex + staff is most of the bill at low utilization, and energy does fall with utilization (option 3 false)
assert FIXED_USD > 0.5 * on_prem_usd(LOW_UTILIZATION) and on_prem_usd(LOW_UTILIZATION) < on_prem_usd(FULL_UTILIZATION)
_reflect2_options, _reflect2_key = spec.letters(_reflect2_texts, 1, offset=3)

QUESTIONS = [
    spec.Question(
        "act1_prediction", "prediction",
        f"With {N_FLEET:,} H100s instead of 1, what speedup of one training step can the VP realistically expect "
        f"(data parallel, {GRAD_BYTES / 1e9:,.0f} GB of gradients all-reduced over {NDR_GBIT:.0f} Gb/s NDR every step)?",
        _act1_options, _act1_key, 1.0,
        hint="Split one step into two parts: the compute, which divides by N, and the ring AllReduce of the "
             f"gradients, whose time hardly depends on N. Estimate both at N = {N_FLEET:,} before you pick a range."),
    spec.Question(
        "act1_reflection", "reflection",
        "What is the primary cause of sub-linear scaling in a large data-parallel GPU cluster?",
        _reflect1_options, _reflect1_key, 1.0,
        hint="In your instrument, which part of a step shrinks as you add GPUs, and which part does not? "
             "Per-GPU speed, power and MFU are the same at every N in this model."),
    spec.Question(
        "act2_prediction", "prediction",
        f"For a {FLEET_GPUS:,}-GPU fleet running {YEARS} years at {UTILIZATION:.0%} utilization, which "
        "infrastructure path has the lowest total cost of ownership?",
        _act2_options, _act2_key, 1.0,
        hint="Reserved bills every hour, busy or idle, at (1 - discount) of list price; on-demand bills only the "
             "busy share. Compare those two first, then compare the cheaper with on-prem's fixed capex and staff."),
    spec.Question(
        "act2_reflection", "reflection",
        f"On-demand costs ${USD_PER_GPU_HOUR:.2f} per productive GPU-hour at any utilization. On-prem costs "
        f"${_OP_LOW:.2f} per productive GPU-hour at {LOW_UTILIZATION:.0%} utilization and ${_OP_FULL:.2f} at "
        f"{FULL_UTILIZATION:.0%}. "
        "Why does utilization change on-prem's cost per productive GPU-hour so much?",
        _reflect2_options, _reflect2_key, 1.0,
        hint="Split on-prem's bill into what it pays whether or not a GPU works and what it pays only for busy "
             "hours. How large is each part in your cost-versus-utilization plot?"),
]


# --- graded functions ----------------------------------------------------------------------------
_props = partial(public_properties, public.PROPERTIES)


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


_PLANT_DOMAIN = dict(capex_per_gpu=_f(5_000, 80_000), watts_per_gpu=_f(200, 1_500), pue=_f(1.05, 2.0),
                     usd_per_kwh=_f(0.03, 0.40), staff_usd_per_gpu_year=_f(0, 10_000),
                     idle_power_fraction=_f(0, 0.6))


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


_STEP_KW = dict(compute_s_1gpu=STEP_S_1GPU, grad_bytes=GRAD_BYTES, alpha_s=ALPHA_S, bandwidth=BANDWIDTH)
_FLEET_KW = dict(n_gpus=FLEET_GPUS, years=YEARS, usd_per_gpu_hour=USD_PER_GPU_HOUR)
_ON_PREM_KW = dict(n_gpus=FLEET_GPUS, years=YEARS, capex_per_gpu=CAPEX_PER_GPU, watts_per_gpu=WATTS_PER_GPU,
                   pue=PUE, usd_per_kwh=USD_PER_KWH, staff_usd_per_gpu_year=STAFF_USD_PER_GPU_YEAR)
_BREAKEVEN_KW = dict(usd_per_gpu_hour=USD_PER_GPU_HOUR, **PLANT)
_CHEAPEST_KW = dict(n_gpus=FLEET_GPUS, years=YEARS, usd_per_gpu_hour=USD_PER_GPU_HOUR,
                    reserved_discount=RESERVED_DISCOUNT, **PLANT)

FUNCTIONS = [
    spec.FunctionItem(
        "training_time_s", 2.0,
        [spec.Example(f"Act I: {TOTAL_FLOPS:.3g} FLOP (6ND, Chinchilla {PARAMS / 1e9:.0f}B) on one H100 at {MFU:.0%} MFU",
                      dict(total_flops=TOTAL_FLOPS, n_gpus=1, peak_flops=PEAK_FLOPS, mfu=MFU)),
         spec.Example(f"Act I: the same on {N_FLEET:,} H100s with perfect scaling",
                      dict(total_flops=TOTAL_FLOPS, n_gpus=N_FLEET, peak_flops=PEAK_FLOPS, mfu=MFU)),
         spec.Example(f"the source lab's arithmetic: {LAB_TOTAL_FLOPS:.2g} FLOP at {MFU:.0%} of the sparse "
                      f"{C.H100_PEAK_FLOPS_BF16_SPARSE / 1e12:,.0f} TFLOP/s",
                      dict(total_flops=LAB_TOTAL_FLOPS, n_gpus=1, peak_flops=C.H100_PEAK_FLOPS_BF16_SPARSE, mfu=MFU))],
        domain=st.fixed_dictionaries(dict(total_flops=_f(1e15, 1e26), n_gpus=st.integers(1, 50_000),
                                          peak_flops=_f(1e13, 5e15), mfu=_f(0.05, 1.0))),
        properties=_props("training_time_s")),
    spec.FunctionItem(
        "data_parallel_speedup", 4.0,
        [spec.Example(f"Act I: one {TOKENS_PER_STEP / 1e6:.0f}M-token step on {N_FLEET:,} H100s, NDR {NDR_GBIT:.0f} Gb/s",
                      dict(n=N_FLEET, **_STEP_KW)),
         spec.Example(f"Act I: the same step on {NODE_GPUS} H100s over NDR", dict(n=NODE_GPUS, **_STEP_KW)),
         spec.Example(f"Act I: the same step on {LARGE_FLEET:,} H100s", dict(n=LARGE_FLEET, **_STEP_KW)),
         spec.Example("one GPU: no AllReduce", dict(n=1, **_STEP_KW))],
        domain=st.fixed_dictionaries(dict(compute_s_1gpu=_f(1e-2, 1e5), n=st.integers(1, 16_384),
                                          grad_bytes=_f(0, 1e12), alpha_s=_f(0, 1e-4), bandwidth=_f(1e9, 1e12))),
        properties=_props("data_parallel_speedup") + [spec.Property(
            "more bandwidth never hurts", "A faster link can only shorten the AllReduce, so the speedup cannot fall.",
            st.fixed_dictionaries(dict(compute_s_1gpu=_f(1e-2, 1e5), n=st.integers(1, 16_384),
                                       grad_bytes=_f(0, 1e12), alpha_s=_f(0, 1e-4), bandwidth=_f(1e9, 1e12))),
            _more_bandwidth_never_slower, public=False)]),
    spec.FunctionItem(
        "scaling_efficiency", 1.0,
        [spec.Example(f"Act I: the speedup on {N_FLEET:,} H100s", dict(speedup=SPEEDUP, n=N_FLEET)),
         spec.Example(f"the source lab's default: {LAB_SPEEDUP:.0f}x on {LAB_N:,} GPUs", dict(speedup=LAB_SPEEDUP, n=LAB_N))],
        domain=st.fixed_dictionaries(dict(speedup=_f(1e-3, 1e5), n=st.integers(1, 100_000))),
        properties=_props("scaling_efficiency")),
    spec.FunctionItem(
        "on_demand_cost", 2.0,
        [spec.Example(f"Act II: {FLEET_GPUS:,} GPUs, {YEARS} years, {UTILIZATION:.0%} busy",
                      dict(utilization=UTILIZATION, **_FLEET_KW)),
         spec.Example("Act II: running continuously (the failure state)", dict(utilization=FULL_UTILIZATION, **_FLEET_KW))],
        domain=st.fixed_dictionaries(dict(n_gpus=st.integers(1, 10_000), years=_f(0, 10),
                                          usd_per_gpu_hour=_f(0, 20), utilization=_f(0, 1))),
        properties=_props("on_demand_cost")),
    spec.FunctionItem(
        "reserved_cost", 2.0,
        [spec.Example(f"Act II: {RESERVED_DISCOUNT:.0%} discount on every committed hour",
                      dict(discount=RESERVED_DISCOUNT, **_FLEET_KW))],
        domain=st.fixed_dictionaries(dict(n_gpus=st.integers(1, 10_000), years=_f(0, 10),
                                          usd_per_gpu_hour=_f(0, 20), discount=_f(0, 1))),
        properties=_props("reserved_cost")),
    spec.FunctionItem(
        "on_prem_cost", 3.0,
        [spec.Example(f"Act II: on-prem at {UTILIZATION:.0%} utilization", dict(utilization=UTILIZATION, **_ON_PREM_KW)),
         spec.Example("Act II: on-prem running continuously", dict(utilization=FULL_UTILIZATION, **_ON_PREM_KW)),
         spec.Example(f"the source lab's reflection claim: idle GPUs draw {LAB_IDLE_POWER_FRACTION:.0%} of TDP",
                      dict(utilization=UTILIZATION, idle_power_fraction=LAB_IDLE_POWER_FRACTION, **_ON_PREM_KW))],
        domain=st.fixed_dictionaries(dict(n_gpus=st.integers(1, 10_000), years=_f(0, 10), utilization=_f(0, 1),
                                          **_PLANT_DOMAIN)),
        properties=_props("on_prem_cost")),
    spec.FunctionItem(
        "breakeven_utilization", 3.0,
        [spec.Example(f"Act II: {YEARS} years at ${USD_PER_GPU_HOUR:.2f}/GPU-hour", dict(years=YEARS, **_BREAKEVEN_KW)),
         spec.Example(f"a {SHORT_YEARS}-year horizon: on-prem never pays off", dict(years=SHORT_YEARS, **_BREAKEVEN_KW)),
         spec.Example(f"a {LONG_YEARS}-year horizon", dict(years=LONG_YEARS, **_BREAKEVEN_KW))],
        # math.inf (a cloud hour cheaper than a busy GPU's energy) is checked by a property and the
        # hidden domain, not by a worked example: the released public tests write values with repr()
        domain=st.fixed_dictionaries(dict(years=_f(0.5, 8), usd_per_gpu_hour=_f(0.05, 10), **_PLANT_DOMAIN))
                 .filter(_not_near_no_breakeven),
        properties=_props("breakeven_utilization") + [spec.Property(
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
        domain=st.fixed_dictionaries(dict(n_gpus=st.integers(1, 10_000), years=_f(0.5, 8), utilization=_f(0.02, 1),
                                          usd_per_gpu_hour=_f(0.5, 8), reserved_discount=_f(0, 0.7),
                                          **_PLANT_DOMAIN)).filter(_no_near_tie),
        properties=_props("cheapest_option")),
]


# --- the notebook --------------------------------------------------------------------------------
_ACT1_SETUP = f"""\
# Scenario (from the story above)
step_flops = {STEP_FLOPS!r}   # {FLOPS_PER_PARAM_TOKEN:g} x {PARAMS:.3g} params x {TOKENS_PER_STEP:.3g} tokens per step
total_flops = {TOTAL_FLOPS!r}  # {FLOPS_PER_PARAM_TOKEN:g} x {PARAMS:.3g} params x {TOKENS:.3g} tokens
grad_bytes = {GRAD_BYTES!r}   # {PARAMS:.3g} params x {C.FP16_BYTES} bytes (bf16 gradients)
mfu = {MFU!r}
peak, alpha_s, bandwidth = constants.H100_PEAK_FLOPS_BF16, constants.IB_ALPHA_S, constants.IB_NDR400_BANDWIDTH
step_s_1gpu = scaling.training_time_s(step_flops, 1, peak, mfu)   # one step's compute on one GPU
"""

_ACT1_INSTRUMENT = _ACT1_SETUP + f"""
ns = sorted(set([2 ** k for k in range(13)] + [{N_FLEET}]))
speedups = [scaling.data_parallel_speedup(step_s_1gpu, n, grad_bytes, alpha_s, bandwidth) for n in ns]
efficiencies = [scaling.scaling_efficiency(s, n) for s, n in zip(speedups, ns)]

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
ax1.loglog(ns, ns, "k--", label="ideal: speedup = N")
ax1.loglog(ns, speedups, "o-", label="data parallel, ring AllReduce over NDR")
ax1.set_xlabel("GPUs N"); ax1.set_ylabel("speedup of one step"); ax1.legend(); ax1.grid(True, which="both", alpha=0.3)
ax2.semilogx(ns, [1.0] * len(ns), "k--", label="ideal: efficiency 1")
ax2.semilogx(ns, efficiencies, "o-", label="speedup / N")
ax2.set_xlabel("GPUs N"); ax2.set_ylabel("scaling efficiency"); ax2.set_ylim(0, 1.05); ax2.legend(); ax2.grid(True, alpha=0.3)
plt.tight_layout(); plt.show()
"""

_ACT1_REALITY = _ACT1_SETUP + f"""
n = {N_FLEET}
speedup = scaling.data_parallel_speedup(step_s_1gpu, n, grad_bytes, alpha_s, bandwidth)
days_ideal = scaling.training_time_s(total_flops, n, peak, mfu) / {SECONDS_PER_DAY}
days_real = scaling.training_time_s(total_flops, 1, peak, mfu) / speedup / {SECONDS_PER_DAY}
print(f"You predicted: {{act1_prediction}}")
print(f"Your functions: {{speedup:,.0f}}x on {{n:,}} GPUs, scaling efficiency {{scaling.scaling_efficiency(speedup, n):.1%}}")
print(f"Training takes {{days_real:,.1f}} days, not the {{days_ideal:,.1f}} days of perfect scaling.")
step_s = step_s_1gpu / speedup                     # one step on n GPUs
print(f"One step on {{n:,}} GPUs: {{step_s_1gpu / n:.2f}} s of compute per GPU + {{step_s - step_s_1gpu / n:.2f}} s of AllReduce")
"""

_ACT2_SETUP = f"""\
# Scenario (from the CFO's message)
n_gpus, years, usd_per_gpu_hour, discount = {FLEET_GPUS}, {YEARS}, {USD_PER_GPU_HOUR!r}, {RESERVED_DISCOUNT!r}
plant = dict(capex_per_gpu={CAPEX_PER_GPU!r}, watts_per_gpu=constants.H100_TDP_W, pue={PUE!r},
             usd_per_kwh={USD_PER_KWH!r}, staff_usd_per_gpu_year={STAFF_USD_PER_ENGINEER!r} / {GPUS_PER_ENGINEER!r})
budget_usd = {BUDGET_USD!r}

def costs_usd(u):
    return {{"on_demand": scaling.on_demand_cost(n_gpus, years, usd_per_gpu_hour, u),
            "reserved": scaling.reserved_cost(n_gpus, years, usd_per_gpu_hour, discount),
            "on_prem": scaling.on_prem_cost(n_gpus, years, plant["capex_per_gpu"], plant["watts_per_gpu"],
                                            plant["pue"], plant["usd_per_kwh"], u, plant["staff_usd_per_gpu_year"])}}
"""

_ACT2_INSTRUMENT = _ACT2_SETUP + """
us = np.linspace(0, 1, 101)
curves = [costs_usd(float(u)) for u in us]
breakeven = scaling.breakeven_utilization(years, usd_per_gpu_hour, **plant)

fig, ax = plt.subplots(figsize=(9, 5))
for path in ("on_demand", "reserved", "on_prem"):
    ax.plot(us, [c[path] / 1e6 for c in curves], label=path)
ax.axhline(budget_usd / 1e6, color="red", linestyle=":", label="cloud budget")
if breakeven <= 1:
    ax.axvline(breakeven, color="gray", linestyle="--", label=f"on-demand = on-prem at {breakeven:.0%}")
else:
    ax.set_title(f"on-prem never beats on-demand within 100% utilization (breakeven {breakeven:.2f})")
ax.set_xlabel("utilization (fraction of hours busy)"); ax.set_ylabel(f"{years}-year TCO, $M")
ax.legend(); ax.grid(True, alpha=0.3); plt.show()
"""

_ACT2_REALITY = _ACT2_SETUP + f"""
u, u_full = {UTILIZATION!r}, {FULL_UTILIZATION!r}
for path, usd in costs_usd(u).items():
    print(f"{{path:>9}}: ${{usd / 1e6:,.1f}}M")
print(f"You predicted: {{act2_prediction}}")
print(f"Your cheapest_option at {{u:.0%}}: {{scaling.cheapest_option(n_gpus, years, u, usd_per_gpu_hour, discount, **plant)}}")

# The failure state: the CFO's plan to run the fleet continuously
full = scaling.on_demand_cost(n_gpus, years, usd_per_gpu_hour, u_full)
if full > budget_usd:
    print(f"OVER BUDGET: on-demand running continuously costs ${{full / 1e6:,.1f}}M against ${{budget_usd / 1e6:,.0f}}M;")
    print(f"on-demand stays within budget only below {{budget_usd / full:.1%}} utilization.")
else:
    print(f"Within budget: on-demand running continuously costs ${{full / 1e6:,.1f}}M.")
"""

_STORY_1 = f"""\
# Lab 01 — The scale illusion and fleet TCO

## Act I: the scale illusion

*From the VP of Engineering:* "We need to train a {PARAMS / 1e9:.0f}B-parameter model on {TOKENS / 1e12:.1f}T tokens,
Chinchilla's recipe. That is {FLOPS_PER_PARAM_TOKEN:g} x parameters x tokens = {TOTAL_FLOPS:.3g} FLOP. One H100 at {MFU:.0%} of its dense
{PEAK_FLOPS / 1e12:,.0f} TFLOP/s would need {YEARS_1GPU:.1f} years. We can get {N_FLEET:,} H100s, so I expect
{IDEAL_DAYS:.1f} days. Is that realistic?"

The cluster trains data parallel: every GPU holds the whole model, computes its share of each
{TOKENS_PER_STEP / 1e6:.0f}M-token step, then the GPUs all-reduce the {GRAD_BYTES / 1e9:,.0f} GB of bf16 gradients
with a ring AllReduce over one InfiniBand NDR port per GPU ({NDR_GBIT:.0f} Gb/s = {BANDWIDTH / 1e9:.0f} GB/s per direction,
{ALPHA_S * 1e6:.1f} us per message). The compute of a step divides by N; the AllReduce does not.
Implement `training_time_s`, `data_parallel_speedup` and `scaling_efficiency` in `scaling.py`, then predict.
"""

_FAILURE_1 = """\
Look at the efficiency curve: it is not a constant. The readout above splits one step on your fleet into
the compute each GPU does and the time the AllReduce adds. Which of the two did adding GPUs shrink?
"""

_STORY_2 = f"""\
## Act II: the fleet cost model

*From the CFO:* "We will train and serve a {PARAMS / 1e9:.0f}B model for {YEARS} years on {FLEET_GPUS:,} H100s. Our
scheduler logs say the fleet is busy {UTILIZATION:.0%} of the hours. The options:
(1) on-demand cloud at ${USD_PER_GPU_HOUR:.2f} per GPU-hour, paying only for busy hours;
(2) reserved cloud at a {RESERVED_DISCOUNT:.0%} discount, paying for every committed hour;
(3) buying the cluster at ${CAPEX_PER_GPU:,.0f} per GPU, plus {WATTS_PER_GPU:.0f} W per busy GPU at
${USD_PER_KWH:.2f}/kWh with a PUE of {PUE} (cooling included), plus staff at ${STAFF_USD_PER_ENGINEER:,.0f} a year
per {GPUS_PER_ENGINEER} GPUs (${STAFF_USD_PER_GPU_YEAR:,.0f} per GPU-year).
The board caps cloud spend at {_m(BUDGET_USD)}. Which path is cheapest, and at what utilization does buying pay off?"

Implement `on_demand_cost`, `reserved_cost`, `on_prem_cost`, `breakeven_utilization` and `cheapest_option`, then
predict.
"""

_FAILURE_2 = f"""\
**Failure state.** The board caps cloud spend at {_m(BUDGET_USD)}. The readout above shows whether on-demand
stays under it if the fleet runs continuously, and the highest utilization at which it does.
"""

NOTEBOOK = [
    spec.Markdown(_STORY_1),
    spec.Answer("act1_prediction"),
    spec.Code(_ACT1_INSTRUMENT, requires=("act1_prediction",)),
    spec.Code(_ACT1_REALITY, requires=("act1_prediction",)),
    spec.Markdown(_FAILURE_1),
    spec.Answer("act1_reflection"),
    spec.Markdown(_STORY_2),
    spec.Answer("act2_prediction"),
    spec.Code(_ACT2_INSTRUMENT, requires=("act2_prediction",)),
    spec.Code(_ACT2_REALITY, requires=("act2_prediction",)),
    spec.Markdown(_FAILURE_2),
    spec.Answer("act2_reflection"),
    spec.FunctionGrades(),
]

from labs.lab01_scale.challenges import CHALLENGES  # noqa: E402 (it reads the scenario above)

ASSIGNMENT = spec.Assignment(
    id="lab01_scale",
    title="Lab 01 — The scale illusion and fleet TCO",
    module="scaling",
    reference=ref,
    functions=FUNCTIONS,
    questions=QUESTIONS,
    notebook=NOTEBOOK,
    source_lab=("Vol II Lab 01, The Scale Illusion: "
                "the Lab 01 Marimo notebook in labs/vol2/ of https://github.com/harvard-edge/cs249r_book"),
    misconceptions=MISCONCEPTIONS,
    challenges=CHALLENGES,
)
