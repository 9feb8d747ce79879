"""Lab 09's known wrong models, per graded function (autograder.engine.spec.Misconception).

From the source lab's own formulas (labs/lab09_performance/errata.md: the gain taken for the cut, the
sparse peak, percentages, the 0.5-week plan), Amdahl and Gustafson slips, and the mistakes of the
lab's test implementations. Every model is built from reference/ (labs.slips).
"""
from __future__ import annotations

import math

from autograder.engine.spec import Misconception as M
from labs.slips import at, inverted, percent
from reference import performance as ref

ACT1 = "Act I — The profiling revelation"
ACT2 = "Act II — Distributed performance analysis"
PEEK = ACT1   # its "Check your derivation", shown once your functions have run


def _part_speedups(k: dict) -> list[float]:
    return [ref.amdahl_speedup(k["profile"][name], factor) for name, factor in k["factors"].items()]


MISCONCEPTIONS = {
    "amdahl_speedup": [
        M("speeds averaged instead of times",
          "You weighted the speeds, f k + (1 - f): Amdahl's law adds the times, (1 - f) + f / k, and the\n"
          "speedup is one over that.",
          PEEK, lambda **k: k["fraction"] * k["factor"] + (1 - k["fraction"])),
        M("the part made k times slower",
          "You multiplied the part's time by k: a k-times faster part takes f / k of the old step.",
          PEEK, at(ref.amdahl_speedup, factor=lambda k: 1 / k["factor"])),
    ],
    "amdahl_limit": [
        M("the ceiling reported as a gain",
          "Your limits are 1 less than the right ones: the ceiling is a speedup, 1 / (1 - f), not the gain\n"
          "over 1 (the source lab's '+13.6 %').",
          PEEK, lambda **k: ref.amdahl_limit(**k) - 1),
        M("the limit of the other share (1 / f)",
          "You divided by the part that gets faster: what bounds the speedup is the part left unchanged,\n"
          "1 - f.",
          PEEK, lambda **k: ref.amdahl_limit(fraction=1 - k["fraction"])),
    ],
    "step_time_reduction": [
        M("the throughput gain taken for the time cut",
          "You returned S - 1, the throughput gain (the source lab's +8.7 %): the step time falls by\n"
          "f (1 - 1/k), which is smaller (-8.0 %).",
          ACT1, lambda **k: ref.amdahl_speedup(**k) - 1),
        M("the share forgotten",
          "You cut the whole step by 1 - 1/k: only the fraction f of the step gets faster.",
          ACT1, at(ref.step_time_reduction, fraction=1.0)),
    ],
    "multi_component_speedup": [
        M("one-part speedups multiplied",
          "You multiplied each part's Amdahl speedup as if every part kept its old share of the step:\n"
          "add the new times of all parts, f_i / k_i, and invert the sum.",
          ACT2, lambda **k: math.prod(_part_speedups(k))),
        M("one-part gains added",
          "You added each part's gain: the parts' new times add, not their gains; invert the sum of\n"
          "f_i / k_i.",
          ACT2, lambda **k: 1 + sum(s - 1 for s in _part_speedups(k))),
    ],
    "gustafson_speedup": [
        M("Amdahl's fixed-size speedup",
          "You used Amdahl's law: Gustafson scales the parallel work with n, so the speedup is\n"
          "n - s (n - 1), growing without a ceiling.",
          ACT2, lambda **k: ref.amdahl_speedup(fraction=1 - k["serial_fraction"], factor=k["n"])),
        M("the serial part forgotten",
          "You returned n (1 - s): the serial part still runs once in the scaled step and counts in the\n"
          "speedup.",
          ACT2, lambda **k: k["n"] * (1 - k["serial_fraction"])),
    ],
    "roofline_flops": [
        M("the higher roof",
          "You took the larger of the two roofs: attainable FLOP/s is limited by whichever is lower, the\n"
          "compute peak or intensity times bandwidth.",
          ACT1, lambda **k: max(k["peak_flops"], k["intensity"] * k["bandwidth"])),
        M("no compute ceiling",
          "You returned intensity x bandwidth everywhere: above the ridge point the compute peak caps it.",
          ACT1, lambda **k: k["intensity"] * k["bandwidth"]),
    ],
    "ridge_point": [
        inverted(ref.ridge_point, ACT1),
        M("the sparse peak",
          "Your ridge is twice the right one: you used the 2:4-sparse peak (the source lab's 1,979 TFLOPS);\n"
          "dense training runs against the dense peak.",
          ACT1, at(ref.ridge_point, peak_flops=lambda k: 2 * k["peak_flops"])),
    ],
    "mfu": [
        percent(ref.mfu, ACT2),
        M("one GPU's peak for the cluster",
          "You divided by one GPU's peak: the cluster's peak is n_gpus times it.",
          ACT2, at(ref.mfu, n_gpus=1)),
    ],
    "mfu_gain": [
        M("the step-time cut instead of the throughput gain",
          "You scaled the MFU by the step-time cut f (1 - 1/k): MFU grows with throughput, by the\n"
          "speedup minus 1.",
          ACT2, lambda **k: k["base_mfu"] * ref.step_time_reduction(k["fraction"], k["factor"])),
        percent(ref.mfu_gain, ACT2),
    ],
    "budget_left_weeks": [
        M("each fix checked alone",
          "You subtracted only the most expensive fix: a plan does every fix, so all their costs add up\n"
          "against the budget.",
          ACT2, lambda **k: k["budget_weeks"] - max(k["cost_weeks"].values(), default=0.0)),
        M("half a week charged for nothing",
          "You charged 0.5 week on top of the fixes (the source lab's overhead, even for an empty plan):\n"
          "the weeks left are the budget minus the fixes' costs.",
          ACT2, lambda **k: ref.budget_left_weeks(**k) - 0.5),
    ],
}
