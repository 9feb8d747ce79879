"""A correct scaling.py written differently from the reference: other algebra, numpy, ints.
It must get full marks on every function item."""
import numpy as np

HOURS = 365 * 24


def training_time_s(total_flops, n_gpus, peak_flops, mfu):
    return total_flops / n_gpus / peak_flops / mfu


def data_parallel_speedup(compute_s_1gpu, n, grad_bytes, alpha_s, bandwidth):
    # S = n / (1 + n * T_comm / T1), with the ring written as 2(1 - 1/n)
    comm = 2 * (n - 1) * alpha_s + 2 * (1 - 1 / n) * (grad_bytes / bandwidth)
    return float(n / (1 + n * comm / compute_s_1gpu))


def scaling_efficiency(speedup, n):
    return float(np.divide(speedup, n))


def on_demand_cost(n_gpus, years, usd_per_gpu_hour, utilization):
    busy_hours = utilization * HOURS * years
    return float(np.prod([n_gpus, busy_hours, usd_per_gpu_hour]))


def reserved_cost(n_gpus, years, usd_per_gpu_hour, discount):
    hourly = usd_per_gpu_hour - usd_per_gpu_hour * discount
    return n_gpus * hourly * HOURS * years


def on_prem_cost(n_gpus, years, capex_per_gpu, watts_per_gpu, pue, usd_per_kwh, utilization,
                 staff_usd_per_gpu_year, idle_power_fraction=0.0):
    busy_kwh = watts_per_gpu * utilization * HOURS * years / 1000
    idle_kwh = watts_per_gpu * idle_power_fraction * (1 - utilization) * HOURS * years / 1000
    power = (busy_kwh + idle_kwh) * usd_per_kwh
    cooling = power * (pue - 1)
    return n_gpus * capex_per_gpu + n_gpus * staff_usd_per_gpu_year * years + n_gpus * (power + cooling)


def breakeven_utilization(years, usd_per_gpu_hour, capex_per_gpu, watts_per_gpu, pue, usd_per_kwh,
                          staff_usd_per_gpu_year, idle_power_fraction=0.0):
    kw_cost = watts_per_gpu * pue * usd_per_kwh / 1000          # USD per busy hour
    per_hour_fixed = capex_per_gpu / (years * HOURS) + staff_usd_per_gpu_year / HOURS + kw_cost * idle_power_fraction
    margin = usd_per_gpu_hour - kw_cost + kw_cost * idle_power_fraction
    if margin <= 0:
        return float("inf")
    return per_hour_fixed / margin


def cheapest_option(n_gpus, years, utilization, usd_per_gpu_hour, reserved_discount, capex_per_gpu,
                    watts_per_gpu, pue, usd_per_kwh, staff_usd_per_gpu_year, idle_power_fraction=0.0):
    ranked = sorted([
        (on_demand_cost(n_gpus, years, usd_per_gpu_hour, utilization), 0, "on_demand"),
        (reserved_cost(n_gpus, years, usd_per_gpu_hour, reserved_discount), 1, "reserved"),
        (on_prem_cost(n_gpus, years, capex_per_gpu, watts_per_gpu, pue, usd_per_kwh, utilization,
                      staff_usd_per_gpu_year, idle_power_fraction), 2, "on_prem"),
    ])
    return ranked[0][2]
