"""Lab 09 — performance engineering: Amdahl's law at scale, rooflines, MFU and where to spend effort.

Conventions (all functions): SI units — seconds, bytes, bytes/s, FLOP, FLOP/s. Fractions are in
[0, 1], never percent (0.25 is 25 %). Counts are positive ints. A speedup `factor` k is how many
times faster one part gets (k > 1 faster, k < 1 slower). Functions are pure: no printing, no globals.
A step-time `profile` is a dict name -> share of the step time, the shares summing to 1.
A speedup ratio S = old time / new time; the step time then falls by 1 - 1/S, which is smaller
than the throughput gain S - 1 (S = 2: the step takes 50 % less time, the throughput rises by 100 %).
MFU (model-FLOP utilisation) is a fraction of the dense peak; at a fixed number of FLOP per step
it scales as 1 / step time.
Sources: Amdahl, AFIPS 1967; Hennessy & Patterson, Computer Architecture (5th ed.), sec. 1.9;
Gustafson, CACM 31(5) 1988; Williams, Waterman & Patterson, CACM 52(4) 2009 (roofline);
Chowdhery et al., PaLM, arXiv:2204.02311 App. B (MFU).
"""
from __future__ import annotations

import math

from ._domain import check_count, check_fraction, check_nonneg, check_positive

__all__ = [
    "amdahl_speedup", "amdahl_limit", "step_time_reduction", "multi_component_speedup",
    "hotspot", "gustafson_speedup", "roofline_flops", "ridge_point", "mfu", "mfu_gain",
    "best_fix", "budget_left_weeks",
]

# Shares of a profile may carry float rounding (0.45 + 0.30 + 0.15 + 0.10); this much is accepted.
PROFILE_SUM_TOLERANCE = 1e-6


def _check_profile(profile) -> None:
    if not isinstance(profile, dict) or not profile:
        raise ValueError(f"profile must be a non-empty dict name -> share, got {profile!r}")
    for name, share in profile.items():
        check_fraction(f"profile[{name!r}]", share)
    total = math.fsum(profile.values())
    if abs(total - 1) > PROFILE_SUM_TOLERANCE:
        raise ValueError(f"profile shares must sum to 1, got {total!r}")


def _check_named_numbers(label: str, values, profile, check) -> None:
    """A dict name -> number whose names are components of `profile`."""
    if not isinstance(values, dict):
        raise ValueError(f"{label} must be a dict name -> number, got {values!r}")
    for name, value in values.items():
        if name not in profile:
            raise ValueError(f"{label} names {name!r}, which is not in the profile")
        check(f"{label}[{name!r}]", value)


def amdahl_speedup(fraction: float, factor: float) -> float:
    """End-to-end speedup when a part taking `fraction` of the time gets `factor` times faster.

    Formula: S = 1 / ((1 - f) + f / k)  (Amdahl 1967; Hennessy & Patterson sec. 1.9).
    Derive: take the old time as 1; the rest of the step is untouched, the part shrinks by its factor;
    the speedup is old time over new time. Dimensionless; fraction in [0, 1], factor >= 1.
    """
    check_fraction("fraction", fraction)
    check_positive("factor", factor)
    ### BEGIN SOLUTION
    return 1 / ((1 - fraction) + fraction / factor)
    ### END SOLUTION


def amdahl_limit(fraction: float) -> float:
    """Ceiling of the end-to-end speedup when the part taking `fraction` of the time gets infinitely
    fast (Amdahl 1967).

    Formula: 1 / (1 - f); `math.inf` at f = 1.
    Derive: let the factor of amdahl_speedup grow without bound: only the untouched rest of the step
    is left. Dimensionless.
    """
    check_fraction("fraction", fraction)
    ### BEGIN SOLUTION
    if fraction == 1:
        return math.inf
    return 1 / (1 - fraction)
    ### END SOLUTION


def step_time_reduction(fraction: float, factor: float) -> float:
    """Share of the step time saved when a part taking `fraction` of it gets `factor` times faster, a
    fraction (0.25 = the step takes 25 % less time).

    Formula: f * (1 - 1/k).
    Derive: the saving is what the part loses; the rest does not change. It is not the throughput
    gain (speedup minus 1), which is larger: the source lab quoted one for the other.
    """
    check_fraction("fraction", fraction)
    check_positive("factor", factor)
    ### BEGIN SOLUTION
    return fraction * (1 - 1 / factor)
    ### END SOLUTION


def multi_component_speedup(profile: dict[str, float], factors: dict[str, float]) -> float:
    """End-to-end speedup when several parts of a step get faster at once.

    Formula: S = 1 / sum_i(f_i / k_i), the multi-part form of Amdahl's law (Hennessy & Patterson sec. 1.9).
    Derive: profile: name -> share of the step time (summing to 1); factors: name -> speedup of that
    part (a part missing from factors is unchanged). Each part's new time is its share over its
    factor; the speedup is old time (1) over their sum. Dimensionless.
    """
    _check_profile(profile)
    _check_named_numbers("factors", factors, profile, check_positive)
    ### BEGIN SOLUTION
    new_time = sum(share / factors.get(name, 1) for name, share in profile.items())
    return 1 / new_time
    ### END SOLUTION


def hotspot(profile: dict[str, float]) -> str:
    """Name of the part with the largest share of the step time (profile: name -> share summing
    to 1); on a tie, the first such name in the profile's order. What a profiler shows first.
    """
    _check_profile(profile)
    ### BEGIN SOLUTION
    return max(profile, key=profile.get)
    ### END SOLUTION


