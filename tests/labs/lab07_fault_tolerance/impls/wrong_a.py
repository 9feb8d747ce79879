"""Every function wrong as a student plausibly would be (each the mistake a misconception declares)."""


def transfer_time_s(message_bytes, bandwidth):
    return 8 * message_bytes / bandwidth          # the rate read as bits per second
