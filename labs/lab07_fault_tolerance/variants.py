"""Lab 07's versions (labs/variants.py): which story numbers differ from student to student, and over
what. Every number of every version is computed from reference/ by scenario.py, questions.py and
challenges.py at these inputs, exactly as the lab's own; version 0 is the lab as written.

Act I: the lead's checkpoint stall and cluster MTBF vary together, so the 30-minute interval is too
frequent at some versions and about right at others (never within a nudge of the verdicts' edges).
Act II: the run's size, the model's and today's storage bandwidth move the cluster's MTBF, the
checkpoint's write time, Young's interval and which plans meet the goodput, the storage budget and
the asynchronous write's deadline;
the scenario asserts the story's claims (the lead's plan stalls too much, no synchronous plan within
the budget reaches the goodput, asynchronous checkpoints do) at every version.
"""
HOUR_S = 3600

VARY = {
    ("ACT1_CHECKPOINT_S", "ACT1_MTBF_S"): (   # the lead's stall per checkpoint and cluster MTBF, s
        (240, 8 * HOUR_S), (120, 4 * HOUR_S), (180, 3 * HOUR_S), (360, 12 * HOUR_S),
        (360, 4 * HOUR_S), (240, 12 * HOUR_S), (180, 6 * HOUR_S)),
    "ACT2_GPUS": (16384, 24576),                          # the Act II run's H100s (its MTBF)
    "ACT2_PARAMS": (1e12, 2e12),                          # the Act II model, parameters
    "STORAGE_BANDWIDTH": (200e9, 300e9, 400e9),           # today's Lustre write bandwidth, bytes/s
}
COUNT = 8
