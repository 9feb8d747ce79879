"""Public properties of Lab 09 (performance.py): limits, bounds, monotonicity and identities.

Standalone (stdlib + hypothesis + the property kit shipped beside it): shipped to students as the
public property checks. Each check calls the student's function `f` with keyword arguments and raises
AssertionError with a short message when the property fails; its docstring is the meaning a student
sees then. No reference values here: identities are written inline.
"""
from __future__ import annotations

import math

from hypothesis import strategies as st

from _property_kit import PublicProperties, kwargs, number, zero_when

REL = 1e-9     # relative tolerance: different correct algebra differs in the last bits
ABS = 1e-12


def _close(a, b, rel=REL, abs_tol=ABS) -> bool:
    return math.isclose(number(a), number(b), rel_tol=rel, abs_tol=abs_tol)


def _not_below(later, earlier) -> bool:
    """later >= earlier up to rounding (monotone checks)."""
    later, earlier = number(later), number(earlier)
    return later >= earlier - REL * abs(earlier) - ABS


# --- strategies -----------------------------------------------------------------------------

fractions = st.floats(0.0, 1.0)
inner_fractions = st.floats(0.0, 0.99)                 # f < 1: a finite ceiling
speedups = st.floats(1.0, 1e3)                         # k >= 1: the part gets faster
any_factors = st.floats(0.1, 1e3)                      # k < 1 is a slowdown
counts = st.integers(1, 100_000)
positive = st.floats(1e-3, 1e18)


def _profile_from_weights(weights: list[int]) -> dict[str, float]:
    total = sum(weights)
    return {f"part{i}": w / total for i, w in enumerate(weights)}


# distinct integer weights -> distinct shares, so "the largest" is unambiguous
profiles = st.lists(st.integers(1, 1000), min_size=2, max_size=6, unique=True).map(_profile_from_weights)


def profile_and_factors(factor):
    """A profile and a speedup drawn from `factor` for some of its parts."""
    @st.composite
    def draw_plan(draw):
        profile = draw(profiles)
        names = draw(st.lists(st.sampled_from(sorted(profile)), unique=True))
        return {"profile": profile, "factors": {n: draw(factor) for n in names}}
    return draw_plan()


def fixes(lowest_factor):
    """A profile, fixes of some of its parts at least `lowest_factor` times faster, their costs and a
    budget."""
    @st.composite
    def draw_fixes(draw):
        profile = draw(profiles)
        names = draw(st.lists(st.sampled_from(sorted(profile)), min_size=1, unique=True))
        return {"profile": profile,
                "factors": {n: draw(st.floats(lowest_factor, 10.0)) for n in names},
                "cost_weeks": {n: draw(st.floats(0.1, 20.0)) for n in names},
                "budget_weeks": draw(st.floats(0.0, 25.0))}
    return draw_fixes()


_plans = st.dictionaries(st.sampled_from(["pipeline", "allreduce", "data", "compute", "kernels"]),
                         st.floats(0.0, 20.0))


def _never_falls_in(arg: str, *others: str):
    """A check that f never falls as `arg` rises (drawn twice: arg and arg2), the `others` held."""
    def check(f, d):
        low, high = sorted((d[arg], d[arg + "2"]))
        held = {name: d[name] for name in others}
        a, b = f(**held, **{arg: low}), f(**held, **{arg: high})
        assert _not_below(b, a), f"{arg} {high} gave {b} < {a} at {arg} {low}"
    return check


PROPERTIES = PublicProperties()
public_property = PROPERTIES.declare


# --- amdahl_speedup -------------------------------------------------------------------------------

@public_property("amdahl_speedup", kwargs(fraction=fractions, factor=any_factors),
                 name="speedup 1 when nothing changes")
def _amdahl_identity(f, d):
    """A factor of 1, or a part taking no time, leaves the step as it was: speedup 1."""
    assert _close(f(fraction=d["fraction"], factor=1.0), 1.0), "factor 1 must give speedup 1"
    assert _close(f(fraction=0.0, factor=d["factor"]), 1.0), "fraction 0 must give speedup 1"


