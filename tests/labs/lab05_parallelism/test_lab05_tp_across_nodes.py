"""Act II's reflection, checked by hand (issue 43's review): why tensor parallelism stays inside a node.
The key's explanation must say what the model computes for TP=16 across two DGX nodes, whose ring runs
one channel per NIC (reference/cluster.py): each AllReduce on that ring against one on NVLink, the bandwidth
a rank sees there, and that the TP=16 layout holds twice the layers per GPU; the numbers come from the
reference here, not from the lab's scenario."""
from __future__ import annotations

from labs.lab05_parallelism import ASSIGNMENT as A
from labs.lab05_parallelism import scenario as S
from reference.cluster import ring_link
from reference.collectives import ring_allreduce_time
from reference.constants import FP16_BYTES, NVLINK4_BANDWIDTH, NVLINK_ALPHA_S

MESSAGE = S.ACT2["seq_len"] * S.ACT2["micro_batch"] * S.ACT2["hidden"] * FP16_BYTES   # one TP AllReduce


def test_the_keys_explanation_gives_the_cross_node_ring_the_model_computes():
    """Before: "whose ring leaves NVLink for the nodes' NICs (9x less bandwidth per GPU)", while the model's
    ring over 16 GPUs in 2 nodes sees 400 GB/s a rank (the 16 NICs together) against NVLink's 450: each
    AllReduce is 1.3x slower, and the rest of the 2.5x per step is the 12 layers a GPU holds at PP=8."""
    q = A.question("act2_reflection")
    why = q.why[q.key]
    cross = CROSS = S.CROSS_LAYOUT
    link = ring_link(cross["tp"])
    inside = ring_allreduce_time(MESSAGE, S.BEST_TP, NVLINK_ALPHA_S, NVLINK4_BANDWIDTH)
    across = ring_allreduce_time(MESSAGE, CROSS["tp"], **link)
    assert 1.0 < across / inside < 2.0                            # the cross-node ring: slower, not 9x
    assert f"{across * 1e3:.3f} ms" in why and f"{inside * 1e3:.3f} ms" in why, why
    assert f"{link['bandwidth'] / 1e9:.0f} GB/s" in why, why
    layers = S.ACT2["layers"] // CROSS["pp"], S.ACT2["layers"] // S.BEST_PP
    assert layers == (12, 6) and f"{layers[0]} layers" in why, why
    assert "less bandwidth per GPU)" not in why                  # the per-NIC ratio is not the ring's
