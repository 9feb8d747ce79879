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
    """Seconds to send one message of message_bytes from one rank to another (Hockney's alpha-beta model).

    Formula: alpha_s + message_bytes / bandwidth  (Hockney 1994).
    Derive: a message pays a fixed start-up latency alpha_s (s) once, whatever its size, and then its
    bytes stream over the link at bandwidth bytes/s (per direction). An empty message still costs
    alpha_s. Units: bytes, s, bytes/s.
    """
    check_nonneg("message_bytes", message_bytes)
    check_nonneg("alpha_s", alpha_s)
    check_positive("bandwidth", bandwidth)
    ### BEGIN SOLUTION
    return alpha_s + message_bytes / bandwidth
    ### END SOLUTION


def naive_allreduce_time(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> float:
    """Seconds for a master-based AllReduce: every rank sends its buffer to one master, which reduces
    and sends the result back to each rank.

    Formula: T = 2(n-1) * (alpha_s + M / B), M = message_bytes, B = bandwidth.
    Derive: count the point-to-point messages that cross the master's one link and note that they
    cannot overlap there: each is a whole M-byte buffer, each costs one p2p_time. The master sends
    nothing to itself (the source lab counted n messages back, one too many). Zero for n = 1.
    """
    _check_link(message_bytes, n, alpha_s, bandwidth)
    ### BEGIN SOLUTION
    return 2 * (n - 1) * (alpha_s + message_bytes / bandwidth)
    ### END SOLUTION


def ring_allreduce_time(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> float:
    """Seconds for a ring AllReduce: a reduce-scatter, then an all-gather, around a ring of n ranks.

    Formula: T = 2(n-1) * alpha_s + 2(n-1)/n * M / B  (Thakur et al. 2005), M = message_bytes.
    Derive: the buffer is cut into n chunks of M/n bytes. Each phase takes n-1 steps; in every step
    each rank sends one chunk to its right neighbour while it receives one from its left, all links
    at once, so a step costs one latency and one chunk's transfer. Zero for n = 1. Its bandwidth
    term is the least any AllReduce built from point-to-point sends can cost (Patarasuk & Yuan
    2009); a switch that reduces in the network (NVLink SHARP) beats it.
    """
    _check_link(message_bytes, n, alpha_s, bandwidth)
    ### BEGIN SOLUTION
    return 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth
    ### END SOLUTION


def tree_allreduce_time(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> float:
    """Seconds for a binary-tree AllReduce: reduce up the tree, broadcast down, the whole message per
    hop and no pipelining (a teaching simplification: NCCL's trees send the message in chunks down
    a pipeline, which keeps them competitive far above this tree's crossover with the ring).

    Formula: T = 2 * ceil(log2 n) * (alpha_s + M / B), M = message_bytes, B = bandwidth.
    Derive: a binary tree over n ranks has as many levels as it takes to double from 1 to at least
    n; the reduction climbs them one hop at a time and the broadcast comes back down, and each hop
    sends the whole M-byte buffer as one message. For n not a power of two the tree still needs
    that whole number of levels (the source lab's fractional log2 n undercounts them). Zero for n = 1.
    """
    n = _check_link(message_bytes, n, alpha_s, bandwidth)
    ### BEGIN SOLUTION
    depth = (n - 1).bit_length()  # ceil(log2 n), exact for ints (float log2 can round up)
    return 2 * depth * (alpha_s + message_bytes / bandwidth)
    ### END SOLUTION


def rabenseifner_allreduce_time(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> float:
    """Seconds for Rabenseifner's AllReduce: recursive-halving reduce-scatter then recursive-doubling
    all-gather; n must be a power of two.

    Formula: T = 2 * log2(n) * alpha_s + 2(n-1)/n * M / B  (Thakur et al. 2005, sec. 4.4).
    Derive: in the reduce-scatter each round pairs every rank with a partner and exchanges half of
    what it still holds, so the data halves each round until each rank owns its M/n share; the
    all-gather runs the same rounds backwards, doubling. Count the rounds (latencies) and add up the
    bytes a rank sends over all of them: the same bytes as the ring, in far fewer steps. The source
    lab's version charged the reduce-scatter alone, half the bytes of an AllReduce.
    """
    n = _check_link(message_bytes, n, alpha_s, bandwidth)
    if n & (n - 1):
        raise ValueError(f"n must be a power of two for recursive halving, got {n!r}")
    ### BEGIN SOLUTION
    steps = n.bit_length() - 1  # log2 n
    return 2 * steps * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth
    ### END SOLUTION


def ring_bytes_per_rank(message_bytes: float, n: int) -> float:
    """Bytes each rank sends in a ring AllReduce.

    Formula: 2(n-1)/n * M, M = message_bytes.
    Derive: follow one rank through both phases of the ring (reduce-scatter, then all-gather): it
    sends one chunk of the n-way split buffer per step. This is the least any AllReduce built from
    point-to-point sends can make a rank send (Patarasuk & Yuan 2009); in-switch reduction (NVLink
    SHARP) needs about M. Zero for n = 1.
    """
    check_nonneg("message_bytes", message_bytes)
    check_count("n", n)
    ### BEGIN SOLUTION
    return 2 * (n - 1) / n * message_bytes
    ### END SOLUTION


def naive_master_bytes(message_bytes: float, n: int) -> float:
    """Bytes that cross the master's link in a naive AllReduce (received plus sent).

    Formula: 2(n-1) * M, M = message_bytes.
    Derive: every other rank's whole buffer comes in, and the reduced buffer goes back out to each of
    them; the master sends nothing to itself. Zero for n = 1.
    """
    check_nonneg("message_bytes", message_bytes)
    check_count("n", n)
    ### BEGIN SOLUTION
    return 2 * (n - 1) * message_bytes
    ### END SOLUTION


def bus_bandwidth(message_bytes: float, time_s: float, n: int) -> float:
    """NCCL-tests bus bandwidth of an AllReduce, bytes/s: busbw = (M / t) * 2(n-1)/n, M = message_bytes,
    t = time_s (nccl-tests doc/PERFORMANCE.md).

    A definition: the algorithm bandwidth M/t scaled by the bytes a ring rank must send, so that it
    is comparable with the link bandwidth whatever n is, for algorithms built from point-to-point
    sends; with in-switch reduction it can exceed the link.
    """
    check_nonneg("message_bytes", message_bytes)
    check_positive("time_s", time_s)
    check_count("n", n)
    ### BEGIN SOLUTION
    return message_bytes / time_s * 2 * (n - 1) / n
    ### END SOLUTION


def critical_message_size(alpha_s: float, bandwidth: float) -> float:
    """Bytes at which one message's latency equals its transfer time.

    Formula: M* = alpha_s * bandwidth.
    Derive: set the two terms of p2p_time equal and solve for the size. Below it a transfer is
    latency-bound, above it bandwidth-bound. Units: s times bytes/s gives bytes.
    """
    check_nonneg("alpha_s", alpha_s)
    check_positive("bandwidth", bandwidth)
    ### BEGIN SOLUTION
    return alpha_s * bandwidth
    ### END SOLUTION


def ring_tree_crossover_bytes(n: int, alpha_s: float, bandwidth: float) -> float:
    """Message size in bytes at which ring and tree AllReduce take equal time (n >= 2).

    Formula: M = a * B * (n - 1 - L) / (L - (n-1)/n), a = alpha_s, B = bandwidth, L = ceil(log2 n).
    Derive: write both times as a latency term plus a bandwidth term (ring_allreduce_time,
    tree_allreduce_time), set them equal and solve for the message size: the ring pays more
    latencies, the tree more bytes. Larger messages favour the ring, smaller the tree; the answer
    depends on n as well as on the link, so it is not critical_message_size.
    """
    n = check_count("n", n, minimum=2)
    check_nonneg("alpha_s", alpha_s)
    check_positive("bandwidth", bandwidth)
    ### BEGIN SOLUTION
    depth = (n - 1).bit_length()
    return alpha_s * bandwidth * (n - 1 - depth) / (depth - (n - 1) / n)
    ### END SOLUTION


def best_allreduce_algorithm(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> str:
    """"ring" or "tree", whichever AllReduce is faster for this message; a tie is "ring".

    Derive: compare your ring_allreduce_time and tree_allreduce_time at these inputs (n = 1: both
    are 0, a tie).
    """
    _check_link(message_bytes, n, alpha_s, bandwidth)
    ### BEGIN SOLUTION
    ring = ring_allreduce_time(message_bytes, n, alpha_s, bandwidth)
    tree = tree_allreduce_time(message_bytes, n, alpha_s, bandwidth)
    return "ring" if ring <= tree else "tree"
    ### END SOLUTION


def training_step_flops(params: float, tokens: float) -> float:
    """FLOP of one training step (forward + backward) of a dense transformer: 6 * params * tokens
    (Kaplan et al. 2020, sec. 2.1).

    A convention of the field: about 2 FLOP per parameter per token forward and 4 backward.
    """
    check_nonneg("params", params)
    check_nonneg("tokens", tokens)
    ### BEGIN SOLUTION
    return 6 * params * tokens
    ### END SOLUTION


def compute_time(flops: float, n_gpus: int, peak_flops: float, mfu: float) -> float:
    """Seconds to do `flops` of work on n_gpus GPUs at model-FLOP utilisation mfu:
    flops / (n_gpus * peak_flops * mfu).

    The definition of MFU: the share of the GPUs' dense peak (FLOP/s) that useful model FLOP reach.
    """
    check_nonneg("flops", flops)
    check_count("n_gpus", n_gpus)
    check_positive("peak_flops", peak_flops)
    check_fraction("mfu", mfu, open_low=True)
    ### BEGIN SOLUTION
    return flops / (n_gpus * peak_flops * mfu)
    ### END SOLUTION


def comm_fraction(comm_s: float, compute_s: float) -> float:
    """Share of a step spent communicating when nothing overlaps: comm / (comm + compute).

    A definition. Above 0.5 the cluster spends more time talking than computing (the lab's failure
    state).
    """
    check_nonneg("comm_s", comm_s)
    check_nonneg("compute_s", compute_s)
    if comm_s + compute_s == 0:
        raise ValueError("comm_s and compute_s must not both be 0")
    ### BEGIN SOLUTION
    return comm_s / (comm_s + compute_s)
    ### END SOLUTION