@public_property("amdahl_speedup", kwargs(factor=any_factors), name="the whole step sped up gives the factor")
def _amdahl_whole(f, d):
    """When the part is the whole step (fraction 1), the step gets exactly factor times faster."""
    got = f(fraction=1.0, factor=d["factor"])
    assert _close(got, d["factor"]), f"fraction 1 must give the factor itself, got {got}"


@public_property("amdahl_speedup", kwargs(fraction=inner_fractions, factor=speedups),
                 name="bounded by the factor and the ceiling")
def _amdahl_bounds(f, d):
    """For k >= 1 the speedup is at least 1 and at most both k and 1/(1-f)."""
    fr, k = d["fraction"], d["factor"]
    got = f(fraction=fr, factor=k)
    ceiling = 1 / (1 - fr)
    assert _not_below(got, 1.0), f"a faster part cannot slow the step: got {got}"
    assert _not_below(k, got) and _not_below(ceiling, got), \
        f"got {got}, above the factor {k} or the ceiling 1/(1-f) = {ceiling}"


public_property("amdahl_speedup", kwargs(fraction=fractions, factor=any_factors, factor2=any_factors),
                name="monotone in the factor", meaning="Making the part faster never makes the step slower.")(
    _never_falls_in("factor", "fraction"))


# --- amdahl_limit ---------------------------------------------------------------------------------

@public_property("amdahl_limit", st.just({}), name="ceiling 1 at fraction 0")
def _limit_zero(f, d):
    """If the part takes no time, removing it entirely speeds up nothing."""
    assert _close(f(fraction=0.0), 1.0), "nothing to speed up: the ceiling is 1"


@public_property("amdahl_limit", kwargs(fraction=inner_fractions), name="the untouched share sets the ceiling")
def _limit_identity(f, d):
    """With the part taking zero time, the untouched share 1-f is the whole new step: S = 1/(1-f)."""
    got = f(fraction=d["fraction"])
    assert _close(got * (1 - d["fraction"]), 1.0), \
        f"the untouched share 1-f must take the whole new step: got {got} at f={d['fraction']}"


public_property("amdahl_limit", kwargs(fraction=inner_fractions, fraction2=inner_fractions),
                name="monotone in the fraction", meaning="A larger share to remove allows a larger ceiling.")(
    _never_falls_in("fraction"))


# --- step_time_reduction --------------------------------------------------------------------------

public_property("step_time_reduction", kwargs(fraction=fractions), name="nothing saved at factor 1",
                meaning="A part that is not faster saves no step time.")(
    zero_when("factor 1 saves no time", abs_tol=ABS, factor=1.0))


@public_property("step_time_reduction", kwargs(fraction=fractions, factor=speedups),
                 name="at most the part's share")
def _reduction_bounds(f, d):
    """Speeding up a part can save at most the time that part took: 0 <= saved <= f for k >= 1."""
    fr = d["fraction"]
    got = f(fraction=fr, factor=d["factor"])
    assert -ABS <= got <= fr + REL * fr + ABS, \
        f"a part taking {fr} of the step can save at most {fr} of it, got {got}"


@public_property("step_time_reduction", kwargs(fraction=fractions), name="an infinitely fast part saves its share")
def _reduction_limit(f, d):
    """As k grows without bound the step time falls by the part's whole share f."""
    got = f(fraction=d["fraction"], factor=1e12)
    assert _close(got, d["fraction"], rel=1e-6, abs_tol=1e-9), \
        f"an infinitely fast part saves its whole share {d['fraction']}, got {got}"


public_property("step_time_reduction", kwargs(fraction=fractions, factor=any_factors, factor2=any_factors),
                name="monotone in the factor", meaning="A faster part saves at least as much time.")(
    _never_falls_in("factor", "fraction"))


# --- multi_component_speedup ----------------------------------------------------------------------

@public_property("multi_component_speedup", profiles.map(lambda p: {"profile": p}), name="no factors, no change")
def _multi_nothing(f, d):
    """If no part gets faster, the end-to-end speedup is 1."""
    assert _close(f(profile=d["profile"], factors={}), 1.0), "no factors: speedup 1"


@public_property("multi_component_speedup", kwargs(fraction=fractions, factor=any_factors),
                 name="one part is Amdahl's law")
