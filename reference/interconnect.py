"""Lab 02 — the interconnect wall: gradient sync over NVLink, PCIe and InfiniBand, inside a node and across nodes.

Conventions (all functions): SI units — bytes, seconds, bytes/s (per direction), FLOP, FLOP/s.
1 GB = 1e9 bytes, 1 Gb/s = 1e9/8 bytes/s. Fractions are in [0, 1]. Counts are positive ints.
Functions are pure: no printing, no globals.
Model: a ring AllReduce of an M-byte buffer over n ranks moves 2(n-1)/n * M bytes through each
rank's link (reduce-scatter, then all-gather); latency is left out of the AllReduce terms here
because a gradient of gigabytes is bandwidth-bound: the story's messages cost under 0.1 % of its transfer,
inside a node and across the nodes.
Sources: Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005; Patarasuk & Yuan, JPDC 69(2) 2009;
NVIDIA nccl-tests doc/PERFORMANCE.md. The hierarchical AllReduce is a two-level model with its phases
pipelined (NCCL's Tree and NVLSTree also pipeline an intra-node and an inter-node stage); held
against measurements in docs/measurements.md.
"""
from __future__ import annotations

from ._domain import check_count, check_nonneg, check_positive

### BEGIN SOLUTION
# One formula, one place: the alpha-beta terms live in Lab 06's module, efficiency in Lab 01's.
from .collectives import p2p_time, ring_allreduce_time
from .scaling import scaling_efficiency as _lab01_scaling_efficiency
### END SOLUTION

__all__ = [
    "gbit_to_bytes_per_s", "gradient_bytes", "transfer_time", "intra_node_allreduce_time",
    "hierarchical_allreduce_time", "comm_overhead_ratio", "speedup", "scaling_efficiency",
    "min_ib_links",
]


def gbit_to_bytes_per_s(gbit_per_s: float) -> float:
    """Bytes/s of a link rated in Gb/s.

    Formula: gbit_per_s * 1e9 / 8.
    Derive: network ports are sold in gigabits per second with decimal prefixes (IEEE/SI: giga is
    1e9) and a byte is 8 bits. Check: InfiniBand NDR, 400 Gb/s, is 50e9 bytes/s. Confusing Gb/s
    with GB/s is an 8x error (the source lab's 400 GB/s HDR link).
    """
    check_positive("gbit_per_s", gbit_per_s)
    ### BEGIN SOLUTION
    return gbit_per_s * 1e9 / 8
    ### END SOLUTION


def gradient_bytes(params: float, bytes_per_value: float = 2) -> float:
    """Bytes of one full gradient.

    Formula: params * bytes_per_value.
    Derive: one gradient value per parameter, each stored in bytes_per_value bytes (2 for
    FP16/BF16, 4 for FP32). Check: a 70e9-parameter model has a 140e9-byte FP16 gradient.
    """
    check_nonneg("params", params)
    check_positive("bytes_per_value", bytes_per_value)
    ### BEGIN SOLUTION
    return params * bytes_per_value
    ### END SOLUTION


def transfer_time(num_bytes: float, bandwidth: float, latency_s: float = 0.0) -> float:
    """Seconds to move num_bytes over one link.

    Formula: latency_s + num_bytes / bandwidth  (Hockney's alpha-beta model; Lab 06's p2p_time).
    Derive: a fixed latency once, then the bytes at the link's rate. num_bytes in bytes, bandwidth
    in bytes/s per direction, latency_s in s.
    """
    check_nonneg("num_bytes", num_bytes)
    check_positive("bandwidth", bandwidth)
    check_nonneg("latency_s", latency_s)
    ### BEGIN SOLUTION
    return p2p_time(num_bytes, latency_s, bandwidth)
    ### END SOLUTION


def intra_node_allreduce_time(message_bytes: float, gpus: int, bandwidth: float) -> float:
    """Seconds for a ring AllReduce of message_bytes among `gpus` GPUs of one node, bandwidth term
    only (no latency).

    Formula: T = 2(g-1)/g * M / B, B in bytes/s per GPU per direction (Thakur et al. 2005;
    nccl-tests PERFORMANCE.md).
    Derive: count the bytes one GPU sends in the reduce-scatter and again in the all-gather (the
    buffer cut into g shards, one shard per step) and send them at the GPU's per-direction NVLink
    rate. Zero for g = 1. The source lab charged 2M per GPU whatever g; at g = 8 the factor is
    less than 2.
    """
    check_nonneg("message_bytes", message_bytes)
    gpus = check_count("gpus", gpus)
    check_positive("bandwidth", bandwidth)
    ### BEGIN SOLUTION
    return ring_allreduce_time(message_bytes, gpus, 0.0, bandwidth)
    ### END SOLUTION


