"""Public properties of Lab 01 (scaling.py), shipped to students as the public property checks.

Standalone on purpose: stdlib + hypothesis + the property kit shipped beside it, no reference. Each
check calls the student's function `f` with keyword arguments and raises AssertionError with a short
message; its docstring is the meaning a student sees then.
"""
import math

from hypothesis import strategies as st

from _property_kit import PublicProperties, kwargs, zero_when

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


def _energy_cost_per_hour(d):
    return d["watts_per_gpu"] / 1000 * d["pue"] * d["usd_per_kwh"] * (1 - d["idle_power_fraction"])


_TRAIN_D = kwargs(**_TRAIN)
_STEP_D = kwargs(**_STEP)
_ON_DEMAND_D = kwargs(**_FLEET, utilization=_f(0, 1))
_RESERVED_D = kwargs(**_FLEET, discount=_f(0, 1))
_ON_PREM_D = kwargs(n_gpus=st.integers(1, 10_000), years=_f(0, 10), utilization=_f(0, 1), **_PLANT)
_BREAKEVEN_D = kwargs(years=_f(0.25, 10), usd_per_gpu_hour=_f(0.5, 20), **_PLANT)
_CHEAPEST = dict(n_gpus=st.integers(1, 10_000), years=_f(0.5, 10), utilization=_f(0.05, 1),
                 usd_per_gpu_hour=_f(0.5, 20), reserved_discount=_f(0.05, 0.9), capex_per_gpu=_f(1_000, 100_000),
                 watts_per_gpu=_f(100, 2_000), pue=_f(1, 3), usd_per_kwh=_f(0.01, 0.5),
                 staff_usd_per_gpu_year=_f(0, 50_000), idle_power_fraction=_f(0, 1))


PROPERTIES = PublicProperties()
public_property = PROPERTIES.declare


# --- training_time_s ------------------------------------------------------------------------------

@public_property("training_time_s", _TRAIN_D, name="halves when the GPUs double")
def _halves_with_double_gpus(f, d):
    """With perfect scaling twice the GPUs finish in half the time."""
    one, two = f(**d), f(**{**d, "n_gpus": 2 * d["n_gpus"]})
    assert _close(two, one / 2), f"{d['n_gpus']} GPUs: {one} s, twice as many: {two} s (expected half)"


@public_property("training_time_s", _TRAIN_D, name="inverse in MFU")
def _inverse_in_mfu(f, d):
    """Half the model-FLOP utilisation means twice the time."""
    full, half = f(**d), f(**{**d, "mfu": d["mfu"] / 2})
    assert _close(half, 2 * full), f"mfu {d['mfu']}: {full} s, mfu halved: {half} s (expected double)"


@public_property("training_time_s", _TRAIN_D, name="returns seconds")
def _one_gpu_second(f, d):
    """peak_flops x mfu FLOP of work on one GPU takes exactly one second."""
    t = f(total_flops=d["peak_flops"] * d["mfu"], n_gpus=1, peak_flops=d["peak_flops"], mfu=d["mfu"])
    assert _close(t, 1.0), f"one second of work at peak x mfu returned {t} (seconds expected, not days or years)"


# --- data_parallel_speedup ------------------------------------------------------------------------

@public_property("data_parallel_speedup", _STEP_D, name="no speedup on one GPU")
def _one_gpu_no_speedup(f, d):
    """One GPU has nothing to all-reduce, so its speedup over itself is exactly 1."""
    s = f(**{**d, "n": 1})
    assert _close(s, 1.0), f"one GPU must give speedup 1 (no AllReduce), got {s}"


@public_property("data_parallel_speedup", _STEP_D, name="never more than n")
def _at_most_n(f, d):
    """n GPUs can at best split the compute n ways, so the speedup is in (0, n]."""
    s = f(**d)
    assert 0 < s <= d["n"] * (1 + 1e-9), f"speedup {s} on {d['n']} GPUs is outside (0, n]"


