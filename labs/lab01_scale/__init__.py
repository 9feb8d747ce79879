"""Lab 01 — the scale illusion and fleet TCO: the declaration, assembled from the lab folder
(docs/adding-a-lab.md walks it): scenario.py (inputs and derived numbers), questions.py, items.py
(graded functions), properties.py (public properties), challenges.py (the what-if design challenge),
misconceptions.py, notebook.py (the notebook), samples.toml + samples/ (the demo class).
Corrections of the source lab: labs/lab01_scale/errata.md.
"""
from __future__ import annotations

from labs.authoring import assemble
from reference import scaling

ASSIGNMENT = assemble(
    __name__,
    title="Lab 01 — The scale illusion and fleet TCO",
    reference=scaling,
    summary='strong-scaling speedup and efficiency with a ring AllReduce, on-demand / reserved / on-prem TCO, breakeven utilization',
    source_lab=("Vol II Lab 01, The Scale Illusion: "
               "the Lab 01 Marimo notebook in labs/vol2/ of https://github.com/harvard-edge/cs249r_book"),
    notebook_modules=("cluster",),   # cluster.ring_link: the multi-node ring link the notebook uses
)
