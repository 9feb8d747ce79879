"""Lab 06's versions (labs/variants.py): which story numbers differ from student to student, and over
what. Every number of every version is computed from reference/ by scenario.py and questions.py at
these inputs, exactly as the lab's own; version 0 is the lab as written.

The cluster's size moves the naive/ring byte ratio (it is n: the Act I key moves between ranges), the
ring-tree crossover (Act II), every time and each model's ZeRO-1 memory per GPU; the order of Act II's
two dense models and the MFU move the step's compute and its communication share. Only the models
whose shapes the scenario gives (SHAPES: they fit on one GPU) are used, and the scenario asserts the
story's claims at every version (the shares under the failure line, one NIC per node over it, the
workloads far from the crossover).
"""
VARY = {
    "N_GPUS": (32, 64, 128, 256),                         # DGX H100 nodes of 8: 4 to 32 nodes
    "GRADIENT_PARAMS": ((7e9, 2.7e9), (2.7e9, 7e9)),      # Act II: the two dense models, the first the story's
    "MFU": (0.4, 0.5),                                    # Act II: the model FLOP utilization while computing
}
COUNT = 8
