"""Public properties of the test-only toy assignment (standalone once shipped: stdlib + hypothesis and
the property kit, which ships beside it)."""
from hypothesis import strategies as st

from labs.property_kit import PublicProperties

_link = dict(alpha_s=st.floats(0, 1e-4), bandwidth=st.floats(1e6, 1e12))
PROPERTIES = PublicProperties()
public_property = PROPERTIES.declare


@public_property("ring_allreduce_time", st.fixed_dictionaries({"message_bytes": st.floats(0, 1e12), "n": st.just(1), **_link}),
                 name="zero for a single rank")
def _zero_single_rank(f, drawn):
    """With one rank there is nothing to reduce, so the time is 0."""
    assert f(**drawn) == 0, "one rank must take no time"


@public_property("ring_allreduce_time",
                 st.fixed_dictionaries({"message_bytes": st.floats(0, 1e11), "n": st.integers(1, 1024), **_link}),
                 name="monotone in message size")
def _monotone(f, drawn):
    """A bigger message never takes less time."""
    small = f(**drawn)
    big = f(**{**drawn, "message_bytes": drawn["message_bytes"] * 2})
    assert big >= small, f"doubling the message made it faster: {small} -> {big}"
