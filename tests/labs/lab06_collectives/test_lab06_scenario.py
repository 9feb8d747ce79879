"""Lab 06's own expectations of its scenario: the computed keys say what the physics says, and the
story reaches its failure state (the checks every lab shares are in tests/labs/test_labs.py)."""
from __future__ import annotations

import math
import re

from labs.lab06_collectives import ASSIGNMENT as A
from labs.lab06_collectives import scenario as S
from autograder.engine.spec import Markdown
from reference import collectives as ref


def test_act1_key_is_the_range_holding_the_traffic_ratio_n():
    ratio = ref.naive_master_bytes(1e9, S.N_GPUS) / ref.ring_bytes_per_rank(1e9, S.N_GPUS)
    assert abs(ratio - S.N_GPUS) < 1e-9
    q = A.question("act1_prediction")
    lo, hi = map(int, re.findall(r"(\d+)×", q.options[q.key])[:2])
    assert lo <= ratio < hi


def test_act2_key_names_the_pick_for_each_workload():
    picks = [ref.best_allreduce_algorithm(m, S.N_GPUS, S.ALPHA_S, S.NDR) for _, _, m in S.WORKLOADS]
    assert picks == ["ring", "ring", "tree"]
    q = A.question("act2_prediction")
    assert q.options[q.key] == "Ring for the 14 GB and 5.4 GB gradients, tree for the 500 KB update"


def test_failure_state_is_reached_by_the_gradients_on_one_nic_per_node_only():
    # issue 30: on the DGX cluster (8 NICs per node) the gradients spend under half the step; the same
    # nodes with one NIC each reach the lab's failure state, the embedding update on neither. The failure
    # state, communication above half the step (docs/physics.md), written out: compared with
    # S.FAILURE_FRACTION itself these would hold whatever that constant became between the fractions
    on_dgx = [numbers["fraction"] for *_, numbers in S.ACT2]
    on_one_nic = [numbers["fraction"] for *_, numbers in S.ONE_NIC_ACT2]
    assert all(f < 0.5 for f in on_dgx) and 0.25 < on_dgx[0] < 0.5
    assert on_one_nic[0] > 0.5 and on_one_nic[1] > 0.5
    assert on_one_nic[2] < 0.5


def test_the_story_runs_on_the_clusters_ring_link_not_one_nic():
    from reference.cluster import ring_link
    assert S.LINK == dict(n=128, **ring_link(128)) and S.CLUSTER_BW == 8 * 50e9
    assert math.isclose(S.ACT1_RING_S, ref.ring_allreduce_time(14e9, 128, **ring_link(128)))
    assert S.ACT1_RING_S < ref.ring_allreduce_time(14e9, 128, 1.5e-6, 50e9) / 7   # the flat model: 8x slower


def test_story_numbers_are_rendered():
    story = "\n".join(c.text for c in A.notebook if isinstance(c, Markdown))
    assert f"{S.ACT1_NAIVE_S:,.0f} s per step" in story and "14 GB per step" in story
    assert "{" not in story and "}" not in story


def test_every_model_the_story_trains_fits_in_one_h100():
    """Issue 43: a ring AllReduce of M bytes leaves M bytes on every rank, and every GPU of a data-parallel
    job holds its model's states (16 bytes a parameter of mixed-precision Adam, ZeRO sharding its part) and
    one sequence's activations (Korthikanti et al. 2022). The story's 70B (140 GB) and 175B (350 GB)
    gradients did not fit on one 80 GiB H100, let alone the models behind them."""
    from reference.constants import H100_HBM_CAPACITY_BYTES as capacity
    from reference.parallelism import model_state_bytes_per_gpu, peak_memory_bytes_per_gpu

    stage = getattr(S, "ZERO_STAGE", 0)
    models = {S.ACT1_PARAMS: S.ACT1_MESSAGE_BYTES} | {p: m for _, p, m in S.WORKLOADS[:2]}
    for params, message in models.items():
        assert message <= capacity, f"a {message / 1e9:.0f} GB gradient on every GPU"
        assert model_state_bytes_per_gpu(params, S.N_GPUS, stage) <= capacity, f"{params / 1e9:g}B's states"
        memory = peak_memory_bytes_per_gpu(params, seq_len=S.SEQ_LEN, micro_batch=1, dp=S.N_GPUS, zero_stage=stage,
                                           **S.SHAPES[params])
        assert memory <= capacity, f"{params / 1e9:g}B: {memory / 1e9:.1f} GB per GPU"
        assert S.MEMORY_BYTES[params] == memory
    story = "\n".join(c.text for c in A.notebook if isinstance(c, Markdown))
    assert f"ZeRO stage {stage}" in story
