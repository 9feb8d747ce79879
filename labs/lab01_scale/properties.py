"""Public properties of Lab 01 (scaling.py), shipped to students as the public property checks.

Standalone on purpose: stdlib + hypothesis only, no reference. Each check calls the student's
function `f` with keyword arguments and raises AssertionError with a short message.
"""
import math

from hypothesis import strategies as st

HOURS_PER_YEAR = 8760        # as in constants.py: 365 x 24, the cloud price-sheet year
OPTIONS = ("on_demand", "reserved", "on_prem")


def _f(lo, hi):
    # no subnormals: a 1e-320 utilisation loses its digits in any product, and proves nothing
    return st.floats(lo, hi, allow_subnormal=False)


def _close(a, b, rel=1e-9, abs_=1e-9):
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


# --- strategies: realistic valid inputs ----------------------------------------------------------
_TRAIN = dict(total_flops=_f(1e15, 1e26), n_gpus=st.integers(1, 50_000),
              peak_flops=_f(1e12, 5e15), mfu=_f(0.1, 1.0))
_STEP = dict(compute_s_1gpu=_f(1e-3, 1e5), n=st.integers(1, 16_384), grad_bytes=_f(0, 1e12),
             alpha_s=_f(0, 1e-4), bandwidth=_f(1e9, 1e12))
_FLEET = dict(n_gpus=st.integers(1, 10_000), years=_f(0, 10), usd_per_gpu_hour=_f(0, 20))
_PLANT = dict(capex_per_gpu=_f(0, 100_000), watts_per_gpu=_f(0, 2_000), pue=_f(1, 3),
              usd_per_kwh=_f(0, 0.5), staff_usd_per_gpu_year=_f(0, 50_000), idle_power_fraction=_f(0, 1))


def _dicts(**strategies):
    return st.fixed_dictionaries(strategies)


# --- training_time_s -----------------------------------------------------------------------------
def _halves_with_double_gpus(f, d):
    one, two = f(**d), f(**{**d, "n_gpus": 2 * d["n_gpus"]})
    assert _close(two, one / 2), f"{d['n_gpus']} GPUs: {one} s, twice as many: {two} s (expected half)"


def _inverse_in_mfu(f, d):
    full, half = f(**d), f(**{**d, "mfu": d["mfu"] / 2})
    assert _close(half, 2 * full), f"mfu {d['mfu']}: {full} s, mfu halved: {half} s (expected double)"


def _one_gpu_second(f, d):
    # peak_flops * mfu FLOP of work on one GPU is exactly one second
    t = f(total_flops=d["peak_flops"] * d["mfu"], n_gpus=1, peak_flops=d["peak_flops"], mfu=d["mfu"])
    assert _close(t, 1.0), f"one second of work at peak x mfu returned {t} (seconds expected, not days or years)"


# --- data_parallel_speedup -----------------------------------------------------------------------
def _one_gpu_no_speedup(f, d):
    s = f(**{**d, "n": 1})
    assert _close(s, 1.0), f"one GPU must give speedup 1 (no AllReduce), got {s}"


def _at_most_n(f, d):
    s = f(**d)
    assert 0 < s <= d["n"] * (1 + 1e-9), f"speedup {s} on {d['n']} GPUs is outside (0, n]"


def _linear_when_comm_free(f, d):
    s = f(**{**d, "grad_bytes": 0.0, "alpha_s": 0.0})
    assert _close(s, d["n"]), f"with free communication {d['n']} GPUs must give {d['n']}x, got {s}"


def _bounded_by_gradient_transfer(f, d):
    # with n >= 2 every step moves at least the whole gradient once (the AllReduce lower bound,
    # Patarasuk & Yuan 2009), so a step never takes less than grad_bytes / bandwidth
    n = max(2, d["n"])
    s = f(**{**d, "n": n})
    bound = d["compute_s_1gpu"] / (d["grad_bytes"] / d["bandwidth"])
    assert s <= bound * (1 + 1e-9), (f"speedup {s} on {n} GPUs beats compute_s_1gpu / (grad_bytes / bandwidth)"
                                     f" = {bound}: the gradient exchange cannot shrink with n")


# --- scaling_efficiency --------------------------------------------------------------------------
def _linear_is_one(f, d):
    e = f(speedup=float(d["n"]), n=d["n"])
    assert _close(e, 1.0), f"speedup {d['n']} on {d['n']} GPUs is perfect scaling (1.0, a fraction), got {e}"


def _recovers_speedup(f, d):
    e = f(**d)
    assert _close(e * d["n"], d["speedup"]), f"efficiency {e} x n {d['n']} should give the speedup {d['speedup']}"


# --- on_demand_cost ------------------------------------------------------------------------------
def _idle_is_free(f, d):
    c = f(**{**d, "utilization": 0.0})
    assert c == 0, f"on-demand at 0% utilization pays for no hours, got {c}"


