"""A second wrong submission: other plausible mistakes, one per function."""
import math


def p2p_time(message_bytes, alpha_s, bandwidth):
    return alpha_s + 8 * message_bytes / bandwidth         # treats bytes/s as bits/s


def naive_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    return (n - 1) * (alpha_s + message_bytes / bandwidth)   # gathers but forgets the broadcast back


def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    return 2 * (n - 1) * (alpha_s + message_bytes / bandwidth)   # whole message at every step


def tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    return 2 * math.log2(n) * (alpha_s + message_bytes / bandwidth)   # fractional levels


def rabenseifner_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    return 2 * math.log2(n) * (alpha_s + message_bytes / bandwidth)   # whole message per step


def ring_bytes_per_rank(message_bytes, n):
    return (n - 1) / n * message_bytes                     # reduce-scatter only


def naive_master_bytes(message_bytes, n):
    return (n - 1) * message_bytes                         # counts only what the master receives


def bus_bandwidth(message_bytes, time_s, n):
    return message_bytes / time_s * (n - 1) / n            # the ReduceScatter factor


def critical_message_size(alpha_s, bandwidth):
    return alpha_s * bandwidth * 8                         # bits, not bytes


def ring_tree_crossover_bytes(n, alpha_s, bandwidth):
    return alpha_s * bandwidth * (n - 1)                   # the lab's reflection key M* = a B (N-1)


def best_allreduce_algorithm(message_bytes, n, alpha_s, bandwidth):
    # the lab's regime test: bandwidth-bound above alpha*B, so ring
    return "ring" if message_bytes > alpha_s * bandwidth else "tree"


def training_step_flops(params, tokens):
    return 2 * params * tokens                             # forward pass only


def compute_time(flops, n_gpus, peak_flops, mfu):
    return flops / (peak_flops * mfu)                      # forgets the GPUs share the work


def comm_fraction(comm_s, compute_s):
    return 100 * comm_s / (comm_s + compute_s)             # percent, as the lab shows it
