"""labs/property_kit.py: a public property declared on its check, and how it is shipped."""
from __future__ import annotations

import pytest
from hypothesis import strategies as st

from autograder.build.publictests import shipped_properties
from labs.property_kit import PublicProperties, kwargs, number, zero_when

DRAWN = kwargs(n=st.integers(1, 8))


def _doubles(key):
    def check(f, d):
        assert f(**{**d, key: 2 * d[key]}) == 2 * f(**d)
    return check


def test_declared_in_order_with_the_docstring_as_meaning_and_the_check_unchanged():
    props = PublicProperties()
    public_property = props.declare

    @public_property("size", DRAWN, name="zero for one rank")
    def _one_rank(f, d):
        """With one rank there is nothing to send,
        so the size is 0."""
        assert f(n=1) == 0

    public_property("size", DRAWN, name="proportional to n", meaning="Twice the ranks, twice the bytes.",
                    max_examples=30)(_doubles("n"))
    public_property("other", DRAWN, name="zero for one rank", meaning="Reused with its own meaning.")(_one_rank)

    assert _one_rank.__name__ == "_one_rank" and callable(_one_rank)
    assert [(p["item"], p["name"], p["meaning"]) for p in props] == [
        ("size", "zero for one rank", "With one rank there is nothing to send, so the size is 0."),
        ("size", "proportional to n", "Twice the ranks, twice the bytes."),
        ("other", "zero for one rank", "Reused with its own meaning.")]
    assert list(props[0]) == ["item", "name", "meaning", "strategy", "check"]   # no max_examples unless given
    assert props[1]["max_examples"] == 30 and props[0]["strategy"] is DRAWN and props[2]["check"] is _one_rank


def test_a_property_without_meaning_or_declared_twice_is_an_error():
    public_property = PublicProperties().declare
    with pytest.raises(ValueError, match=r"check.*has no docstring: give the property its meaning"):
        public_property("size", DRAWN, name="proportional to n")(_doubles("n"))
    public_property("size", DRAWN, name="proportional to n", meaning="Twice the ranks.")(_doubles("n"))
    with pytest.raises(ValueError, match=r"size: public property 'proportional to n' is declared twice"):
        public_property("size", DRAWN, name="proportional to n", meaning="Again.")(_doubles("n"))


def test_number_fails_the_property_on_a_non_number():
    assert number(3) == 3.0 and isinstance(number(3), float)
    for bad in (True, "3", None):
        with pytest.raises(AssertionError, match="expected a number"):
            number(bad)


def test_zero_when_calls_with_the_changes_and_fails_with_its_message_unless_the_result_is_zero():
    calls = []

    def cost(**kw):
        calls.append(kw)
        return kw["n"] - 1 + kw["slack"]

    exact = zero_when("n = {n}: got {got!r}, expected 0", n=1)
    exact(cost, {"n": 5, "slack": 0})
    assert calls == [{"n": 1, "slack": 0}]          # the drawn arguments, n changed
    with pytest.raises(AssertionError, match=r"^n = 1: got 1e-15, expected 0$"):
        exact(cost, {"n": 5, "slack": 1e-15})         # exactly 0 by default
    zero_when("unused", abs_tol=1e-12, n=1)(cost, {"n": 5, "slack": -1e-13})
    with pytest.raises(AssertionError, match=r"^two ranks, got 1$"):   # what f returned, as it returned it
        zero_when("two ranks, got {got}", abs_tol=1e-12, n=2)(cost, {"n": 1, "slack": 0})
    with pytest.raises(AssertionError, match=r"^n = 1, got nan$"):   # the message shows the call, not the draw
        zero_when("n = {n}, got {got}", abs_tol=1.0, n=1)(cost, {"n": 3, "slack": float("nan")})
    # a change may be computed from the drawn arguments
    calls.clear()
    zero_when("n = {n}", n=lambda d: d["n"] - d["slack"], slack=0)(cost, {"n": 4, "slack": 3})
    assert calls == [{"n": 1, "slack": 0}]
    for bad in (True, "0", None):
        with pytest.raises(AssertionError, match="expected a number"):
            zero_when("never shown", n=1)(lambda **kw: bad, {"n": 2})


def test_shipping_makes_the_kit_import_flat_and_refuses_any_other_labs_import():
    source = "import math\n\nfrom labs.property_kit import PublicProperties, number\n"
    assert shipped_properties(source, "p.py") == "import math\n\nfrom _property_kit import PublicProperties, number\n"
    with pytest.raises(ValueError, match=r"p.py: a shipped properties module may import only labs.property_kit "
                                         r"from the labs package, not: from labs.authoring import close"):
        shipped_properties(source + "from labs.authoring import close\n", "p.py")