def _linear_in_utilization(f, d):
    c, full = f(**d), f(**{**d, "utilization": 1.0})
    assert _close(c, d["utilization"] * full, abs_=1e-6), (
        f"utilization {d['utilization']}: {c} USD, should be that fraction of the full-use cost {full}")


def _one_gpu_hour_costs_price(f, d):
    c = f(n_gpus=1, years=1 / HOURS_PER_YEAR, usd_per_gpu_hour=d["usd_per_gpu_hour"], utilization=1.0)
    assert _close(c, d["usd_per_gpu_hour"]), f"one busy GPU-hour should cost the hourly price {d['usd_per_gpu_hour']} USD, got {c}"


# --- reserved_cost -------------------------------------------------------------------------------
def _reserved_gpu_hour(f, d):
    c = f(n_gpus=1, years=1 / HOURS_PER_YEAR, usd_per_gpu_hour=d["usd_per_gpu_hour"], discount=0.0)
    assert _close(c, d["usd_per_gpu_hour"]), f"one undiscounted reserved GPU-hour should cost {d['usd_per_gpu_hour']} USD, got {c}"


def _discount_scales_bill(f, d):
    c, list_price = f(**d), f(**{**d, "discount": 0.0})
    assert _close(c, (1 - d["discount"]) * list_price, abs_=1e-6), (
        f"discount {d['discount']}: {c} USD, should be (1 - discount) x the undiscounted {list_price}")


def _proportional_to_years(f, d):
    one, two = f(**d), f(**{**d, "years": 2 * d["years"]})
    assert _close(two, 2 * one, abs_=1e-6), f"{d['years']} years: {one} USD, twice as long: {two} USD"


# --- on_prem_cost --------------------------------------------------------------------------------
def _capex_at_zero_years(f, d):
    c = f(**{**d, "years": 0.0})
    assert _close(c, d["n_gpus"] * d["capex_per_gpu"]), f"after 0 years only the purchase is paid ({d['n_gpus'] * d['capex_per_gpu']} USD), got {c}"


def _affine_in_utilization(f, d):
    lo, hi, mid = f(**{**d, "utilization": 0.0}), f(**{**d, "utilization": 1.0}), f(**d)
    u = d["utilization"]
    assert _close(mid, lo + u * (hi - lo), rel=1e-8, abs_=1e-3), (
        f"cost {mid} at utilization {u} is not on the line from {lo} (idle) to {hi} (busy)")


def _full_idle_draw_ignores_utilization(f, d):
    d = {**d, "idle_power_fraction": 1.0}
    busy, idle = f(**{**d, "utilization": 1.0}), f(**{**d, "utilization": 0.0})
    assert _close(busy, idle, abs_=1e-3), f"if an idle GPU draws full power, utilization cannot matter: {idle} vs {busy}"


def _busy_gpu_hour_is_energy(f, d):
    c = f(n_gpus=1, years=1 / HOURS_PER_YEAR, capex_per_gpu=0.0, watts_per_gpu=d["watts_per_gpu"], pue=d["pue"],
          usd_per_kwh=d["usd_per_kwh"], utilization=1.0, staff_usd_per_gpu_year=0.0, idle_power_fraction=0.0)
    energy = d["watts_per_gpu"] / 1000 * d["pue"] * d["usd_per_kwh"]
    assert _close(c, energy), f"one busy GPU-hour without capex or staff costs kW x PUE x USD/kWh = {energy} USD, got {c}"


# --- breakeven_utilization -----------------------------------------------------------------------
def _energy_cost_per_hour(d):
    return d["watts_per_gpu"] / 1000 * d["pue"] * d["usd_per_kwh"] * (1 - d["idle_power_fraction"])


def _never_when_price_below_energy(f, d):
    price = _energy_cost_per_hour(d) * d["price_share"]  # at most the marginal energy of a busy GPU
    kw = {k: v for k, v in d.items() if k != "price_share"}
    u = f(**{**kw, "usd_per_gpu_hour": price})
    assert u == math.inf, f"a cloud hour at {price} USD does not cover a busy GPU's energy: no breakeven (math.inf), got {u}"


def _falls_with_cloud_price(f, d):
    cheap, dear = f(**d), f(**{**d, "usd_per_gpu_hour": 2 * d["usd_per_gpu_hour"]})
    assert dear <= cheap * (1 + 1e-9), f"doubling the cloud price raised the breakeven: {cheap} -> {dear}"


def _rises_with_capex(f, d):
    low, high = f(**d), f(**{**d, "capex_per_gpu": d["capex_per_gpu"] + 10_000})
    assert high >= low * (1 - 1e-9), f"adding 10,000 USD of capex per GPU lowered the breakeven: {low} -> {high}"


