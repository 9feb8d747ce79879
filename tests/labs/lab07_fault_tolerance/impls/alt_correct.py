"""A correct submission written differently from the reference: other algebra, numpy, failure rates."""
import math

import numpy as np


def cluster_mtbf_s(gpu_mtbf_s, n_gpus):
    rate = n_gpus * (1.0 / gpu_mtbf_s)              # failure rates add
    return 1.0 / rate


def expected_failures(duration_s, mtbf_s):
    return float(np.multiply(duration_s, 1.0 / mtbf_s))


def checkpoint_bytes(params, weight_bytes=2.0, optimizer_bytes=12.0):
    return params * weight_bytes + params * optimizer_bytes


def checkpoint_write_time_s(checkpoint_bytes, storage_bandwidth, n_nodes, node_bandwidth):
    return max(checkpoint_bytes / storage_bandwidth, checkpoint_bytes / (n_nodes * node_bandwidth))


def snapshot_stall_s(checkpoint_bytes, n_gpus, copy_bandwidth):
    shard = checkpoint_bytes / n_gpus
    return shard / copy_bandwidth


def young_daly_interval_s(checkpoint_s, mtbf_s):
    rate = 1.0 / mtbf_s
    return (2.0 * checkpoint_s / rate) ** 0.5


def daly_interval_s(checkpoint_s, mtbf_s):
    if checkpoint_s >= 2 * mtbf_s:
        return mtbf_s
    ratio = checkpoint_s / (2 * mtbf_s)
    first = math.sqrt(2 * checkpoint_s * mtbf_s)
    return first + first * math.sqrt(ratio) / 3 + first * ratio / 9 - checkpoint_s


def waste_fraction(interval_s, checkpoint_s, mtbf_s, restart_s=0.0):
    rate = 1.0 / mtbf_s
    return checkpoint_s / interval_s + rate * (0.5 * interval_s + restart_s)


def goodput(interval_s, checkpoint_s, mtbf_s, restart_s=0.0):
    wall = mtbf_s * math.exp(restart_s / mtbf_s) * math.expm1((interval_s + checkpoint_s) / mtbf_s)
    return interval_s / wall


def min_storage_bandwidth(checkpoint_bytes, mtbf_s, max_overhead):
    longest_write_s = 2 * mtbf_s * max_overhead * max_overhead
    return checkpoint_bytes / longest_write_s
