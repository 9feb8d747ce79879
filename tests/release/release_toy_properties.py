"""Public properties of the test-only toy assignment (standalone: stdlib + hypothesis)."""
from hypothesis import strategies as st


def _zero_single_rank(f, drawn):
    assert f(**drawn) == 0, "one rank must take no time"


def _monotone(f, drawn):
    small = f(**drawn)
    big = f(**{**drawn, "message_bytes": drawn["message_bytes"] * 2})
    assert big >= small, f"doubling the message made it faster: {small} -> {big}"


_link = dict(alpha_s=st.floats(0, 1e-4), bandwidth=st.floats(1e6, 1e12))
PROPERTIES = [
    dict(item="ring_allreduce_time", name="zero for a single rank",
         meaning="With one rank there is nothing to reduce, so the time is 0.",
         strategy=st.fixed_dictionaries({"message_bytes": st.floats(0, 1e12), "n": st.just(1), **_link}),
         check=_zero_single_rank),
    dict(item="ring_allreduce_time", name="monotone in message size",
         meaning="A bigger message never takes less time.",
         strategy=st.fixed_dictionaries({"message_bytes": st.floats(0, 1e11), "n": st.integers(1, 1024), **_link}),
         check=_monotone),
]
