"""Lab 07's own expectations of its scenario: the computed key says what the physics says
(the checks every lab shares are in tests/labs/test_labs.py)."""
from __future__ import annotations

import re

from autograder.engine.spec import Markdown
from labs.lab07_fault_tolerance import ASSIGNMENT as A
from labs.lab07_fault_tolerance import scenario as S


def test_act1_key_is_the_range_holding_the_transfer_time():
    q = A.question("act1_prediction")
    low, high = map(int, re.findall(r"(\d+) s", q.options[q.key])[:2])
    assert low <= S.ACT1_TIME_S < high


def test_story_numbers_are_rendered():
    story = "\n".join(c.text for c in A.notebook if isinstance(c, Markdown))
    assert "140 GB checkpoint" in story and "{" not in story
