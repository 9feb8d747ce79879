"""Lab 07 graded items: worked examples at the scenario's inputs, hidden domains and hidden
properties. Expected values are never typed: the engine computes them from reference/ at grading time.
"""
from __future__ import annotations

from functools import partial

from autograder.engine.spec import FunctionItem
from labs.authoring import examples, fmt_bytes, public_properties
from labs.lab07_fault_tolerance import properties as public
from labs.lab07_fault_tolerance.scenario import BANDWIDTH, MESSAGE_BYTES

_public = partial(public_properties, public.PROPERTIES)

FUNCTIONS = (
    FunctionItem("transfer_time_s", 2, examples(
        (f"Act I: {fmt_bytes(MESSAGE_BYTES)} over one NDR port", dict(message_bytes=MESSAGE_BYTES, bandwidth=BANDWIDTH)),
        ("an empty message", dict(message_bytes=0.0, bandwidth=BANDWIDTH)),
    ), domain=public.TRANSFER, properties=_public("transfer_time_s")),
)
