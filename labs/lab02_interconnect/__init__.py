"""Lab 02 — the interconnect wall: the declaration, assembled from the lab folder (docs/adding-a-lab.md
walks it): scenario.py (inputs and derived numbers), questions.py, items.py (graded functions),
properties.py (public properties), notebook.py (the notebook), challenges.py (the pipeline design
challenge), samples.toml + samples/ (the demo class). Corrections of the source lab:
docs/errata/lab02_interconnect.md.
"""
from __future__ import annotations

from pathlib import Path

from autograder.engine.spec import Assignment
from labs.authoring import read_notebook, scenario_namespace
from labs.lab02_interconnect import questions, scenario
from labs.lab02_interconnect.challenges import CHALLENGES
from labs.lab02_interconnect.items import FUNCTIONS
from labs.lab02_interconnect.misconceptions import MISCONCEPTIONS
from reference import interconnect

SETUP, NOTEBOOK = read_notebook(Path(__file__).with_name("notebook.py"),
                                scenario_namespace(scenario, questions), package=__name__)

ASSIGNMENT = Assignment(
    id="lab02_interconnect",
    title="Lab 02 — The Interconnect Wall",
    module="interconnect",
    reference=interconnect,
    functions=FUNCTIONS,
    questions=questions.QUESTIONS,
    notebook=NOTEBOOK,
    setup=SETUP,
    source_lab=("Vol II Lab 02, The Interconnect Wall: "
                "labs/vol2/lab_02_compute_infra.py of https://github.com/harvard-edge/cs249r_book"),
    misconceptions=MISCONCEPTIONS,
    challenges=CHALLENGES,
)
