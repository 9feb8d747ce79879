"""partly_wrong: the port's rate read as bits per second, its input checks kept."""


def transfer_time_s(message_bytes: float, bandwidth: float) -> float:
    check_nonneg("message_bytes", message_bytes)
    check_positive("bandwidth", bandwidth)
    return 8 * message_bytes / bandwidth
