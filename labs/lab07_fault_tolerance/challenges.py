"""Lab 07's open design challenge: the checkpointing plan of Act II, graded against constraints, not a
key. The student picks the interval, the storage to buy and whether checkpoints are asynchronous; the
plan is measured with reference/fault_tolerance.py at the Act II scenario (16,384 H100s, a 1T-parameter
model, Llama 3's reliability). Synchronous plans cannot reach the goodput within the storage budget;
many asynchronous ones can (tests/labs/lab07_fault_tolerance/test_lab07_challenge.py lists some).
The interval is graded as a band around the plan's own best, not as a limit: Young's sqrt(2 C M) for
the plan's stall C balances checkpointing too often (stalls) against too rarely (work redone after a
failure), and an asynchronous snapshot cannot come before the last write ends. Both ends move with the
student's version (its MTBF, checkpoint and storage), so a classmate's plan, copied, misses it.
The reference design buys the budget and checkpoints at that best interval, rounded up to a second.
"""
from __future__ import annotations

import math

from autograder.engine.challenges import DesignChallenge, Field, Verdict
from labs.authoring import first_valid, fmt_bytes, fmt_percent, fmt_seconds
from labs.lab07_fault_tolerance.scenario import (ACT2_CHECKPOINT_BYTES, ACT2_GPUS, ACT2_MTBF_S, ACT2_NODES,
                                                 COPY_BANDWIDTH, GOODPUT_TARGET, GPU_MTBF_S, HOUR_S,
                                                 NODE_BANDWIDTH, RESTART_S, STORAGE_BANDWIDTH, STORAGE_BUDGET)
from reference import fault_tolerance as ref

GB = 1e9
INTERVAL_RANGE_S = (1, 86_400)            # one second to a day between checkpoints
STORAGE_RANGE_GB_S = (50, 10_000)         # one node's link to the largest parallel file systems
INTERVAL_BAND = 0.20                      # how far from the plan's best interval still counts as near it
STORAGE_BAND = 0.20                       # how far under the budget the storage bought may stay


def measure(interval_s: float, storage_gb_per_s: float, asynchronous: int) -> dict:
    """The plan at the Act II scenario: the write time, the stall per checkpoint and the goodput."""
    write_s = ref.checkpoint_write_time_s(ACT2_CHECKPOINT_BYTES, storage_gb_per_s * GB, ACT2_NODES, NODE_BANDWIDTH)
    stall_s = ref.snapshot_stall_s(ACT2_CHECKPOINT_BYTES, ACT2_GPUS, COPY_BANDWIDTH) if asynchronous else write_s
    return dict(write_s=write_s, stall_s=stall_s, goodput=ref.goodput(interval_s, stall_s, ACT2_MTBF_S, RESTART_S),
                young_s=ref.young_daly_interval_s(stall_s, ACT2_MTBF_S))


def interval_band_s(plan: dict, asynchronous: int) -> tuple[float, float]:
    """(shortest, longest) interval near the best plan: Young's interval for the plan's stall, within
    INTERVAL_BAND either way. An asynchronous plan's snapshot waits for the last write, so its interval
    is no shorter than its write, and its best is the write the budget's storage allows (when longer
    than Young's): within INTERVAL_BAND above that."""
    young = plan["young_s"]
    if not asynchronous:
        return (1 - INTERVAL_BAND) * young, (1 + INTERVAL_BAND) * young
    best = max(young, ref.checkpoint_write_time_s(ACT2_CHECKPOINT_BYTES, STORAGE_BUDGET, ACT2_NODES, NODE_BANDWIDTH))
    return max((1 - INTERVAL_BAND) * young, plan["write_s"]), (1 + INTERVAL_BAND) * best


