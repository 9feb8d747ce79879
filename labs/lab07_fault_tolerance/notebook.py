# %% [markdown]
# # Lab 07 — The Checkpoint Reckoning: fault tolerance at scale
#
# Implement the functions of `fault_tolerance.py` (units in every docstring). The plots and readouts below call *your* functions, so they are only as right as your code; run `pytest` in this folder for the public checks.
#
# ## Act I — One message, one link
#
# > *A platform engineer writes:* "We copy a {{ MESSAGE_BYTES | bytes }} checkpoint to another node over one InfiniBand NDR port, {{ BANDWIDTH | fmt(".0f", 1e9) }} GB/s per direction. How long do we wait?"

# %%
# Setup (generated): your module, the cited constants, numpy and the instrument toolkit.
import fault_tolerance
import numpy as np
from _instruments import Instrument, LogSlider
from labs.lab07_fault_tolerance.scenario import MESSAGE_BYTES as message_bytes   # bytes
from labs.lab07_fault_tolerance.scenario import BANDWIDTH as bandwidth   # one NDR port, bytes/s per direction
from labs.lab07_fault_tolerance.questions import ACT1_OPTIONS as act1_options

# %% answer="act1_prediction"

# %% requires=["act1_prediction"] tags=["instrument"]
# Instrument: the transfer time against the link's bandwidth, from your function.
BANDWIDTHS = np.logspace(9, 12, 61)   # 1 GB/s .. 1 TB/s


def act1(fig, message_bytes, bandwidth):
    ax = fig.subplots()
    ax.loglog(BANDWIDTHS, [fault_tolerance.transfer_time_s(message_bytes, b) for b in BANDWIDTHS])
    seconds = fault_tolerance.transfer_time_s(message_bytes, bandwidth)
    ax.plot([bandwidth], [seconds], "o", color="red")
    ax.set(xlabel="bandwidth (bytes/s)", ylabel="transfer time (s)", title=f"{message_bytes:.3g} bytes")
    return f"{message_bytes:.4g} bytes at {bandwidth:.4g} bytes/s: {seconds:.4g} s"


Instrument(act1, message_bytes=LogSlider("message (bytes)", 1e6, 1e13, value=message_bytes),
           bandwidth=LogSlider("bandwidth (bytes/s)", 1e9, 1e12, value=bandwidth)).show();

# %% requires=["act1_prediction"]
print(f"You predicted {act1_prediction}: {act1_options.get(act1_prediction, '(not one of the options)')}")
print(f"Your transfer_time_s: {fault_tolerance.transfer_time_s(message_bytes, bandwidth):.3g} s over one port")

# %% answer="act1_reflection"

# %% [markdown]
# **Takeaway (Act I).** A transfer's time is its bytes over the link's bytes per second: units first, then the division.

# %% challenge="lab07_design"

# %% grades=true
