"""Derive, then check (issue 29): the stubs describe the mechanism, the reference keeps the formula.

Each lab's stub docstrings state their function's closed form for at most a third of its functions,
and only for those its items.py lists in DEFINITIONS (a definition, a unit convention or a published
count a student is not asked to derive). Every other function's closed form is in the reference's
`Formula:` paragraph, which the stub leaves out (autograder.build.stubgen.without_formulas), beside
the `Derive:` paragraph both keep. `scalelabs lint`'s derive rule checks this for every lab
(tests/labs/test_labs.py runs it); the counter is autograder/author/closedforms.py. Before issue 29 the
stubs stated 7 of 8 (Lab 01), 9 of 9 (Lab 02), 6 of 9 (Lab 05), 12 of 14 (Lab 06), 6 of 12 (Lab 09)
and, as Lab 07 was scaffolded, 8 of 9.
"""
from __future__ import annotations

import pytest

from autograder.author import closedforms, lint
from labs import all_assignments

LABS = sorted(all_assignments())


@pytest.mark.parametrize("lab", LABS)
def test_at_most_a_third_of_the_stub_docstrings_state_their_closed_form(lab):
    """Counted and listed: the stub docstrings that state a closed form are the lab's DEFINITIONS,
    at most a third of its graded functions."""
    a = all_assignments()[lab]
    stated = lint.stub_formulas(a)
    found = {name for name, form in stated.items() if form}
    listed = set(lint.definitions(a))
    assert listed <= set(stated) and 3 * len(listed) <= len(stated), lab
    assert found <= listed, {name: stated[name] for name in found - listed}
    print(f"{lab}: {len(found)} of {len(stated)} stub docstrings state a closed form: {sorted(found)}")


def test_the_count_sees_a_closed_form_and_not_a_mechanism():
    """The counter itself: the issue's example and a parameter ratio are closed forms; the ring's
    mechanism in words, with its chunk and its step count, is not."""
    params = ["message_bytes", "n", "alpha_s", "bandwidth"]
    assert closedforms.closed_form("T = 2(n-1) * alpha_s + 2(n-1)/n * M / B  (Thakur et al. 2005).", params)
    assert closedforms.closed_form("Seconds to send: alpha_s + message_bytes / bandwidth.", params)
    assert closedforms.closed_form("Ratio: comm_s / compute_s.", ["comm_s", "compute_s"])
    assert not closedforms.closed_form(
        "the buffer is cut into n chunks of M/n bytes. Each phase takes n-1 steps; in every step each rank "
        "sends one chunk to its right neighbour while it receives one from its left.", params)


def test_two_operators_state_a_closed_form_one_over_a_count_does_not():
    """The counter's threshold, at its edge: an expression of two operators over the usual symbols
    states the formula (`alpha_s + M / B`, in words around it, no equation); one operator is a closed
    form only when it combines the function's own parameters (`n-1` steps, a count, is not)."""
    params = ["message_bytes", "n", "alpha_s", "bandwidth"]
    assert closedforms.closed_form("Seconds to send: alpha_s + M / B, the latency then the bytes.", params)
    assert not closedforms.closed_form("Each phase takes n-1 steps.", params)
    assert closedforms.closed_form("Seconds on the wire: message_bytes / bandwidth.", params)
