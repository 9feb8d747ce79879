"""Lab 09's open design challenge: a plan of the lab's three levers that reaches the target MFU
within the quarter's budget, under the lab's cost model (the source lab's Distributed Performance
Optimizer, whose success state was MFU >= 50 % within 8 weeks).

The levers and their cost model are the lab's (labs/lab09_performance/errata.md): micro-batches m
(the bubble's time goes as 1/m), gradient-compression ratio r (divides the AllReduce time) and
prefetch workers w (sqrt(w / 4) on data loading); a lever left at its baseline costs nothing
(errata #14). The Act II fixes of the declaration are single settings of these levers, which
`_assert_fixes_are_lever_settings` checks. MFU and cost come from reference/performance.py.
The cost is graded as a band, not a limit: within COST_BAND of the cheapest plan that reaches the
target (LEAST_WEEKS, searched over every whole m and w and any ratio r). The cheapest moves with the
student's version (its profile and base MFU), so a classmate's plan, copied, costs too much or falls
short; under a one-sided budget a plan with room to spare met every version's.
"""
from __future__ import annotations

import itertools
import math

from autograder.engine.challenges import DesignChallenge, Field, Invalid, Verdict
from labs.authoring import first_valid
from labs.lab09_performance.scenario import (ACT2_PROFILE, BASE_MFU, BUDGET_WEEKS, COMPRESSION_RANGE,
                                             COMPRESSION_RATIO, COMPRESSION_STEP, COMPRESSION_WEEKS,
                                             COMPRESSION_WEEKS_PER_RATIO, COSTS, FACTORS, MFU_TARGET,
                                             MICRO_BATCHES_BASE, MICRO_BATCHES_NEW, MICRO_BATCHES_RANGE,
                                             PIPELINE_WEEKS, PIPELINE_WEEKS_PER_MICROBATCH, PREFETCH_BASE,
                                             PREFETCH_NEW, PREFETCH_RANGE, PREFETCH_WEEKS,
                                             PREFETCH_WEEKS_PER_WORKER)
from reference import performance as ref


def lever_factors(microbatches: int, compression: float, prefetch_workers: int) -> dict[str, float]:
    """Speedup of each part of the Act II step: bubble m / m_base (time (p-1)/m at a fixed global
    batch, Narayanan et al. 2021), AllReduce r (bandwidth-bound), data loading max(1, sqrt(w / w_base))."""
    return {"pipeline_bubble": microbatches / MICRO_BATCHES_BASE, "allreduce": compression,
            "data_loading": max(1.0, math.sqrt(prefetch_workers / PREFETCH_BASE))}


def lever_costs(microbatches: int, compression: float, prefetch_workers: int) -> dict[str, float]:
    """Engineer-weeks of each lever moved from its baseline (the lab's cost model, cell 15)."""
    costs = {}
    if microbatches != MICRO_BATCHES_BASE:
        costs["pipeline_bubble"] = PIPELINE_WEEKS + PIPELINE_WEEKS_PER_MICROBATCH * max(0, microbatches - MICRO_BATCHES_BASE)
    if compression != 1:
        costs["allreduce"] = COMPRESSION_WEEKS + COMPRESSION_WEEKS_PER_RATIO * (compression - 1)
    if prefetch_workers > PREFETCH_BASE:
        costs["data_loading"] = PREFETCH_WEEKS + PREFETCH_WEEKS_PER_WORKER * (prefetch_workers - PREFETCH_BASE)
    return costs


def _assert_fixes_are_lever_settings() -> None:
    """The declaration's three lab fixes are these levers at one setting each (no drift)."""
    settings = {"pipeline_bubble": (MICRO_BATCHES_NEW, 1.0, PREFETCH_BASE),
                "allreduce": (MICRO_BATCHES_BASE, COMPRESSION_RATIO, PREFETCH_BASE),
                "data_loading": (MICRO_BATCHES_BASE, 1.0, PREFETCH_NEW)}
    for part, levers in settings.items():
        assert math.isclose(lever_factors(*levers)[part], FACTORS[part]), part
        assert lever_costs(*levers) == {part: COSTS[part]}, part


_assert_fixes_are_lever_settings()


def plan_mfu_and_cost(microbatches: int, compression: float, prefetch_workers: int) -> tuple[float, float]:
    """(MFU after the plan, engineer-weeks it costs), from reference/performance.py."""
    factors = lever_factors(microbatches, compression, prefetch_workers)
    mfu = BASE_MFU * ref.multi_component_speedup(ACT2_PROFILE, factors)
    weeks = BUDGET_WEEKS - ref.budget_left_weeks(lever_costs(microbatches, compression, prefetch_workers), BUDGET_WEEKS)
    return mfu, weeks


LEVERS = ("microbatches", "compression", "prefetch_workers")   # a design's fields, in lever_costs' order
COST_BAND = 0.05   # how far above the cheapest plan that reaches the target a plan's cost may be


def check(design) -> list[Verdict]:
    levers = tuple(design[name] for name in LEVERS)
    costs = lever_costs(*levers)
    if not costs:
        raise Invalid("the plan moves no lever from the baseline "
                      f"(m={MICRO_BATCHES_BASE}, compression 1, {PREFETCH_BASE} workers): it is today's cluster")
    mfu, weeks = plan_mfu_and_cost(*levers)
    spent = ", ".join(f"{part} {w:g}" for part, w in costs.items())
    return [Verdict(LEAST_WEEKS * (1 - 1e-9) <= weeks <= min(BUDGET_WEEKS, (1 + COST_BAND) * LEAST_WEEKS),
                    f"{weeks:.2f} engineer-weeks ({spent}) of {BUDGET_WEEKS:g}; the cheapest plan that reaches the "
                    f"target costs {LEAST_WEEKS:.2f}"),
            Verdict(mfu >= MFU_TARGET, f"MFU {mfu:.1%} (from {BASE_MFU:.1%})")]


