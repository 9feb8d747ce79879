"""broken: one missing colon, so the whole module fails to import, as a student's would."""


def comm_fraction(comm_s: float, compute_s: float) -> float
    return comm_s / (comm_s + compute_s)
