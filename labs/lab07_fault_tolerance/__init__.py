"""Lab 07 — The Checkpoint Reckoning: fault tolerance at scale: the declaration, assembled from this folder (docs/adding-a-lab.md walks
every file): scenario.py (inputs and derived numbers), questions.py + questions.md, items.py (graded
functions), properties.py (public properties), misconceptions.py, challenges.py, notebook.py,
samples.toml + samples/ (the demo class); physics.md, errata.md and instruments.md are this lab's parts
of docs/ (`scalelabs docs`).
"""
from __future__ import annotations

from labs.authoring import assemble
from reference import fault_tolerance

ASSIGNMENT = assemble(
    __name__,
    title="Lab 07 — The Checkpoint Reckoning: fault tolerance at scale",
    reference=fault_tolerance,
    summary="cluster MTBF from per-GPU MTBF, checkpoint size and write time, the Young/Daly interval, expected waste and goodput, asynchronous checkpoints, a checkpointing plan for 16,384 H100s",
    source_lab="Vol II Lab 07, The Checkpoint Reckoning: labs/vol2/lab_07_fault_tolerance.py of https://github.com/harvard-edge/cs249r_book",
)
