"""Lab 06 — collective communication ("The Bandwidth Invariant"): the declaration, assembled from the
lab folder (docs/adding-a-lab.md walks it): scenario.py (inputs and derived numbers), questions.py,
items.py (graded functions), properties.py (public properties), notebook.py (the notebook),
samples.toml + samples/ (the demo class). Corrections of the source lab: labs/lab06_collectives/errata.md.
"""
from __future__ import annotations

from labs.authoring import assemble
from reference import collectives

ASSIGNMENT = assemble(
    __name__,
    title="Lab 06 — The Bandwidth Invariant: collective communication",
    reference=collectives,
    summary='naive, ring, tree and Rabenseifner AllReduce in the alpha-beta model, bus bandwidth, ring-tree crossover',
    source_lab=("Vol II Lab 06, The Bandwidth Invariant: "
               "labs/vol2/lab_06_collective_comms.py of https://github.com/harvard-edge/cs249r_book"),
    notebook_modules=("cluster",),   # cluster.ring_link: the multi-node ring link the notebook uses
)
