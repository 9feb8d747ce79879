"""The lab06_collectives declaration: contract with docs/physics.md, computed keys, notebook cells."""
from __future__ import annotations

import inspect
import io
import re
import sys
import tempfile
import types
from contextlib import chdir, redirect_stdout
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from autograder.build.stubgen import flat_imports
import labs  # noqa: E402
from labs import lab06_collectives as decl  # noqa: E402
from autograder.build.leakscan import scan_text, secrets_for  # noqa: E402
from autograder.build.notebook import build_notebook  # noqa: E402
from autograder.engine.spec import Code, Markdown  # noqa: E402
from reference import collectives as ref  # noqa: E402

import physics_doc  # noqa: E402

A = decl.ASSIGNMENT
REPO = Path(__file__).resolve().parents[3]

def test_every_documented_function_is_graded_in_order_with_its_signature():
    required = {f.name: list(f.params) for f in physics_doc.functions() if f.module == "collectives"}
    assert len(required) == 14
    assert [f.name for f in A.functions] == list(required)
    for name, params in required.items():
        assert list(inspect.signature(getattr(ref, name)).parameters) == params, name


def test_declared_and_found():
    assert labs.load("lab06_collectives") is A
    assert A.module == "collectives" and A.reference is ref


def test_items_have_points_examples_and_two_properties():
    for item in A.functions:
        assert item.points > 0 and item.examples, item.name
        assert len(item.properties) >= 2, item.name
        assert sum(p.public for p in item.properties) >= 2, item.name
        for example in item.examples:
            value = getattr(ref, item.name)(**example.kwargs)
            assert isinstance(value, (int, float, str)) and not isinstance(value, bool)


def test_keys_follow_from_the_reference():
    keys = {q.id: q.key for q in A.questions}
    assert len(set(keys.values())) > 1, keys
    # Act I: the key's range holds the naive/ring traffic ratio, which is exactly n
    ratio = ref.naive_master_bytes(1e9, decl.N_GPUS) / ref.ring_bytes_per_rank(1e9, decl.N_GPUS)
    assert abs(ratio - decl.N_GPUS) < 1e-9
    lo, hi = map(int, re.findall(r"(\d+)×", A.question("act1_prediction").options[keys["act1_prediction"]])[:2])
    assert lo <= ratio < hi
    # Act II: the key names the pick of best_allreduce_algorithm for each workload
    picks = [ref.best_allreduce_algorithm(m, decl.N_GPUS, decl.ALPHA_S, decl.NDR) for _, _, m in decl.WORKLOADS]
    assert picks == ["ring", "ring", "tree"]
    key_text = A.question("act2_prediction").options[keys["act2_prediction"]]
    assert key_text.startswith("Ring for the") and "tree for the" in key_text and "gradients" in key_text


def test_failure_state_is_reached_in_act_two():
    fractions = [numbers["fraction"] for *_, numbers in decl.ACT2]
    assert fractions[0] > decl.FAILURE_FRACTION and fractions[1] > decl.FAILURE_FRACTION
    assert fractions[2] < decl.FAILURE_FRACTION


def test_hints_and_prompts_do_not_name_a_letter():
    for q in A.questions:
        assert q.hint
        for text in (q.hint, q.prompt):
            assert not re.search(r"\b(option|answer|choice) [A-D]\b|\b[A-D]\)", text), (q.id, text)


def test_numbers_in_code_cells_come_from_the_declaration():
    # scenario inputs are formatted in: the Act I gradient size appears as the declared float
    sources = [c.source for c in A.notebook if isinstance(c, Code)]
    assert all(f"n = {decl.N_GPUS}" in s for s in sources)
    assert repr(decl.ACT1_MESSAGE_BYTES) in sources[0]
    assert all("collectives." in s for s in sources)


def _run_notebook(answers: dict[str, str]) -> str:
    """Execute the built notebook's code cells with the reference as the student's module."""
    flat = flat_imports((REPO / "reference" / "collectives.py").read_text())
    module = types.ModuleType("collectives")
    sys.path.insert(0, str(REPO / "reference"))
    try:
        exec(compile(flat, "collectives.py", "exec"), module.__dict__)
        sys.modules["collectives"] = module
        sys.modules.setdefault("constants", __import__("reference.constants").constants)
        out, namespace = io.StringIO(), {}
        plt.show = lambda *a, **k: plt.close("all")
        # in a folder of its own: the reveals write their record file in the current folder
        with redirect_stdout(out), tempfile.TemporaryDirectory() as folder, chdir(folder):
            for cell in build_notebook(A).cells:
                if cell.cell_type != "code":
                    continue
                qid = cell.metadata["nbgrader"]["grade_id"].removesuffix("-answer")
                source = f"{qid} = {answers[qid]!r}" if qid in answers else cell.source
                exec(compile(source, cell.id, "exec"), namespace)
        return out.getvalue()
    finally:
        sys.path.remove(str(REPO / "reference"))
        sys.modules.pop("collectives", None)


def test_notebook_runs_and_readouts_show_the_students_values_not_the_key():
    wrong = {q.id: next(letter for letter in q.options if letter != q.key) for q in A.questions}
    printed = _run_notebook(wrong)
    assert "128.00x" in printed                      # the ratio from the (here: reference) functions
    assert "FAILURE" in printed
    for q in A.questions:
        assert not re.search(rf"{q.id}\s*=\s*['\"]{q.key}['\"]", printed)
        if q.kind == "prediction":
            assert q.options[q.key] not in printed   # only the student's own option text is echoed


def test_notebook_locks_instruments_until_answered():
    printed = _run_notebook({q.id: None for q in A.questions})
    assert "answer act1_prediction above first" in printed
    assert "answer act2_prediction above first" in printed
    assert "FAILURE" not in printed


def test_built_notebook_leaks_nothing():
    nb = build_notebook(A)
    text = "\n".join(cell.source for cell in nb.cells)
    assert scan_text("lab06_collectives.ipynb", text, secrets_for([A])) == []


def test_markdown_story_numbers_are_formatted():
    story = "\n".join(c.text for c in A.notebook if isinstance(c, Markdown))
    assert f"{decl.ACT1_NAIVE_S:,.0f} s" in story and "350 GB" in story and "{" not in story