def _multi_single(f, d):
    """With one part sped up and the rest untouched, the result is 1/((1-f) + f/k)."""
    fr, k = d["fraction"], d["factor"]
    got = f(profile={"part": fr, "rest": 1 - fr}, factors={"part": k})
    assert _close(got, 1 / ((1 - fr) + fr / k)), f"one part alone must give Amdahl's speedup, got {got}"


@public_property("multi_component_speedup", profile_and_factors(speedups),
                 name="order of the profile does not matter")
def _multi_order(f, d):
    """Listing the parts in another order describes the same step."""
    profile, factors = d["profile"], d["factors"]
    flipped = dict(reversed(list(profile.items())))
    a, b = f(profile=profile, factors=factors), f(profile=flipped, factors=factors)
    assert _close(a, b), f"the order of the profile changed the speedup: {a} vs {b}"


@public_property("multi_component_speedup", profile_and_factors(speedups), name="between 1 and the largest factor")
def _multi_bounds(f, d):
    """Speeding parts up by factors >= 1 gives at least 1 and at most the largest factor."""
    got = f(profile=d["profile"], factors=d["factors"])
    top = max(d["factors"].values(), default=1.0)
    assert _not_below(got, 1.0) and _not_below(top, got), \
        f"speedups >= 1 must give an end-to-end speedup between 1 and the largest factor {top}, got {got}"


# --- hotspot --------------------------------------------------------------------------------------

@public_property("hotspot", profiles, name="the part with the largest share")
def _hotspot_largest(f, d):
    """The hotspot is a part of the profile and no part takes a larger share of the step."""
    got = f(profile=d)
    assert got in d, f"{got!r} is not a part of the profile"
    assert d[got] == max(d.values()), f"{got!r} has share {d[got]}, not the largest"


@public_property("hotspot", profiles, name="order of the profile does not matter")
def _hotspot_order(f, d):
    """Listing the parts in another order (no ties) does not change the hotspot."""
    flipped = dict(reversed(list(d.items())))
    assert f(profile=d) == f(profile=flipped), "the profile's order changed the hotspot"


# --- gustafson_speedup ----------------------------------------------------------------------------

@public_property("gustafson_speedup", kwargs(n=counts), name="n with no serial part, 1 with no parallel part")
def _gustafson_ends(f, d):
    """s = 0 scales perfectly (speedup n); s = 1 cannot use the extra processors (speedup 1)."""
    n = d["n"]
    assert _close(f(n=n, serial_fraction=0.0), n), "no serial part: speedup n"
    assert _close(f(n=n, serial_fraction=1.0), 1.0), "all serial: speedup 1"


@public_property("gustafson_speedup", kwargs(n=counts, serial_fraction=fractions), name="between 1 and n")
def _gustafson_bounds(f, d):
    """The scaled speedup is never below 1 nor above the processor count."""
    n, s = d["n"], d["serial_fraction"]
    got = f(n=n, serial_fraction=s)
    assert _not_below(got, 1.0) and _not_below(n, got), f"got {got}, outside [1, n={n}]"


@public_property("gustafson_speedup", kwargs(n=counts, serial_fraction=fractions), name="at least Amdahl's speedup")
def _gustafson_vs_amdahl(f, d):
    """Growing the work with n (Gustafson) never does worse than fixed work (Amdahl) at the same s."""
    n, s = d["n"], d["serial_fraction"]
    got = f(n=n, serial_fraction=s)
    amdahl = 1 / (s + (1 - s) / n)
    assert _not_below(got, amdahl), f"scaled speedup {got} below Amdahl's fixed-size {amdahl}"


# --- roofline_flops -------------------------------------------------------------------------------

@public_property("roofline_flops",
                 kwargs(intensity=st.floats(0.0, 1e5), peak_flops=positive, bandwidth=st.floats(1e6, 1e14)),
                 name="the lower of the two roofs")
def _roof_below(f, d):
    """Attainable FLOP/s is the peak or intensity x bandwidth, whichever is lower."""
    got = f(**d)
    assert _not_below(d["peak_flops"], got) and _not_below(d["intensity"] * d["bandwidth"], got), \
        f"got {got}, above the peak or above intensity x bandwidth"
    assert _close(got, d["peak_flops"]) or _close(got, d["intensity"] * d["bandwidth"]), \
        f"got {got}: the roofline is the peak or the memory slope, nothing in between"


