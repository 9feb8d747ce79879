"""Lab 09, wrong in plausible ways (set B): every function has a different mistake, several the source lab's."""


def amdahl_speedup(fraction, factor):
    # multiplies the part's time by k instead of dividing
    return 1 / ((1 - fraction) + fraction * factor)


def amdahl_limit(fraction):
    # the speedup limit of the *other* share: 1/f
    return 1 / fraction if fraction > 0 else float("inf")


def step_time_reduction(fraction, factor):
    # forgets the share: "a 3x kernel cuts the step by 67 %"
    return 1 - 1 / factor


def multi_component_speedup(profile, factors):
    # adds the one-part gains: 1 + sum(S_i - 1)
    gain = 0.0
    for name, k in factors.items():
        f = profile[name]
        gain += 1 / ((1 - f) + f / k) - 1
    return 1 + gain


def hotspot(profile):
    # the smallest share
    return min(profile, key=profile.get)


def gustafson_speedup(n, serial_fraction):
    # forgets that the serial part still runs: n(1 - s)
    return n * (1 - serial_fraction)


def roofline_flops(intensity, peak_flops, bandwidth):
    # the memory slope without the compute ceiling
    return intensity * bandwidth


def ridge_point(peak_flops, bandwidth):
    # the lab's B-18: the 2:4-sparse peak (2x dense), ridge 590.7 instead of 295 FLOP/byte
    return 2 * peak_flops / bandwidth


def mfu(tokens_per_s, flops_per_token, n_gpus, peak_flops):
    # forgets the GPU count: one GPU's peak for the whole cluster
    return tokens_per_s * flops_per_token / peak_flops


def mfu_gain(base_mfu, fraction, factor):
    # the lab's MFU points (percent) instead of a fraction
    return 100 * base_mfu * (1 / ((1 - fraction) + fraction / factor) - 1)


def best_fix(profile, factors, cost_weeks, budget_weeks):
    # the best gain per week, but the budget is never checked
    best, best_rate = "none", 0.0
    for name, k in factors.items():
        f = profile[name]
        rate = (1 / ((1 - f) + f / k) - 1) / cost_weeks[name]
        if rate > best_rate:
            best, best_rate = name, rate
    return best


def budget_left_weeks(cost_weeks, budget_weeks):
    # the lab's B-14: 0.5 week charged even for an empty plan
    return budget_weeks - (0.5 + sum(cost_weeks.values()))
