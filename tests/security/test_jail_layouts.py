"""The bubblewrap jail holds wherever Python and scalelabs live (issue 26): it binds what the worker
needs (the interpreter, its stdlib, the libraries the loader maps, numpy), not /usr. On Debian's own
Python (a venv of /usr/bin/python3, whose stdlib has no site-packages to hide) the sample class gets
its declared scores; with scalelabs under /usr (a clone in /usr/local/src, or pip-installed with a
prefix under /usr/local) a module that imports the reference gets nothing and its honest classmate
keeps full marks. A jail that would show a secret, or cannot start Python, is the grader's fault:
grading refuses in one line naming the cause and the fix, and no student is scored."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import toy
from attack import FULL, REPO, UNHOOK, honest
from debian_venv import debian_venv
from sample_class import grade_sample_class
from autograder.classroom import samples
from autograder.engine.config import GradingConfig
from autograder.engine.grade import grade_submission
from autograder.engine.sandbox import SandboxUnavailable, bwrap_available, client, jail

pytestmark = pytest.mark.skipif(not bwrap_available(), reason="no usable bwrap")
LAB = "lab06_collectives"


def _cli(python: str, *args, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-c", "from autograder.cli import main; main()", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, env=env, timeout=900)


def test_a_debian_system_python_venv_grades_the_sample_class_as_declared(tmp_path):
    """The jail binds Debian's stdlib (/usr/lib/python3.11, no site-packages inside) and its libraries:
    before, a tmpfs over the missing site-packages killed every worker and the correct module scored 6/29."""
    python = debian_venv(tmp_path / "venv")
    if python is None:
        pytest.skip("no Debian /usr/bin/python3 of this Python version")
    assert subprocess.run([python, "-c", "import sys; assert sys.base_prefix == '/usr'"]).returncode == 0
    grade_sample_class(python, LAB, tmp_path, "bubblewrap")


THIEF = '''
def _steal():
    import sys
    sys.path.insert(0, {copy!r})
    from reference import collectives as ref
    return ref
try:
    _ref = _steal()
    STOLEN = "imported"
except BaseException as exc:
    _ref, STOLEN = None, "denied:" + type(exc).__name__
def comm_fraction(comm_s, compute_s):
    return _ref.comm_fraction(comm_s, compute_s) if _ref else 0.0
'''


def _usr_layout(layout: str, where: Path) -> Path:
    """scalelabs under /usr at `where`: a clone (its packages there), or `pip install --prefix` of one
    (its packages in the prefix's site-packages). The folder the grader imports them from."""
    clone = where / "clone" if layout == "prefix" else where
    clone.mkdir(parents=True)
    for name in ("autograder", "labs", "reference", "pyproject.toml"):
        (shutil.copytree if (REPO / name).is_dir() else shutil.copy2)(REPO / name, clone / name)
    if layout == "clone":
        return clone
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    # --ignore-installed: without it pip first uninstalls the environment's own scalelabs (the editable install)
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed",
                           "--prefix", where / "prefix", clone],
                          capture_output=True, text=True, env=env, timeout=600)   # built as tests/test_install.py builds
    assert done.returncode == 0, done.stderr[-3000:]
    shutil.rmtree(clone)
    [found] = (where / "prefix").glob("lib/python3*/*-packages")
    return found