def check(design) -> list[Verdict]:
    plan = measure(design["interval_s"], design["storage_gb_per_s"], design["asynchronous"])
    low, high = interval_band_s(plan, design["asynchronous"])
    mode = "asynchronous" if design["asynchronous"] else "synchronous"
    storage = design["storage_gb_per_s"] * GB
    return [
        Verdict(plan["goodput"] >= GOODPUT_TARGET and low <= design["interval_s"] <= high,
                f"goodput {plan['goodput']:.1%} ({mode}, a {fmt_seconds(plan['stall_s'])} stall every "
                f"{design['interval_s']:,g} s); " + (f"near the best means every {low:,.0f} to {high:,.0f} s"
                                                     if low <= high else "no interval is near the best on this storage")
                + f" (Young's {fmt_seconds(plan['young_s'])}"
                + (f", each write {fmt_seconds(plan['write_s'])})" if design["asynchronous"] else ")")),
        Verdict(STORAGE_BUDGET / (1 + STORAGE_BAND) <= storage <= STORAGE_BUDGET,
                f"{design['storage_gb_per_s']:g} GB/s of storage (budget {STORAGE_BUDGET / GB:g} GB/s)"),
    ]


def _best(storage_gb_per_s: int) -> dict:
    """An asynchronous plan on `storage_gb_per_s` at its best interval, rounded up to a second."""
    plan = measure(1, storage_gb_per_s, 1)
    return dict(interval_s=math.ceil(max(plan["young_s"], plan["write_s"])), storage_gb_per_s=storage_gb_per_s,
                asynchronous=1)


# the most storage the budget allows, else today's, at its best interval
_CANDIDATES = [_best(gb) for gb in (round(STORAGE_BUDGET / GB), round(STORAGE_BANDWIDTH / GB))]

LAB07_PLAN = DesignChallenge(
    id="lab07_plan", points=3.0,
    prompt=(f"## Design challenge — the checkpointing plan\n\nPlan checkpointing for the Act II run: "
            f"{ACT2_GPUS:,} H100s in {ACT2_NODES:,} nodes, each GPU failing once in {GPU_MTBF_S / HOUR_S:,.0f} hours, "
            f"a {fmt_bytes(ACT2_CHECKPOINT_BYTES)} checkpoint, {RESTART_S / 60:g} minutes to restart after a failure. "
            f"You choose the checkpoint interval (seconds of training between checkpoints), the storage's write "
            f"bandwidth to buy (today {STORAGE_BANDWIDTH / GB:g} GB/s) and whether checkpoints are asynchronous (1: "
            "each GPU copies its shard to host memory, training resumes and the write runs in the background; "
            "0: training waits for the write). Measure your plan with your own functions (`checkpoint_write_time_s`, "
            "`snapshot_stall_s`, `goodput`) before you commit."),
    fields=(Field("interval_s", "seconds of training between checkpoints", *INTERVAL_RANGE_S),
            Field("storage_gb_per_s", "storage write bandwidth you buy, GB/s", *STORAGE_RANGE_GB_S),
            Field("asynchronous", "1: snapshot and write in the background, 0: wait for the write", 0, 1)),
    constraints=(f"goodput at least {fmt_percent(GOODPUT_TARGET)} (Llama 3 reports more than 90 % effective "
                 f"training time), at an interval near the best: within {fmt_percent(INTERVAL_BAND)} of Young's "
                 "interval sqrt(2 x stall x MTBF) for your plan's stall (more often stalls more, less often redoes "
                 "more after a failure); asynchronously, no shorter than your write (the next snapshot waits for "
                 "it) and, when a write on all the storage the budget allows takes longer than Young's interval, "
                 f"at most {fmt_percent(INTERVAL_BAND)} above that write",
                 f"the storage the budget allows: at most {STORAGE_BUDGET / GB:g} GB/s (twice today's) and no more "
                 f"than {fmt_percent(STORAGE_BAND)} under it (each write, and so the interval, shrinks with the "
                 "storage bought)"),
    check=check,
    reference_answer=first_valid(_CANDIDATES, lambda design: all(v.met for v in check(design))),
)

CHALLENGES = [LAB07_PLAN]
