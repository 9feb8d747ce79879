"""broken: one missing colon, so the whole module fails to import, as a student's would."""


def goodput(interval_s: float, checkpoint_s: float, mtbf_s: float, restart_s: float = 0.0) -> float
    return interval_s / (interval_s + checkpoint_s)
