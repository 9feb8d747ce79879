"""Lab 02 — the interconnect wall: the declaration, assembled from the lab folder (docs/adding-a-lab.md
walks it): scenario.py (inputs and derived numbers), questions.py, items.py (graded functions),
properties.py (public properties), notebook.py (the notebook), challenges.py (the pipeline design
challenge), samples.toml + samples/ (the demo class). Corrections of the source lab:
labs/lab02_interconnect/errata.md.
"""
from __future__ import annotations

from labs.authoring import assemble
from reference import interconnect

ASSIGNMENT = assemble(
    __name__,
    title="Lab 02 — The Interconnect Wall",
    reference=interconnect,
    summary='NVLink vs PCIe vs InfiniBand gradient sync, hierarchical AllReduce across nodes, IB links per node',
    source_lab=("Vol II Lab 02, The Interconnect Wall: "
               "labs/vol2/lab_02_compute_infra.py of https://github.com/harvard-edge/cs249r_book"),
)
