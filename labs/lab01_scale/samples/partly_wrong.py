"""partly_wrong: the source lab's own formulas (labs/lab01_scale/errata.md)."""


def data_parallel_speedup(compute_s_1gpu: float, n: int, grad_bytes: float, alpha_s: float,
                          bandwidth: float) -> float:
    n = check_count("n", n)
    # ring AllReduce: n-1 reduce-scatter steps + n-1 all-gather steps, each moving M/n bytes
    allreduce_s = 2 * (n - 1) * (alpha_s + grad_bytes / n / bandwidth)
    # the lab's N x E x (1 - C): C = the communication share of one step
    comm_share = allreduce_s / (compute_s_1gpu + allreduce_s)
    return n * (1 - comm_share)


def on_prem_cost(n_gpus: int, years: float, capex_per_gpu: float, watts_per_gpu: float, pue: float,
                 usd_per_kwh: float, utilization: float, staff_usd_per_gpu_year: float,
                 idle_power_fraction: float = 0.0) -> float:
    hours = years * HOURS_PER_YEAR
    busy_hours = hours * utilization
    idle_hours = hours - busy_hours
    power = watts_per_gpu / 1000 * usd_per_kwh * (busy_hours + idle_power_fraction * idle_hours)
    energy = power + power * pue  # cooling is 1.4x power, says the lab
    return n_gpus * (capex_per_gpu + staff_usd_per_gpu_year * years + energy)


def breakeven_utilization(years: float, usd_per_gpu_hour: float, capex_per_gpu: float, watts_per_gpu: float,
                          pue: float, usd_per_kwh: float, staff_usd_per_gpu_year: float,
                          idle_power_fraction: float = 0.0) -> float:
    hours = years * HOURS_PER_YEAR
    energy = watts_per_gpu / 1000 * pue * usd_per_kwh
    # per GPU: price * hours * U = capex + staff * years + energy * hours * (idle + (1 - idle) * U)
    slope = hours * (usd_per_gpu_hour - energy * (1 - idle_power_fraction))
    if slope <= 0:
        return 1.0
    u = (capex_per_gpu + staff_usd_per_gpu_year * years + energy * hours * idle_power_fraction) / slope
    return max(0.0, min(1.0, u))  # a utilization is a fraction, so clamp it