@public_property("data_parallel_speedup", _STEP_D, name="linear when communication is free")
def _linear_when_comm_free(f, d):
    """With no gradient bytes and no latency the speedup is exactly n."""
    s = f(**{**d, "grad_bytes": 0.0, "alpha_s": 0.0})
    assert _close(s, d["n"]), f"with free communication {d['n']} GPUs must give {d['n']}x, got {s}"


@public_property("data_parallel_speedup", kwargs(**{**_STEP, "grad_bytes": _f(1e6, 1e12)}),
                 name="bounded by the gradient transfer")
def _bounded_by_gradient_transfer(f, d):
    """The AllReduce moves at least the whole gradient every step whatever n is, so the speedup never exceeds
    compute_s_1gpu / (grad_bytes / bandwidth): adding GPUs cannot beat it."""
    # with n >= 2 a ring moves at least the whole gradient once per step (the lower bound of point-to-point
    # AllReduces, Patarasuk & Yuan 2009), so a step never takes less than grad_bytes / bandwidth
    n = max(2, d["n"])
    s = f(**{**d, "n": n})
    bound = d["compute_s_1gpu"] / (d["grad_bytes"] / d["bandwidth"])
    assert s <= bound * (1 + 1e-9), (f"speedup {s} on {n} GPUs beats compute_s_1gpu / (grad_bytes / bandwidth)"
                                     f" = {bound}: the gradient exchange cannot shrink with n")


# --- scaling_efficiency ---------------------------------------------------------------------------

@public_property("scaling_efficiency", kwargs(speedup=_f(1e-3, 1e5), n=st.integers(1, 100_000)),
                 name="1 for linear speedup")
def _linear_is_one(f, d):
    """A speedup of n on n GPUs is perfect scaling: efficiency 1.0 (a fraction, not percent)."""
    e = f(speedup=float(d["n"]), n=d["n"])
    assert _close(e, 1.0), f"speedup {d['n']} on {d['n']} GPUs is perfect scaling (1.0, a fraction), got {e}"


@public_property("scaling_efficiency", kwargs(speedup=_f(1e-3, 1e5), n=st.integers(1, 100_000)),
                 name="times n gives the speedup")
def _recovers_speedup(f, d):
    """Efficiency is speedup per GPU, so efficiency x n is the speedup again."""
    e = f(**d)
    assert _close(e * d["n"], d["speedup"]), f"efficiency {e} x n {d['n']} should give the speedup {d['speedup']}"


# --- on_demand_cost -------------------------------------------------------------------------------

public_property("on_demand_cost", _ON_DEMAND_D, name="free when idle",
                meaning="On-demand bills only the hours used: at 0% utilization it costs nothing.")(
    zero_when("on-demand at 0% utilization pays for no hours, got {got}", utilization=0.0))


@public_property("on_demand_cost", _ON_DEMAND_D, name="linear in utilization")
def _linear_in_utilization(f, d):
    """Using the GPUs a fraction of the time costs that fraction of full use."""
    c, full = f(**d), f(**{**d, "utilization": 1.0})
    assert _close(c, d["utilization"] * full, abs_=1e-6), (
        f"utilization {d['utilization']}: {c} USD, should be that fraction of the full-use cost {full}")


@public_property("on_demand_cost", _ON_DEMAND_D, name="a GPU-hour costs the hourly price")
def _one_gpu_hour_costs_price(f, d):
    """One GPU busy for one hour costs usd_per_gpu_hour USD (USD, not millions)."""
    c = f(n_gpus=1, years=1 / HOURS_PER_YEAR, usd_per_gpu_hour=d["usd_per_gpu_hour"], utilization=1.0)
    assert _close(c, d["usd_per_gpu_hour"]), f"one busy GPU-hour should cost the hourly price {d['usd_per_gpu_hour']} USD, got {c}"


# --- reserved_cost --------------------------------------------------------------------------------

