"""Lab 01's known wrong models, per graded function (autograder.engine.spec.Misconception).

From the source lab's own formulas (labs/lab01_scale/errata.md), unit slips (dollars vs $M, years vs
seconds, percent vs fraction) and the mistakes of the lab's test implementations. Every model is
built from reference/ (labs.slips), so its numbers come from the physics the grader trusts.
"""
from __future__ import annotations

from autograder.engine.spec import Misconception as M
from labs.slips import at, inverted, percent, scaled
from reference import scaling as ref
from reference.collectives import ring_allreduce_time

ACT1 = "Act I: the scale illusion"
ACT2 = "Act II: the fleet cost model"
SECONDS_PER_YEAR = 86400 * 365

MILLIONS = ("millions of dollars instead of dollars",
            "Your costs are a million times too small: the source lab displays $M, but the function returns\n"
            "plain US dollars.")


def _ring_s(k: dict, share: float = 1.0) -> float:
    return share * ring_allreduce_time(k["grad_bytes"], k["n"], k["alpha_s"], k["bandwidth"])


MISCONCEPTIONS = {
    "training_time_s": [
        M("years instead of seconds",
          "Your times are in 365-day years, as the source lab displays them: the function returns seconds\n"
          "(divide by 86,400 x 365 only when you print years).",
          ACT1, scaled(ref.training_time_s, 1 / SECONDS_PER_YEAR)),
        M("the GPUs run at their peak (no MFU)",
          "Your times assume 100 % utilisation: training reaches only the fraction mfu of the peak, so it\n"
          "takes 1/mfu times longer.",
          ACT1, at(ref.training_time_s, mfu=1.0)),
    ],
    "data_parallel_speedup": [
        M("the lab's N x E x (1 - C) speedup",
          "You used the source lab's speedup, which divides the communication by a full single-GPU step:\n"
          "on n GPUs the compute shrinks n-fold while the ring AllReduce does not, so the speedup saturates.",
          ACT1, lambda **k: k["n"] * k["compute_s_1gpu"] / (k["compute_s_1gpu"] + _ring_s(k))),
        M("half a ring AllReduce",
          "Your communication is half of it: you counted the reduce-scatter only; the all-gather that\n"
          "follows costs as much again.",
          ACT1, lambda **k: k["compute_s_1gpu"] / (k["compute_s_1gpu"] / k["n"] + _ring_s(k, 0.5))),
    ],
    "scaling_efficiency": [
        percent(ref.scaling_efficiency, ACT1),
        inverted(ref.scaling_efficiency, ACT1),
    ],
    "on_demand_cost": [
        M(*MILLIONS, ACT2, scaled(ref.on_demand_cost, 1e-6)),
        M("billing every hour, busy or idle",
          "You paid for every hour of the years: on-demand GPUs are paid only while used, so the cost\n"
          "scales with the utilization.",
          ACT2, at(ref.on_demand_cost, utilization=1.0)),
    ],
    "reserved_cost": [
        M(*MILLIONS, ACT2, scaled(ref.reserved_cost, 1e-6)),
        M("the discount read as the share paid",
          "You multiplied by the discount: a 40 % discount means paying 60 % of the on-demand price,\n"
          "on every committed hour.",
          ACT2, at(ref.reserved_cost, discount=lambda k: 1 - k["discount"])),
    ],
    "on_prem_cost": [
        M("an idle GPU draws no power",
          "Your energy scales with the utilization alone, as in the source lab: an idle GPU still draws\n"
          "idle_power_fraction of its power, and the facility bills it.",
          ACT2, at(ref.on_prem_cost, idle_power_fraction=0.0)),
        M("cooling charged on top of the PUE",
          "You added the cooling again on top of PUE x power: PUE already is facility power over IT power,\n"
          "cooling included.",
          ACT2, at(ref.on_prem_cost, pue=lambda k: k["pue"] + 1)),
    ],
    "breakeven_utilization": [
        M("the lab's clamp to [0, 1], idle power ignored",
          "You clamped the breakeven to 1 and ignored idle power, as the source lab does: a breakeven above 1\n"
          "means on-prem never pays off in that time, and an idle GPU still costs energy.",
          ACT2, lambda **k: min(1.0, max(0.0, ref.breakeven_utilization(**{**k, "idle_power_fraction": 0.0})))),
        M("zero marginal cost after purchase",
          "You left out energy (the source lab's intro: 'zero marginal cost per GPU-hour'): every busy hour\n"
          "of an on-prem GPU costs power times PUE times the electricity price.",
          ACT2, at(ref.breakeven_utilization, watts_per_gpu=0.0)),
    ],
}
