"""Lab 07 scenario: the named inputs (the source lab's, corrected where errata.md says so) and
every number derived from reference/ at them. No text: questions.py and notebook.py format these values.
"""
from __future__ import annotations

from reference import fault_tolerance as ref
from reference import constants as C

# --- inputs -------------------------------------------------------------------------------------------
MESSAGE_BYTES = 140e9                   # a 70B-parameter model's FP16 weights (2 bytes each)
BANDWIDTH = C.IB_NDR400_BANDWIDTH       # one InfiniBand NDR port, bytes/s per direction
ACT1_RANGES = ((0, 1), (1, 10), (10, 100), (100, 1000))   # seconds: the prediction's options (option design)
DEADLINE_S = 1.0                        # the design challenge: the message must move within this
MAX_PORTS = C.IB_NICS_PER_DGX_H100      # ... over at most the node's NDR ports

# --- derived from reference/ --------------------------------------------------------------------------
ACT1_TIME_S = ref.transfer_time_s(MESSAGE_BYTES, BANDWIDTH)
