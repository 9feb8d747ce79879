"""Lab 06 — collective communication: the alpha-beta cost of AllReduce algorithms.

Conventions (all functions): SI units — bytes, seconds, bytes/s (per direction), FLOP, FLOP/s.
Fractions are in [0, 1]. Counts are positive ints. Functions are pure: no printing, no globals.
Model: sending one message of M bytes over a link costs alpha_s + M / bandwidth (Hockney's
alpha-beta model). `message_bytes` is the size of the buffer every rank holds and reduces.
Sources: Thakur, Rabenseifner & Gropp, IJHPCA 19(1) 2005; Patarasuk & Yuan, JPDC 69(2) 2009;
NVIDIA nccl-tests doc/PERFORMANCE.md (bus bandwidth).
"""
from __future__ import annotations

from ._domain import check_count, check_fraction, check_nonneg, check_positive

__all__ = [
    "p2p_time", "naive_allreduce_time", "ring_allreduce_time", "tree_allreduce_time",
    "rabenseifner_allreduce_time", "ring_bytes_per_rank", "naive_master_bytes", "bus_bandwidth",
    "critical_message_size", "ring_tree_crossover_bytes", "best_allreduce_algorithm",
    "training_step_flops", "compute_time", "comm_fraction",
]


def _check_link(message_bytes, n, alpha_s, bandwidth) -> int:
    """Validate the alpha-beta inputs; return n as an int (128.0 is accepted as 128)."""
    check_nonneg("message_bytes", message_bytes)
    n = check_count("n", n)
    check_nonneg("alpha_s", alpha_s)
    check_positive("bandwidth", bandwidth)
    return n


def p2p_time(message_bytes: float, alpha_s: float, bandwidth: float) -> float:
    """Seconds to send one message point to point: alpha_s + message_bytes / bandwidth.

    message_bytes in bytes, alpha_s in s, bandwidth in bytes/s (Hockney 1994).
    """
    check_nonneg("message_bytes", message_bytes)
    check_nonneg("alpha_s", alpha_s)
    check_positive("bandwidth", bandwidth)
    ### BEGIN SOLUTION
    return alpha_s + message_bytes / bandwidth
    ### END SOLUTION