def _least_r(microbatches: int, prefetch_workers: int) -> float | None:
    """The least compression ratio that, with these micro-batches and workers, reaches the target, or
    None when even the largest does not. The step's time is t(r) = t_rest + t_allreduce / r (r divides
    the AllReduce's time), read off the reference's speedup at r = 1 and 2; t(r) at most
    BASE_MFU / MFU_TARGET solves for r."""
    low, high = COMPRESSION_RANGE
    t1, t2 = (BASE_MFU / plan_mfu_and_cost(microbatches, r, prefetch_workers)[0] for r in (1.0, 2.0))
    allreduce = 2 * (t1 - t2)
    room = BASE_MFU / MFU_TARGET - (t1 - allreduce)
    if room <= 0 or allreduce / room > high:
        return None
    return max(low, allreduce / room)


def least_weeks() -> float:
    """The cost of the cheapest plan that reaches the target, the ratio r any real number (staff only):
    over whole micro-batches and workers (fewer than the baseline's workers gain nothing), the least r
    each needs. A plan that costs less does not reach the target."""
    best = math.inf
    for m in range(MICRO_BATCHES_RANGE[0], MICRO_BATCHES_RANGE[1] + 1):
        for w in range(PREFETCH_BASE, PREFETCH_RANGE[1] + 1):
            if _weeks((m, COMPRESSION_RANGE[0], w)) >= best:
                continue
            r = _least_r(m, w)
            if r is not None and lever_costs(m, r, w):
                best = min(best, _weeks((m, r, w)))
    return best


def _grid():
    steps = round((COMPRESSION_RANGE[1] - COMPRESSION_RANGE[0]) / COMPRESSION_STEP)
    return itertools.product(range(MICRO_BATCHES_RANGE[0], MICRO_BATCHES_RANGE[1] + 1),
                             [COMPRESSION_RANGE[0] + COMPRESSION_STEP * i for i in range(steps + 1)],
                             range(PREFETCH_RANGE[0], PREFETCH_RANGE[1] + 1))


def _meets(levers) -> bool:
    """Moves a lever, fits the budget and reaches the MFU target (what check() gives full marks)."""
    return bool(lever_costs(*levers)) and all(v.met for v in check(dict(zip(LEVERS, levers))))


def valid_plans() -> list[tuple[int, float, int]]:
    """Every plan on the lab's slider grid that meets both constraints, with its cost in weeks."""
    return [(p, plan_mfu_and_cost(*p)[1]) for p in _grid() if _meets(p)]


def _weeks(levers) -> float:
    return math.fsum(lever_costs(*levers).values())


LEAST_WEEKS = least_weeks()

# The cheapest valid plan on the grid, prefetch left at its baseline on a tie (staff only). Plans
# are tried cheapest first (the cost model alone), so few reach reference/.
_CHEAPEST = first_valid(sorted(_grid(), key=lambda p: (_weeks(p), abs(p[2] - PREFETCH_BASE))), _meets)

LAB09_PLAN = DesignChallenge(
    id="lab09_plan", points=2.0,
    prompt=("## Design challenge — a plan that reaches the target\n\n"
            f"The lead still wants {MFU_TARGET:.0%} MFU this quarter. The single fixes of Act II were one "
            "setting each of three levers; here you set the levers yourself. More micro-batches m shrink the "
            f"bubble's time as {MICRO_BATCHES_BASE}/m (baseline m = {MICRO_BATCHES_BASE}); gradient compression r "
            "divides the AllReduce time by r; w prefetch workers speed data loading by "
            f"sqrt(w/{PREFETCH_BASE}) (baseline {PREFETCH_BASE}, fewer gain nothing). Cost, in engineer-weeks, for "
            f"each lever you move: micro-batches {PIPELINE_WEEKS:g} + {PIPELINE_WEEKS_PER_MICROBATCH:g} per "
            f"micro-batch above {MICRO_BATCHES_BASE}; compression {COMPRESSION_WEEKS:g} + "
            f"{COMPRESSION_WEEKS_PER_RATIO:g} per unit of r above 1; prefetch {PREFETCH_WEEKS:g} + "
            f"{PREFETCH_WEEKS_PER_WORKER:g} per worker above {PREFETCH_BASE}. The compute share does not change. "
            "Use your `multi_component_speedup` and `budget_left_weeks` to try plans before you commit."),
    fields=(Field("microbatches", "pipeline micro-batches m", *MICRO_BATCHES_RANGE),
            Field("compression", "gradient-compression ratio r", *COMPRESSION_RANGE, integer=False),
            Field("prefetch_workers", "data-prefetch workers w", *PREFETCH_RANGE)),
    constraints=(f"costs within {COST_BAND:.0%} of the cheapest plan that reaches the target (no cheaper plan "
                 "reaches it; weeks beyond it are weeks the team cannot spend on the next bottleneck), and at most "
                 f"the {BUDGET_WEEKS:g}-week budget",
                 f"reaches the {MFU_TARGET:.0%} MFU target (base MFU x your multi-component speedup)"),
    check=check,
    reference_answer=dict(zip(LEVERS, _CHEAPEST)),
)

CHALLENGES = [LAB09_PLAN]
