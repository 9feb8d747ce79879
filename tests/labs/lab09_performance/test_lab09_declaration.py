"""The lab09_performance declaration: items, computed keys, and notebook code that runs."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import labs.lab09_performance as L  # noqa: E402
from autograder.build.notebook import locked_source  # noqa: E402
from autograder.engine.spec import Code  # noqa: E402
from reference import constants, performance  # noqa: E402

A = L.ASSIGNMENT


def test_every_required_function_is_a_graded_item():
    required = {"amdahl_speedup", "amdahl_limit", "step_time_reduction", "multi_component_speedup", "hotspot",
                "gustafson_speedup", "roofline_flops", "ridge_point", "mfu", "best_fix"}
    names = {f.name for f in A.functions}
    assert required <= names and names == set(performance.__all__)
    for item in A.functions:
        assert item.points > 0 and item.examples and len(item.properties) >= 2, item.name


def test_keys_are_computed_and_not_all_one_letter():
    keys = [q.key for q in A.questions]
    assert len(set(keys)) > 1
    act1 = A.question("act1_prediction")
    lo, hi = L.A1_RANGES[L._a1_key]
    assert lo <= performance.step_time_reduction(0.12, 3.0) < hi
    assert act1.options[act1.key].startswith("Between 5 % and 10 %")
    act2 = A.question("act2_prediction")
    assert "pipeline bubble" in act2.options[act2.key] and L.BEST == "pipeline_bubble"


def test_story_corrects_the_lab():
    # the 8 % is a step-time cut; +8.7 % the throughput; 13.6 % only the ceiling; ~34 points does not exist
    assert round(L.A1_TIME_CUT, 3) == 0.08 and round(L.A1_SPEEDUP - 1, 3) == 0.087
    assert round(L.A1_CEILING - 1, 3) == 0.136
    assert round(100 * L.GAINS["pipeline_bubble"], 1) == 2.8
    assert round(L.BASE_MFU, 3) == 0.350 and L.PLAN_LEFT < 0


@pytest.mark.parametrize("answered", [False, True])
def test_code_cells_run_on_the_reference(answered, capsys, monkeypatch):
    namespace = {"performance": performance, "constants": constants, "np": np, "plt": plt}
    if answered:
        namespace.update({q.id: q.key for q in A.questions})
    monkeypatch.setattr(plt, "show", lambda *a, **k: None)
    for cell in A.notebook:
        if isinstance(cell, Code):
            exec(compile(locked_source(cell.source, cell.requires), "<cell>", "exec"), namespace)
    plt.close("all")
    out = capsys.readouterr().out
    if answered:
        assert "best_fix: pipeline_bubble" in out and "OVER BUDGET" in out and "8.0%" in out
        assert not any(f'"{q.key}"' in out for q in A.questions)
    else:
        assert "answer act1_prediction above first" in out
