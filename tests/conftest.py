"""Shared test setup: hypothesis settings, the gradebook check, and the distribution of tests over
the two cores (pytest-xdist, `--dist loadgroup` in pyproject.toml).

Each test module is one xdist group, so its module-scoped fixtures (a graded class, a built release)
are built once, on one worker; a module whose module-scoped fixture is parametrized over labs (the
three-door runs, about a minute per lab) is split by that parameter, so the slowest file does not
serialise on one worker; modules that read one session fixture form one group
(SHARED_SESSION_FIXTURES), so it is built once. The groups start slowest first (SLOWEST_FIRST), so
the two workers finish near together instead of one running a minute-long group alone at the end.
"""
from __future__ import annotations

import os
import re
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
    "tests/doors/test_gradescope_identity.py": "tests/doors toy course",
    "tests/doors/test_otter_try.py": "tests/doors toy course",
    "tests/doors/test_deadline_attacks.py": "tests/doors toy course",
    "tests/release/test_predictions_notebook.py": "tests/release toy release",
    "tests/release/test_release_leakscan.py": "tests/release toy release",
    "tests/release/test_release_pipeline.py": "tests/release toy release",
}


# Modules whose module-scoped fixture is parametrized over labs: one group per lab, named by the lab
# in the test's id (tests/test_hygiene.py checks this list against the modules' fixtures).
_LAB_ID = re.compile(r"\blab\d\d_[a-z]+")
# module -> the part of a test id that names its module fixture's parameter: one group per value
SPLIT_BY_PARAM = {
    "tests/doors/test_door_labs.py": _LAB_ID, "tests/labs/test_labs.py": _LAB_ID,
    "tests/release/test_public_checks.py": _LAB_ID,
    # the user sandbox's three settings (host, container, container without Landlock)
    "tests/security/test_user_sandbox.py": re.compile(r"\bcontainer without Landlock|\bcontainer|\bhost\b"),
}

# The groups that take longest (seconds of one worker; the tail of every CI log lists the slowest
# tests), dispatched first in this order; every other group follows in collection order. xdist's
# default would send the groups with most tests first: these have few tests each, so they would start
# last and one worker would run them alone. A name is a group or, for a module split by lab, the
# module (all its groups). Only groups that take a large share of the run. Seconds of one worker in
# a whole run (2026-11-23, load 2-4; in brackets load 2-6): ~100 (135), 30-46 a lab (55-84), 33 (70),
# 42 (72), 30 (52), 30 (60), 5-14 a lab (10-35). The grader's install (pip's resolver, two at once) is
# mostly waiting on the package index: 60-140 s of wall, ~30 s of CPU, so it starts first.
SLOWEST_FIRST = (
    "tests/test_persona_pages.py",
    "tests/test_grader_install.py",
    "tests/browser/test_notebooks_in_browser.py",
    "tests/doors/test_door_labs.py",
    "tests/doors toy course",
    "tests/test_course_week.py",
    "tests/engine/test_grade_of_record.py",
    "tests/security/test_door_otter.py",
    "tests/security/test_user_sandbox.py",
    "tests/security/test_feedback_policy.py",
    # a class graded whole and as four shard processes, merged; Lab 06's sample class through PrairieLearn's
    # grader, eight jobs (the cluster lane, issue 39)
    "tests/engine/test_shards.py",
    "tests/doors/test_prairielearn.py",
    "tests/labs/test_misconceptions.py",
    "tests/labs/test_labs.py",
)


def xdist_group(nodeid: str) -> str:
    """The test's group: its module (or SHARED_SESSION_FIXTURES' name for it), and for a module in
    SPLIT_BY_PARAM the parameter its id names (`tests/doors/test_door_labs.py lab06_collectives`)."""
    module = nodeid.split("::")[0]
    group = SHARED_SESSION_FIXTURES.get(module, module)
    if module in SPLIT_BY_PARAM and "[" in nodeid:
        value = SPLIT_BY_PARAM[module].search(nodeid[nodeid.index("[", len(module)):])
        if value:
            group += f" {value.group()}"
    return group


def _rank(group: str) -> int:
    return next((i for i, name in enumerate(SLOWEST_FIRST) if group == name or group.startswith(name + " ")),
                len(SLOWEST_FIRST))


def pytest_collection_modifyitems(config, items):
    # slowest groups first (stable: otherwise collection order); xdist dispatches groups in the
    # order their first test comes in the collection (GroupScheduling)
    items.sort(key=lambda item: _rank(xdist_group(item.nodeid)))


# pytest-xdist's own `--dist loadgroup` reads a group from an `@group` suffix that its worker writes
# into each node id; pytest 9.2 keeps node ids elsewhere, so the suffix never appears and every test
# was dispatched on its own (pytest-dev/pytest-xdist#1386): each module fixture was built again on
# whichever worker ran the next test. This scheduler takes the group from xdist_group(node id) instead.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        """xdist's scope scheduler (a group runs on one worker, in collection order), groups from
        xdist_group, dispatched in collection order (not re-sorted by their number of tests)."""

        def __init__(self, config, log=None):
            super().__init__(config, log)
            config.option.loadscopereorder = False

        def _split_scope(self, nodeid: str) -> str:
            return xdist_group(nodeid)

    return GroupScheduling(config, log)


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

# Every command a test starts (scalelabs grade, grade-batch, otter, nbgrader autograde) grades under one
# course secret of the tests' own, whatever a developer's checkout holds in .scalelabs/ (a `scalelabs
# release` there makes one): the same hidden inputs in every copy, on every worker. Tests of the secret
# itself choose theirs (autograder/engine/secret.py).
TEST_COURSE_SECRET = "5ca1ab1e" * 8
_TEST_SECRET_FILE = os.path.join(_HYPOTHESIS_HOME, "course_secret")
with open(_TEST_SECRET_FILE, "w") as _f:
    _f.write(TEST_COURSE_SECRET + "\n")
os.environ["SCALELABS_COURSE_SECRET_FILE"] = _TEST_SECRET_FILE


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
