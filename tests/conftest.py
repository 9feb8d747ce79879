"""Shared test setup: hypothesis settings, the gradebook check, and the distribution of tests over
the two cores (pytest-xdist, `--dist loadgroup` in pyproject.toml).

Each test module stays on one worker, so its module-scoped fixtures (a graded class, a built
release) are built once; a module parametrized over labs with a `lab` fixture (the three-door runs,
about a minute per lab) is split by lab, so the slowest file does not serialise on one worker;
modules that read one session fixture form one group (SHARED_SESSION_FIXTURES), so it is built once.
"""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir


# Modules that read the same session fixture share a group, so that fixture is built on one worker
# only (each xdist worker is a process with its own session): the toy course with its class
# submitted and `nbgrader generate_assignment` run (tests/doors/conftest.py), and the toy release
# (tests/release/conftest.py `toy_root`, a `nbgrader generate_assignment` too).
SHARED_SESSION_FIXTURES = {
    "tests/doors/test_nbgrader_agreement.py": "tests/doors toy course",
    "tests/doors/test_otter_agreement.py": "tests/doors toy course",
    "tests/release/test_predictions_notebook.py": "tests/release toy release",
    "tests/release/test_release_leakscan.py": "tests/release toy release",
    "tests/release/test_release_pipeline.py": "tests/release toy release",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        group = item.nodeid.split("::")[0]
        group = SHARED_SESSION_FIXTURES.get(group, group)
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "lab" in callspec.params:
            group += f"[{callspec.params['lab']}]"
        item.add_marker(pytest.mark.xdist_group(group))


# Every hypothesis test in tests/ is reproducible and leaves no files: the same inputs on every run
# (derandomize), no example database (`.hypothesis/` in the working directory), and no verdict that
# depends on how busy the machine is (no deadline, no too-slow health check). Settings objects that
# test modules build (`FEW = settings(max_examples=40)`) inherit these, since this file loads first.
# The engine's own checks set their seed and database explicitly (autograder/engine/checks.py).
# Hypothesis also caches the constants it finds in source files under `<cwd>/.hypothesis/constants`,
# database or not: send that (and the CLI subprocesses' grading runs) to a temporary folder.
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="scalelabs-hypothesis-")
os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = _HYPOTHESIS_HOME
set_hypothesis_home_dir(_HYPOTHESIS_HOME)
settings.register_profile("scalelabs-tests", derandomize=True, database=None, deadline=None,
                          print_blob=False, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("scalelabs-tests")


def pytest_unconfigure(config):
    shutil.rmtree(_HYPOTHESIS_HOME, ignore_errors=True)


class GradebookCheck:
    """gradebook_matches_results(db_url, assignment, results_dir): the nbgrader gradebook holds, cell
    by cell, each student's per-item scores as summed from their results/<student>.json (computed
    here, not by the code under test), and no cell exceeds its item's points."""

    @staticmethod
    def per_item(results: dict, assignment) -> dict[str, float]:
        scores = {item: 0.0 for item in assignment.item_ids}
        for t in results["tests"]:
            scores[t["name"].split(":", 1)[0]] += float(t["score"])
        return scores

    def __call__(self, db_url: str, assignment, results_dir) -> None:
        import json
        from pathlib import Path

        from autograder.classroom.gradebook import read_gradebook

        points = {f.name: f.points for f in assignment.functions} | {q.id: q.points for q in assignment.questions}
        results = {p.stem: json.loads(p.read_text()) for p in Path(results_dir).glob("*.json")}
        book = read_gradebook(db_url, assignment.id)
        assert results and sorted(book) == sorted(results)
        for student, data in results.items():
            assert book[student] == pytest.approx(self.per_item(data, assignment), abs=1e-6), student
            assert all(book[student][item] <= points[item] + 1e-9 for item in points), (student, book[student])


@pytest.fixture
def gradebook_matches_results():
    return GradebookCheck()
