"""Lab 02's known wrong models, per graded function (autograder.engine.spec.Misconception).

From the source lab's own formulas (labs/lab02_interconnect/errata.md: Gb/s read as GB/s, "exactly
2x the model size", no latency, an inter-node term at one node, percentages), unit and factor slips,
and the mistakes of the lab's test implementations. Every model is built from reference/ (labs.slips).
"""
from __future__ import annotations

from typing import Callable

from autograder.engine.spec import Misconception as M
from labs.slips import at, inverted, percent, scaled
from reference import interconnect as ref
from reference.collectives import comm_fraction

ACT1 = "Act I — The interconnect cliff"
ACT2 = "Act II — The multi-node scaling wall"


def _lab_hierarchical(message_bytes, gpus_per_node, nodes, intra_bandwidth, inter_bandwidth_per_node):
    """The source lab's Act II code: 2M through the node's links, even at one node."""
    return ref.intra_node_allreduce_time(message_bytes, gpus_per_node, intra_bandwidth) \
        + 2 * message_bytes / inter_bandwidth_per_node


def _phases_added(message_bytes, gpus_per_node, nodes, intra_bandwidth, inter_bandwidth_per_node):
    """The stages one after the other (this project's model until the audit of issue 30)."""
    return ref.hierarchical_allreduce_time(message_bytes, gpus_per_node, 1, intra_bandwidth, inter_bandwidth_per_node) \
        + ref.hierarchical_allreduce_time(message_bytes, 1, nodes, intra_bandwidth, inter_bandwidth_per_node)


def _links(comm_s: Callable[[dict, float], float], none: Callable[[dict], int]) -> Callable[..., int]:
    """min_ib_links' search over 1..max_links with another communication time; `none(k)` if no k fits."""
    def model(**k):
        limit = k.get("max_overhead_ratio", 1.0) * k["compute_s"]
        for links in range(1, k.get("max_links", 8) + 1):
            if comm_s(k, links * k["link_bandwidth"]) <= limit:
                return links
        return none(k)
    return model


def _lab_links_comm(k: dict, inter_bandwidth: float) -> float:
    return _lab_hierarchical(k["message_bytes"], k["gpus_per_node"], k["nodes"], k["intra_bandwidth"],
                             inter_bandwidth)


def _added_comm(k: dict, inter_bandwidth: float) -> float:
    return _phases_added(k["message_bytes"], k["gpus_per_node"], k["nodes"], k["intra_bandwidth"], inter_bandwidth)


def _inter_only_comm(k: dict, inter_bandwidth: float) -> float:
    return ref.hierarchical_allreduce_time(k["message_bytes"], 1, k["nodes"], k["intra_bandwidth"], inter_bandwidth)


MISCONCEPTIONS = {
    "gbit_to_bytes_per_s": [
        M("Gb/s read as GB/s",
          "Your bandwidths are 8 times too large: the source lab reads 400 Gb/s as 400 GB/s. A byte is 8\n"
          "bits, so a 400 Gb/s port moves 50e9 bytes per second.",
          ACT1, scaled(ref.gbit_to_bytes_per_s, 8)),
        M("both directions added",
          "Your bandwidths are twice the right ones: a link's rate is quoted per direction, and a ring\n"
          "AllReduce sends in one direction per link (the lab's '200 Gbps x 2').",
          ACT1, scaled(ref.gbit_to_bytes_per_s, 2)),
    ],
    "gradient_bytes": [
        M("the AllReduce volume taken for the gradient",
          "Your sizes are twice the right ones: the gradient is one value per parameter; the '2x model size'\n"
          "of the source lab is what a ring AllReduce moves per rank, not the gradient's size.",
          ACT1, scaled(ref.gradient_bytes, 2)),
        M("FP16 hard-coded",
          "You always used 2 bytes per value: the gradient's size follows bytes_per_value (4 for FP32).",
          ACT1, at(ref.gradient_bytes, bytes_per_value=2)),
    ],
    "transfer_time": [
        M("no latency",
          "Your times are the bandwidth term alone: every transfer also pays latency_s before its first byte\n"
          "arrives.",
          ACT1, at(ref.transfer_time, latency_s=0.0)),
        M("bandwidth read as bits per second",
          "Your transfer term is 8 times too long: the bandwidth is already in bytes/s.",
          ACT1, at(ref.transfer_time, num_bytes=lambda k: 8 * k["num_bytes"])),
    ],
    "intra_node_allreduce_time": [
        M("exactly 2x the message, whatever N",
          "You used 2M / B, the source lab's 'exactly 2x, independent of N': the ring moves 2(N-1)/N of the\n"
          "message per GPU, noticeably less on a few GPUs.",
          ACT1, lambda **k: 2 * k["message_bytes"] / k["bandwidth"]),
        M("(N-1)/N of the message: half the ring",
          "Your times are half the right ones: (N-1)/N x M is the reduce-scatter; the all-gather moves as\n"
          "much again.",
          ACT1, scaled(ref.intra_node_allreduce_time, 0.5)),
    ],
    "hierarchical_allreduce_time": [
        M("the lab's 2M through the node's links, even at one node",
          "You charged 2M / B_inter, as the source lab's code does: across k nodes the ring moves 2(k-1)/k of\n"
          "the message, and a single node has no inter-node traffic at all.",
          ACT2, _lab_hierarchical),
        M("the stages added, not pipelined",
          "Your times are the NVLink stages plus the network stage: the message goes in chunks, so NVLink and\n"
          "the NICs work at once and the AllReduce takes as long as the slower of the two.",
          ACT2, _phases_added),
        M("each GPU gets the node's links to itself",
          "Your inter-node term is gpus_per_node times too short: each GPU sends its 1/g shard over only 1/g of\n"
          "the node's links, so the g's cancel.",
          ACT2, at(ref.hierarchical_allreduce_time,
                   inter_bandwidth_per_node=lambda k: k["inter_bandwidth_per_node"] * k["gpus_per_node"])),
    ],
    "comm_overhead_ratio": [
        percent(ref.comm_overhead_ratio, ACT2),
        M("the communication share of the step",
          "You divided by communication plus compute: the overhead ratio is communication per unit of\n"
          "compute, comm / compute, and it can exceed 1.",
          ACT2, comm_fraction),
    ],
    "speedup": [
        inverted(ref.speedup, ACT2),
        M("'x % faster' instead of 'x times as fast'",
          "Your values are 1 less than the right ones: a speedup is how many times faster, t_1 / t_n, not the\n"
          "gain over 1.",
          ACT2, lambda **k: ref.speedup(**k) - 1),
    ],
    "scaling_efficiency": [
        percent(ref.scaling_efficiency, ACT2),
        inverted(ref.scaling_efficiency, ACT2),
    ],
    "min_ib_links": [
        M("the lab's 2M inter-node model",
          "Your link counts come from the source lab's Act II model, which sends 2M through the node's links\n"
          "even at one node: compute the hierarchical AllReduce as in hierarchical_allreduce_time.",
          ACT2, _links(_lab_links_comm, lambda k: 0)),
        M("the stages added, not pipelined",
          "Your link counts add the NVLink stages to the network stage: pipelined, they overlap, and the\n"
          "slower of the two sets the time, so fewer links suffice.",
          ACT2, _links(_added_comm, lambda k: 0)),
        M("NVLink stages forgotten, max_links when nothing fits",
          "You counted only the inter-node traffic and returned max_links when no count fits: the NVLink\n"
          "stages also take time, and 'no number of links suffices' is 0.",
          ACT2, _links(_inter_only_comm, lambda k: k.get("max_links", 8))),
    ],
}
