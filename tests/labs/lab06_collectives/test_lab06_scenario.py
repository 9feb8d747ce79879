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
    assert q.options[q.key] == "Ring for the 350 GB and 14 GB gradients, tree for the 500 KB update"


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
    assert math.isclose(S.ACT1_RING_S, ref.ring_allreduce_time(140e9, 128, **ring_link(128)))
    assert S.ACT1_RING_S < ref.ring_allreduce_time(140e9, 128, 1.5e-6, 50e9) / 7   # the flat model: 8x slower


def test_story_numbers_are_rendered():
    story = "\n".join(c.text for c in A.notebook if isinstance(c, Markdown))
    assert f"{S.ACT1_NAIVE_S:,.0f} s per step" in story and "350 GB per step" in story
    assert "{" not in story and "}" not in story