@pytest.mark.parametrize("layout", ["clone", "prefix"])
def test_scalelabs_under_usr_stays_out_of_the_jails_reach(tmp_path, layout):
    """A clone in /usr/local/src, or a root `pip install --prefix` under /usr/local: the grader runs
    from it, and a module that imports its reference (the hook cleared) earned 23/29 when the jail bound
    all of /usr. Now it earns no function point; the honest classmate keeps full marks."""
    parent = Path("/usr/local/src" if layout == "clone" else "/usr/local")
    if not os.access(parent, os.W_OK):
        pytest.skip(f"{parent} is not writable")
    where = parent / f"scalelabs-jail-test-{os.getpid()}"
    try:
        packages = _usr_layout(layout, where)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(packages), str(Path(toy.__file__).parent)]))
        imported = subprocess.run([sys.executable, "-c", "import autograder, reference; "
                                   "print(autograder.__file__); print(reference.__file__)"],
                                  env=env, cwd=tmp_path, capture_output=True, text=True).stdout.split()
        assert len(imported) == 2 and all(f.startswith(str(packages) + "/") for f in imported), imported
        root = tmp_path / "class"
        honest(root)
        toy.make_submission(root / "mallory", UNHOOK + THIEF.format(copy=str(packages)), toy.key)
        proc = _cli(sys.executable, "grade-batch", "toy:ASSIGNMENT", root, "--jobs", "1", "--out", tmp_path / "out",
                    "--no-course", cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        results = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "out" / "results").glob("*.json")}
        assert results["honest"]["score"] == FULL
        functions = [t for t in results["mallory"]["tests"] if t["name"].startswith("comm_fraction")]
        assert functions and sum(t["score"] for t in functions) == 0, functions
    finally:
        shutil.rmtree(where, ignore_errors=True)


@pytest.fixture
def fresh_check(monkeypatch):
    """check_jail forgets what it checked in this process, and the runtime's mounts are recomputed."""
    monkeypatch.setattr(client, "_checked", set())
    real = jail.runtime_mounts()
    return real


def test_a_jail_that_cannot_start_refuses_with_one_line_and_scores_nobody(tmp_path, monkeypatch, fresh_check):
    """The old Debian failure, forced here: a tmpfs over a folder that is not in the read-only stdlib.
    bwrap cannot start; scalelabs grade and grade-batch refuse in one line naming bwrap's reason and
    the fix, and nothing is scored or written."""
    broken = jail.Mounts(fresh_check.binds, fresh_check.links,
                         (*fresh_check.hidden, os.path.join(client.python_paths()[2], "no-such-packages")))
    monkeypatch.setattr(jail, "runtime_mounts", lambda: broken)
    folder = honest(tmp_path / "class")
    with pytest.raises(SandboxUnavailable) as refused:
        grade_submission(toy.ASSIGNMENT, folder, "honest", config=GradingConfig())
    message = str(refused.value)
    assert "\n" not in message and "grading refuses" in message and "Fix:" in message, message
    assert "no-such-packages" in message, message          # bwrap's own reason
    from autograder.classroom.batch import grade_batch
    monkeypatch.setattr(client, "_checked", set())
    with pytest.raises(SandboxUnavailable):
        grade_batch("toy:ASSIGNMENT", tmp_path / "class", tmp_path / "out", jobs=1)
    assert not (tmp_path / "out" / "results").exists() or not list((tmp_path / "out" / "results").iterdir())


def test_the_otter_door_fails_the_run_rather_than_score_in_a_jail_that_cannot_start(tmp_path, monkeypatch, fresh_check):
    """On Gradescope a jail that cannot start must not become a results.json of zeros: the plugin lets
    SandboxUnavailable end `otter run` (the staff see a failed autograder), with the one line; nothing
    is graded or written for the student."""
    from autograder.doors import otter as otter_door
    broken = jail.Mounts(fresh_check.binds, fresh_check.links,
                         (*fresh_check.hidden, os.path.join(client.python_paths()[2], "no-such-packages")))
    monkeypatch.setattr(jail, "runtime_mounts", lambda: broken)
    folder = samples.materialise(LAB, "correct", tmp_path / "submission")
    config = otter_door.otter_config(LAB)["plugins"][0][otter_door.PLUGIN]
    plugin = otter_door.EngineOverride(str(folder / f"{LAB}.ipynb"), {}, config)
    with pytest.raises(SandboxUnavailable) as refused:
        plugin.before_grading(None)
    assert "\n" not in str(refused.value) and "Fix:" in str(refused.value), refused.value
    assert plugin.result is None and not plugin.error


