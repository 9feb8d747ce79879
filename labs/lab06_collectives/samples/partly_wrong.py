"""partly_wrong: the source lab's own three formulas (labs/lab06_collectives/errata.md), domain checks kept."""
import math


def naive_allreduce_time(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> float:
    _check_link(message_bytes, n, alpha_s, bandwidth)
    # master receives (n-1) M and sends n M back
    return (2 * n - 1) * message_bytes / bandwidth


def rabenseifner_allreduce_time(message_bytes: float, n: int, alpha_s: float, bandwidth: float) -> float:
    n = _check_link(message_bytes, n, alpha_s, bandwidth)
    if n & (n - 1):
        raise ValueError(f"n must be a power of two for recursive halving, got {n!r}")
    return math.log2(n) * alpha_s + (1 - 1 / n) * message_bytes / bandwidth


def ring_tree_crossover_bytes(n: int, alpha_s: float, bandwidth: float) -> float:
    n = check_count("n", n, minimum=2)
    check_nonneg("alpha_s", alpha_s)
    check_positive("bandwidth", bandwidth)
    return alpha_s * bandwidth * (n - 1) / math.log2(n)
