from autograder.engine import scoring


def test_shares_30_40_30_split_equally_within_a_share():
    pts = scoring.check_points(10, ["example", "example", "hidden", "property", "property", "property"])
    assert pts == [1.5, 1.5, 4.0, 1.0, 1.0, 1.0]


def test_empty_component_is_renormalised():
    # no properties: examples 30/70, hidden 40/70
    pts = scoring.check_points(7, ["example", "hidden"])
    assert pts == [3.0, 4.0]
    assert scoring.check_points(2, ["hidden"]) == [2.0]


def test_points_sum_exactly_despite_rounding():
    pts = scoring.check_points(2, ["example", "example", "example", "hidden"])
    assert abs(sum(pts) - 2) < 1e-12


def test_the_input_blind_answer_splits_only_between_distinct_values():
    """A fixed threshold on one argument puts equal values on the same side: two inputs with n = 1 and
    different answers cannot both be matched by it (the blind answer gets 2 of 4 here, not 3)."""
    inputs = [{"n": 1}, {"n": 1}, {"n": 2}, {"n": 2}]
    assert scoring.input_blind_matches(inputs, ["ring", "tree", "ring", "tree"]) == 2
    assert scoring.input_blind_matches(inputs, ["ring", "ring", "tree", "tree"]) == 4
    assert scoring.needed_matches(4, 2) == 3      # so a function right on 3 of 4 keeps its credit


def test_the_tolerance_has_an_absolute_floor_near_zero_and_a_relative_part_elsewhere():
    """The policy every check shares (FunctionItem's defaults: relative 1e-9, absolute 1e-12): a value
    within 1e-12 of a zero the reference gives matches (float rounding of a correct formula), one
    further off does not; large values match within a relative 1e-9."""
    from autograder.engine.compare import values_match
    assert values_match(0.0, 3e-17, 1e-9, 1e-12) and values_match(0.0, -1e-12, 1e-9, 1e-12)
    assert not values_match(0.0, 1e-11, 1e-9, 1e-12)
    assert values_match(2.5e11, 2.5e11 * (1 + 5e-10), 1e-9, 1e-12)
    assert not values_match(2.5e11, 2.5e11 * (1 + 2e-9), 1e-9, 1e-12)
    assert values_match(float("inf"), float("inf"), 1e-9, 1e-12) and not values_match(float("inf"), 1e300, 1e-9, 1e-12)
    assert values_match(4.0, 4, 1e-9, 1e-12) and not values_match(1.0, True, 1e-9, 1e-12)
