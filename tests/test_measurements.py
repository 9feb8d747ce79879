"""The model against the published record (issue 30): docs/measurements.md is generated from each lab's
labs/<lab>/measurements.py and recomputed here from reference/, so a changed formula, constant or
declaration without a regenerated page fails; every row quotes the figure it compares, agrees within the
band or names the effect its lab teaches; every released notebook carries the model-vs-measurement
element, which degrades like an instrument when a function is not written yet; and no student-visible
text claims an unqualified lower bound or cites the example nccl-tests does not contain."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.build import measured
from autograder.build.release import STUDENT_DIR
from labs import all_assignments

ROOT = Path(__file__).resolve().parents[1]
LABS = all_assignments()
ROWS = [(a, m) for a in LABS.values() for m in a.measurements]
# The "done when": the multi-node and hierarchical rows agree within the band with no effect to hide behind.
MUST_AGREE = {"ring_two_nodes", "ring_four_nodes", "at_scale", "fleet_busbw", "hierarchical_two_nodes",
              "hierarchical_four_nodes", "megatron_strong_scaling", "gpt3_layout", "tree_choice"}


def test_the_page_is_the_declarations_recomputed():
    assert (ROOT / "docs" / "measurements.md").read_text(encoding="utf-8") == measured.page(LABS.values()), \
        "docs/measurements.md is stale: run python -m autograder.build.measured"


def test_the_check_command_says_stale(tmp_path, monkeypatch):
    page = tmp_path / "measurements.md"
    page.write_text(measured.page(LABS.values()).replace("| 1.22 |", "| 1.23 |"), encoding="utf-8")
    monkeypatch.setattr(measured, "PAGE", page)
    assert measured.main(["--check"]) == 1
    page.write_text(measured.page(LABS.values()), encoding="utf-8")
    assert measured.main(["--check"]) == 0


@pytest.mark.parametrize("lab", sorted(LABS))
def test_every_lab_holds_three_rows_and_a_notebook_element(lab):
    a = LABS[lab]
    assert len(a.measurements) >= 3
    assert len({m.id for m in a.measurements}) == len(a.measurements)
    assert measured.notebook_rows(a), "no row of the lab is in its notebook"
    assert "measurement_reflection" in {q.id for q in a.questions}


@pytest.mark.parametrize("assignment, m", ROWS, ids=[f"{a.id}:{m.id}" for a, m in ROWS])
def test_every_row_quotes_its_figure_and_agrees_or_names_its_effect(assignment, m):
    lab_text = (ROOT / "labs" / assignment.id / "notebook.py").read_text(encoding="utf-8")
    assert measured.problems(m, lab_text) == []
    assert m.url.startswith("https://") and m.source and m.why


@pytest.mark.parametrize("row_id", sorted(MUST_AGREE))
def test_multi_node_and_hierarchical_rows_agree(row_id):
    m = next(m for _, m in ROWS if m.id == row_id)
    value = m.reference_value()
    assert measured.agree(m, value) and not m.effect, f"{row_id}: {measured.shown(value, m.unit)} vs {m.published}"


def test_a_row_whose_quote_lacks_its_figure_or_whose_gap_is_unexplained_is_named():
    m = next(m for _, m in ROWS if m.id == "ring_four_nodes")
    wrong_figure = type(m)(**{**vars(m), "published": 355.84e9})
    assert any("does not contain the published figure 355.84" in p for p in measured.problems(wrong_figure))
    far = type(m)(**{**vars(m), "published": 100e9, "quote": m.quote.replace("365.84", "100")})
    assert any("outside" in p and "names no effect" in p for p in measured.problems(far))
    untaught = type(m)(**{**vars(far), "effect": "gremlins in the switch"})
    assert any("not named in the lab's notebook" in p for p in measured.problems(untaught, "no such words"))


# --- the element in the released notebooks --------------------------------------------------------------

@pytest.mark.parametrize("lab", sorted(LABS))
def test_every_released_notebook_has_the_element(lab):
    nb = json.loads((ROOT / "release" / lab / f"{lab}.ipynb").read_text(encoding="utf-8"))
    ids = [c.get("id") for c in nb["cells"]]
    assert "measurements" in ids and "measurements-compare" in ids and "measurement_reflection" in ids
    assert ids.index("measurements") < ids.index("measurements-compare") < ids.index("measurement_reflection")
    source = "".join(nb["cells"][ids.index("measurements-compare")]["source"])
    a = LABS[lab]
    for m in measured.notebook_rows(a):
        assert m.model.source() in source, f"{m.id}: the cell does not call the student's functions at its setup"
    markdown = "".join(nb["cells"][ids.index("measurements")]["source"])
    assert all(m.quote in markdown and m.url in markdown for m in measured.notebook_rows(a))


def _run_element(tmp_path: Path, lab: str, module_text: str | None) -> str:
    """The released element cell run in a copy of the lab's release folder, the module replaced."""
    folder = tmp_path / lab
    shutil.copytree(ROOT / "release" / lab, folder)
    for helper in ("_measured.py", "_instruments.py"):       # the toolkit as built now (the release copy: below)
        shutil.copyfile(STUDENT_DIR / helper, folder / helper)
    a = LABS[lab]
    if module_text is not None:
        (folder / f"{a.module}.py").write_text(module_text, encoding="utf-8")
    nb = json.loads((folder / f"{lab}.ipynb").read_text(encoding="utf-8"))
    cell = next(c for c in nb["cells"] if c.get("id") == "measurements-compare")
    code = f"import {a.module}\n" + "".join(cell["source"])
    done = subprocess.run([sys.executable, "-c", code], cwd=folder, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_element_names_the_function_to_implement(tmp_path):
    out = _run_element(tmp_path, "lab06_collectives", None)            # the released stub
    assert "Implement collectives.ring_allreduce_time to see this." in out
    assert "Traceback" not in out and "ratio" not in out and "published: 365-370 GB/s" not in out


def test_the_element_with_written_functions_prints_the_ratio(tmp_path):
    from autograder.classroom.samples import solved_module
    solved = solved_module((ROOT / "reference" / "collectives.py").read_text(encoding="utf-8"))
    out = _run_element(tmp_path, "lab06_collectives", solved)
    assert "your model: 450 GB/s   published: 365-370 GB/s (NVIDIA/nccl#1455)" in out
    assert "your model / published = 1.22" in out and "your model / published = 0.94" in out
    wrong = solved.replace("return message_bytes / time_s * 2 * (n - 1) / n", "return None")
    assert wrong != solved
    out = _run_element(tmp_path / "again", "lab06_collectives", wrong)
    assert "bus_bandwidth" in out and "returned None" in out


@pytest.mark.parametrize("lab", sorted(LABS))
def test_every_shipped_module_imports_in_its_released_folder(lab):
    """cluster.py and the toolkit import flat in the student's folder, as the notebook's setup imports them
    (a reference module copied with its relative imports would not)."""
    folder = ROOT / "release" / lab
    names = [p.stem for p in sorted(folder.glob("*.py")) if not p.stem.startswith("test_")]
    code = "import importlib\nfor name in %r:\n    importlib.import_module(name)\n" % names
    done = subprocess.run([sys.executable, "-I", "-B", "-c", f"import sys; sys.path.insert(0, '.')\n{code}"], cwd=folder,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert ("cluster" in names) == ("cluster" in LABS[lab].notebook_modules)


def test_the_student_helper_is_shipped_everywhere():
    for lab in LABS:
        assert (ROOT / "release" / lab / "_measured.py").read_bytes() == (STUDENT_DIR / "_measured.py").read_bytes()


# --- what students read: no unqualified lower bound, no citation of an example the source lacks -----------

_BOUND = re.compile(r"lower bound|least any|bandwidth[- ]optimal", re.I)
_QUALIFIED = re.compile(r"point[- ]to[- ]point", re.I)
_UNFOUND = ("nccl-tests worked value", "nccl-tests' example", "as nccl does")


def _student_texts():
    for path in sorted((ROOT / "release").rglob("*")):
        if path.suffix == ".ipynb":
            nb = json.loads(path.read_text(encoding="utf-8"))
            for cell in nb["cells"]:
                yield f"{path.relative_to(ROOT)}:{cell.get('id')}", "".join(cell["source"])
        elif path.suffix == ".py":
            yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")


def unqualified_claims(text: str) -> list[str]:
    """Each 'lower bound' (or 'least any ...', 'bandwidth-optimal') without 'point-to-point' in its sentence."""
    found = []
    for hit in _BOUND.finditer(text):
        start = max(text.rfind(". ", 0, hit.start()), text.rfind("\n\n", 0, hit.start()), 0)
        end = min([i for i in (text.find(". ", hit.end()), text.find("\n\n", hit.end())) if i >= 0] or [len(text)])
        sentence = text[start:end]
        if not _QUALIFIED.search(sentence):
            found.append(sentence.strip()[:160])
    return found


def test_no_student_visible_text_claims_an_unqualified_lower_bound():
    found = [f"{where}: {claim}" for where, text in _student_texts() for claim in unqualified_claims(text)]
    assert not found, found


def test_no_student_visible_text_cites_the_unfound_example():
    found = [where for where, text in _student_texts() for phrase in _UNFOUND if phrase in text.lower()]
    assert not found, found


def test_the_scan_catches_an_unqualified_claim():
    assert unqualified_claims("Each rank sends 2(n-1)/n M, the AllReduce lower bound. Next.")
    assert not unqualified_claims("The least any AllReduce built from point-to-point sends can send. Next.")
