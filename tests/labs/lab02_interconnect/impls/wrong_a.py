"""Lab 02, wrong submission A: the source lab's own formulas (see labs/lab02_interconnect/errata.md).

Every function is wrong in the way the lab is: Gb/s read as GB/s, "exactly 2x model size", no latency,
an inter-node term charged even to one node, percentages where the contract says ratios.
"""
import math


def gbit_to_bytes_per_s(gbit_per_s):
    return gbit_per_s * 1e9                       # the lab's "400 Gb/s = 400 GB/s" (8x)


def gradient_bytes(params, bytes_per_value=2):
    return 2 * params * bytes_per_value           # the lab's "AllReduce volume = 2 x model size"


def transfer_time(num_bytes, bandwidth, latency_s=0.0):
    return num_bytes / bandwidth                  # the lab's volume / bandwidth, latency dropped


def intra_node_allreduce_time(message_bytes, gpus, bandwidth):
    return 2 * message_bytes / bandwidth          # Act I: "exactly 2x, independent of N"


def hierarchical_allreduce_time(message_bytes, gpus_per_node, nodes, intra_bandwidth, inter_bandwidth_per_node):
    intra = 2 * (gpus_per_node - 1) / gpus_per_node * message_bytes / intra_bandwidth
    return intra + 2 * message_bytes / inter_bandwidth_per_node   # Act II code: 2M/B_ib, even at one node


def comm_overhead_ratio(comm_s, compute_s):
    return comm_s / compute_s * 100.0             # the lab's overhead_pct


def speedup(t_1, t_n):
    return t_n / t_1                              # inverted


def scaling_efficiency(speedup, n):
    return speedup / n * 100.0                    # the lab's scaling_eff_pct


def min_ib_links(message_bytes, gpus_per_node, nodes, intra_bandwidth, link_bandwidth, compute_s,
                 max_overhead_ratio=1.0, max_links=8):
    # the lab's Act II model: the full 2M through the node's links, charged even to a single node
    for links in range(1, max_links + 1):
        comm = hierarchical_allreduce_time(message_bytes, gpus_per_node, nodes, intra_bandwidth,
                                           links * link_bandwidth)
        if comm / compute_s <= max_overhead_ratio:
            return links
    return 0
