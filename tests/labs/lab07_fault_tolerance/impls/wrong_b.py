"""Every function wrong another way: units and factors."""
import math


def cluster_mtbf_s(gpu_mtbf_s, n_gpus):
    return gpu_mtbf_s / n_gpus / 3600               # "in hours"


def expected_failures(duration_s, mtbf_s):
    return duration_s / (mtbf_s / 3600)             # the MTBF read in hours


def checkpoint_bytes(params, weight_bytes=2.0, optimizer_bytes=12.0):
    return params * (weight_bytes + optimizer_bytes + 2)    # the gradients too


def checkpoint_write_time_s(checkpoint_bytes, storage_bandwidth, n_nodes, node_bandwidth):
    return checkpoint_bytes * 1.024 / min(storage_bandwidth, n_nodes * node_bandwidth)   # TB x 1024


def snapshot_stall_s(checkpoint_bytes, n_gpus, copy_bandwidth):
    return 8 * checkpoint_bytes / n_gpus / copy_bandwidth   # bits


def young_daly_interval_s(checkpoint_s, mtbf_s):
    return math.sqrt(checkpoint_s * mtbf_s)         # no factor 2


def daly_interval_s(checkpoint_s, mtbf_s):
    if checkpoint_s >= 2 * mtbf_s:
        return mtbf_s
    x = checkpoint_s / (2 * mtbf_s)
    return math.sqrt(2 * checkpoint_s * mtbf_s) * (1 + math.sqrt(x) / 3 + x / 9)   # C not subtracted


def waste_fraction(interval_s, checkpoint_s, mtbf_s, restart_s=0.0):
    return checkpoint_s / interval_s + (interval_s + restart_s) / mtbf_s   # the whole interval redone


def goodput(interval_s, checkpoint_s, mtbf_s, restart_s=0.0):
    return interval_s / (mtbf_s * math.exp(restart_s / mtbf_s) * math.expm1(interval_s / mtbf_s))   # no stall


def min_storage_bandwidth(checkpoint_bytes, mtbf_s, max_overhead):
    return checkpoint_bytes / (mtbf_s * max_overhead)   # C/M, not C/T*
