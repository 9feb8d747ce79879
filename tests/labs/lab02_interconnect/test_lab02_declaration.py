"""Lab 02 declaration: items, properties, domains, computed keys and the notebook arc."""
from __future__ import annotations

import math
import re

import labs.lab02_interconnect as lab
from autograder.build.notebook import build_notebook
from autograder.engine.spec import Code, Markdown
from reference import interconnect as ic

A = lab.ASSIGNMENT
REQUIRED = ["gbit_to_bytes_per_s", "gradient_bytes", "transfer_time", "intra_node_allreduce_time",
            "hierarchical_allreduce_time", "comm_overhead_ratio", "speedup", "scaling_efficiency",
            "min_ib_links"]


def test_identity():
    assert (A.id, A.module, A.reference) == ("lab02_interconnect", "interconnect", ic)
    assert A.source_lab.startswith("Vol II Lab 02, The Interconnect Wall: ")


def test_every_required_function_is_a_graded_item():
    assert [f.name for f in A.functions] == REQUIRED
    assert all(f.points > 0 and f.examples for f in A.functions)


# --- Questions ------------------------------------------------------------------------------------

def test_four_questions_keys_not_all_one_letter():
    assert [q.id for q in A.questions] == ["act1_prediction", "act1_reflection", "act2_prediction", "act2_reflection"]
    assert [q.kind for q in A.questions] == ["prediction", "reflection", "prediction", "reflection"]
    assert len({q.key for q in A.questions}) >= 3
    for q in A.questions:
        assert set(q.options) == set("ABCD") and q.key in q.options and q.hint


def test_act1_key_is_the_range_holding_the_computed_slowdown():
    q = A.question("act1_prediction")
    low, high = map(float, re.search(r"\((\d+(?:\.\d+)?)× to (\d+(?:\.\d+)?)×\)", q.options[q.key]).groups())
    assert low <= lab.PCIE_SLOWDOWN < high
    # recomputed here from the reference: the same 8-GPU ring, NVLink vs PCIe Gen4 x16
    nv = lab.COMPUTE_S + ic.intra_node_allreduce_time(140e9, 8, 450e9)
    pcie = lab.COMPUTE_S + ic.intra_node_allreduce_time(140e9, 8, 32e9)
    assert math.isclose(lab.PCIE_SLOWDOWN, pcie / nv)


def test_act2_design_key_is_min_ib_links():
    q = A.question("act2_reflection")
    assert q.options[q.key].startswith(f"{lab.LINKS_AT_MAX} links")
    assert lab.LINKS_AT_MAX == ic.min_ib_links(140e9, 8, 64, 450e9, 50e9, lab.COMPUTE_S)


def test_story_numbers_are_computed():
    text = " ".join(c.text for c in A.notebook if isinstance(c, Markdown))
    assert f"{lab.STORY_SPEEDUP:.1f}×" in text and "6× throughput" not in text
    assert "400 GB/s" not in text.replace('not "400 GB/s"', "")
    assert f"{lab.CLIFF:.1f}×" in text and "18×" not in text
    assert lab.STORY_RATIO > 1                     # the story is the danger state
    assert math.isclose(ic.hierarchical_allreduce_time(140e9, 8, 1, 450e9, 50e9),
                        ic.intra_node_allreduce_time(140e9, 8, 450e9))  # one node: no IB term


# --- Notebook ---------------------------------------------------------------------------------------

def test_notebook_arc_and_locks():
    kinds = [type(c).__name__ for c in A.notebook]
    assert kinds.count("Answer") == 4 and kinds[-1] == "FunctionGrades"
    codes = [c for c in A.notebook if isinstance(c, Code)]
    assert all(c.requires for c in codes)
    assert all("interconnect." in c.source for c in codes)
    nb = build_notebook(A)
    grade_ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells if c.metadata["nbgrader"]["grade"]]
    assert sorted(grade_ids) == sorted(A.item_ids)


def test_generated_source_folder_does_not_leak(tmp_path):
    from autograder.build.leakscan import scan
    from autograder.build.release import build_source
    source = build_source(A, tmp_path)
    assert scan([source], [A]) == []
