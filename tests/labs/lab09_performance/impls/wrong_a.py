"""Lab 09, wrong in plausible ways (set A): every function has a different mistake, several the source lab's."""


def amdahl_speedup(fraction, factor):
    # averages the speeds instead of the times: f*k + (1 - f)
    return fraction * factor + (1 - fraction)


def amdahl_limit(fraction):
    # the lab's takeaway conflation: reports the ceiling as a gain (+13.6 % -> 0.136), not a speedup
    return 1 / (1 - fraction) - 1 if fraction < 1 else float("inf")


def step_time_reduction(fraction, factor):
    # the lab's B-1: the throughput gain S - 1 (+8.7 %) taken for the step-time cut (-8.0 %)
    return 1 / ((1 - fraction) + fraction / factor) - 1


def multi_component_speedup(profile, factors):
    # multiplies one-part Amdahl speedups, as if every share stayed its old share
    total = 1.0
    for name, k in factors.items():
        f = profile[name]
        total *= 1 / ((1 - f) + f / k)
    return total


def hotspot(profile):
    # max() over a dict without key=: the last name alphabetically
    return max(profile)


def gustafson_speedup(n, serial_fraction):
    # Amdahl's fixed-size speedup instead of the scaled one
    return 1 / (serial_fraction + (1 - serial_fraction) / n)


def roofline_flops(intensity, peak_flops, bandwidth):
    # the higher roof instead of the lower
    return max(peak_flops, intensity * bandwidth)


def ridge_point(peak_flops, bandwidth):
    # upside down: bytes per FLOP
    return bandwidth / peak_flops


def mfu(tokens_per_s, flops_per_token, n_gpus, peak_flops):
    # the lab's percent
    return 100 * tokens_per_s * flops_per_token / (n_gpus * peak_flops)


def mfu_gain(base_mfu, fraction, factor):
    # the step-time cut instead of the throughput gain: base * f(1 - 1/k)
    return base_mfu * fraction * (1 - 1 / factor)


def best_fix(profile, factors, cost_weeks, budget_weeks):
    # the lab's option A: the largest MFU gain within budget, cost ignored
    best, best_gain = "none", 0.0
    for name, k in factors.items():
        if cost_weeks[name] <= budget_weeks:
            f = profile[name]
            gain = 1 / ((1 - f) + f / k) - 1
            if gain > best_gain:
                best, best_gain = name, gain
    return best


def budget_left_weeks(cost_weeks, budget_weeks):
    # each fix checked alone against the budget (the lab's B-21: one lever never exceeds it)
    return budget_weeks - max(cost_weeks.values(), default=0.0)
