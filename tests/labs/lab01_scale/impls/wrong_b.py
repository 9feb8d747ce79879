"""Every function wrong in another plausible way (slips students make)."""
HOURS = 8760


def training_time_s(total_flops, n_gpus, peak_flops, mfu):
    # forgets the utilisation: the GPU runs at its peak
    return total_flops / (n_gpus * peak_flops)


def data_parallel_speedup(compute_s_1gpu, n, grad_bytes, alpha_s, bandwidth):
    # counts only the reduce-scatter half of the ring
    comm = (n - 1) * alpha_s + (n - 1) / n * grad_bytes / bandwidth
    return compute_s_1gpu / (compute_s_1gpu / n + comm)


def scaling_efficiency(speedup, n):
    # inverted, like the lab's dead-code speedup (seed line 1166)
    return n / speedup


def on_demand_cost(n_gpus, years, usd_per_gpu_hour, utilization):
    # bills every hour, busy or not
    return n_gpus * years * HOURS * usd_per_gpu_hour


def reserved_cost(n_gpus, years, usd_per_gpu_hour, discount):
    # reads the discount as the share paid
    return n_gpus * years * HOURS * usd_per_gpu_hour * discount


def on_prem_cost(n_gpus, years, capex_per_gpu, watts_per_gpu, pue, usd_per_kwh, utilization,
                 staff_usd_per_gpu_year, idle_power_fraction=0.0):
    # the lab's intro text: "cooling (1.4x power)" on top of power (seed line 2274)
    share = utilization + (1 - utilization) * idle_power_fraction
    power = n_gpus * years * HOURS * watts_per_gpu / 1000 * usd_per_kwh * share
    return n_gpus * capex_per_gpu + n_gpus * years * staff_usd_per_gpu_year + power + power * pue


def breakeven_utilization(years, usd_per_gpu_hour, capex_per_gpu, watts_per_gpu, pue, usd_per_kwh,
                          staff_usd_per_gpu_year, idle_power_fraction=0.0):
    # the lab's intro: "zero marginal cost per GPU-hour after purchase" (seed line 2271)
    if usd_per_gpu_hour <= 0:
        return float("inf")
    return (capex_per_gpu + years * staff_usd_per_gpu_year) / (years * HOURS * usd_per_gpu_hour)


def cheapest_option(n_gpus, years, utilization, usd_per_gpu_hour, reserved_discount, capex_per_gpu,
                    watts_per_gpu, pue, usd_per_kwh, staff_usd_per_gpu_year, idle_power_fraction=0.0):
    # the breakeven logic alone: compares on-demand with on-prem and forgets reserved
    on_demand = n_gpus * years * HOURS * usd_per_gpu_hour * utilization
    energy = watts_per_gpu / 1000 * pue * usd_per_kwh * (utilization + (1 - utilization) * idle_power_fraction)
    on_prem = n_gpus * (capex_per_gpu + years * staff_usd_per_gpu_year + years * HOURS * energy)
    return "on_demand" if on_demand <= on_prem else "on_prem"
