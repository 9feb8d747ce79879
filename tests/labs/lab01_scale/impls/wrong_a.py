"""Every function wrong the way the source lab is wrong (seed 004; errata labs/lab01_scale/errata.md)."""
HOURS = 8760


def training_time_s(total_flops, n_gpus, peak_flops, mfu):
    # the lab reports the single-GPU time in 365-day years (seed line 744)
    return total_flops / (n_gpus * peak_flops * mfu) / (86400 * 365)


def data_parallel_speedup(compute_s_1gpu, n, grad_bytes, alpha_s, bandwidth):
    # the lab's speedup N * E * (1 - C) with C the communication share of a full step: the
    # efficiency hardly depends on N (seed line 1172)
    comm = 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * grad_bytes / bandwidth
    return n * compute_s_1gpu / (compute_s_1gpu + comm)


def scaling_efficiency(speedup, n):
    # the lab's _eff_pct: percent, not a fraction
    return speedup / n * 100


def on_demand_cost(n_gpus, years, usd_per_gpu_hour, utilization):
    # the lab's $M (seed line 2677)
    return utilization * HOURS * years * n_gpus * usd_per_gpu_hour / 1e6


def reserved_cost(n_gpus, years, usd_per_gpu_hour, discount):
    # the lab's $M (seed line 2688)
    return HOURS * years * n_gpus * usd_per_gpu_hour * (1.0 - discount) / 1e6


def on_prem_cost(n_gpus, years, capex_per_gpu, watts_per_gpu, pue, usd_per_kwh, utilization,
                 staff_usd_per_gpu_year, idle_power_fraction=0.0):
    # the lab's model: power proportional to utilization, an idle GPU draws nothing (seed line 2699)
    power = n_gpus * watts_per_gpu / 1000 * utilization * HOURS * years * usd_per_kwh
    cooling = power * (pue - 1.0)
    return n_gpus * capex_per_gpu + power + cooling + n_gpus * staff_usd_per_gpu_year * years


def breakeven_utilization(years, usd_per_gpu_hour, capex_per_gpu, watts_per_gpu, pue, usd_per_kwh,
                          staff_usd_per_gpu_year, idle_power_fraction=0.0):
    # the lab's clamp to [0, 1] and 1.0 when the price does not cover energy (seed lines 2761-2764)
    fixed = capex_per_gpu + staff_usd_per_gpu_year * years
    power_factor = watts_per_gpu / 1000 * HOURS * years * usd_per_kwh * pue
    demand_factor = HOURS * years * usd_per_gpu_hour
    u = fixed / (demand_factor - power_factor) if (demand_factor - power_factor) > 0 else 1.0
    return max(0.0, min(1.0, u))


def cheapest_option(n_gpus, years, utilization, usd_per_gpu_hour, reserved_discount, capex_per_gpu,
                    watts_per_gpu, pue, usd_per_kwh, staff_usd_per_gpu_year, idle_power_fraction=0.0):
    # the lab's option C: "on-demand is always dominated by reserved" (seed line 3349)
    reserved = n_gpus * years * HOURS * usd_per_gpu_hour * (1 - reserved_discount)
    energy = watts_per_gpu / 1000 * pue * usd_per_kwh * (utilization + (1 - utilization) * idle_power_fraction)
    on_prem = n_gpus * (capex_per_gpu + years * staff_usd_per_gpu_year + years * HOURS * energy)
    return "reserved" if reserved <= on_prem else "on_prem"
