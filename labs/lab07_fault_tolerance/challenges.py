"""Lab 07's open design challenge: graded against constraints, not a key. The student picks how
many NDR ports carry the Act I message; the design is measured with reference/fault_tolerance.py at the
scenario. Several designs meet every constraint (tests/labs/lab07_fault_tolerance/test_lab07_challenge.py).
Keep the reference design's search small: every grading process imports this module (lint's import-time).
"""
from __future__ import annotations

from autograder.engine.challenges import DesignChallenge, Field, Verdict
from labs.authoring import first_valid, fmt_bytes, fmt_seconds
from labs.lab07_fault_tolerance.scenario import BANDWIDTH, DEADLINE_S, MAX_PORTS, MESSAGE_BYTES
from reference import fault_tolerance as ref

PORTS_LIMIT = 4 * MAX_PORTS                # the field's range: more than any node has


def check(design) -> list[Verdict]:
    ports = design["ports"]
    seconds = ref.transfer_time_s(MESSAGE_BYTES, ports * BANDWIDTH)
    return [Verdict(seconds <= DEADLINE_S, f"{fmt_seconds(seconds)} over {ports} port(s)"),
            Verdict(ports <= MAX_PORTS, f"{ports} of the node's {MAX_PORTS} ports")]


DESIGN = DesignChallenge(
    id="lab07_design", points=2.0,
    prompt=(f"## Design challenge — enough ports\n\nMove the {fmt_bytes(MESSAGE_BYTES)} message within "
            f"{fmt_seconds(DEADLINE_S)} by spreading it over several NDR ports of one node (each "
            f"{BANDWIDTH / 1e9:.0f} GB/s per direction). Measure your candidates with your own "
            "`transfer_time_s` before you commit."),
    fields=(Field("ports", "NDR ports that carry the message together", 1, PORTS_LIMIT),),
    constraints=(f"the message moves within {fmt_seconds(DEADLINE_S)}",
                 f"at most the node's {MAX_PORTS} ports"),
    check=check,
    reference_answer=first_valid((dict(ports=p) for p in range(1, PORTS_LIMIT + 1)),
                                 lambda design: all(v.met for v in check(design))),
)

CHALLENGES = [DESIGN]
