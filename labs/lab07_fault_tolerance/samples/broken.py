"""broken: one missing colon, so the whole module fails to import, as a student's would."""


def transfer_time_s(message_bytes: float, bandwidth: float) -> float
    return message_bytes / bandwidth
