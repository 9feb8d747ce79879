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
