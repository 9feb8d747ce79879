"""Lab 09, written differently but correctly: other algebra, numpy, ints, no input checks.

Must get full marks on every function item (validation is not graded).
"""
import numpy as np


def amdahl_speedup(fraction, factor):
    # k / (k(1-f) + f): the same law with the denominator multiplied by k
    return float(factor / (factor * (1.0 - fraction) + fraction))


def amdahl_limit(fraction):
    if fraction >= 1:
        return float("inf")
    return float(np.float64(1.0) / (np.float64(1.0) - fraction))


def step_time_reduction(fraction, factor):
    return fraction - fraction / factor        # old share minus new share


def multi_component_speedup(profile, factors):
    names = list(profile)
    shares = np.array([profile[n] for n in names], dtype=float)
    ks = np.array([factors.get(n, 1.0) for n in names], dtype=float)
    return float(1.0 / np.sum(shares / ks))


def hotspot(profile):
    # a stable sort keeps the first of equal shares first
    return sorted(profile.items(), key=lambda item: -item[1])[0][0]


def gustafson_speedup(n, serial_fraction):
    return serial_fraction + (1 - serial_fraction) * n


def roofline_flops(intensity, peak_flops, bandwidth):
    memory_bound = intensity * bandwidth
    return float(memory_bound) if memory_bound < peak_flops else float(peak_flops)


def ridge_point(peak_flops, bandwidth):
    return peak_flops * (1.0 / bandwidth)


def mfu(tokens_per_s, flops_per_token, n_gpus, peak_flops):
    per_gpu = tokens_per_s * flops_per_token / n_gpus
    return per_gpu / peak_flops


def mfu_gain(base_mfu, fraction, factor):
    new_time = 1 - fraction + fraction / factor
    return base_mfu * (1 - new_time) / new_time     # base/new_time - base


def best_fix(profile, factors, cost_weeks, budget_weeks):
    candidates = []
    for name in factors:
        if cost_weeks[name] <= budget_weeks:
            new_time = 1 - profile[name] + profile[name] / factors[name]
            candidates.append((name, (1 / new_time - 1) / cost_weeks[name]))
    candidates = [c for c in candidates if c[1] > 0]
    if not candidates:
        return "none"
    return max(candidates, key=lambda c: c[1])[0]


def budget_left_weeks(cost_weeks, budget_weeks):
    return budget_weeks - sum(sorted(cost_weeks.values()))
