"""What the physics texts say in words holds against the reference (issue 43): claims an instructor checking
by hand would catch, which no computed number carries. Every lab's errata, physics page, declaration and
notebook text, the reference's docstrings and the generated contract pages are read as written.

- "Lower bound" of an AllReduce is the bound of algorithms built from point-to-point sends: reduction inside
  the switch (NVLink SHARP, IB SHARP) beats it (nccl-tests doc/PERFORMANCE.md; docs/measurements.md, Lab 06).
  Every line that says "lower bound" says "point-to-point" too.
- A PCIe x16 slot's line rate is constants.PCIE_GEN4/GEN5_X16_BANDWIDTH (31.5 / 63.0 GB/s): a "32 GB/s" or
  "64 GB/s" beside PCIe is the stale figure issue 30 corrected, unless the line says it was the old one.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from reference import constants as C

REPO = Path(__file__).resolve().parents[1]
TEXTS = sorted([*REPO.glob("labs/lab*/*.md"), *REPO.glob("labs/lab*/*.py"), *REPO.glob("reference/*.py"),
                REPO / "docs/physics.md", REPO / "docs/measurements.md", REPO / "docs/errata/README.md"])
HISTORY = re.compile(r"until issue \d+|was|were|stale", re.I)


def _lines(pattern: str):
    """(where, the line joined to the next: prose wraps) of each line matching `pattern`."""
    for path in TEXTS:
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            if re.search(pattern, line, re.I):
                yield f"{path.relative_to(REPO)}:{number}", " ".join(lines[number - 1:number + 1])


def test_the_texts_were_read():
    assert len(TEXTS) > 40 and any(path.name == "errata.md" for path in TEXTS)


def test_every_lower_bound_is_the_point_to_point_one():
    unqualified = [where for where, line in _lines(r"lower bound")
                   if not re.search(r"point[- ]to[- ]point", line, re.I)]
    assert not unqualified, f"'lower bound' without 'point-to-point' (in-switch reduction beats it): {unqualified}"


@pytest.mark.parametrize("generation, constant", [("Gen4", C.PCIE_GEN4_X16_BANDWIDTH), ("Gen5", C.PCIE_GEN5_X16_BANDWIDTH)])
def test_pcie_line_rates_are_the_constants(generation, constant):
    stale = round(constant / 1e9 + 0.5)          # 32 and 64: the figures without the 128/130 line coding
    wrong = [where for where, line in _lines(rf"PCIe {generation}[^|]*?\b{stale} GB/s") if not HISTORY.search(line)]
    assert not wrong, f"PCIe {generation} x16 is {constant / 1e9:.1f} GB/s per direction, not {stale}: {wrong}"
