"""broken: one unbalanced parenthesis, so the whole module fails to import, as a student's would."""


def comm_overhead_ratio(comm_s: float, compute_s: float) -> float:
    return comm_s / compute_s)
