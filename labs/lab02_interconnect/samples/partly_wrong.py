"""partly_wrong: the source lab's own three mistakes (labs/lab02_interconnect/errata.md), each the
reference with one slip (domain checks are the reference's): Gb/s read as GB/s, the ring's "exactly 2x",
and an inter-node charge even on one node. min_ib_links inherits the last one."""
_right_gbit_to_bytes_per_s = gbit_to_bytes_per_s
_right_intra_node = intra_node_allreduce_time
_right_hierarchical = hierarchical_allreduce_time


def gbit_to_bytes_per_s(gbit_per_s: float) -> float:
    # 400 Gb/s InfiniBand read as 400 GB/s: eight times the bytes
    return 8 * _right_gbit_to_bytes_per_s(gbit_per_s)


def intra_node_allreduce_time(message_bytes: float, gpus: int, bandwidth: float) -> float:
    _right_intra_node(message_bytes, gpus, bandwidth)  # only for its domain checks
    # ring AllReduce moves 2x the model (reduce-scatter + all-gather), whatever the GPU count
    return 2 * message_bytes / bandwidth


def hierarchical_allreduce_time(message_bytes: float, gpus_per_node: int, nodes: int,
                                intra_bandwidth: float, inter_bandwidth_per_node: float) -> float:
    _right_hierarchical(message_bytes, gpus_per_node, nodes, intra_bandwidth, inter_bandwidth_per_node)
    # the NVLink stage as it should be, then 2 M over the node's links even when there is one node
    t_intra = _right_hierarchical(message_bytes, gpus_per_node, 1, intra_bandwidth, inter_bandwidth_per_node)
    t_inter = 2 * message_bytes / inter_bandwidth_per_node
    return t_intra + t_inter
