"""Lab 02, wrong submission B: other plausible mistakes (the lab's scenario text, bits vs bytes,
forgetting a factor, the wrong normalisation)."""


def gbit_to_bytes_per_s(gbit_per_s):
    return 2 * gbit_per_s * 1e9 / 8               # the lab's "200 Gbps x 2 directions" (bidirectional)


def gradient_bytes(params, bytes_per_value=2):
    return params * 2                             # FP16 hard-coded: ignores bytes_per_value


def transfer_time(num_bytes, bandwidth, latency_s=0.0):
    return latency_s + 8 * num_bytes / bandwidth  # bandwidth taken as bits/s


def intra_node_allreduce_time(message_bytes, gpus, bandwidth):
    return (gpus - 1) / gpus * message_bytes / bandwidth   # the lab's text: "(N-1)/N x model_size"


def hierarchical_allreduce_time(message_bytes, gpus_per_node, nodes, intra_bandwidth, inter_bandwidth_per_node):
    intra = 2 * (gpus_per_node - 1) / gpus_per_node * message_bytes / intra_bandwidth
    # the lab's text "model_size / N_gpus_per_node" through the whole node's links: forgets that each
    # GPU gets only 1/g of those links
    inter = 2 * (nodes - 1) / nodes * (message_bytes / gpus_per_node) / inter_bandwidth_per_node
    return max(intra, inter)


def comm_overhead_ratio(comm_s, compute_s):
    return comm_s / (comm_s + compute_s)          # the communication fraction, not the ratio


def speedup(t_1, t_n):
    return t_1 / t_n - 1                          # "x% faster" instead of "x times as fast"


def scaling_efficiency(speedup, n):
    return n / speedup                            # inverted


def min_ib_links(message_bytes, gpus_per_node, nodes, intra_bandwidth, link_bandwidth, compute_s,
                 max_overhead_ratio=1.0, max_links=8):
    # forgets the NVLink stages and gives up at max_links instead of saying "none" (0)
    inter_bytes = 2 * (nodes - 1) / nodes * message_bytes
    for links in range(1, max_links + 1):
        if inter_bytes / (links * link_bandwidth) <= max_overhead_ratio * compute_s:
            return links
    return max_links
