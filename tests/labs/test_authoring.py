"""labs/authoring.py: the notebook.py reader's errors and the shared helpers' edge cases."""
from __future__ import annotations

import pytest

from autograder.engine.spec import Answer, Code, FunctionGrades, Markdown
from labs.authoring import fmt, fmt_bytes, literal_setup, range_key, read_notebook

SETUP = "# %%\nimport numpy as np\n"


def test_setup_imports_become_literals_with_their_comment():
    source = ("import numpy as np\n"
              "from labs.lab06_collectives.scenario import N_GPUS as n   # the cluster\n"
              "from labs.lab06_collectives.scenario import (WORKLOAD_SIZES as workloads,\n"
              "                                             MFU)\n")
    out = literal_setup(source, "labs.lab06_collectives")
    assert out.splitlines()[:2] == ["import numpy as np", "n = 128   # the cluster"]
    assert "workloads = {'175B model gradient': (175000000000.0, 350000000000.0)" in out
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
