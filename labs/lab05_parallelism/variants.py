"""Lab 05's versions (labs/variants.py): which story numbers differ from student to student, and over
what. Every number of every version is computed from reference/ by scenario.py, questions.py and
challenges.py at these inputs, exactly as the lab's own; version 0 is the lab as written.

Act I: the model and the fixed global batch move every step time and MFU of the stakeholder's three
clusters (the collapse and its cause hold at each, the scenario's claims asserted). Act II: the GPT-3
run's GPU count and global batch move the data-parallel width and the micro-batches every layout
splits the batch into, so the layouts' memory and bubbles, and the designs that split the batch at
all, differ per version: a classmate's design does not divide another version's batch.
"""
VARY = {
    "ACT1.params": (7e9, 13e9),                     # Act I: the model trained with plain data parallelism
    "ACT1_SEQUENCES": (1024, 2048),                 # Act I: the fixed global batch, sequences of 2,048 tokens
    "ACT2.n_gpus": (512, 768, 1024),                # Act II: the H100s GPT-3 is trained on
    "ACT2.global_batch": (1536, 1920, 2304),        # Act II: the global batch, sequences
}
COUNT = 8
