"""The mutation check (bench/mutate.py) stays runnable: every break still applies to the code it
names and every test it names still exists, so moving or rewriting code cannot silently retire a break."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("mutate", REPO / "bench" / "mutate.py")
mutate = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("mutate", mutate)   # dataclasses look their module up while the class is built
_spec.loader.exec_module(mutate)


@pytest.mark.parametrize("m", mutate.MUTATIONS, ids=lambda m: m.id)
def test_break_applies_and_its_tests_exist(m):
    text = (REPO / m.file).read_text(encoding="utf-8")
    assert text.count(m.old) == 1, f"{m.id}: the snippet to break is not in {m.file} exactly once"
    assert m.new != m.old
    paths = [a.split("::")[0] for a in m.tests if a.startswith("tests/")]
    assert paths, f"{m.id} names no test file"
    missing = [p for p in paths if not (REPO / p).exists()]
    assert not missing, f"{m.id}: {missing} do not exist"


def test_the_list_is_wide():
    assert len(mutate.MUTATIONS) >= 15
    assert len({m.id for m in mutate.MUTATIONS}) == len(mutate.MUTATIONS)
    touched = {m.file.split("/")[1] if m.file.startswith("autograder/") else m.file.split("/")[0]
               for m in mutate.MUTATIONS}
    assert {"engine", "doors", "build", "classroom", "reference"} <= touched, touched
