"""Lab 07 — The Checkpoint Reckoning: fault tolerance at scale: the physics students implement, the truth everything is graded and
computed from (docs/physics.md, its section written in labs/lab07_fault_tolerance/physics.md).

Conventions (all functions): SI units (bytes, seconds, bytes/s per direction); counts are positive
ints; fractions in [0, 1]. Functions are pure: no printing, no globals. Every input is checked with
reference/_domain.py before the solution region (the stub keeps the checks), the body sits inside it.
Sources: the model's, one line each (replace this skeleton's one function with the lab's physics).
"""
from __future__ import annotations

from ._domain import check_nonneg, check_positive

__all__ = ["transfer_time_s"]


def transfer_time_s(message_bytes: float, bandwidth: float) -> float:
    """Seconds to move `message_bytes` bytes over one link that carries `bandwidth` bytes/s in each
    direction, latency left out: the link's rate is all that limits it (definition of bandwidth).
    """
    check_nonneg("message_bytes", message_bytes)
    check_positive("bandwidth", bandwidth)
    ### BEGIN SOLUTION
    return message_bytes / bandwidth
    ### END SOLUTION
