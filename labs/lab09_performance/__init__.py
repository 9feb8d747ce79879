"""Lab 09 — performance engineering ("You can't optimise what you can't measure"): the declaration,
assembled from the lab folder (docs/adding-a-lab.md walks it): scenario.py (inputs and derived numbers),
questions.py, items.py (graded functions), properties.py (public properties), challenges.py (the open
design challenge), notebook.py (the notebook), samples.toml + samples/ (the demo class). Corrections of
the source lab: docs/errata/lab09_performance.md.
"""
from __future__ import annotations

from pathlib import Path

from autograder.engine.spec import Assignment
from labs.authoring import read_notebook, scenario_namespace
from labs.lab09_performance import questions, scenario
from labs.lab09_performance.challenges import CHALLENGES
from labs.lab09_performance.items import FUNCTIONS
from labs.lab09_performance.misconceptions import MISCONCEPTIONS
from reference import performance

SETUP, NOTEBOOK = read_notebook(Path(__file__).with_name("notebook.py"),
                                scenario_namespace(scenario, questions), package=__name__)

ASSIGNMENT = Assignment(
    id="lab09_performance",
    title="Lab 09: You can't optimise what you can't measure (Amdahl at scale)",
    module="performance",
    reference=performance,
    functions=FUNCTIONS,
    questions=questions.QUESTIONS,
    notebook=NOTEBOOK,
    setup=SETUP,
    source_lab=("Vol II Lab 09, Performance Engineering: "
                "labs/vol2/lab_09_perf_engr.py of https://github.com/harvard-edge/cs249r_book"),
    misconceptions=MISCONCEPTIONS,
    challenges=CHALLENGES,
)
