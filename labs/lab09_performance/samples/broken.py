"""broken: one missing colon, so the whole module fails to import, as a student's would."""


def amdahl_limit(fraction: float) -> float:
    check_fraction("fraction", fraction)
    untouched = 1 - fraction
    if untouched == 0
        return math.inf
    return 1 / untouched
