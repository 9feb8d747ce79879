"""Every function wrong the way the source lab is wrong (labs/lab07_fault_tolerance/errata.md), or with
its most common slip; each computes a misconception the lab declares."""
import math


def cluster_mtbf_s(gpu_mtbf_s, n_gpus):
    return gpu_mtbf_s * n_gpus                      # more GPUs, more redundancy


def expected_failures(duration_s, mtbf_s):
    return mtbf_s / duration_s                      # upside down


def checkpoint_bytes(params, weight_bytes=2.0, optimizer_bytes=12.0):
    return params * weight_bytes                    # the lab's "roughly 2 TB"


def checkpoint_write_time_s(checkpoint_bytes, storage_bandwidth, n_nodes, node_bandwidth):
    return checkpoint_bytes / storage_bandwidth     # the storage alone


def snapshot_stall_s(checkpoint_bytes, n_gpus, copy_bandwidth):
    return checkpoint_bytes / copy_bandwidth        # all of it through one link


def young_daly_interval_s(checkpoint_s, mtbf_s):
    return math.sqrt(2 * checkpoint_s / mtbf_s)     # the MTBF where lambda belongs


def daly_interval_s(checkpoint_s, mtbf_s):
    return math.sqrt(2 * checkpoint_s * mtbf_s)     # first order only


def waste_fraction(interval_s, checkpoint_s, mtbf_s, restart_s=0.0):
    return checkpoint_s / interval_s + (interval_s / 2 + checkpoint_s) / mtbf_s   # the lab's T/2 + C


def goodput(interval_s, checkpoint_s, mtbf_s, restart_s=0.0):
    return 1 - (checkpoint_s / interval_s + (interval_s / 2 + restart_s) / mtbf_s)   # first order


def min_storage_bandwidth(checkpoint_bytes, mtbf_s, max_overhead):
    return checkpoint_bytes / (2 * mtbf_s * max_overhead)   # the overhead not squared
