"""Lab 06's versions (labs/variants.py): which story numbers differ from student to student, and over
what. Every number of every version is computed from reference/ by scenario.py and questions.py at
these inputs, exactly as the lab's own; version 0 is the lab as written.

The cluster's size moves the naive/ring byte ratio (it is n: the Act I key moves between ranges) and
the ring-tree crossover (Act II); the Act I model sets the gradient of the story; the Act II models set
the two gradients the student places against the crossover (both far above it at every size here,
the embedding update far below: the key is robust, and the scenario's asserts say so).
"""
VARY = {
    "N_GPUS": (32, 64, 128, 256),                                   # DGX H100 nodes of 8: 4 to 32 nodes
    "ACT1_PARAMS": (13e9, 30e9, 70e9, 175e9),                       # Act I: the model whose gradient is reduced
    "GRADIENT_PARAMS": ((175e9, 7e9), (70e9, 8e9), (405e9, 13e9)),  # Act II: the two dense models' parameters
}
COUNT = 8
