"""Lab 07's known wrong models, per graded function (autograder.engine.spec.Misconception): the source
lab's own formulas and figures (errata.md, numbered rows) and the unit and factor slips of the
derivation. Every model is built from reference/fault_tolerance.py (labs.slips), so its numbers come
from the physics the grader trusts. `scalelabs lint` checks that every wrong function of
tests/labs/lab07_fault_tolerance/impls/wrong_a.py and wrong_b.py computes one of them.
"""
from __future__ import annotations

import math

from autograder.engine.spec import Misconception as M
from labs.slips import at, inverted, scaled
from reference import fault_tolerance as ref

ACT1 = "Act I — The checkpoint cost blindspot"
ACT2 = "Act II — Fleet-scale checkpointing"

MISCONCEPTIONS = {
    "cluster_mtbf_s": [
        M("more GPUs, longer between failures",
          "Your MTBF grows with the GPUs: each GPU that fails stops the whole job, so their failure rates\n"
          "add up and the cluster fails more often, not less.",
          ACT1, lambda **k: k["gpu_mtbf_s"] * k["n_gpus"]),
        M("hours, not seconds",
          "Your values are 3,600 times too small: the function takes and returns seconds; convert hours\n"
          "when you read the story, not inside the function.",
          ACT1, scaled(ref.cluster_mtbf_s, 1 / 3600)),
    ],
    "expected_failures": [
        inverted(ref.expected_failures, ACT2),
        M("the MTBF read in hours",
          "Your counts are 3,600 times too high: both times are in seconds, so divide them as they are.",
          ACT2, scaled(ref.expected_failures, 3600)),
    ],
    "checkpoint_bytes": [
        M("the weights alone (the lab's 2 TB)",
          "You saved only the 16-bit weights, as the source lab's 2 TB does: a restart also needs the\n"
          "optimizer's FP32 master copy, momentum and variance of every parameter.",
          ACT2, at(ref.checkpoint_bytes, optimizer_bytes=0.0)),
        M("the gradients saved too",
          "You counted the 2-byte gradients as well: the next step recomputes them, so a checkpoint\n"
          "holds weights and optimizer state only.",
          ACT2, lambda **k: ref.checkpoint_bytes(**k) + 2 * k["params"]),
    ],
    "checkpoint_write_time_s": [
        M("the storage alone sets the pace",
          "You divided by the storage's bandwidth alone: when few nodes write, what they can send together\n"
          "is the limit, the slower of the two.",
          ACT2, lambda **k: k["checkpoint_bytes"] / k["storage_bandwidth"]),
        M("binary terabytes (the lab's TB x 1024)",
          "Your times are 2.4 % too long: the source lab turns a TB into 1,024 GB; bytes and bytes/s here\n"
          "are both decimal, so divide them as they are.",
          ACT2, scaled(ref.checkpoint_write_time_s, 1.024)),
        M("bandwidth read as bits per second",
          "Your times are 8 times too long: the bandwidths are already in bytes/s.",
          ACT2, scaled(ref.checkpoint_write_time_s, 8)),
    ],
    "snapshot_stall_s": [
        M("the whole checkpoint through one GPU",
          "You copied the whole checkpoint through one GPU's link: every GPU copies only its own shard,\n"
          "all of them at once.",
          ACT2, at(ref.snapshot_stall_s, n_gpus=1)),
        M("bandwidth read as bits per second",
          "Your stalls are 8 times too long: copy_bandwidth is already in bytes/s.",
          ACT2, scaled(ref.snapshot_stall_s, 8)),
    ],
    "young_daly_interval_s": [
        M("the MTBF where the failure rate goes",
          "You put the MTBF where the failure rate λ = 1/M belongs: T* = √(2C/λ) is √(2·C·M),\n"
          "longer when failures are rarer.",
          ACT1, lambda **k: math.sqrt(2 * k["checkpoint_s"] / k["mtbf_s"])),
        M("without the factor 2",
          "Your intervals are √2 too short: a failure redoes half an interval on average, and that\n"
          "half is where the 2 under the root comes from.",
          ACT1, scaled(ref.young_daly_interval_s, 1 / math.sqrt(2))),
    ],
    "daly_interval_s": [
        M("Young's first-order interval",
          "You returned Young's first-order √(2CM): Daly's estimate corrects it by the series in\n"
          "C/(2M) and subtracts the checkpoint itself, which matters when C is not tiny against M.",
          ACT2, ref.young_daly_interval_s),
        M("the checkpoint not subtracted",
          "Your intervals are C too long: Daly's interval is compute time, so the checkpoint's own C\n"
          "comes off the corrected √(2CM).",
          ACT2, lambda **k: ref.daly_interval_s(**k) + (k["checkpoint_s"] if k["checkpoint_s"] < 2 * k["mtbf_s"] else 0)),
    ],
    "waste_fraction": [
        M("the checkpoint as the restart (the lab's T/2 + C)",
          "You charged each failure T/2 + C, as the source lab does: after a failure the job restarts\n"
          "(restart_s) and redoes half an interval; the checkpoint's stall is paid once per interval.",
          ACT1, lambda **k: k["checkpoint_s"] / k["interval_s"] + (k["interval_s"] / 2 + k["checkpoint_s"]) / k["mtbf_s"]),
        M("the whole interval redone",
          "You charged a whole interval per failure: failures strike anywhere in it, half an interval\n"
          "into it on average.",
          ACT1, lambda **k: k["checkpoint_s"] / k["interval_s"] + (k["interval_s"] + k.get("restart_s", 0.0)) / k["mtbf_s"]),
        M("the restart left out",
          "You left the restart out: every failure also costs restart_s before training resumes.",
          ACT1, at(ref.waste_fraction, restart_s=0.0)),
    ],
    "goodput": [
        M("one minus the first-order waste",
          "You returned 1 - waste_fraction: that is the first-order estimate, which drifts from the\n"
          "exponential model once the times are not small against the MTBF.",
          ACT2, lambda **k: 1 - ref.waste_fraction(**k)),
        M("the checkpoint stall left out",
          "You left the checkpoint's stall out of each attempt: an interval succeeds only if no failure\n"
          "strikes during its compute and its checkpoint.",
          ACT2, at(ref.goodput, checkpoint_s=0.0)),
    ],
    "min_storage_bandwidth": [
        M("the overhead not squared",
          "At the best interval the stall share is √(C/2M): capping it at f caps C at 2·M·f², with f\n"
          "squared; your bandwidths are off by a factor f.",
          ACT2, lambda **k: k["checkpoint_bytes"] / (2 * k["mtbf_s"] * k["max_overhead"])),
        M("the stall share taken as C/M",
          "You capped C/M, not the stall per interval C/T*: at Young's interval T* = √(2CM), much\n"
          "shorter than M, so C must be far smaller.",
          ACT2, lambda **k: k["checkpoint_bytes"] / (k["mtbf_s"] * k["max_overhead"])),
    ],
}