@public_property("roofline_flops",
                 kwargs(intensity=st.floats(0.0, 1e5), intensity2=st.floats(0.0, 1e5), peak_flops=positive,
                        bandwidth=st.floats(1e6, 1e14)),
                 name="monotone in intensity")
def _roof_monotone(f, d):
    """More FLOP per byte never lowers the attainable FLOP/s."""
    low, high = sorted((d["intensity"], d["intensity2"]))
    kw = {k: v for k, v in d.items() if k != "intensity2"}
    a, b = f(**{**kw, "intensity": low}), f(**{**kw, "intensity": high})
    assert _not_below(b, a), f"intensity {high} gave {b} < {a} at {low}"


# --- ridge_point ----------------------------------------------------------------------------------

@public_property("ridge_point", kwargs(peak_flops=positive, bandwidth=st.floats(1e3, 1e15)),
                 name="proportional to the peak, inverse to the bandwidth")
def _ridge_scaling(f, d):
    """A faster compute unit moves the ridge right; more memory bandwidth moves it left."""
    p, b = d["peak_flops"], d["bandwidth"]
    base = f(peak_flops=p, bandwidth=b)
    assert _close(f(peak_flops=2 * p, bandwidth=b), 2 * base), "twice the peak must double the ridge"
    assert _close(f(peak_flops=p, bandwidth=2 * b), base / 2), "twice the bandwidth must halve the ridge"


@public_property("ridge_point", kwargs(peak_flops=positive, bandwidth=st.floats(1e3, 1e15)),
                 name="where the two roofs meet")
def _ridge_identity(f, d):
    """At the ridge intensity, intensity x bandwidth equals the peak."""
    got = f(**d)
    assert _close(got * d["bandwidth"], d["peak_flops"]), \
        f"at the ridge intensity x bandwidth must equal the peak, got {got}"


# --- mfu ------------------------------------------------------------------------------------------

@public_property("mfu",
                 kwargs(n_gpus=counts, peak_flops=st.floats(1e9, 1e16), flops_per_token=st.floats(1e3, 1e15)),
                 name="the peak's FLOP/s is MFU 1")
def _mfu_full(f, d):
    """Processing exactly n x peak / (FLOP per token) tokens per second is full utilisation, 1.0."""
    n, peak, fpt = d["n_gpus"], d["peak_flops"], d["flops_per_token"]
    got = f(tokens_per_s=n * peak / fpt, flops_per_token=fpt, n_gpus=n, peak_flops=peak)
    assert _close(got, 1.0), f"doing the peak's FLOP/s must be MFU 1 (a fraction, not percent), got {got}"


@public_property("mfu",
                 kwargs(tokens_per_s=st.floats(1.0, 1e8), flops_per_token=st.floats(1e3, 1e15),
                        n_gpus=st.integers(1, 50_000), peak_flops=st.floats(1e9, 1e16)),
                 name="linear in throughput, inverse in GPUs")
def _mfu_linear(f, d):
    """Twice the tokens/s doubles MFU; the same tokens/s on twice the GPUs halves it."""
    one = f(**d)
    assert _close(f(**{**d, "tokens_per_s": 2 * d["tokens_per_s"]}), 2 * one), "twice the tokens/s, twice the MFU"
    assert _close(f(**{**d, "n_gpus": 2 * d["n_gpus"]}), one / 2), "twice the GPUs at the same tokens/s, half the MFU"


# --- mfu_gain -------------------------------------------------------------------------------------

public_property("mfu_gain", kwargs(base_mfu=st.floats(0.01, 1.0), fraction=fractions), name="no gain at factor 1",
                meaning="A part that is not faster leaves MFU where it was.")(
    zero_when("factor 1 gains nothing", abs_tol=ABS, factor=1.0))


@public_property("mfu_gain", kwargs(base_mfu=st.floats(0.01, 1.0), fraction=inner_fractions, factor=speedups),
                 name="between 0 and removing the part")
