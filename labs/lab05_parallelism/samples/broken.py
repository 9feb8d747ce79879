"""broken: one missing colon, so the whole module fails to import, as a student's would."""


def effective_mfu(base_mfu: float, compute_s: float, comm_s: float) -> float
    busy_share = compute_s / (compute_s + comm_s)
    return base_mfu * busy_share
