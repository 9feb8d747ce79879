"""Lab 01 — the scale illusion and fleet TCO: strong scaling of data-parallel training, and the
3-year cost of on-demand, reserved and on-prem GPU fleets.

Conventions (all functions): SI units — bytes, seconds, bytes/s (per direction), FLOP, FLOP/s,
watts, USD (not $M). Fractions (utilization, MFU, discount) are in [0, 1], never percent. Counts are
positive ints. Functions are pure: no printing, no globals.
Scaling model: one training step costs compute_s_1gpu / n of compute on n GPUs plus a ring AllReduce
of the gradients, which does not shrink with n (Thakur et al., IJHPCA 2005), so efficiency falls as n
grows. Cost model: first-principles TCO (Barroso, Hölzle & Ranganathan, The Datacenter as a Computer,
3rd ed., ch. 6): on-prem = capex + staff + energy, energy = watts x hours x PUE x $/kWh.
"""
from __future__ import annotations

import math

from ._domain import check_count, check_fraction, check_nonneg, check_positive
from .constants import HOURS_PER_YEAR


__all__ = [
    "training_time_s", "data_parallel_speedup", "scaling_efficiency", "on_demand_cost",
    "reserved_cost", "on_prem_cost", "breakeven_utilization", "cheapest_option",
]

OPTIONS = ("on_demand", "reserved", "on_prem")  # cheapest_option's answers, in tie-break order


def _check_pue(pue) -> float:
    # PUE = facility power / IT power, so it is at least 1 (The Green Grid, WP#49).
    pue = check_positive("pue", pue)
    if pue < 1:
        raise ValueError(f"pue must be >= 1 (facility power / IT power), got {pue!r}")
    return pue


def _check_on_prem(capex_per_gpu, watts_per_gpu, pue, usd_per_kwh, staff_usd_per_gpu_year,
                   idle_power_fraction) -> None:
    check_nonneg("capex_per_gpu", capex_per_gpu)
    check_nonneg("watts_per_gpu", watts_per_gpu)
    _check_pue(pue)
    check_nonneg("usd_per_kwh", usd_per_kwh)
    check_nonneg("staff_usd_per_gpu_year", staff_usd_per_gpu_year)
    check_fraction("idle_power_fraction", idle_power_fraction)


# --- Act I: the scale illusion -------------------------------------------------------------------

def training_time_s(total_flops: float, n_gpus: int, peak_flops: float, mfu: float) -> float:
    """Seconds to train on n_gpus GPUs with perfect scaling: total_flops / (n_gpus * peak_flops * mfu).

    The definition of MFU (Chowdhery et al. 2022): the useful share of the GPUs' dense peak.
    total_flops in FLOP (6 * params * tokens, Kaplan et al. 2020), peak_flops in FLOP/s per GPU (the
    dense figure: the source lab used the 2:4-sparsity peak, twice too high), mfu in (0, 1].
    """
    check_nonneg("total_flops", total_flops)
    n_gpus = check_count("n_gpus", n_gpus)
    check_positive("peak_flops", peak_flops)
    check_fraction("mfu", mfu, open_low=True)
    ### BEGIN SOLUTION
    return total_flops / (n_gpus * peak_flops * mfu)
    ### END SOLUTION


