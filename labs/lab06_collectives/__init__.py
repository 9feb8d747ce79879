"""Lab 06 — collective communication ("The Bandwidth Invariant"): the declaration, assembled from the
lab folder (docs/adding-a-lab.md walks it): scenario.py (inputs and derived numbers), questions.py,
items.py (graded functions), properties.py (public properties), notebook.py (the notebook),
samples.toml + samples/ (the demo class). Corrections of the source lab: docs/errata/lab06_collectives.md.
"""
from __future__ import annotations

from pathlib import Path

from autograder.engine.spec import Assignment
from labs.authoring import read_notebook, scenario_namespace
from labs.lab06_collectives import questions, scenario
from labs.lab06_collectives.items import FUNCTIONS
from labs.lab06_collectives.misconceptions import MISCONCEPTIONS
from reference import collectives

SETUP, NOTEBOOK = read_notebook(Path(__file__).with_name("notebook.py"),
                                scenario_namespace(scenario, questions), package=__name__)

ASSIGNMENT = Assignment(
    id="lab06_collectives",
    title="Lab 06 — The Bandwidth Invariant: collective communication",
    module="collectives",
    reference=collectives,
    functions=FUNCTIONS,
    questions=questions.QUESTIONS,
    notebook=NOTEBOOK,
    setup=SETUP,
    source_lab=("Vol II Lab 06, The Bandwidth Invariant: "
                "labs/vol2/lab_06_collective_comms.py of https://github.com/harvard-edge/cs249r_book"),
    misconceptions=MISCONCEPTIONS,
)
