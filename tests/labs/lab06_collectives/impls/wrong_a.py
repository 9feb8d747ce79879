"""A wrong submission: the source lab's own formulas (Vol II Lab 06, The Bandwidth Invariant; see
labs/lab06_collectives/errata.md) plus the most common slips, one per function."""
import math


def p2p_time(message_bytes, alpha_s, bandwidth):
    return message_bytes / bandwidth                       # forgets the latency


def naive_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    return (2 * n - 1) * message_bytes / bandwidth         # the lab: (2N-1)M through the master, no alpha


def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    return 2 * (n - 1) * alpha_s + 2 * message_bytes / bandwidth   # "about 2M per rank"


def tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    # the lab: ring's bandwidth term with 2 log2 N latency steps (fractional for non-powers of two)
    return 2 * (1 - 1 / n) * message_bytes / bandwidth + 2 * math.log2(n) * alpha_s


def rabenseifner_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    # the lab's "recursive halving": a reduce-scatter alone, half the AllReduce lower bound
    return math.log2(n) * alpha_s + (1 - 1 / n) * message_bytes / bandwidth


def ring_bytes_per_rank(message_bytes, n):
    return 2 * message_bytes                               # the "~2M" approximation


def naive_master_bytes(message_bytes, n):
    return (2 * n - 1) * message_bytes                     # the lab: counts a send to itself


def bus_bandwidth(message_bytes, time_s, n):
    return message_bytes / time_s                          # algbw, not busbw


def critical_message_size(alpha_s, bandwidth):
    return alpha_s * bandwidth / 1e9                       # the lab's GB display units


def ring_tree_crossover_bytes(n, alpha_s, bandwidth):
    return alpha_s * bandwidth * (n - 1) / math.log2(n)    # the lab's MathPeek formula


def best_allreduce_algorithm(message_bytes, n, alpha_s, bandwidth):
    return "ring"                                          # "ring is always fastest"


def training_step_flops(params, tokens):
    return 4 * params * tokens                             # the lab's comment: 2 x 2 x P x tokens


def compute_time(flops, n_gpus, peak_flops, mfu):
    return flops / (n_gpus * peak_flops)                   # forgets the utilisation


def comm_fraction(comm_s, compute_s):
    return comm_s / compute_s                              # a ratio, not a share of the step