def data_parallel_speedup(compute_s_1gpu: float, n: int, grad_bytes: float, alpha_s: float,
                          bandwidth: float) -> float:
    """Strong-scaling speedup of one data-parallel training step on n GPUs over one GPU.

    Formula: S(n) = T1 / (T1 / n + T_ring), T_ring = 2(n-1) alpha_s + 2(n-1)/n * grad_bytes / bandwidth
    (Thakur et al. 2005).
    Derive: the step's compute (compute_s_1gpu seconds at one GPU's pace) splits evenly over n GPUs;
    the ring AllReduce of the whole gradient (grad_bytes, over a link of alpha_s and bandwidth bytes/s
    per direction, Lab 06's ring_allreduce_time) does not shrink, and nothing overlaps. (A model too
    large for one GPU is sharded with ZeRO-3, which also all-gathers the weights twice a step: its
    exchange moves what an AllReduce of 1.5x the gradient moves, Rajbhandari et al. 2020, sec. 7.2.2.) Speedup is
    one GPU's step time over n GPUs' step time. At n = 1 there is no AllReduce: S = 1; S never
    exceeds n (the source lab scaled n by two free sliders, an efficiency and a
    communication share, instead of timing the AllReduce).
    """
    check_positive("compute_s_1gpu", compute_s_1gpu)
    n = check_count("n", n)
    check_nonneg("grad_bytes", grad_bytes)
    check_nonneg("alpha_s", alpha_s)
    check_positive("bandwidth", bandwidth)
    ### BEGIN SOLUTION
    # written out, not imported from collectives: the student's folder ships scaling.py alone
    ring_s = 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * grad_bytes / bandwidth
    return compute_s_1gpu / (compute_s_1gpu / n + ring_s)
    ### END SOLUTION


def scaling_efficiency(speedup: float, n: int) -> float:
    """Parallel (scaling) efficiency: speedup / n, a fraction (1 = perfect linear scaling).

    A definition; speedup is dimensionless (T1 / Tn), n the number of GPUs.
    """
    check_positive("speedup", speedup)
    n = check_count("n", n)
    ### BEGIN SOLUTION
    return speedup / n
    ### END SOLUTION


# --- Act II: fleet TCO ---------------------------------------------------------------------------

def on_demand_cost(n_gpus: int, years: float, usd_per_gpu_hour: float, utilization: float) -> float:
    """USD for on-demand cloud GPUs, paying only for the hours used.

    Formula: n_gpus * years * 8760 h * utilization * usd_per_gpu_hour.
    Derive: count the GPU-hours the fleet is busy over the years (a year is 8760 hours,
    utilization the busy share, 0-1) and price each at the hourly list price.
    """
    n_gpus = check_count("n_gpus", n_gpus)
    check_nonneg("years", years)
    check_nonneg("usd_per_gpu_hour", usd_per_gpu_hour)
    check_fraction("utilization", utilization)
    ### BEGIN SOLUTION
    return n_gpus * years * HOURS_PER_YEAR * utilization * usd_per_gpu_hour
    ### END SOLUTION


def reserved_cost(n_gpus: int, years: float, usd_per_gpu_hour: float, discount: float) -> float:
    """USD for reserved cloud GPUs at a discount off the list price.

    Formula: n_gpus * years * 8760 h * usd_per_gpu_hour * (1 - discount).
    Derive: a reservation commits every hour of the term, busy or idle, so utilization does not
    enter; each committed GPU-hour costs the list price less the discount (a fraction, 0-1, not
    percent).
    """
    n_gpus = check_count("n_gpus", n_gpus)
    check_nonneg("years", years)
    check_nonneg("usd_per_gpu_hour", usd_per_gpu_hour)
    check_fraction("discount", discount)
    ### BEGIN SOLUTION
    return n_gpus * years * HOURS_PER_YEAR * usd_per_gpu_hour * (1 - discount)
    ### END SOLUTION


def on_prem_cost(n_gpus: int, years: float, capex_per_gpu: float, watts_per_gpu: float, pue: float,
                 usd_per_kwh: float, utilization: float, staff_usd_per_gpu_year: float,
                 idle_power_fraction: float = 0.0) -> float:
    """USD to buy and run an on-prem fleet: capex + staff + energy.

    Formula: n*capex_per_gpu + n*years*staff_usd_per_gpu_year
      + n*years*8760 h * (watts_per_gpu/1000 kW) * pue * usd_per_kwh * (U + (1-U)*idle_power_fraction).
    Derive: the purchase is paid once per GPU and the staff every year, whatever the utilization.
    Energy is paid per hour: a busy GPU draws watts_per_gpu, an idle one idle_power_fraction of
    it; convert W to kW for a price per kWh, and PUE >= 1 scales IT power to facility power,
    cooling included (Barroso et al., The Datacenter as a Computer, ch. 5-6).
    """
    n_gpus = check_count("n_gpus", n_gpus)
    check_nonneg("years", years)
    check_fraction("utilization", utilization)
    _check_on_prem(capex_per_gpu, watts_per_gpu, pue, usd_per_kwh, staff_usd_per_gpu_year,
                   idle_power_fraction)
    ### BEGIN SOLUTION
    power_share = utilization + (1 - utilization) * idle_power_fraction  # mean draw / TDP
    energy_usd = years * HOURS_PER_YEAR * watts_per_gpu / 1000 * pue * usd_per_kwh * power_share
    return n_gpus * (capex_per_gpu + years * staff_usd_per_gpu_year + energy_usd)
    ### END SOLUTION


