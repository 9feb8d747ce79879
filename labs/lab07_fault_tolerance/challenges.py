"""Lab 07's open design challenge: the checkpointing plan of Act II, graded against constraints, not a
key. The student picks the interval, the storage to buy and whether checkpoints are asynchronous; the
plan is measured with reference/fault_tolerance.py at the Act II scenario (16,384 H100s, a 1T-parameter
model, Llama 3's reliability). Synchronous plans cannot reach the goodput within the storage budget;
many asynchronous ones can (tests/labs/lab07_fault_tolerance/test_lab07_challenge.py lists some).
The reference design is the first of a few dozen candidates that passes: every grading process imports this.
"""
from __future__ import annotations

from autograder.engine.challenges import DesignChallenge, Field, Verdict
from labs.authoring import first_valid, fmt_bytes, fmt_percent, fmt_seconds
from labs.lab07_fault_tolerance.scenario import (ACT2_CHECKPOINT_BYTES, ACT2_GPUS, ACT2_MTBF_S, ACT2_NODES,
                                                 COPY_BANDWIDTH, GOODPUT_TARGET, GPU_MTBF_S, HOUR_S,
                                                 NODE_BANDWIDTH, RESTART_S, STORAGE_BANDWIDTH, STORAGE_BUDGET)
from reference import fault_tolerance as ref

GB = 1e9
INTERVAL_RANGE_S = (1, 86_400)            # one second to a day between checkpoints
STORAGE_RANGE_GB_S = (50, 10_000)         # one node's link to the largest parallel file systems


def measure(interval_s: float, storage_gb_per_s: float, asynchronous: int) -> dict:
    """The plan at the Act II scenario: the write time, the stall per checkpoint and the goodput."""
    write_s = ref.checkpoint_write_time_s(ACT2_CHECKPOINT_BYTES, storage_gb_per_s * GB, ACT2_NODES, NODE_BANDWIDTH)
    stall_s = ref.snapshot_stall_s(ACT2_CHECKPOINT_BYTES, ACT2_GPUS, COPY_BANDWIDTH) if asynchronous else write_s
    return dict(write_s=write_s, stall_s=stall_s, goodput=ref.goodput(interval_s, stall_s, ACT2_MTBF_S, RESTART_S))


def check(design) -> list[Verdict]:
    plan = measure(design["interval_s"], design["storage_gb_per_s"], design["asynchronous"])
    mode = "asynchronous" if design["asynchronous"] else "synchronous"
    return [
        Verdict(plan["goodput"] >= GOODPUT_TARGET,
                f"goodput {plan['goodput']:.1%} ({mode}, a {fmt_seconds(plan['stall_s'])} stall every "
                f"{design['interval_s']:,g} s)"),
        Verdict(design["storage_gb_per_s"] * GB <= STORAGE_BUDGET,
                f"{design['storage_gb_per_s']:g} GB/s of storage (budget {STORAGE_BUDGET / GB:g} GB/s)"),
        Verdict(not design["asynchronous"] or plan["write_s"] <= design["interval_s"],
                f"each write takes {fmt_seconds(plan['write_s'])}, the interval is {design['interval_s']:,g} s"),
    ]


# the longest interval, at the most storage the budget allows, that meets every constraint
_CANDIDATES = [dict(interval_s=interval, storage_gb_per_s=gb, asynchronous=asynchronous)
               for asynchronous in (0, 1) for gb in (round(STORAGE_BUDGET / GB), round(STORAGE_BANDWIDTH / GB))
               for interval in (900, 600, 300, 240, 180, 120, 60)]

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
                 "training time)",
                 f"storage of at most {STORAGE_BUDGET / GB:g} GB/s (twice today's)",
                 "an asynchronous checkpoint's write ends before the next snapshot"),
    check=check,
    reference_answer=first_valid(_CANDIDATES, lambda design: all(v.met for v in check(design))),
)

CHALLENGES = [LAB07_PLAN]
