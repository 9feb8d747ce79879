"""partly_wrong: the source lab's own mistakes (labs/lab09_performance/errata.md), each the reference
with one slip (domain checks are the reference's): the throughput gain for the step-time cut, MFU in
percent, the biggest affordable gain instead of the best gain per week."""
_right_mfu = mfu
_right_best_fix = best_fix


def step_time_reduction(fraction: float, factor: float) -> float:
    check_fraction("fraction", fraction)
    check_positive("factor", factor)
    # 8.7 % faster = the 8 % the team measured
    return amdahl_speedup(fraction, factor) - 1


def mfu(tokens_per_s: float, flops_per_token: float, n_gpus: int, peak_flops: float) -> float:
    # MFU in percent, like the profiler shows it
    return 100 * _right_mfu(tokens_per_s, flops_per_token, n_gpus, peak_flops)


def best_fix(profile: dict[str, float], factors: dict[str, float], cost_weeks: dict[str, float],
             budget_weeks: float) -> str:
    _right_best_fix(profile, factors, cost_weeks, budget_weeks)  # only for its domain checks
    # the fix with the biggest MFU gain that we can afford: every affordable fix costs "one week"
    one_week = {name: 1.0 if cost_weeks[name] <= budget_weeks else 2.0 for name in cost_weeks}
    return _right_best_fix(profile, factors, one_week, 1.0)