def breakeven_utilization(years: float, usd_per_gpu_hour: float, capex_per_gpu: float,
                          watts_per_gpu: float, pue: float, usd_per_kwh: float,
                          staff_usd_per_gpu_year: float, idle_power_fraction: float = 0.0) -> float:
    """Utilization U at which on-demand and on-prem cost the same (per GPU, so n cancels).

    Formula: with e = watts/1000 * pue * usd_per_kwh (USD per GPU-hour at full power), H = years * 8760 h:
    U = (capex + years*staff + H*e*idle) / (H * (price - e*(1 - idle))).
    Derive: write both bills for one GPU as a fixed part plus a part per busy hour, set them equal
    and solve for the utilization. Above U on-prem is cheaper; U > 1 means on-prem never pays off
    in `years`; math.inf when the hourly price does not cover the extra energy of a busy GPU over
    an idle one (nothing to solve).
    """
    check_positive("years", years)
    check_nonneg("usd_per_gpu_hour", usd_per_gpu_hour)
    _check_on_prem(capex_per_gpu, watts_per_gpu, pue, usd_per_kwh, staff_usd_per_gpu_year,
                   idle_power_fraction)
    ### BEGIN SOLUTION
    hours = years * HOURS_PER_YEAR
    energy_usd_per_hour = watts_per_gpu / 1000 * pue * usd_per_kwh
    margin_usd_per_hour = usd_per_gpu_hour - energy_usd_per_hour * (1 - idle_power_fraction)
    if margin_usd_per_hour <= 0:
        return math.inf
    fixed_usd = capex_per_gpu + years * staff_usd_per_gpu_year + hours * energy_usd_per_hour * idle_power_fraction
    return fixed_usd / (hours * margin_usd_per_hour)
    ### END SOLUTION


def cheapest_option(n_gpus: int, years: float, utilization: float, usd_per_gpu_hour: float,
                    reserved_discount: float, capex_per_gpu: float, watts_per_gpu: float, pue: float,
                    usd_per_kwh: float, staff_usd_per_gpu_year: float,
                    idle_power_fraction: float = 0.0) -> str:
    """"on_demand", "reserved" or "on_prem": the path with the lowest TCO for the scenario.

    Derive: price all three with your on_demand_cost, reserved_cost and on_prem_cost; a tie goes to
    the earlier of that order.
    """
    n_gpus = check_count("n_gpus", n_gpus)
    check_nonneg("years", years)
    check_fraction("utilization", utilization)
    check_nonneg("usd_per_gpu_hour", usd_per_gpu_hour)
    check_fraction("reserved_discount", reserved_discount)
    _check_on_prem(capex_per_gpu, watts_per_gpu, pue, usd_per_kwh, staff_usd_per_gpu_year,
                   idle_power_fraction)
    ### BEGIN SOLUTION
    costs = {
        "on_demand": on_demand_cost(n_gpus, years, usd_per_gpu_hour, utilization),
        "reserved": reserved_cost(n_gpus, years, usd_per_gpu_hour, reserved_discount),
        "on_prem": on_prem_cost(n_gpus, years, capex_per_gpu, watts_per_gpu, pue, usd_per_kwh,
                                utilization, staff_usd_per_gpu_year, idle_power_fraction),
    }
    return min(costs, key=costs.get)  # min keeps the first of equal values: the tie-break order
    ### END SOLUTION
