"""Lab 02's versions (labs/variants.py): which story numbers differ from student to student, and over
what. Every number of every version is computed from reference/ by scenario.py, questions.py and
challenges.py at these inputs, exactly as the lab's own; version 0 is the lab as written.

The MFU moves the step's compute and so every communication ratio, and the NICs' planned efficiency
the design's link count (they vary together: the scenario asserts a margin on both sides of the
danger line, and the reflection's options stay apart, at every version); the story's cluster size
moves Act II's hierarchical AllReduce and its speedup; the architect's PCIe discount moves Act I's
trade-off; the design challenge's traffic cut is its target (a plan that cuts 10x misses 30x). The
model stays GPT-3 2.7B (the one whose shape the scenario gives).
"""
VARY = {
    ("MFU", "DESIGN_NIC_EFFICIENCY"): ((0.45, 0.80), (0.45, 0.85), (0.40, 0.80)),
    "STORY_NODES": (8, 16, 32),                   # Act II: 1 -> this many DGX nodes
    "PCIE_DISCOUNT": (0.3, 0.4, 0.5),             # Act I: the architect's "cheaper" PCIe servers
    "TRAFFIC_CUT": (10, 15, 20, 30),              # the design challenge's target
}
COUNT = 8