@public_property("reserved_cost", _RESERVED_D, name="an undiscounted GPU-hour costs the price")
def _reserved_gpu_hour(f, d):
    """One reserved GPU-hour with no discount costs usd_per_gpu_hour USD."""
    c = f(n_gpus=1, years=1 / HOURS_PER_YEAR, usd_per_gpu_hour=d["usd_per_gpu_hour"], discount=0.0)
    assert _close(c, d["usd_per_gpu_hour"]), f"one undiscounted reserved GPU-hour should cost {d['usd_per_gpu_hour']} USD, got {c}"


@public_property("reserved_cost", _RESERVED_D, name="discount scales the bill")
def _discount_scales_bill(f, d):
    """A discount d leaves (1 - d) of the undiscounted bill."""
    c, list_price = f(**d), f(**{**d, "discount": 0.0})
    assert _close(c, (1 - d["discount"]) * list_price, abs_=1e-6), (
        f"discount {d['discount']}: {c} USD, should be (1 - discount) x the undiscounted {list_price}")


@public_property("reserved_cost", _RESERVED_D, name="proportional to years")
def _proportional_to_years(f, d):
    """Every committed year is paid: twice the years, twice the cost."""
    one, two = f(**d), f(**{**d, "years": 2 * d["years"]})
    assert _close(two, 2 * one, abs_=1e-6), f"{d['years']} years: {one} USD, twice as long: {two} USD"


# --- on_prem_cost ---------------------------------------------------------------------------------

@public_property("on_prem_cost", _ON_PREM_D, name="only the purchase at zero years")
def _capex_at_zero_years(f, d):
    """Before any time passes the fleet has cost its purchase price, n x capex."""
    c = f(**{**d, "years": 0.0})
    assert _close(c, d["n_gpus"] * d["capex_per_gpu"]), f"after 0 years only the purchase is paid ({d['n_gpus'] * d['capex_per_gpu']} USD), got {c}"


@public_property("on_prem_cost", _ON_PREM_D, name="affine in utilization")
def _affine_in_utilization(f, d):
    """Only the energy of busy GPUs grows with utilization, so cost is a straight line in it."""
    lo, hi, mid = f(**{**d, "utilization": 0.0}), f(**{**d, "utilization": 1.0}), f(**d)
    u = d["utilization"]
    assert _close(mid, lo + u * (hi - lo), rel=1e-8, abs_=1e-3), (
        f"cost {mid} at utilization {u} is not on the line from {lo} (idle) to {hi} (busy)")


@public_property("on_prem_cost", _ON_PREM_D, name="utilization is irrelevant at full idle draw")
def _full_idle_draw_ignores_utilization(f, d):
    """If idle GPUs draw as much as busy ones (idle_power_fraction = 1), utilization cannot change the cost."""
    d = {**d, "idle_power_fraction": 1.0}
    busy, idle = f(**{**d, "utilization": 1.0}), f(**{**d, "utilization": 0.0})
    assert _close(busy, idle, abs_=1e-3), f"if an idle GPU draws full power, utilization cannot matter: {idle} vs {busy}"


@public_property("on_prem_cost", _ON_PREM_D, name="a busy GPU-hour is its energy")
def _busy_gpu_hour_is_energy(f, d):
    """Without capex or staff, one busy GPU-hour costs kW x PUE x USD/kWh (PUE already includes cooling)."""
    c = f(n_gpus=1, years=1 / HOURS_PER_YEAR, capex_per_gpu=0.0, watts_per_gpu=d["watts_per_gpu"], pue=d["pue"],
          usd_per_kwh=d["usd_per_kwh"], utilization=1.0, staff_usd_per_gpu_year=0.0, idle_power_fraction=0.0)
    energy = d["watts_per_gpu"] / 1000 * d["pue"] * d["usd_per_kwh"]
    assert _close(c, energy), f"one busy GPU-hour without capex or staff costs kW x PUE x USD/kWh = {energy} USD, got {c}"


# --- breakeven_utilization ------------------------------------------------------------------------

@public_property("breakeven_utilization",
                 kwargs(years=_f(0.25, 10), price_share=_f(0, 0.99),
                        **{**_PLANT, "watts_per_gpu": _f(100, 2_000), "usd_per_kwh": _f(0.01, 0.5),
                           "idle_power_fraction": _f(0, 0.9)}),
                 name="never when the price does not cover energy")
