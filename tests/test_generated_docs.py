"""What the pages say about each lab is generated from the lab's own files (autograder/author/docs.py):
a page whose generated part is stale fails here, and every declared lab has its README row, its
physics contract section, its errata and its instruments section without anyone editing a page."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder.author import docs
from labs import all_assignments

REPO = Path(__file__).resolve().parents[1]
LABS = sorted(all_assignments())


def test_no_generated_page_is_stale():
    assert docs.stale() == [], "run `scalelabs docs` and commit the pages"


@pytest.mark.parametrize("lab", LABS)
def test_every_page_names_every_lab(lab):
    a = all_assignments()[lab]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert re.search(rf"^\| `{lab}` \| `{a.module}\.py` \| {re.escape(a.summary)} \|", readme, re.M)
    physics = (REPO / "docs" / "physics.md").read_text(encoding="utf-8")
    section = physics.split(f"`{a.module}.py`\n", 1)[1].split("\n## ", 1)[0]
    for f in a.functions:   # the reference's own signature, in grading order
        assert f"| `{docs.signature(getattr(a.reference, f.name))}` |" in section, f.name
    index = (REPO / "docs" / "errata" / "README.md").read_text(encoding="utf-8")
    link = re.search(rf"^\| `{lab}` \|.*\]\(([^)]+)\) \|$", index, re.M)
    assert link and (REPO / "docs" / "errata" / link.group(1)).resolve() == REPO / "labs" / lab / "errata.md"
    assert (REPO / "labs" / lab / "errata.md").is_file()
    assert f"(`labs/{lab}/notebook.py`)" in (REPO / "docs" / "instruments.md").read_text(encoding="utf-8")
    if a.measurements:
        assert f"Declared in `labs/{lab}/measurements.py`" in (REPO / "docs" / "measurements.md").read_text(encoding="utf-8")


def test_a_contract_that_misses_or_misorders_a_function_is_named(tmp_path, monkeypatch):
    """contract_problems: a graded function without a row, a row for no graded function, two rows
    swapped, each named with file and line (lint reports the same lines)."""
    a = all_assignments()["lab06_collectives"]
    text = (REPO / "labs" / "lab06_collectives" / "physics.md").read_text(encoding="utf-8")
    folder = tmp_path / "lab06_collectives"
    folder.mkdir()
    monkeypatch.setattr(docs.labs, "lab_folder", lambda lab: folder)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    cases = {
        "graded function comm_fraction has no row": text.replace(rows[-1] + "\n", ""),
        "p2p_times is not a graded function": text.replace("| `p2p_time` |", "| `p2p_times` |"),
        "rows are not in grading order": text.replace(rows[0], "@@").replace(rows[1], rows[0]).replace("@@", rows[1]),
    }
    for message, broken in cases.items():
        (folder / "physics.md").write_text(broken, encoding="utf-8")
        found = docs.contract_problems(a)
        assert found and message in found[0].message, (message, found)
        assert text.splitlines()[found[0].line - 1].startswith("| `") or message.startswith("graded")
