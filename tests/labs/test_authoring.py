"""labs/authoring.py: the notebook.py reader's errors and the shared helpers' edge cases."""
from __future__ import annotations

import importlib
import re
import shutil

import pytest

from autograder.engine.spec import Answer, Code, FunctionGrades, Markdown, Question
from labs import all_assignments
from labs.authoring import Option, fmt, fmt_bytes, letters, literal_setup, questions, range_key, read_notebook

SETUP = "# %%\nimport numpy as np\n"


def test_setup_imports_become_literals_with_their_comment():
    source = ("import numpy as np\n"
              "from labs.lab06_collectives.scenario import N_GPUS as n   # the cluster\n"
              "from labs.lab06_collectives.scenario import (WORKLOAD_SIZES as workloads,\n"
              "                                             MFU)\n")
    out = literal_setup(source, "labs.lab06_collectives")
    assert out.splitlines()[:2] == ["import numpy as np", "n = 128   # the cluster"]
    assert "workloads = {'7B model gradient': (7000000000.0, 14000000000.0)" in out
    assert "MFU = 0.5" in out and "from labs" not in out


def test_setup_refuses_a_value_that_is_not_a_literal():
    with pytest.raises(TypeError, match=r"labs.lab06_collectives.scenario.ref: only numbers, strings"):
        literal_setup("from labs.lab06_collectives.scenario import ref\n", "labs.lab06_collectives")


def test_cells_by_metadata(tmp_path):
    path = tmp_path / "notebook.py"
    path.write_text(SETUP + '# %% [markdown]\n# {{ X | bytes }} in {{ T | fmt(".1f", 1e-3) }} ms\n\n'
                    '# %% answer="q1"\n\n# %% requires=["q1"]\nprint(np.pi)\n\n'
                    '# %% tags=["instrument"]\nprint(1)\n\n# %%\nprint(2)\n\n# %% grades=true\n')
    setup, cells = read_notebook(path, {"X": 1.4e11, "T": 0.0123}, "labs")
    assert setup == "import numpy as np"
    assert cells == [Markdown("140 GB in 12.3 ms"), Answer("q1"), Code("print(np.pi)", ("q1",), hidden=True),
                     Code("print(1)", hidden=True), Code("print(2)"), FunctionGrades(())]


def test_an_answer_cell_with_code_and_an_unknown_name_are_errors(tmp_path):
    path = tmp_path / "notebook.py"
    path.write_text(SETUP + '# %% answer="q1"\nq1 = "B"\n')
    with pytest.raises(ValueError, match="leave it empty"):
        read_notebook(path, {}, "labs")
    path.write_text(SETUP + "# %% [markdown]\n# {{ MISSING }}\n")
    with pytest.raises(Exception, match="MISSING"):
        read_notebook(path, {}, "labs")


def test_range_key_and_formatters():
    assert range_key(128, ((1, 4), (4, 40), (40, 100), (100, 400))) == 3
    with pytest.raises(ValueError, match="exactly one option range"):
        range_key(500, ((1, 4), (100, 400)))
    assert fmt_bytes(5e5) == "500 KB" and fmt(262144, ",") == "262,144"


def test_a_range_key_on_a_bound_is_the_range_that_bound_opens():
    """range_key's ranges are [low, high): a computed value exactly on a bound keys the option whose
    range starts there, and the top of the last range is in none (the scenario changed)."""
    ranges = ((1, 4), (4, 40), (40, 100), (100, 400))
    assert [range_key(v, ranges) for v in (1, 4, 40, 100, 399.5)] == [0, 1, 2, 3, 3]
    descending = ((100, 400), (40, 100), (4, 40), (1, 4))     # Lab 01 lists its options high to low
    assert [range_key(v, descending) for v in (1, 4, 40, 100)] == [3, 2, 1, 0]
    for outside in (400, 0.5):
        with pytest.raises(ValueError, match="exactly one option range"):
            range_key(outside, ranges)


# --- questions.md ------------------------------------------------------------------------------------

QUESTIONS_MD = """# Toy questions

Anything above the first section is the authors' introduction.

## q1

**Prediction.** {{ MESSAGE_BYTES | bytes }} over
{{ N * 2 }} links at {{ SHARE | percent }}?

### hint

Wrapped lines
join with a space.

A blank line starts a paragraph.

## q2

Costs \\${{ USD | fmt(".2f") }}.

### hint

Count it.
"""
TOY_NAMESPACE = {"MESSAGE_BYTES": 1.4e11, "N": 64, "SHARE": 0.456, "USD": 2.5}


def _declared(*ids):
    chosen = letters([Option("yes", "why yes"), Option("no", "why no")], 0, offset=1)
    return {qid: ("prediction", 1.0, chosen) for qid in ids}


def _toy(tmp_path, text=QUESTIONS_MD, ids=("q1", "q2"), namespace=TOY_NAMESPACE):
    (tmp_path / "questions.md").write_text(text, encoding="utf-8")
    return questions(str(tmp_path / "questions.py"), namespace, _declared(*ids))


