"""Lab 07's known wrong models, per graded function (autograder.engine.spec.Misconception): the
source lab's own formulas (errata.md) and the slips a student makes. Every model is a reference function
with a slip applied (labs.slips), so its numbers come from the physics the grader trusts. `scalelabs lint`
checks that every wrong function of tests/labs/lab07_fault_tolerance/impls/wrong_a.py and wrong_b.py computes one.
"""
from __future__ import annotations

from autograder.engine.spec import Misconception as M
from labs.slips import inverted, scaled
from reference import fault_tolerance as ref

ACT1 = "Act I — One message, one link"     # a heading of notebook.py: the feedback points there

MISCONCEPTIONS = {
    "transfer_time_s": [
        M("bandwidth read as bits per second",
          "Your times are 8 times too long: `bandwidth` is already in bytes/s, so the bytes are divided\n"
          "by it directly (no conversion to bits).",
          ACT1, scaled(ref.transfer_time_s, 8)),
        inverted(ref.transfer_time_s, ACT1),
    ],
}
