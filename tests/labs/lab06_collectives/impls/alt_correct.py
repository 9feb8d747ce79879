"""A correct submission written differently from the reference: other algebra, numpy, ints."""
import math

import numpy as np


def p2p_time(message_bytes, alpha_s, bandwidth):
    return float(np.add(alpha_s, np.divide(message_bytes, bandwidth)))


def _steps_time(steps, alpha_s, bytes_per_step, bandwidth):
    return steps * alpha_s + steps * bytes_per_step / bandwidth


def naive_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    messages = 2 * (int(n) - 1)                            # n-1 in, n-1 out, all on the master's link
    return _steps_time(messages, alpha_s, message_bytes, bandwidth)


def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    steps = 2 * (int(n) - 1)                               # each step moves one M/n chunk
    return _steps_time(steps, alpha_s, message_bytes / n, bandwidth)


def _levels(n):
    return math.ceil(math.log2(n)) if n > 1 else 0


def tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    return _steps_time(2 * _levels(int(n)), alpha_s, message_bytes, bandwidth)


def rabenseifner_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    k = _levels(int(n))
    moved = 2 * message_bytes * (1 - 1 / n)                # halving sends M/2 + M/4 + ..., twice
    return 2 * k * alpha_s + moved / bandwidth


def ring_bytes_per_rank(message_bytes, n):
    return float(np.float64(message_bytes) * 2 * (1 - 1 / n))


def naive_master_bytes(message_bytes, n):
    return 2 * (n - 1) * message_bytes


def bus_bandwidth(message_bytes, time_s, n):
    return 2 * (1 - 1 / n) * (message_bytes / time_s)


def critical_message_size(alpha_s, bandwidth):
    return bandwidth * alpha_s


def ring_tree_crossover_bytes(n, alpha_s, bandwidth):
    # solve 2(n-1)a + 2(n-1)/n M/B == 2L(a + M/B) for M
    L = _levels(int(n))
    extra_latency = 2 * alpha_s * (n - 1 - L)              # ring's extra latency steps
    extra_per_byte = (2 * L - 2 * (n - 1) / n) / bandwidth   # tree's extra seconds per byte
    return extra_latency / extra_per_byte


def best_allreduce_algorithm(message_bytes, n, alpha_s, bandwidth):
    ring = ring_allreduce_time(message_bytes, n, alpha_s, bandwidth)
    tree = tree_allreduce_time(message_bytes, n, alpha_s, bandwidth)
    return min(("ring", ring), ("tree", tree), key=lambda pair: pair[1])[0]


def training_step_flops(params, tokens):
    return (2 + 4) * params * tokens                       # forward 2, backward 4


def compute_time(flops, n_gpus, peak_flops, mfu):
    return flops / n_gpus / peak_flops / mfu


def comm_fraction(comm_s, compute_s):
    return 1 / (1 + compute_s / comm_s) if comm_s else 0.0    # no communication: none of the step
