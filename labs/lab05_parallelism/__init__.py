"""Lab 05 — the parallelism paradox: the data-parallel wall, 3D parallelism, the pipeline bubble.

The declaration, assembled from the lab folder (docs/adding-a-lab.md walks it): scenario.py (inputs and
derived numbers), questions.py, items.py (graded functions), properties.py (public properties),
challenges.py (the open layout design), notebook.py (the notebook), samples.toml + samples/ (the demo
class). Corrections of the source lab: labs/lab05_parallelism/errata.md.
"""
from __future__ import annotations

from labs.authoring import assemble
from labs.lab05_parallelism.scenario import ACT2  # noqa: F401 (tests/labs/lab02_interconnect reads its bubble ceiling)
from reference import parallelism

ASSIGNMENT = assemble(
    __name__,
    title="Lab 05 — The Parallelism Paradox: the data-parallel wall, 3D parallelism, the pipeline bubble",
    reference=parallelism,
    summary='data-parallel MFU collapse, ZeRO model states, activations, pipeline bubble, a 3D layout for GPT-3 on 1,024 H100s',
    source_lab=("Vol II Lab 05, The Parallelism Paradox: "
               "the Lab 05 Marimo notebook in labs/vol2/ of https://github.com/harvard-edge/cs249r_book"),
    notebook_modules=("cluster",),   # cluster.ring_link: the multi-node ring link the notebook uses
)
