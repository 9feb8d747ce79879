"""Lab 09's versions (labs/variants.py): which story numbers differ from student to student, and over
what. Every number of every version is computed from reference/ by scenario.py, questions.py and
challenges.py at these inputs, exactly as the lab's own; version 0 is the lab as written.

Act I: the trace's attention share and the custom kernel's speedup move the step-time cut (its key
moves between the two lowest ranges, and the step still "barely" gets faster: at most 9 %, no cut
within a nudge of a range's edge); AllReduce stays the hotspot. Act II: the step's profile (compute
first, then AllReduce, the bubble, data loading, as the options say) and the cluster's measured
throughput (the base MFU) move each fix's return and what a plan must do to reach the target, so a
classmate's plan is not the student's; the levers' costs and the budget stay the lab's.
"""
VARY = {
    "ACT1_PROFILE": (   # Nsight shares of one step, each summing to 1, AllReduce the hotspot
        {"attention": 0.12, "allreduce": 0.45, "optimizer": 0.18, "data_loading": 0.15, "kernel_launch": 0.10},
        {"attention": 0.06, "allreduce": 0.48, "optimizer": 0.20, "data_loading": 0.16, "kernel_launch": 0.10},
    ),
    "ACT1_KERNEL_FACTOR": (2.0, 3.0, 4.0),          # the custom attention kernel, benchmarked in isolation
    "ACT2_PROFILE": (   # the Act II step: compute > AllReduce > pipeline bubble > data loading
        {"compute": 0.45, "allreduce": 0.30, "pipeline_bubble": 0.15, "data_loading": 0.10},
        {"compute": 0.40, "allreduce": 0.33, "pipeline_bubble": 0.17, "data_loading": 0.10},
        {"compute": 0.42, "allreduce": 0.28, "pipeline_bubble": 0.18, "data_loading": 0.12},
    ),
    "TOKENS_PER_S": (415e3, 422e3, 440e3, 460e3),   # the 512-GPU cluster's measured throughput: its base MFU
}
COUNT = 8
