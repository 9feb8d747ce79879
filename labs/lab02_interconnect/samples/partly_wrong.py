"""partly_wrong: the source lab's own three mistakes (docs/errata/lab02_interconnect.md): Gb/s read as
GB/s, the ring's "exactly 2x", and an inter-node charge even on one node; domain checks kept.
min_ib_links inherits the last one through this student's hierarchical_allreduce_time."""


def gbit_to_bytes_per_s(gbit_per_s: float) -> float:
    check_positive("gbit_per_s", gbit_per_s)
    return gbit_per_s * 1e9  # 400 Gb/s InfiniBand = 400 GB/s


def intra_node_allreduce_time(message_bytes: float, gpus: int, bandwidth: float) -> float:
    check_nonneg("message_bytes", message_bytes)
    gpus = check_count("gpus", gpus)
    check_positive("bandwidth", bandwidth)
    # ring AllReduce moves 2x the model (reduce-scatter + all-gather)
    return 2 * message_bytes / bandwidth


def hierarchical_allreduce_time(message_bytes: float, gpus_per_node: int, nodes: int,
                                intra_bandwidth: float, inter_bandwidth_per_node: float) -> float:
    check_nonneg("message_bytes", message_bytes)
    gpus_per_node = check_count("gpus_per_node", gpus_per_node)
    nodes = check_count("nodes", nodes)
    check_positive("intra_bandwidth", intra_bandwidth)
    check_positive("inter_bandwidth_per_node", inter_bandwidth_per_node)
    t_intra = 2 * (gpus_per_node - 1) / gpus_per_node * message_bytes / intra_bandwidth
    t_inter = 2 * message_bytes / inter_bandwidth_per_node
    return t_intra + t_inter


def min_ib_links(message_bytes: float, gpus_per_node: int, nodes: int, intra_bandwidth: float,
                 link_bandwidth: float, compute_s: float, max_overhead_ratio: float = 1.0,
                 max_links: int = 8) -> int:
    # the student's own search, right in itself: it is wrong only through hierarchical_allreduce_time above
    check_nonneg("message_bytes", message_bytes)
    check_count("gpus_per_node", gpus_per_node)
    check_count("nodes", nodes)
    for name, value in (("intra_bandwidth", intra_bandwidth), ("link_bandwidth", link_bandwidth),
                        ("compute_s", compute_s), ("max_overhead_ratio", max_overhead_ratio)):
        check_positive(name, value)
    fits = [k for k in range(1, check_count("max_links", max_links) + 1) if comm_overhead_ratio(
        hierarchical_allreduce_time(message_bytes, gpus_per_node, nodes, intra_bandwidth, k * link_bandwidth),
        compute_s) <= max_overhead_ratio]
    return fits[0] if fits else 0
