"""The suite's own rules: hypothesis runs are reproducible and write no files, no verdict reads the
clock, and no test is without a check that can fail (issue 17)."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from hypothesis import given, settings, strategies as st
from hypothesis.configuration import storage_directory

TESTS = Path(__file__).parent
REPO = TESTS.parent
# calls that cannot fail a test: formatting and printing
PURE = {"print", "disabled", "len", "str", "join", "format", "range", "items", "sorted", "list", "dict",
        "enumerate", "zip", "repr"}
CLOCKS = {"time", "monotonic", "perf_counter", "monotonic_ns", "perf_counter_ns", "time_ns"}


def _test_sources():
    return [(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(TESTS.rglob("*.py"))
            if "impls" not in p.parts]


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def test_hypothesis_profile_makes_every_run_reproducible_and_fileless():
    assert settings.default.derandomize is True
    assert settings.default.database is None
    assert settings.default.deadline is None


def test_a_property_draws_the_same_inputs_twice_and_writes_nothing_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runs = []
    for _ in range(2):
        drawn = []

        @settings(max_examples=20)  # as the test modules write it: everything else from the profile
        @given(st.floats(0, 1e12), st.integers(1, 4096))
        def body(x, n):
            drawn.append((x, n))
        body()
        runs.append(drawn)
    assert runs[0] == runs[1] and len(set(runs[0])) > 1
    assert list(tmp_path.iterdir()) == []
    # hypothesis's own cache (constants found in source files) goes to a temporary folder, also for
    # the CLI subprocesses the tests start
    home = storage_directory("constants", intent_to_write=False).path.resolve()
    assert not home.is_relative_to(REPO) and not home.is_relative_to(tmp_path)
    assert Path(os.environ["HYPOTHESIS_STORAGE_DIRECTORY"]).resolve() == home.parent


def test_no_test_overrides_the_profile_or_reads_the_clock():
    found = []
    for path, tree in _test_sources():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            if name == "settings":
                for kw in node.keywords:
                    value = kw.value.value if isinstance(kw.value, ast.Constant) else kw.value
                    if (kw.arg == "derandomize" and value is not True) or (kw.arg in ("database", "deadline")
                                                                           and value is not None):
                        found.append(f"{path}:{node.lineno}: settings({kw.arg}=...)")
            if name in ("seed", "register_profile", "load_profile") and path.name != "conftest.py":
                found.append(f"{path}:{node.lineno}: {name}(...)")
            if name in CLOCKS and isinstance(node.func, ast.Attribute) and getattr(node.func.value, "id", "") == "time":
                found.append(f"{path}:{node.lineno}: time.{name}() in a test")
    assert not found, found


def test_every_test_function_can_fail():
    """A test must hold an assert, a pytest.raises, or call something (a check, a helper that
    asserts); a test that only prints or only assigns is a report, not a test."""
    idle = []
    for path, tree in _test_sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                checks = [n for n in ast.walk(node) if isinstance(n, ast.Assert)
                          or (isinstance(n, ast.Call) and _call_name(n) not in PURE)]
                if not checks:
                    idle.append(f"{path}:{node.lineno}: {node.name}")
    assert not idle, idle


def test_modules_grouped_for_a_shared_session_fixture_exist_and_use_it():
    """tests/conftest.py puts modules that read one session fixture on one xdist worker: a renamed
    module or one that stopped using the fixture would silently cost a second build or a bigger group."""
    conftest = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    SHARED_SESSION_FIXTURES = next(ast.literal_eval(node.value) for node in conftest.body if isinstance(node, ast.Assign)
                                   and getattr(node.targets[0], "id", "") == "SHARED_SESSION_FIXTURES")
    fixtures = {"tests/doors toy course": "course", "tests/release toy release": "toy_root"}
    assert set(SHARED_SESSION_FIXTURES.values()) == set(fixtures)
    for module, group in SHARED_SESSION_FIXTURES.items():
        tree = ast.parse((REPO / module).read_text(encoding="utf-8"))
        used = {a.arg for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) for a in f.args.args}
        assert fixtures[group] in used, (module, fixtures[group])


def _conftest(request):
    """tests/conftest.py as pytest loaded it (importing it again would make a second hypothesis home)."""
    return request.config.pluginmanager.get_plugin(str(TESTS / "conftest.py"))


def test_modules_split_by_lab_are_those_with_a_module_fixture_over_labs(request):
    """A module whose module-scoped fixture is parametrized is one xdist group per value (SPLIT_BY_PARAM:
    a lab, the user sandbox's setting), so its fixtures build on both workers; each group is named by the
    value in the test id."""
    conftest = _conftest(request)
    parametrized = set()
    for path, tree in _test_sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _call_name(node) == "fixture":
                keywords = {kw.arg: kw.value for kw in node.keywords}
                if "params" in keywords and getattr(keywords.get("scope"), "value", None) == "module":
                    parametrized.add(path.relative_to(REPO).as_posix())
    assert parametrized == set(conftest.SPLIT_BY_PARAM)
    group = conftest.xdist_group
    labs = "tests/doors/test_door_labs.py::test_lab_feedback_leaks_nothing"
    assert group(f"{labs}[lab06_collectives]") == "tests/doors/test_door_labs.py lab06_collectives"
    assert group(f"{labs}[lab06_collectives]") != group(f"{labs}[lab01_scale]")
    assert group("tests/labs/test_labs.py::test_x[wrong_a-lab02_interconnect]") == "tests/labs/test_labs.py lab02_interconnect"
    # elsewhere a lab in the id does not split the module (its module fixture covers every lab)
    assert group("tests/labs/test_misconceptions.py::test_x[wrong_a-lab01_scale]") == "tests/labs/test_misconceptions.py"
    assert group("tests/doors/test_otter_agreement.py::test_y[cy]") == group("tests/doors/test_nbgrader_agreement.py::t")
    sandbox = "tests/security/test_user_sandbox.py::test_z"
    assert group(f"{sandbox}[container without Landlock]") == "tests/security/test_user_sandbox.py container without Landlock"
    assert group(f"{sandbox}[container]") != group(f"{sandbox}[host]")
    for name in conftest.SLOWEST_FIRST:
        assert name in conftest.SHARED_SESSION_FIXTURES.values() or (REPO / name).is_file(), name


def _run_pytest(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:randomly", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_xdist_runs_each_group_on_one_worker_slowest_first(request):
    """Under the suite's own options (`-n 2 --dist loadgroup`) every test of a module runs on one
    worker (its module fixtures are built once), and the groups of SLOWEST_FIRST come first."""
    modules = ["tests/test_mutation_list.py", "tests/test_physics_contract.py"]
    ran = re.findall(r"^\[(gw\d)\] .*?(tests/\S+?\.py)::", _run_pytest("-v", *modules), re.M)
    workers = {module: {w for w, m in ran if m == module} for module in modules}
    assert all(len(ran_on) == 1 for ran_on in workers.values()) and len(ran) > 60, workers
    conftest = _conftest(request)
    ids = ["tests/test_physics_contract.py::a", "tests/doors/test_door_labs.py::b[lab01_scale]",
           "tests/test_course_week.py::c", "tests/test_physics_contract.py::d", "tests/browser/test_notebooks_in_browser.py::e"]
    items = [SimpleNamespace(nodeid=i) for i in ids]
    conftest.pytest_collection_modifyitems(request.config, items)
    assert [item.nodeid.split("::")[1][0] for item in items] == ["e", "b", "c", "a", "d"]