def _zero_without_fixed_cost(f, d):
    kw = {**d, "capex_per_gpu": 0.0, "staff_usd_per_gpu_year": 0.0, "idle_power_fraction": 0.0}
    u = f(**kw)
    assert _close(u, 0.0), f"with no capex, staff or idle draw on-prem is never dearer: breakeven 0, got {u}"


# --- cheapest_option -----------------------------------------------------------------------------
def _one_of_three(f, d):
    r = f(**d)
    assert r in OPTIONS, f"must return one of {OPTIONS}, got {r!r}"


def _free_plant_wins(f, d):
    r = f(**{**d, "capex_per_gpu": 0.0, "staff_usd_per_gpu_year": 0.0, "usd_per_kwh": 0.0})
    assert r == "on_prem", f"hardware, staff and energy all free: on-prem costs 0 and must win, got {r!r}"


def _idle_fleet_rents(f, d):
    r = f(**{**d, "utilization": 0.0})
    assert r == "on_demand", f"at 0% utilization on-demand costs nothing and must win, got {r!r}"


def _busy_fleet_never_on_demand(f, d):
    r = f(**{**d, "utilization": 1.0})
    assert r != "on_demand", f"at 100% utilization any reserved discount beats list price, got {r!r}"


_TRAIN_D = _dicts(**_TRAIN)
_STEP_D = _dicts(**_STEP)
_ON_DEMAND_D = _dicts(**_FLEET, utilization=_f(0, 1))
_RESERVED_D = _dicts(**_FLEET, discount=_f(0, 1))
_ON_PREM_D = _dicts(n_gpus=st.integers(1, 10_000), years=_f(0, 10), utilization=_f(0, 1), **_PLANT)
_BREAKEVEN_D = _dicts(years=_f(0.25, 10), usd_per_gpu_hour=_f(0.5, 20), **_PLANT)
_CHEAPEST = dict(n_gpus=st.integers(1, 10_000), years=_f(0.5, 10), utilization=_f(0.05, 1),
                 usd_per_gpu_hour=_f(0.5, 20), reserved_discount=_f(0.05, 0.9), capex_per_gpu=_f(1_000, 100_000),
                 watts_per_gpu=_f(100, 2_000), pue=_f(1, 3), usd_per_kwh=_f(0.01, 0.5),
                 staff_usd_per_gpu_year=_f(0, 50_000), idle_power_fraction=_f(0, 1))

