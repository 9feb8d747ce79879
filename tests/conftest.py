"""Test distribution over the two cores (pytest-xdist, `--dist loadgroup` in pyproject.toml).

Each test module stays on one worker, so its module-scoped fixtures (a graded class, a built
release) are built once; a module parametrized over labs with a `lab` fixture (the three-door runs,
about a minute per lab) is split by lab, so the slowest file does not serialise on one worker.
"""
from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    for item in items:
        group = item.nodeid.split("::")[0]
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "lab" in callspec.params:
            group += f"[{callspec.params['lab']}]"
        item.add_marker(pytest.mark.xdist_group(group))
