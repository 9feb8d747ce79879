"""Lab 01 — scaling.py, a student's complete solution (demo class: `correct`)."""
from __future__ import annotations

import math

from _domain import check_count, check_fraction, check_nonneg, check_positive
from constants import HOURS_PER_YEAR


def training_time_s(total_flops: float, n_gpus: int, peak_flops: float, mfu: float) -> float:
    check_nonneg("total_flops", total_flops)
    n_gpus = check_count("n_gpus", n_gpus)
    check_positive("peak_flops", peak_flops)
    check_fraction("mfu", mfu, open_low=True)
    effective_flops_per_s = n_gpus * peak_flops * mfu
    return total_flops / effective_flops_per_s


def data_parallel_speedup(compute_s_1gpu: float, n: int, grad_bytes: float, alpha_s: float,
                          bandwidth: float) -> float:
    n = check_count("n", n)
    # ring AllReduce: n-1 reduce-scatter steps + n-1 all-gather steps, each moving M/n bytes
    steps = 2 * (n - 1)
    allreduce_s = steps * (alpha_s + grad_bytes / n / bandwidth)
    return compute_s_1gpu / (compute_s_1gpu / n + allreduce_s)


def scaling_efficiency(speedup: float, n: int) -> float:
    return speedup / check_count("n", n)


def on_demand_cost(n_gpus: int, years: float, usd_per_gpu_hour: float, utilization: float) -> float:
    busy_gpu_hours = n_gpus * years * HOURS_PER_YEAR * utilization
    return busy_gpu_hours * usd_per_gpu_hour


def reserved_cost(n_gpus: int, years: float, usd_per_gpu_hour: float, discount: float) -> float:
    committed_gpu_hours = n_gpus * years * HOURS_PER_YEAR
    return committed_gpu_hours * usd_per_gpu_hour * (1 - discount)


def _energy_usd_per_gpu_hour(watts_per_gpu, pue, usd_per_kwh):
    return watts_per_gpu / 1000 * pue * usd_per_kwh


def on_prem_cost(n_gpus: int, years: float, capex_per_gpu: float, watts_per_gpu: float, pue: float,
                 usd_per_kwh: float, utilization: float, staff_usd_per_gpu_year: float,
                 idle_power_fraction: float = 0.0) -> float:
    hours = years * HOURS_PER_YEAR
    busy_hours = hours * utilization
    idle_hours = hours - busy_hours
    energy = _energy_usd_per_gpu_hour(watts_per_gpu, pue, usd_per_kwh) * (busy_hours + idle_power_fraction * idle_hours)
    return n_gpus * (capex_per_gpu + staff_usd_per_gpu_year * years + energy)


def breakeven_utilization(years: float, usd_per_gpu_hour: float, capex_per_gpu: float, watts_per_gpu: float,
                          pue: float, usd_per_kwh: float, staff_usd_per_gpu_year: float,
                          idle_power_fraction: float = 0.0) -> float:
    hours = years * HOURS_PER_YEAR
    energy = _energy_usd_per_gpu_hour(watts_per_gpu, pue, usd_per_kwh)
    # per GPU: price * hours * U = capex + staff * years + energy * hours * (idle + (1 - idle) * U)
    slope = hours * (usd_per_gpu_hour - energy * (1 - idle_power_fraction))
    if slope <= 0:
        return math.inf
    return (capex_per_gpu + staff_usd_per_gpu_year * years + energy * hours * idle_power_fraction) / slope


def cheapest_option(n_gpus: int, years: float, utilization: float, usd_per_gpu_hour: float,
                    reserved_discount: float, capex_per_gpu: float, watts_per_gpu: float, pue: float,
                    usd_per_kwh: float, staff_usd_per_gpu_year: float, idle_power_fraction: float = 0.0) -> str:
    best, best_cost = None, math.inf
    for name, cost in (
        ("on_demand", on_demand_cost(n_gpus, years, usd_per_gpu_hour, utilization)),
        ("reserved", reserved_cost(n_gpus, years, usd_per_gpu_hour, reserved_discount)),
        ("on_prem", on_prem_cost(n_gpus, years, capex_per_gpu, watts_per_gpu, pue, usd_per_kwh, utilization,
                                 staff_usd_per_gpu_year, idle_power_fraction)),
    ):
        if cost < best_cost:
            best, best_cost = name, cost
    return best