def test_questions_md_gives_prompt_and_hint_rendered_with_the_unit_filters(tmp_path):
    q1, q2 = _toy(tmp_path)
    assert q1 == Question(id="q1", kind="prediction", points=1.0,
                          prompt="**Prediction.** 140 GB over 128 links at 46%?",
                          options={"A": "no", "B": "yes"}, key="B", why={"A": "why no", "B": "why yes"},
                          hint="Wrapped lines join with a space.\n\nA blank line starts a paragraph.")
    assert (q2.prompt, q2.hint) == ("Costs \\$2.50.", "Count it.")


def test_a_misspelt_placeholder_names_the_question_the_part_and_the_name(tmp_path):
    with pytest.raises(ValueError, match=r"questions.md:5: question q1, its prompt: 'MESSAGE_BYTE' is undefined"):
        _toy(tmp_path, QUESTIONS_MD.replace("MESSAGE_BYTES", "MESSAGE_BYTE"))
    with pytest.raises(ValueError, match=r"questions.md:17: question q2, its hint: .*'OOPS' is undefined"):
        _toy(tmp_path, QUESTIONS_MD.replace("Count it.", "Count {{ OOPS }}."))


def test_a_declared_question_without_a_section_and_a_section_without_a_question_are_errors(tmp_path):
    with pytest.raises(ValueError, match=r"questions.py:1: no section in questions.md for \['q3'\] \(questions.py "
                                         r"declares \['q1', 'q2', 'q3'\], questions.md writes \['q1', 'q2'\]\)$"):
        _toy(tmp_path, ids=("q1", "q2", "q3"))
    with pytest.raises(ValueError, match=r"questions.md:17: a section for \['q2'\], which questions.py does not "
                                         r"declare \(questions.py declares \['q1'\], questions.md writes \['q1', 'q2'\]\)$"):
        _toy(tmp_path, ids=("q1",))
    with pytest.raises(FileNotFoundError, match="questions.md"):
        questions(str(tmp_path / "elsewhere" / "questions.py"), TOY_NAMESPACE, _declared("q1"))


@pytest.mark.parametrize("broken, message", [
    (QUESTIONS_MD.replace("## q2", "## q1"), r"questions.md:17: question q1 has a second section \(the first is "
                                             r"at line 5\)"),
    (QUESTIONS_MD.replace("## q2", "## q 2"), r"questions.md:17: a section is named by its question id"),
    (QUESTIONS_MD.replace("### hint\n\nCount it.\n", ""), r"questions.md:17: question q2 has no hint"),
    (QUESTIONS_MD.replace("Costs \\${{ USD | fmt(\".2f\") }}.", ""), r"questions.md:17: question q2 has no prompt"),
    (QUESTIONS_MD.replace("Count it.", "#### Note\nCount it."), r"questions.md:23: question q2: only '### hint' "),
    (QUESTIONS_MD.replace("Count it.", "Count {{ it."), r"questions.md:17: question q2, its hint: expected name or number"),
])
def test_a_malformed_questions_md_says_where(tmp_path, broken, message):
    with pytest.raises(ValueError, match=message):
        _toy(tmp_path, broken)


@pytest.mark.parametrize("lab", sorted(all_assignments()))
def test_each_labs_questions_md_breaks_loudly(lab, tmp_path):
    """The lab's own questions.md, copied and broken three ways: a misspelt name, a missing section,
    an extra one. Unbroken, the copy gives the lab's questions back."""
    module = importlib.import_module(f"labs.{lab}.questions")
    scenario = importlib.import_module(f"labs.{lab}.scenario")
    namespace = vars(scenario) | vars(module)
    declared = {q.id: (q.kind, q.points, (q.options, q.key, q.why)) for q in module.QUESTIONS}
    source = tmp_path / "questions.py"
    text = (importlib.resources.files(f"labs.{lab}") / "questions.md").read_text(encoding="utf-8")
    shutil.copy(importlib.resources.files(f"labs.{lab}") / "questions.md", tmp_path / "questions.md")
    assert questions(str(source), namespace, declared) == tuple(module.QUESTIONS)

    sections = text.split("\n## ")
    first, last = sections[1].partition("\n")[0], sections[-1].partition("\n")[0]
    placeholder = re.search(r"\{\{ (\w+)", text).group(1)
    (tmp_path / "questions.md").write_text(text.replace("{{ " + placeholder, "{{ " + placeholder + "X", 1),
                                           encoding="utf-8")
    with pytest.raises(ValueError, match=rf"question \w+, its (prompt|hint): .*'{placeholder}X' is undefined"):
        questions(str(source), namespace, declared)
    (tmp_path / "questions.md").write_text("\n## ".join(sections[:-1]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"no section in questions.md for \['{last}'\]"):
        questions(str(source), namespace, declared)
    (tmp_path / "questions.md").write_text(text + "\n## act3_prediction\n\nMore?\n\n### hint\n\nNo.\n",
                                           encoding="utf-8")
    with pytest.raises(ValueError, match=r"a section for \['act3_prediction'\], which questions.py does not declare"):
        questions(str(source), namespace, declared)
    assert first in declared
