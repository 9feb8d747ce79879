"""reference/fault_tolerance.py against independent values, worked by hand (what tests/labs/test_labs.py
checks for every lab, the declared properties and the input checks, is not repeated here)."""
from __future__ import annotations

import pytest

from reference import fault_tolerance as ref


def test_one_ndr_port_moves_140_gb_in_2_8_seconds():
    # 140e9 bytes / 50e9 bytes/s (400 Gb/s / 8) = 2.8 s, by hand
    assert ref.transfer_time_s(140e9, 50e9) == pytest.approx(2.8)