def _gain_bounds(f, d):
    """For k >= 1 the gain is at least 0 and at most base x f/(1-f), the part taking no time."""
    b, fr, k = d["base_mfu"], d["fraction"], d["factor"]
    got = f(base_mfu=b, fraction=fr, factor=k)
    most = b * fr / (1 - fr)   # the part takes no time at all
    assert -ABS <= got and _not_below(most, got), \
        f"got {got}: outside [0, base x f/(1-f) = {most}] (a fraction, not percent points)"


@public_property("mfu_gain", kwargs(base_mfu=st.floats(0.01, 1.0), fraction=fractions, factor=any_factors),
                 name="proportional to the base MFU")
def _gain_proportional(f, d):
    """MFU scales as 1/step time, so the gain is the base MFU times (S - 1)."""
    b, fr, k = d["base_mfu"], d["fraction"], d["factor"]
    assert _close(f(base_mfu=b / 2, fraction=fr, factor=k), f(base_mfu=b, fraction=fr, factor=k) / 2), \
        "half the base MFU must give half the gain"


# --- best_fix -------------------------------------------------------------------------------------

@public_property("best_fix", fixes(1.01), name="an affordable fix or 'none'")
def _fix_affordable(f, d):
    """The answer names one of the fixes whose cost fits the budget, or is 'none'."""
    got = f(**d)
    assert got == "none" or got in d["factors"], f"{got!r} is neither a fix nor 'none'"
    if got != "none":
        assert d["cost_weeks"][got] <= d["budget_weeks"], \
            f"{got!r} costs {d['cost_weeks'][got]} weeks, over the budget {d['budget_weeks']}"


@public_property("best_fix", fixes(1.01), name="'none' when nothing fits")
def _fix_none(f, d):
    """With a budget below every fix's cost, no fix can be chosen."""
    cheapest = min(d["cost_weeks"].values())
    got = f(**{**d, "budget_weeks": cheapest / 2})
    assert got == "none", f"no fix fits a budget of {cheapest / 2} weeks, yet got {got!r}"


@public_property("best_fix", fixes(1.01), name="same choice in other units of time")
def _fix_scale(f, d):
    """Doubling every cost and the budget (weeks to half-weeks) changes no ranking."""
    doubled = {**d, "cost_weeks": {n: 2 * c for n, c in d["cost_weeks"].items()},
               "budget_weeks": 2 * d["budget_weeks"]}
    assert f(**d) == f(**doubled), "doubling every cost and the budget must not change the choice"


# --- budget_left_weeks ----------------------------------------------------------------------------

@public_property("budget_left_weeks", kwargs(budget_weeks=st.floats(0.0, 50.0)),
                 name="an empty plan leaves the whole budget")
def _left_empty(f, d):
    """Doing nothing costs nothing, so the whole budget is left."""
    got = f(cost_weeks={}, budget_weeks=d["budget_weeks"])
    assert _close(got, d["budget_weeks"]), f"an empty plan costs nothing: expected the whole budget, got {got}"


@public_property("budget_left_weeks", kwargs(weeks=st.floats(0.1, 50.0)), name="exactly at the budget leaves 0")
def _left_exact(f, d):
    """A plan costing exactly the budget leaves 0 weeks; one costing more leaves a negative number."""
    c = d["weeks"]
    got = f(cost_weeks={"fix": c}, budget_weeks=c)
    assert _close(got, 0.0), f"a plan at exactly the budget leaves 0 weeks, got {got}"
    got = f(cost_weeks={"fix": c}, budget_weeks=c / 2)
    assert _close(got, -c / 2), f"a plan at twice the budget is over by half of it ({-c / 2}), got {got}"


@public_property("budget_left_weeks",
                 kwargs(plan=_plans, budget_weeks=st.floats(0.0, 50.0), extra=st.floats(0.0, 20.0)),
                 name="every fix's weeks count once")
def _left_additive(f, d):
    """Adding a fix of c engineer-weeks to the plan leaves exactly c weeks less."""
    plan, budget, extra = d["plan"], d["budget_weeks"], d["extra"]
    before = f(cost_weeks=plan, budget_weeks=budget)
    after = f(cost_weeks={**plan, "one_more": extra}, budget_weeks=budget)
    assert math.isclose(before - after, extra, rel_tol=1e-9, abs_tol=1e-9), \
        f"adding a fix of {extra} weeks must leave {extra} weeks less: {before} -> {after}"
