"""Lab 09 — performance engineering ("You can't optimise what you can't measure"): the declaration,
assembled from the lab folder (docs/adding-a-lab.md walks it): scenario.py (inputs and derived numbers),
questions.py, items.py (graded functions), properties.py (public properties), challenges.py (the open
design challenge), notebook.py (the notebook), samples.toml + samples/ (the demo class). Corrections of
the source lab: labs/lab09_performance/errata.md.
"""
from __future__ import annotations

from labs.authoring import assemble
from reference import performance

ASSIGNMENT = assemble(
    __name__,
    title="Lab 09: You can't optimise what you can't measure (Amdahl at scale)",
    reference=performance,
    summary='Amdahl and Gustafson, roofline, MFU, the best optimisation per engineer-week',
    source_lab=("Vol II Lab 09, Performance Engineering: "
               "labs/vol2/lab_09_perf_engr.py of https://github.com/harvard-edge/cs249r_book"),
)