def gustafson_speedup(n: int, serial_fraction: float) -> float:
    """Scaled speedup on n processors when the work grows with n and the serial part does not
    (Gustafson 1988).

    Formula: S = n - s (n - 1), s = serial_fraction.
    Derive: serial_fraction is the share of the *parallel run's* time that is serial (not of one
    processor's, as in Amdahl). Ask how long one processor would need for the parallel run's work:
    the serial part once, the parallel part n times over; divide by the parallel run's time.
    """
    check_count("n", n)
    check_fraction("serial_fraction", serial_fraction)
    ### BEGIN SOLUTION
    return n - serial_fraction * (n - 1)
    ### END SOLUTION


def roofline_flops(intensity: float, peak_flops: float, bandwidth: float) -> float:
    """Attainable FLOP/s of a kernel with arithmetic intensity `intensity` (FLOP per byte of memory
    traffic) on a machine with `peak_flops` (FLOP/s) and memory `bandwidth` (bytes/s):
    min(peak, I * B)  (Williams, Waterman & Patterson 2009).

    The roofline model itself: memory traffic caps the FLOP/s below the compute peak.
    """
    check_nonneg("intensity", intensity)
    check_positive("peak_flops", peak_flops)
    check_positive("bandwidth", bandwidth)
    ### BEGIN SOLUTION
    return min(peak_flops, intensity * bandwidth)
    ### END SOLUTION


def ridge_point(peak_flops: float, bandwidth: float) -> float:
    """Arithmetic intensity in FLOP/byte where the roofline turns from memory- to compute-bound:
    peak_flops / bandwidth (Williams et al. 2009). H100 SXM dense BF16: 989e12 / 3.35e12 ~ 295.
    """
    check_positive("peak_flops", peak_flops)
    check_positive("bandwidth", bandwidth)
    ### BEGIN SOLUTION
    return peak_flops / bandwidth
    ### END SOLUTION


def mfu(tokens_per_s: float, flops_per_token: float, n_gpus: int, peak_flops: float) -> float:
    """Model-FLOP utilisation, a fraction: tokens/s * FLOP/token / (n_gpus * peak_flops).

    The definition (Chowdhery et al. 2022, PaLM, App. B): flops_per_token counts the model's training
    FLOP (6 N for a dense transformer, plus attention) and peak_flops is one GPU's dense peak in
    FLOP/s (not the sparse figure).
    """
    check_nonneg("tokens_per_s", tokens_per_s)
    check_nonneg("flops_per_token", flops_per_token)
    check_count("n_gpus", n_gpus)
    check_positive("peak_flops", peak_flops)
    ### BEGIN SOLUTION
    return tokens_per_s * flops_per_token / (n_gpus * peak_flops)
    ### END SOLUTION


def mfu_gain(base_mfu: float, fraction: float, factor: float) -> float:
    """MFU gained (a fraction: 0.028 = +2.8 points) when a part taking `fraction` of the step time
    gets `factor` times faster.

    Formula: base_mfu * (S - 1), S the Amdahl speedup.
    Derive: the FLOP per step do not change, so MFU rises as the step time falls: by the Amdahl
    speedup of the fix. The gain is the new MFU less base_mfu, in fraction points (not percent).
    """
    check_fraction("base_mfu", base_mfu, open_low=True)
    check_fraction("fraction", fraction)
    check_positive("factor", factor)
    ### BEGIN SOLUTION
    return base_mfu * (amdahl_speedup(fraction, factor) - 1)
    ### END SOLUTION


def best_fix(profile: dict[str, float], factors: dict[str, float], cost_weeks: dict[str, float],
             budget_weeks: float) -> str:
    """The single fix with the most MFU gain per engineer-week among those within the budget.

    Derive: profile: part -> share of the step time (summing to 1). Each fix is named after the part
    it speeds up: factors: part -> speedup the fix gives that part; cost_weeks: part -> engineer-weeks
    the fix costs (> 0, same names as factors). A fix is affordable when its cost is within
    budget_weeks. Rank the affordable fixes by their MFU gain (mfu_gain) per week of cost: base_mfu
    scales every gain alike, so it cannot change the ranking. Returns the fix's name, the first in
    `factors`' order on a tie, or "none" when no affordable fix gains anything.
    """
    _check_profile(profile)
    _check_named_numbers("factors", factors, profile, check_positive)
    _check_named_numbers("cost_weeks", cost_weeks, profile, check_positive)
    if set(cost_weeks) != set(factors):
        raise ValueError("cost_weeks must name exactly the fixes in factors")
    check_nonneg("budget_weeks", budget_weeks)
    ### BEGIN SOLUTION
    best_name, best_rate = "none", 0.0
    for name, factor in factors.items():
        if cost_weeks[name] > budget_weeks:
            continue
        rate = (amdahl_speedup(profile[name], factor) - 1) / cost_weeks[name]
        if rate > best_rate:
            best_name, best_rate = name, rate
    return best_name
    ### END SOLUTION


def budget_left_weeks(cost_weeks: dict[str, float], budget_weeks: float) -> float:
    """Engineer-weeks left after a plan doing every fix in cost_weeks (fix -> engineer-weeks):
    budget_weeks - sum(costs).

    A definition. Below 0 the plan is over budget, the lab's failure state; a plan at exactly the
    budget leaves 0 and fits.
    """
    if not isinstance(cost_weeks, dict):
        raise ValueError(f"cost_weeks must be a dict name -> weeks, got {cost_weeks!r}")
    for name, weeks in cost_weeks.items():
        check_nonneg(f"cost_weeks[{name!r}]", weeks)
    check_nonneg("budget_weeks", budget_weeks)
    ### BEGIN SOLUTION
    return budget_weeks - math.fsum(cost_weeks.values())
    ### END SOLUTION
