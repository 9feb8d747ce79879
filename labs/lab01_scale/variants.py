"""Lab 01's versions (labs/variants.py): which story numbers differ from student to student, and over
what. Every number of every version is computed from reference/ by scenario.py, questions.py and
challenges.py at these inputs, exactly as the lab's own; version 0 is the lab as written.

Act I: the MFU while computing moves the fleet's step time and so its speedup (the key's range) and
every day count. Act II: the CFO's deal and plant within the public ranges docs/physics.md gives
(the on-demand price, the facility's PUE and energy price) and the scheduler's measured utilization
move every cost, how far the cheapest path (on-demand) is ahead and the breakeven (the values keep
the three paths' costs far from a tie and from the "within 20 %" line); the design challenge's what-if is measured against the version's plant and utilization,
so a classmate's what-if and breakeven are not the student's.
"""
VARY = {
    "MFU": (0.4, 0.5),                          # Act I: model FLOP utilization while computing
    "USD_PER_GPU_HOUR": (1.80, 2.10, 2.30),     # Act II: the on-demand price the CFO holds, USD per GPU-hour
    "PUE": (1.2, 1.4, 1.5),                     # Act II: the facility's power usage effectiveness
    "USD_PER_KWH": (0.08, 0.10, 0.12),          # Act II: the energy price, USD per kWh
    "UTILIZATION": (0.45, 0.5, 0.55),           # Act II: the scheduler's measured busy share
}
COUNT = 8