PROPERTIES = [
    dict(item="training_time_s", name="halves when the GPUs double",
         meaning="With perfect scaling twice the GPUs finish in half the time.",
         strategy=_TRAIN_D, check=_halves_with_double_gpus),
    dict(item="training_time_s", name="inverse in MFU",
         meaning="Half the model-FLOP utilisation means twice the time.",
         strategy=_TRAIN_D, check=_inverse_in_mfu),
    dict(item="training_time_s", name="returns seconds",
         meaning="peak_flops x mfu FLOP of work on one GPU takes exactly one second.",
         strategy=_TRAIN_D, check=_one_gpu_second),
    dict(item="data_parallel_speedup", name="no speedup on one GPU",
         meaning="One GPU has nothing to all-reduce, so its speedup over itself is exactly 1.",
         strategy=_STEP_D, check=_one_gpu_no_speedup),
    dict(item="data_parallel_speedup", name="never more than n",
         meaning="n GPUs can at best split the compute n ways, so the speedup is in (0, n].",
         strategy=_STEP_D, check=_at_most_n),
    dict(item="data_parallel_speedup", name="linear when communication is free",
         meaning="With no gradient bytes and no latency the speedup is exactly n.",
         strategy=_STEP_D, check=_linear_when_comm_free),
    dict(item="data_parallel_speedup", name="bounded by the gradient transfer",
         meaning="The AllReduce moves at least the whole gradient every step whatever n is, so the "
                 "speedup never exceeds compute_s_1gpu / (grad_bytes / bandwidth): adding GPUs cannot beat it.",
         strategy=_dicts(**{**_STEP, "grad_bytes": _f(1e6, 1e12)}), check=_bounded_by_gradient_transfer),
    dict(item="scaling_efficiency", name="1 for linear speedup",
         meaning="A speedup of n on n GPUs is perfect scaling: efficiency 1.0 (a fraction, not percent).",
         strategy=_dicts(speedup=_f(1e-3, 1e5), n=st.integers(1, 100_000)), check=_linear_is_one),
    dict(item="scaling_efficiency", name="times n gives the speedup",
         meaning="Efficiency is speedup per GPU, so efficiency x n is the speedup again.",
         strategy=_dicts(speedup=_f(1e-3, 1e5), n=st.integers(1, 100_000)), check=_recovers_speedup),
    dict(item="on_demand_cost", name="free when idle",
         meaning="On-demand bills only the hours used: at 0% utilization it costs nothing.",
         strategy=_ON_DEMAND_D, check=_idle_is_free),
    dict(item="on_demand_cost", name="linear in utilization",
         meaning="Using the GPUs a fraction of the time costs that fraction of full use.",
         strategy=_ON_DEMAND_D, check=_linear_in_utilization),
    dict(item="on_demand_cost", name="a GPU-hour costs the hourly price",
         meaning="One GPU busy for one hour costs usd_per_gpu_hour USD (USD, not millions).",
         strategy=_ON_DEMAND_D, check=_one_gpu_hour_costs_price),
    dict(item="reserved_cost", name="an undiscounted GPU-hour costs the price",
         meaning="One reserved GPU-hour with no discount costs usd_per_gpu_hour USD.",
         strategy=_RESERVED_D, check=_reserved_gpu_hour),
    dict(item="reserved_cost", name="discount scales the bill",
         meaning="A discount d leaves (1 - d) of the undiscounted bill.",
         strategy=_RESERVED_D, check=_discount_scales_bill),
    dict(item="reserved_cost", name="proportional to years",
         meaning="Every committed year is paid: twice the years, twice the cost.",
         strategy=_RESERVED_D, check=_proportional_to_years),
    dict(item="on_prem_cost", name="only the purchase at zero years",
         meaning="Before any time passes the fleet has cost its purchase price, n x capex.",
         strategy=_ON_PREM_D, check=_capex_at_zero_years),
    dict(item="on_prem_cost", name="affine in utilization",
         meaning="Only the energy of busy GPUs grows with utilization, so cost is a straight line in it.",
         strategy=_ON_PREM_D, check=_affine_in_utilization),
    dict(item="on_prem_cost", name="utilization is irrelevant at full idle draw",
         meaning="If idle GPUs draw as much as busy ones (idle_power_fraction = 1), utilization cannot change the cost.",
         strategy=_ON_PREM_D, check=_full_idle_draw_ignores_utilization),
    dict(item="on_prem_cost", name="a busy GPU-hour is its energy",
         meaning="Without capex or staff, one busy GPU-hour costs kW x PUE x USD/kWh (PUE already includes cooling).",
         strategy=_ON_PREM_D, check=_busy_gpu_hour_is_energy),
    dict(item="breakeven_utilization", name="never when the price does not cover energy",
         meaning="If a cloud hour costs no more than a busy GPU's marginal energy, on-prem never catches up: math.inf.",
         strategy=_dicts(years=_f(0.25, 10), price_share=_f(0, 0.99),
                         **{**_PLANT, "watts_per_gpu": _f(100, 2_000), "usd_per_kwh": _f(0.01, 0.5),
                            "idle_power_fraction": _f(0, 0.9)}),
         check=_never_when_price_below_energy),
    dict(item="breakeven_utilization", name="falls as the cloud price rises",
         meaning="A dearer cloud hour makes owning pay off at a lower utilization.",
         strategy=_BREAKEVEN_D, check=_falls_with_cloud_price),
    dict(item="breakeven_utilization", name="rises with capex",
         meaning="A dearer GPU purchase needs more busy hours to pay off.",
         strategy=_BREAKEVEN_D, check=_rises_with_capex),
    dict(item="breakeven_utilization", name="zero without fixed costs",
         meaning="With no capex, staff or idle draw, on-prem is never dearer than renting: breakeven 0.",
         strategy=_dicts(years=_f(0.25, 10), usd_per_gpu_hour=_f(2, 20), capex_per_gpu=_f(0, 1),
                         watts_per_gpu=_f(0, 1_000), pue=_f(1, 2), usd_per_kwh=_f(0, 0.5),
                         staff_usd_per_gpu_year=_f(0, 1), idle_power_fraction=_f(0, 1)),
         check=_zero_without_fixed_cost),
    dict(item="cheapest_option", name="one of the three paths",
         meaning='The answer is "on_demand", "reserved" or "on_prem".',
         strategy=_dicts(**_CHEAPEST), check=_one_of_three),
    dict(item="cheapest_option", name="free hardware wins",
         meaning="With free GPUs, staff and electricity on-prem costs nothing and is cheapest.",
         strategy=_dicts(**_CHEAPEST), check=_free_plant_wins),
    dict(item="cheapest_option", name="an idle fleet rents on demand",
         meaning="At 0% utilization on-demand costs nothing, so it is cheapest whenever buying costs anything.",
         strategy=_dicts(**_CHEAPEST), check=_idle_fleet_rents),
    dict(item="cheapest_option", name="a busy fleet never pays list price",
         meaning="At 100% utilization reserved pays the same hours at a discount, so on-demand never wins.",
         strategy=_dicts(**_CHEAPEST), check=_busy_fleet_never_on_demand),
]
