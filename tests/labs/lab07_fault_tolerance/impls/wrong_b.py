"""Every function wrong another way."""


def transfer_time_s(message_bytes, bandwidth):
    return bandwidth / message_bytes              # the ratio upside down
