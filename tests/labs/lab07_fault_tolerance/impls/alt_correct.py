"""A correct submission written differently from the reference: other algebra, numpy."""
import numpy as np


def transfer_time_s(message_bytes, bandwidth):
    return float(np.multiply(message_bytes, np.reciprocal(float(bandwidth))))