def hierarchical_allreduce_time(message_bytes: float, gpus_per_node: int, nodes: int,
                                intra_bandwidth: float, inter_bandwidth_per_node: float) -> float:
    """Seconds for a hierarchical AllReduce: reduce-scatter inside each node, AllReduce of the shards
    across nodes (each GPU over its share of the node's links), all-gather inside the node, the
    three phases pipelined. Bandwidth terms only.

    Formula: T = max(2(g-1)/g * M / B_intra, 2(k-1)/k * M / B_inter_node),   g = gpus_per_node, k = nodes.
    Derive: inside a node it is the ring of intra_node_allreduce_time over NVLink (intra_bandwidth,
    per GPU per direction). Across nodes, a node's GPUs together hold the whole gradient in
    shards; a ring over the k nodes moves them through the node's links (inter_bandwidth_per_node,
    summed over its links). The message goes in chunks, so NVLink and the NICs work at once and the
    slower of the two sets the time. One node has no inter-node term (the source lab charged one
    anyway). Adding the two terms instead (no overlap) bounds the time from above; measured
    AllReduces across DGX H100 nodes lie between the two (nccl-tests#309).
    """
    check_nonneg("message_bytes", message_bytes)
    gpus_per_node = check_count("gpus_per_node", gpus_per_node)
    nodes = check_count("nodes", nodes)
    check_positive("intra_bandwidth", intra_bandwidth)
    check_positive("inter_bandwidth_per_node", inter_bandwidth_per_node)
    ### BEGIN SOLUTION
    # Across nodes each GPU reduces a shard M/g over B_inter/g: the g's cancel, so the node
    # behaves as one ring member moving the whole M through all its links together.
    intra = ring_allreduce_time(message_bytes, gpus_per_node, 0.0, intra_bandwidth)
    inter = ring_allreduce_time(message_bytes, nodes, 0.0, inter_bandwidth_per_node)
    return max(intra, inter)
    ### END SOLUTION


def comm_overhead_ratio(comm_s: float, compute_s: float) -> float:
    """Communication time per unit of compute time: comm_s / compute_s (dimensionless).

    A definition. Above 1 the GPUs wait on the network longer than they compute (the lab's danger
    state).
    """
    check_nonneg("comm_s", comm_s)
    check_positive("compute_s", compute_s)
    ### BEGIN SOLUTION
    return comm_s / compute_s
    ### END SOLUTION


def speedup(t_1: float, t_n: float) -> float:
    """How many times faster the same work gets done: t_1 / t_n (both in seconds).

    A definition. For throughput over n nodes, t_1 is the time one node needs for the work n nodes
    do in one step (n one-node steps) and t_n is the n-node step time.
    """
    check_positive("t_1", t_1)
    check_positive("t_n", t_n)
    ### BEGIN SOLUTION
    return t_1 / t_n
    ### END SOLUTION


def scaling_efficiency(speedup: float, n: int) -> float:
    """Share of ideal linear scaling achieved: speedup / n (the same function as Lab 01's).

    A definition. 1.0 is perfect scaling on n workers (nodes or GPUs); it is not capped at 1
    (superlinear cases exist), but the interconnect wall keeps it well below.
    """
    check_positive("speedup", speedup)
    n = check_count("n", n)
    ### BEGIN SOLUTION
    return _lab01_scaling_efficiency(speedup, n)
    ### END SOLUTION


def min_ib_links(message_bytes: float, gpus_per_node: int, nodes: int, intra_bandwidth: float,
                 link_bandwidth: float, compute_s: float, max_overhead_ratio: float = 1.0,
                 max_links: int = 8) -> int:
    """Design challenge: the fewest InfiniBand links per node, k in 1..max_links, for which the
    hierarchical AllReduce of message_bytes, with k links of link_bandwidth per node, keeps
    comm_overhead_ratio out of the danger state (at most max_overhead_ratio).

    Derive: try k = 1, 2, ... with your hierarchical_allreduce_time and comm_overhead_ratio; stop at
    the first that fits. Returns 0 when no k up to max_links suffices (for instance when the
    intra-node term alone is already over the limit). One node has no inter-node traffic, so it
    needs 1 link if the intra-node term fits and 0 (impossible) otherwise. Bandwidths in bytes/s per
    direction, compute_s in s; max_links defaults to the DGX H100's 8 compute-fabric NICs.
    """
    check_nonneg("message_bytes", message_bytes)
    gpus_per_node = check_count("gpus_per_node", gpus_per_node)
    nodes = check_count("nodes", nodes)
    check_positive("intra_bandwidth", intra_bandwidth)
    check_positive("link_bandwidth", link_bandwidth)
    check_positive("compute_s", compute_s)
    check_positive("max_overhead_ratio", max_overhead_ratio)
    max_links = check_count("max_links", max_links)
    ### BEGIN SOLUTION
    # A plain search: the ratio falls as k grows, and max_links is small (8 on a DGX H100).
    for links in range(1, max_links + 1):
        comm_s = hierarchical_allreduce_time(message_bytes, gpus_per_node, nodes,
                                             intra_bandwidth, links * link_bandwidth)
        if comm_overhead_ratio(comm_s, compute_s) <= max_overhead_ratio:
            return links
    return 0
    ### END SOLUTION