def test_a_worker_that_dies_before_it_is_ready_is_the_graders_fault(tmp_path, monkeypatch):
    """Past the start check, a jail whose Python dies before its ready line (nothing of the student's
    has run) raises SandboxUnavailable: no Result, never a student's 0 for the grader's failure."""
    real_command = client.Sandbox._command

    def dying(self, seccomp_fd=None):
        cmd, paths = real_command(self, seccomp_fd)
        return cmd[:-1] + ["-c", "import os; os._exit(3)"], paths   # the worker script replaced
    monkeypatch.setattr(client.Sandbox, "_command", dying)
    monkeypatch.setattr(client, "check_jail", lambda *a, **k: None)
    with pytest.raises(SandboxUnavailable, match="grader's fault"):
        grade_submission(toy.ASSIGNMENT, honest(tmp_path / "class"), "honest", config=GradingConfig())


def test_the_start_check_sees_a_secret_the_binds_would_show(tmp_path, monkeypatch, fresh_check):
    """The jail binds a folder holding a course's reference (as binding /usr bound a clone in
    /usr/local/src; outside /tmp, which the jail's own tmpfs covers): the check against the binds
    refuses, naming the path; with that check blinded, the probe inside the real jail finds the
    reference readable and refuses too. No student is graded in such a jail."""
    course = Path(tempfile.mkdtemp(prefix="scalelabs-jail-test-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    try:
        (course / "reference").mkdir()
        (course / "reference" / "collectives.py").write_text("SOLUTION = 1\n")
        exposed = jail.Mounts((*fresh_check.binds, str(course)), fresh_check.links, fresh_check.hidden)
        monkeypatch.setattr(jail, "runtime_mounts", lambda: exposed)
        folder = honest(tmp_path / "class")
        secret = [course / "reference"]
        with pytest.raises(SandboxUnavailable, match="would let student code read") as refused:
            grade_submission(toy.ASSIGNMENT, folder, "honest", config=GradingConfig(), secrets=secret)
        assert "\n" not in str(refused.value) and "Fix:" in str(refused.value)
        monkeypatch.setattr(client, "seen_through", lambda path: None)
        with pytest.raises(SandboxUnavailable, match="shows student code what it must not") as refused:
            grade_submission(toy.ASSIGNMENT, folder, "honest", config=GradingConfig(), secrets=secret)
        assert f"{course / 'reference'} can be read" in str(refused.value) and "Fix:" in str(refused.value)
    finally:
        shutil.rmtree(course, ignore_errors=True)


def test_the_jail_holds_only_what_the_worker_needs():
    """No /usr wholesale: the runtime's binds are the interpreter, its stdlib, the files the loader
    maps and the loader's cache; every package folder inside them is hidden; the grader's site
    folders, the course and the package are seen through none of them."""
    mounts = jail.runtime_mounts()
    exe, _, stdlib = client.python_paths()
    assert "/usr" not in mounts.binds and "/" not in mounts.binds
    assert exe in mounts.binds and stdlib in mounts.binds
    folders = [b for b in mounts.binds if os.path.isdir(b)]
    assert folders == [stdlib], folders
    for path in (*client.site_dirs(), *client.course_secrets()):
        assert jail.seen_through(path) is None, path


@pytest.mark.parametrize("mode", ["bubblewrap", "user"])
def test_the_start_check_is_not_held_to_the_courses_per_call_limit(mode, fresh_check):
    """The start check's calls (what the jail can read, numpy's import) are the grader's own work. Before:
    they ran under the course's call_timeout_s, so a course with a short limit (0.5 s) on a loaded machine
    had numpy's import time out in the probe and the whole class refused ("numpy_version did not finish")."""
    if mode == "bubblewrap" and not client.bwrap_available():
        pytest.skip("bubblewrap is not installed")
    if mode == "user" and os.geteuid() != 0:
        pytest.skip("the user mode needs root")
    client.check_jail(GradingConfig(call_timeout_s=0.001), mode=mode)   # no SandboxUnavailable
