"""Lab 01 — the scale illusion and fleet TCO: the declaration, assembled from the lab folder
(docs/adding-a-lab.md walks it): scenario.py (inputs and derived numbers), questions.py, items.py
(graded functions), properties.py (public properties), challenges.py (the what-if design challenge),
misconceptions.py, notebook.py (the notebook), samples.toml + samples/ (the demo class).
Corrections of the source lab: docs/errata/lab01_scale.md.
"""
from __future__ import annotations

from pathlib import Path

import reference.scaling as ref
from autograder.engine.spec import Assignment
from labs.authoring import read_notebook, scenario_namespace
from labs.lab01_scale import questions, scenario
from labs.lab01_scale.challenges import CHALLENGES
from labs.lab01_scale.items import FUNCTIONS
from labs.lab01_scale.misconceptions import MISCONCEPTIONS

SETUP, NOTEBOOK = read_notebook(Path(__file__).with_name("notebook.py"),
                                scenario_namespace(scenario, questions), package=__name__)

ASSIGNMENT = Assignment(
    id="lab01_scale",
    title="Lab 01 — The scale illusion and fleet TCO",
    module="scaling",
    reference=ref,
    functions=FUNCTIONS,
    questions=questions.QUESTIONS,
    notebook=NOTEBOOK,
    setup=SETUP,
    source_lab=("Vol II Lab 01, The Scale Illusion: "
                "the Lab 01 Marimo notebook in labs/vol2/ of https://github.com/harvard-edge/cs249r_book"),
    misconceptions=MISCONCEPTIONS,
    challenges=CHALLENGES,
)