def _never_when_price_below_energy(f, d):
    """If a cloud hour costs no more than a busy GPU's marginal energy, on-prem never catches up: math.inf."""
    price = _energy_cost_per_hour(d) * d["price_share"]  # at most the marginal energy of a busy GPU
    kw = {k: v for k, v in d.items() if k != "price_share"}
    u = f(**{**kw, "usd_per_gpu_hour": price})
    assert u == math.inf, f"a cloud hour at {price} USD does not cover a busy GPU's energy: no breakeven (math.inf), got {u}"


@public_property("breakeven_utilization", _BREAKEVEN_D, name="falls as the cloud price rises")
def _falls_with_cloud_price(f, d):
    """A dearer cloud hour makes owning pay off at a lower utilization."""
    cheap, dear = f(**d), f(**{**d, "usd_per_gpu_hour": 2 * d["usd_per_gpu_hour"]})
    assert dear <= cheap * (1 + 1e-9), f"doubling the cloud price raised the breakeven: {cheap} -> {dear}"


@public_property("breakeven_utilization", _BREAKEVEN_D, name="rises with capex")
def _rises_with_capex(f, d):
    """A dearer GPU purchase needs more busy hours to pay off."""
    low, high = f(**d), f(**{**d, "capex_per_gpu": d["capex_per_gpu"] + 10_000})
    assert high >= low * (1 - 1e-9), f"adding 10,000 USD of capex per GPU lowered the breakeven: {low} -> {high}"


public_property("breakeven_utilization",
                kwargs(years=_f(0.25, 10), usd_per_gpu_hour=_f(2, 20), capex_per_gpu=_f(0, 1),
                       watts_per_gpu=_f(0, 1_000), pue=_f(1, 2), usd_per_kwh=_f(0, 0.5),
                       staff_usd_per_gpu_year=_f(0, 1), idle_power_fraction=_f(0, 1)),
                name="zero without fixed costs",
                meaning="With no capex, staff or idle draw, on-prem is never dearer than renting: breakeven 0.")(
    zero_when("with no capex, staff or idle draw on-prem is never dearer: breakeven 0, got {got}", abs_tol=1e-9,
              capex_per_gpu=0.0, staff_usd_per_gpu_year=0.0, idle_power_fraction=0.0))


# --- cheapest_option ------------------------------------------------------------------------------

@public_property("cheapest_option", kwargs(**_CHEAPEST), name="one of the three paths")
def _one_of_three(f, d):
    """The answer is "on_demand", "reserved" or "on_prem"."""
    r = f(**d)
    assert r in OPTIONS, f"must return one of {OPTIONS}, got {r!r}"


@public_property("cheapest_option", kwargs(**_CHEAPEST), name="free hardware wins")
def _free_plant_wins(f, d):
    """With free GPUs, staff and electricity on-prem costs nothing and is cheapest."""
    r = f(**{**d, "capex_per_gpu": 0.0, "staff_usd_per_gpu_year": 0.0, "usd_per_kwh": 0.0})
    assert r == "on_prem", f"hardware, staff and energy all free: on-prem costs 0 and must win, got {r!r}"


@public_property("cheapest_option", kwargs(**_CHEAPEST), name="an idle fleet rents on demand")
def _idle_fleet_rents(f, d):
    """At 0% utilization on-demand costs nothing, so it is cheapest whenever buying costs anything."""
    r = f(**{**d, "utilization": 0.0})
    assert r == "on_demand", f"at 0% utilization on-demand costs nothing and must win, got {r!r}"


@public_property("cheapest_option", kwargs(**_CHEAPEST), name="a busy fleet never pays list price")
def _busy_fleet_never_on_demand(f, d):
    """At 100% utilization reserved pays the same hours at a discount, so on-demand never wins."""
    r = f(**{**d, "utilization": 1.0})
    assert r != "on_demand", f"at 100% utilization any reserved discount beats list price, got {r!r}"
