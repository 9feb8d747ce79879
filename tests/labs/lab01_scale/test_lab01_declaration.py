"""Lab 01 declaration: computed keys, option texts, the notebook's code run against the reference,
and a standalone public-properties module."""
import ast
import contextlib
import io
import sys
from pathlib import Path

import matplotlib
import pytest

import labs.lab01_scale as L
from autograder.engine import spec
from reference import constants, scaling

matplotlib.use("Agg")


def test_keys_are_not_all_one_letter():
    keys = [q.key for q in L.ASSIGNMENT.questions]
    assert len(keys) == 4 and len(set(keys)) > 1
    assert "A" not in keys   # the notebook prompt uses `qid = "A"` as its format example


def test_act1_key_is_the_range_holding_the_computed_speedup():
    q = L.ASSIGNMENT.question("act1_prediction")
    lo, mid, hi = L.SPEEDUP_CUTS
    text = q.options[q.key]
    assert lo <= L.SPEEDUP < mid and text.startswith(f"{lo:,}-{mid:,}x")
    # the strong-scaling model: efficiency falls with N (the lab's N*E*(1-C) kept it constant)
    eight = scaling.data_parallel_speedup(L.STEP_S_1GPU, 8, L.GRAD_BYTES, L.ALPHA_S, L.BANDWIDTH) / 8
    assert 0 < L.EFFICIENCY < eight < 1


def test_act2_key_is_the_computed_cheapest_path():
    q = L.ASSIGNMENT.question("act2_prediction")
    assert L.CHEAPEST == "on_demand" and L.SPREAD > 0.2
    assert q.options[q.key].startswith("On-demand is cheapest")
    # the lab keyed "reserved": at its own 60% default reserved costs more than on-demand
    assert L.COSTS["reserved"] > L.COSTS["on_demand"]


def test_reflection_keys_carry_the_corrected_physics():
    r1 = L.ASSIGNMENT.question("act1_reflection")
    assert "AllReduce" in r1.options[r1.key]
    r2 = L.ASSIGNMENT.question("act2_reflection")
    assert "Capex and staff" in r2.options[r2.key]


def test_story_numbers():
    # the headline figures of the story, recomputed independently of the declaration
    assert L.TOTAL_FLOPS == pytest.approx(5.88e23)
    assert L.YEARS_1GPU == pytest.approx(5.88e23 / (989e12 * 0.5) / (8760 * 3600))
    assert L.IDEAL_DAYS == pytest.approx(L.YEARS_1GPU * 365 / 1000)
    assert L.BREAKEVEN == pytest.approx(46_000 / (8760 * 3 * (2.10 - 0.098)))
    assert L.BUDGET_UTILIZATION == pytest.approx(50e6 / (1000 * 8760 * 3 * 2.10))


def _run_code_cells(answers):
    """Execute every Code cell as the notebook would, with the reference standing in for the
    student's module; return what the cells printed."""
    import matplotlib.pyplot as plt
    import numpy as np
    namespace = {"scaling": scaling, "constants": constants, "np": np, "plt": plt, **answers}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell in L.ASSIGNMENT.notebook:
            if isinstance(cell, spec.Code):
                exec(compile(cell.source, "<cell>", "exec"), namespace)
    plt.close("all")
    return out.getvalue()


def test_notebook_code_runs_and_never_prints_a_key():
    answers = {q.id: "Z" for q in L.ASSIGNMENT.questions}   # a letter no option has
    printed = _run_code_cells(answers)
    assert f"{L.SPEEDUP:,.0f}x" in printed
    assert "on_demand" in printed and "OVER BUDGET" in printed
    for line in printed.splitlines():
        assert "key" not in line.lower()
    assert "You predicted: Z" in printed


def test_code_cells_require_the_prediction():
    codes = [c for c in L.ASSIGNMENT.notebook if isinstance(c, spec.Code)]
    assert all(c.requires for c in codes)
    for c in codes:
        assert "scaling." in c.source


def test_public_properties_are_standalone():
    tree = ast.parse(Path(L.public.__file__).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= set(sys.stdlib_module_names) | {"hypothesis"}
    assert all(d["item"] in [f.name for f in L.ASSIGNMENT.functions] for d in L.public.PROPERTIES)
    assert L.public.HOURS_PER_YEAR == constants.HOURS_PER_YEAR
    assert L.public.OPTIONS == scaling.OPTIONS
