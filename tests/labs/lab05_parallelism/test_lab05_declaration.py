"""The lab05_parallelism declaration: items, computed story numbers and keys, the notebook arc
(run with the reference as the student's module), and a standalone public-properties module."""
from __future__ import annotations

import ast
import math
from pathlib import Path

import labs.lab05_parallelism as L
from autograder.engine.spec import Answer, Code, FunctionGrades, Markdown
from reference import constants, parallelism as ref

A = L.ASSIGNMENT
REQUIRED = ["data_parallel_step_time", "effective_mfu", "model_state_bytes_per_gpu", "activation_bytes_per_layer",
            "pipeline_bubble_fraction", "tp_crosses_node", "fits_in_memory"]
PROPERTIES_FILE = Path(L.__file__).with_name("properties.py")


def test_identity():
    assert (A.id, A.module, A.reference) == ("lab05_parallelism", "parallelism", ref)
    assert A.source_lab.startswith("Vol II Lab 05, The Parallelism Paradox: ")


def test_every_required_and_design_function_is_graded():
    names = [f.name for f in A.functions]
    assert set(REQUIRED) <= set(names)
    assert {"peak_memory_bytes_per_gpu", "best_3d_config"} <= set(names)
    for item in A.functions:
        assert item.points > 0 and item.examples, item.name
        assert len(item.properties) >= 2, item.name


def test_keys_differ_and_are_computed():
    keys = [q.key for q in A.questions]
    assert [q.id for q in A.questions] == ["act1_prediction", "act1_reflection", "act2_prediction", "act2_reflection"]
    assert len(set(keys)) > 1
    for q in A.questions:
        assert q.key in q.options and len(q.options) == 4 and q.hint


def test_act2_options_exactly_one_feasible_and_it_is_the_enumerated_best():
    q = A.question("act2_prediction")
    assert q.options[q.key].startswith(L.BEST.replace(" PP", ", PP").replace(" DP", ", DP"))
    feasible = [lay for lay in L.ACT2_LAYOUTS if lay["feasible"]]
    assert [lay["config"] for lay in feasible] == [L.BEST]
    # each wrong option fails for its own reason: TP across nodes, out of memory, bubble + memory
    reasons = [(lay["crosses"], lay["fits"], lay["bubble"] <= L.ACT2["bubble_ceiling"])
               for lay in L.ACT2_LAYOUTS if not lay["feasible"]]
    assert len(set(reasons)) == 3
    assert "TP=8, PP=4, DP=32" in " ".join(q.options.values())          # the lab's keyed answer, now OOM
    assert not L.LAB_LAYOUT["fits"]


def test_story_numbers_come_from_the_reference():
    story = A.notebook[0].text
    for number in (L.pct(L.MFU8), L.pct(L.MFU64), L.pct(L.MFU512)):
        assert number in story
    # the idle-GPU cost says "waiting on the network", Act I's key: only the takeaway, after the reveal
    idle = f"{L.IDLE_USD_PER_DAY:,.0f}"
    first_at = next(i for i, c in enumerate(A.notebook) if isinstance(c, Markdown) and idle in c.text)
    reveal_at = next(i for i, c in enumerate(A.notebook) if isinstance(c, Code) and "act1_prediction" in c.requires)
    assert first_at > reveal_at and "network" not in story
    assert "\\$" in story and "\\$" in A.notebook[first_at].text     # no $...$ pair for LaTeX to render
    assert "52%" not in story and "38%" not in story and "$40,000" not in story
    assert L.MFU8 > L.MFU64 > L.MFU512 and L.MFU512 < L.MFU_FLOOR < L.MFU64


def test_notebook_arc():
    kinds = [type(c) for c in A.notebook]
    assert kinds.count(Answer) == 4 and kinds.count(FunctionGrades) == 1 and kinds[0] is Markdown
    answers = [c.question_id for c in A.notebook if isinstance(c, Answer)]
    assert answers == [q.id for q in A.questions]
    for cell in A.notebook:
        if isinstance(cell, Code):
            ast.parse(cell.source)
            assert cell.requires
            for q in A.questions:   # no key letter compared or printed
                assert f'"{q.key}"' not in cell.source and f"'{q.key}'" not in cell.source.replace(
                    repr(L._OPTION_LAYOUTS), "")


def test_code_cells_run_with_the_reference_module(monkeypatch, tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(Path(__file__).parents[3] / "autograder" / "build" / "student"))  # _instruments
    ns = {"parallelism": ref, "constants": constants, "np": np, "plt": plt}
    ns.update({q.id: q.key for q in A.questions})
    out = []
    ns["print"] = lambda *a, **k: out.append(" ".join(map(str, a)))
    for cell in A.notebook:
        if isinstance(cell, Code):
            exec(compile(cell.source, "<cell>", "exec"), ns)
    plt.close("all")
    text = "\n".join(out)
    assert f"MFU {100 * L.MFU512:5.1f}%" in text
    assert f"Your best_3d_config says: {L.BEST}" in text
    assert math.isclose(ref.effective_mfu(L.ACT1["mfu"], *ns["times"](8)), L.MFU8, rel_tol=1e-9)


def test_public_properties_are_standalone():
    tree = ast.parse(PROPERTIES_FILE.read_text())
    roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    roots |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert roots <= {"__future__", "math", "hypothesis"}
    public = [(f.name, p.name) for f in A.functions for p in f.properties if p.public]
    assert public == [(d["item"], d["name"]) for d in L.PROPERTIES]
