"""partly_wrong: the source lab's own mistakes (docs/errata/lab09_performance.md): the throughput gain
for the step-time cut, MFU in percent, the biggest affordable gain instead of the best gain per week."""


def step_time_reduction(fraction: float, factor: float) -> float:
    check_fraction("fraction", fraction)
    check_positive("factor", factor)
    # 8.7 % faster = the 8 % the team measured
    return amdahl_speedup(fraction, factor) - 1


def mfu(tokens_per_s: float, flops_per_token: float, n_gpus: int, peak_flops: float) -> float:
    check_nonneg("tokens_per_s", tokens_per_s)
    check_nonneg("flops_per_token", flops_per_token)
    check_count("n_gpus", n_gpus)
    check_positive("peak_flops", peak_flops)
    # MFU in percent, like the profiler shows it
    return 100 * tokens_per_s * flops_per_token / (n_gpus * peak_flops)


def best_fix(profile: dict[str, float], factors: dict[str, float], cost_weeks: dict[str, float],
             budget_weeks: float) -> str:
    _check_profile(profile)
    _check_named_numbers("factors", factors, profile, check_positive)
    _check_named_numbers("cost_weeks", cost_weeks, profile, check_positive)
    if set(cost_weeks) != set(factors):
        raise ValueError("cost_weeks must name exactly the fixes in factors")
    check_nonneg("budget_weeks", budget_weeks)
    # the fix with the biggest MFU gain that we can afford
    choice, best_gain = "none", 0.0
    for part in factors:
        if cost_weeks[part] <= budget_weeks:
            gain = amdahl_speedup(profile[part], factors[part]) - 1
            if gain > best_gain:
                choice, best_gain = part, gain
    return choice