def naive_allreduce_time(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> float:
    """Seconds for a master-based AllReduce: every rank sends to one master, which reduces and
    sends the result back; the 2(n-1) messages serialise on the master's link.

    T = 2(n-1) * (alpha_s + M / B). Zero for n = 1. The master sends nothing to itself: n-1
    messages in, n-1 out (the lab counted n out).
    """
    _check_link(message_bytes, n, alpha_s, bandwidth)
    ### BEGIN SOLUTION
    return 2 * (n - 1) * (alpha_s + message_bytes / bandwidth)
    ### END SOLUTION


def ring_allreduce_time(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> float:
    """Seconds for a ring AllReduce (reduce-scatter then all-gather, n-1 steps each, M/n per step).

    T = 2(n-1) * alpha_s + 2(n-1)/n * M / B  (Thakur et al. 2005). Zero for n = 1.
    Its bandwidth term is the least any AllReduce built from point-to-point sends can cost
    (Patarasuk & Yuan 2009); a switch that reduces in the network (NVLink SHARP) beats it.
    """
    _check_link(message_bytes, n, alpha_s, bandwidth)
    ### BEGIN SOLUTION
    return 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth
    ### END SOLUTION


def tree_allreduce_time(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> float:
    """Seconds for a binary-tree AllReduce: reduce up the tree, broadcast down, the whole message
    per hop and no pipelining (a teaching simplification: NCCL's trees send the message in chunks
    down a pipeline, which keeps them competitive far above this tree's crossover with the ring).

    T = 2 * ceil(log2 n) * (alpha_s + M / B). Zero for n = 1. For n not a power of two the tree
    still needs ceil(log2 n) levels (the lab's fractional log2 n undercounts them).
    """
    n = _check_link(message_bytes, n, alpha_s, bandwidth)
    ### BEGIN SOLUTION
    depth = (n - 1).bit_length()  # ceil(log2 n), exact for ints (float log2 can round up)
    return 2 * depth * (alpha_s + message_bytes / bandwidth)
    ### END SOLUTION


def rabenseifner_allreduce_time(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> float:
    """Seconds for Rabenseifner's AllReduce: recursive-halving reduce-scatter then
    recursive-doubling all-gather; n must be a power of two.

    T = 2 * log2(n) * alpha_s + 2(n-1)/n * M / B  (Thakur et al. 2005, sec. 4.4). It moves the
    same bytes as the ring (the point-to-point lower bound) with log2(n) instead of n-1 latency
    steps; the lab's log2(n)*alpha + (1-1/n)*M/B is a reduce-scatter alone, half that bound.
    """
    n = _check_link(message_bytes, n, alpha_s, bandwidth)
    if n & (n - 1):
        raise ValueError(f"n must be a power of two for recursive halving, got {n!r}")
    ### BEGIN SOLUTION
    steps = n.bit_length() - 1  # log2 n
    return 2 * steps * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth
    ### END SOLUTION


def ring_bytes_per_rank(message_bytes: float, n: int) -> float:
    """Bytes each rank sends in a ring AllReduce: 2(n-1)/n * M, the least any AllReduce built from
    point-to-point sends can make a rank send (Patarasuk & Yuan 2009); in-switch reduction
    (NVLink SHARP) needs about M."""
    check_nonneg("message_bytes", message_bytes)
    check_count("n", n)
    ### BEGIN SOLUTION
    return 2 * (n - 1) / n * message_bytes
    ### END SOLUTION


def naive_master_bytes(message_bytes: float, n: int) -> float:
    """Bytes through the master's link in a naive AllReduce: 2(n-1) * M (received plus sent)."""
    check_nonneg("message_bytes", message_bytes)
    check_count("n", n)
    ### BEGIN SOLUTION
    return 2 * (n - 1) * message_bytes
    ### END SOLUTION


def bus_bandwidth(message_bytes: float, time_s: float, n: int) -> float:
    """NCCL-tests bus bandwidth of an AllReduce, bytes/s: busbw = (M / t) * 2(n-1)/n.

    It is comparable with the link bandwidth whatever n is, for algorithms built from point-to-point
    sends (nccl-tests doc/PERFORMANCE.md); with in-switch reduction it can exceed the link.
    """
    check_nonneg("message_bytes", message_bytes)
    check_positive("time_s", time_s)
    check_count("n", n)
    ### BEGIN SOLUTION
    return message_bytes / time_s * 2 * (n - 1) / n
    ### END SOLUTION


def critical_message_size(alpha_s: float, bandwidth: float) -> float:
    """Bytes at which one message's latency equals its transfer time: M* = alpha_s * bandwidth.

    Below M* a transfer is latency-bound, above it bandwidth-bound.
    """
    check_nonneg("alpha_s", alpha_s)
    check_positive("bandwidth", bandwidth)
    ### BEGIN SOLUTION
    return alpha_s * bandwidth
    ### END SOLUTION


def ring_tree_crossover_bytes(n: int, alpha_s: float, bandwidth: float) -> float:
    """Message size in bytes at which ring and tree AllReduce take equal time (n >= 2).

    Setting 2(n-1)a + 2(n-1)/n * M/B equal to 2L(a + M/B), L = ceil(log2 n):
    M = a * B * (n - 1 - L) / (L - (n-1)/n). Larger messages favour the ring, smaller the tree.
    """
    n = check_count("n", n, minimum=2)
    check_nonneg("alpha_s", alpha_s)
    check_positive("bandwidth", bandwidth)
    ### BEGIN SOLUTION
    depth = (n - 1).bit_length()
    return alpha_s * bandwidth * (n - 1 - depth) / (depth - (n - 1) / n)
    ### END SOLUTION


def best_allreduce_algorithm(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> str:
    """"ring" or "tree", whichever AllReduce is faster for this message; a tie is "ring"."""
    _check_link(message_bytes, n, alpha_s, bandwidth)
    ### BEGIN SOLUTION
    ring = ring_allreduce_time(message_bytes, n, alpha_s, bandwidth)
    tree = tree_allreduce_time(message_bytes, n, alpha_s, bandwidth)
    return "ring" if ring <= tree else "tree"
    ### END SOLUTION


def training_step_flops(params: float, tokens: float) -> float:
    """FLOP of one training step (forward + backward) of a dense transformer: 6 * params * tokens
    (Kaplan et al. 2020, sec. 2.1)."""
    check_nonneg("params", params)
    check_nonneg("tokens", tokens)
    ### BEGIN SOLUTION
    return 6 * params * tokens
    ### END SOLUTION


def compute_time(flops: float, n_gpus: int, peak_flops: float, mfu: float) -> float:
    """Seconds to do `flops` of work on n_gpus GPUs at model-FLOP utilisation mfu:
    flops / (n_gpus * peak_flops * mfu)."""
    check_nonneg("flops", flops)
    check_count("n_gpus", n_gpus)
    check_positive("peak_flops", peak_flops)
    check_fraction("mfu", mfu, open_low=True)
    ### BEGIN SOLUTION
    return flops / (n_gpus * peak_flops * mfu)
    ### END SOLUTION


def comm_fraction(comm_s: float, compute_s: float) -> float:
    """Share of a step spent communicating when nothing overlaps: comm / (comm + compute).

    Above 0.5 the cluster spends more time talking than computing (the lab's failure state).
    """
    check_nonneg("comm_s", comm_s)
    check_nonneg("compute_s", compute_s)
    if comm_s + compute_s == 0:
        raise ValueError("comm_s and compute_s must not both be 0")
    ### BEGIN SOLUTION
    return comm_s / (comm_s + compute_s)
    ### END SOLUTION
