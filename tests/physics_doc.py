"""Parse docs/physics.md, the project's physics contract: its hardware-constant table and, per lab
section, its function table. Strict: a table row that does not parse is an error, not a skipped row,
so a typo in the contract cannot quietly drop a function from the tests."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

PHYSICS_MD = Path(__file__).resolve().parents[1] / "docs" / "physics.md"

SECTION = re.compile(r"^## (.*)$", re.M)
LAB_SECTION = re.compile(r"^Lab (\d+)\b.* `(\w+)\.py`$")
FUNCTION_ROW = re.compile(r"^\| `(\w+)\((.*?)\)` \| [^|]+ \| [^|]+ \| [^|]+ \|$")
CONSTANT_ROW = re.compile(r"^\| ((?:`\w+`(?:, )?)+) \| ([^|]+) \| [^|]+ \|$")
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e-?\d+)?")


class ContractError(ValueError):
    pass


@dataclass(frozen=True)
class Function:
    lab: str           # "06"
    module: str        # "collectives"
    name: str
    params: tuple[str, ...]


def _sections(text: str) -> dict[str, str]:
    heads = list(SECTION.finditer(text))
    return {h.group(1).strip(): text[h.end(): heads[i + 1].start() if i + 1 < len(heads) else len(text)]
            for i, h in enumerate(heads)}


def _table_rows(body: str) -> list[str]:
    """The data rows of the section's first table (header and separator dropped); a later table (a lab's
    story inputs) is not the contract's."""
    rows = []
    for line in body.splitlines():
        if line.strip().startswith("|"):
            rows.append(line.strip())
        elif rows:
            break
    if len(rows) < 3 or not set(rows[1]) <= set("|-: "):
        raise ContractError(f"no table in section starting {body.strip()[:60]!r}")
    return rows[2:]


def functions(path: Path = PHYSICS_MD) -> list[Function]:
    found = []
    for title, body in _sections(path.read_text(encoding="utf-8")).items():
        if not title.startswith("Lab "):
            continue
        lab = LAB_SECTION.match(title)
        if lab is None:
            raise ContractError(f"lab section title {title!r} does not name its module as `<module>.py`")
        for row in _table_rows(body):
            match = FUNCTION_ROW.match(row)
            if match is None:
                raise ContractError(f"Lab {lab.group(1)}: row does not parse as "
                                    f"| `name(params)` | returns | formula | source |: {row[:80]!r}")
            params = tuple(p.split("=")[0].strip() for p in match.group(2).split(",") if p.strip())
            found.append(Function(lab.group(1), lab.group(2), match.group(1), params))
    return found


def constants(path: Path = PHYSICS_MD) -> dict[str, float]:
    """name -> value of the hardware-constant table."""
    body = _sections(path.read_text(encoding="utf-8")).get("Hardware constants")
    if body is None:
        raise ContractError("no '## Hardware constants' section")
    values = {}
    for row in _table_rows(body):
        match = CONSTANT_ROW.match(row)
        if match is None:
            raise ContractError(f"constant row does not parse as | `NAME`, ... | values | why |: {row[:80]!r}")
        names = re.findall(r"`(\w+)`", match.group(1))
        numbers = [float(n) for n in NUMBER.findall(match.group(2))]
        if len(names) != len(numbers):
            raise ContractError(f"{names}: {len(names)} names but {len(numbers)} values in {match.group(2)!r}")
        values.update(zip(names, numbers))
    return values
