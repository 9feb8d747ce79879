"""Lab 07 public properties, each declared on its check (shipped to students as _properties.py):
standalone, so it imports only the stdlib, hypothesis and labs.property_kit."""
from __future__ import annotations

import math

from hypothesis import strategies as st

from labs.property_kit import PublicProperties, kwargs, number, zero_when

POSITIVE_BYTES = st.floats(0.0, 1e15)
BANDWIDTH = st.floats(1e6, 1e13)              # bytes/s: a slow link to many NVLinks
TRANSFER = kwargs(message_bytes=POSITIVE_BYTES, bandwidth=BANDWIDTH)

PROPERTIES = PublicProperties()
public_property = PROPERTIES.declare


# --- transfer_time_s ---------------------------------------------------------------------------

public_property("transfer_time_s", TRANSFER, name="zero for an empty message",
                meaning="An empty message moves in no time at all.")(
    zero_when("message_bytes = 0: got {got!r}, expected 0.0", message_bytes=0.0))


@public_property("transfer_time_s", TRANSFER, name="twice the bandwidth, half the time")
def _halves_with_twice_the_bandwidth(f, d):
    """The same bytes over a link twice as fast take half the time."""
    once = number(f(**d))
    twice = number(f(**{**d, "bandwidth": 2 * d["bandwidth"]}))
    assert math.isclose(twice, once / 2, rel_tol=1e-9, abs_tol=1e-300), \
        f"bandwidth {d['bandwidth']!r}: {once!r} s; twice that bandwidth: {twice!r} s, expected {once / 2!r}"
