"""What the worker can see: under bubblewrap, not the repo, reference/ or site-packages beyond numpy.
Without bwrap the fallback still grades, and the output says so."""
import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

import toy
from autograder.engine.config import GradingConfig
from autograder.engine.grade import grade_submission
from autograder.engine.sandbox import Sandbox, StudentError, bwrap_available
from autograder.engine.sandbox.roots import ROOT_PREFIX, sweep_stale_roots

REPO = Path(toy.REFERENCE_DIR).parent
PROBE = f"""
import os, sys
def probe():
    return [os.path.exists({str(REPO)!r}), os.path.exists({str(REPO / 'reference')!r}),
            os.path.exists({str(REPO / 'autograder')!r}), os.path.exists('/work'),
            any('site-packages' in p for p in sys.path), os.getcwd()]
def numpy_ok():
    import numpy as np
    return float(np.sqrt(np.float64(4.0)))
def hypothesis_visible():
    import hypothesis
    return True
def write_tmp():
    with open('/tmp/scratch.txt', 'w') as f:
        f.write('ok')
    return open('/tmp/scratch.txt').read()
def write_submission():
    open('/sandbox/submission/x.py', 'w').write('x = 1')
    return True
"""


@pytest.fixture
def probe_dir(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    return tmp_path


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not usable here")
def test_bubblewrap_hides_repo_reference_and_site_packages(probe_dir):
    with Sandbox(probe_dir, "probe", GradingConfig(), mode="bubblewrap") as sb:
        sb.load()
        assert sb.mode == "bubblewrap"
        assert sb.call("probe", {}) == [False, False, False, False, False, "/tmp"]
        assert sb.call("numpy_ok", {}) == 2.0
        with pytest.raises(StudentError, match="No module named 'hypothesis'"):
            sb.call("hypothesis_visible", {})
        assert sb.call("write_tmp", {}) == "ok"
        with pytest.raises(StudentError, match="does not allow writing"):
            sb.call("write_submission", {})
    assert not Path("/tmp/scratch.txt").exists() or Path("/tmp/scratch.txt").read_text() != "ok"


def test_fallback_subprocess_still_isolates_imports(probe_dir):
    with Sandbox(probe_dir, "probe", GradingConfig(), mode="unsandboxed") as sb:
        sb.load()
        assert sb.mode == "unsandboxed"
        assert sb.call("numpy_ok", {}) == 2.0
        with pytest.raises(StudentError, match="No module named 'hypothesis'"):
            sb.call("hypothesis_visible", {})
        assert sb.call("probe", {})[4] is False  # no site-packages on sys.path


def test_fallback_grades_and_says_so(tmp_path):
    folder = toy.make_submission(tmp_path / "s", toy.reference_source(), toy.key)
    result = grade_submission(toy.ASSIGNMENT, folder, "alice", sandbox="unsandboxed")
    assert result.score == result.max_score
    assert "UNSANDBOXED" in result.to_gradescope()["output"]


def test_symlink_to_reference_is_not_followed(tmp_path):
    folder = toy.make_submission(tmp_path / "s", toy.reference_source().replace(
        "from _domain import", "from leak import *\nfrom _domain import"), toy.key)
    (folder / "leak.py").symlink_to(REPO / "reference" / "collectives.py")
    result = grade_submission(toy.ASSIGNMENT, folder, "alice")
    assert all("No module named 'leak'" in t.output for t in result.tests if t.item != "act1_prediction")


def test_values_cross_as_json_only(probe_dir):
    (probe_dir / "probe.py").write_text("import numpy as np\n"
                                        "def many():\n    return [np.float32(0.5), np.int64(3), True, None, 'ring', (1, 2.5)]\n"
                                        "def obj():\n    return object()\n")
    with Sandbox(probe_dir, "probe", GradingConfig()) as sb:
        sb.load()
        assert json.dumps(sb.call("many", {})) == json.dumps([0.5, 3, True, None, "ring", [1, 2.5]])
        with pytest.raises(StudentError, match="returned a object"):
            sb.call("obj", {})


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not usable here")
def test_a_jail_started_ahead_grades_the_submission_copied_in_later_like_a_fresh_one(tmp_path, probe_dir):
    """grade-batch starts the next student's jail while it grades this one (Sandbox.ahead): the
    submission is copied in after the jail started, behind the same boundary, graded the same."""
    config = GradingConfig()
    with Sandbox.ahead("probe", config) as sb:
        assert sb.alive and not any((sb.root / "submission").iterdir())   # started with nothing of the student's
        started = sb.proc.pid
        sb.take(probe_dir)
        sb.load()
        assert sb.proc.pid == started                                       # that jail, not a new one
        assert sb.call("probe", {}) == [False, False, False, False, False, "/tmp"]
        with pytest.raises(StudentError, match="does not allow writing"):
            sb.call("write_submission", {})
        with pytest.raises(ValueError, match="already holds a submission"):
            sb.take(probe_dir)
    folder = toy.make_submission(tmp_path / "s", toy.reference_source(), toy.WRONG_LETTER, recorded=False)
    fresh = grade_submission(toy.ASSIGNMENT, folder, "alice", config=config)
    ahead = grade_submission(toy.ASSIGNMENT, folder, "alice", config=config,
                             ahead=Sandbox.ahead(toy.ASSIGNMENT.module, config))
    assert ahead.to_gradescope() == fresh.to_gradescope() and 0 < fresh.score < fresh.max_score


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not usable here")
def test_a_jail_started_ahead_that_died_or_does_not_fit_is_not_used(tmp_path):
    config = GradingConfig()
    folder = toy.make_submission(tmp_path / "s", toy.reference_source(), toy.key)
    dead = Sandbox.ahead(toy.ASSIGNMENT.module, config)
    dead.proc.kill()
    dead.proc.wait()
    assert grade_submission(toy.ASSIGNMENT, folder, "alice", config=config, ahead=dead).score == toy.ASSIGNMENT.total_points
    other = Sandbox.ahead("not_the_module", config)
    result = grade_submission(toy.ASSIGNMENT, folder, "alice", config=config, ahead=other)
    assert result.score == toy.ASSIGNMENT.total_points and other.root is None and not other.alive   # closed, unused


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not usable here")
def test_a_jail_started_beside_the_start_check_gets_no_submission_where_the_check_refuses(probe_dir, monkeypatch):
    """A single `scalelabs grade` boots its jail beside the start check's probe jail (Sandbox.ahead,
    checked=False): where the check refuses, grading refuses before anything of the student's reaches it."""
    from autograder.engine.sandbox import SandboxUnavailable, client

    def refusing(config, secrets, mode, key):
        raise SandboxUnavailable("the bubblewrap sandbox shows student code what it must not")
    monkeypatch.setattr(client, "_checked", set())
    monkeypatch.setattr(client, "_probe_jail", refusing)
    with Sandbox.ahead("probe", GradingConfig(), checked=False) as sb:
        assert sb.alive                                        # started without waiting for the check
        with pytest.raises(SandboxUnavailable, match="shows student code what it must not"):
            sb.take(probe_dir)
        assert not any((sb.root / "submission").iterdir())     # nothing of the submission was copied in


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not usable here")
def test_a_jail_started_ahead_refuses_a_secret_its_binds_would_show_as_a_fresh_one_does(tmp_path):
    """The grader's further secrets (the course secret's file, Gradescope's metadata) are checked against
    the jail's binds whether the jail was started fresh or ahead (a batch, a single grade)."""
    import os as os_module

    from autograder.engine.sandbox import SandboxUnavailable

    config = GradingConfig()
    folder = toy.make_submission(tmp_path / "s", toy.reference_source(), toy.key)
    bound = Path(os_module.__file__)        # in the standard library, which the jail binds read-only
    for ahead in (None, Sandbox.ahead(toy.ASSIGNMENT.module, config, checked=False)):
        with pytest.raises(SandboxUnavailable, match="would let student code read"):
            grade_submission(toy.ASSIGNMENT, folder, "alice", config=config, secrets=[bound], ahead=ahead)
        if ahead is not None:
            assert ahead.root is None or not any((ahead.root / "submission").iterdir())


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap not usable here")
def test_a_jail_started_ahead_goes_when_grading_fails_before_using_it(tmp_path, monkeypatch):
    from autograder.engine import grade

    def unreadable(*args, **kwargs):
        raise RuntimeError("the grader's own fault")
    monkeypatch.setattr(grade, "read_submission", unreadable)
    ahead = Sandbox.ahead(toy.ASSIGNMENT.module, GradingConfig(), checked=False)
    root = ahead.root
    with pytest.raises(RuntimeError, match="own fault"):
        grade_submission(toy.ASSIGNMENT, tmp_path, "alice", config=GradingConfig(), ahead=ahead)
    assert not ahead.alive and not root.exists()        # its worker stopped and its folder removed now


def test_jail_folders_a_killed_grader_left_are_swept_and_no_live_ones(tmp_path):
    """A grader killed with -9 leaves its jail folders (copies of students' submissions) in /tmp; the
    next grader removes those whose grader is gone and that are over an hour old, nothing else."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    hours_ago = 946_684_800     # 2000-01-01: older than the sweep's hour whenever the test runs
    stale = tmp_path / f"{ROOT_PREFIX}{dead.pid}-k9"
    (stale / "submission").mkdir(parents=True)
    (stale / "submission" / "collectives.py").write_text("def f(): pass\n")
    fresh = tmp_path / f"{ROOT_PREFIX}{dead.pid}-fresh"       # its grader gone, but maybe another namespace's
    live = tmp_path / f"{ROOT_PREFIX}{os.getpid()}-live"      # this process: still grading
    unrelated = tmp_path / "scalelabs-sandbox-notapid"
    for folder in (fresh, live, unrelated):
        folder.mkdir()
    for folder in (stale, live, unrelated):
        os.utime(folder, (hours_ago, hours_ago))
    assert sweep_stale_roots(tmp_path) == [stale]
    assert not stale.exists() and fresh.exists() and live.exists() and unrelated.exists()
    with Sandbox(tmp_path, "probe", GradingConfig(), mode="unsandboxed") as sb:
        sb._make_root()
        assert sb.root.name.startswith(f"{ROOT_PREFIX}{os.getpid()}-")   # the pid the sweep reads


def test_a_jail_that_cannot_start_ahead_leaves_nothing_and_the_batch_grades_without_it(tmp_path, monkeypatch):
    from autograder.classroom import batch

    def no_bwrap(self):
        raise OSError("bwrap vanished")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(Sandbox, "_spawn", no_bwrap)
    monkeypatch.setattr("autograder.engine.sandbox.client.bwrap_available", lambda *a: "/usr/bin/bwrap")
    with pytest.raises(OSError, match="bwrap vanished"):
        Sandbox.ahead("probe", GradingConfig())
    assert list(tmp_path.iterdir()) == []                      # its folder removed
    monkeypatch.setattr(batch, "_assignment", toy.ASSIGNMENT)
    monkeypatch.setattr(batch, "_config", GradingConfig())
    monkeypatch.setattr(batch, "_mode", "bubblewrap")
    batch._start_ahead()
    assert batch._ahead is None                                # the student's grading starts its own jail


SIGNATURES = '''
import functools
def plain(message_bytes, n, alpha_s=0.0, bandwidth=1e9): return 0.0
def shapes(a, /, b, c=1, *rest, d, e=2, **extra): x = 1; return x
def nothing(): pass
def only_rest(*args, **kwargs): pass
@functools.lru_cache
def cached(message_bytes, n): return 0.0
@functools.wraps(plain)
def wrapper(*args, **kwargs): return plain(*args, **kwargs)
class Callable:
    def __call__(self, u, v): return 0.0
instance = Callable()
partial = functools.partial(plain, 1.0)
builtin = len
lam = lambda m, k=2: m
'''


def test_the_worker_reads_parameters_as_inspect_does_without_importing_it_to_start():
    """A jail starts without `inspect` (a third of its start-up); the parameters of any function,
    plain, wrapped, partial, builtin or a callable object, are still inspect.signature's."""
    import inspect
    import importlib.util

    worker_path = Path(toy.REFERENCE_DIR).parent / "autograder" / "engine" / "sandbox" / "worker.py"
    spec = importlib.util.spec_from_file_location("scalelabs_worker_under_test", worker_path)
    worker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(worker)
    namespace: dict = {}
    exec(SIGNATURES, namespace)
    for name in ("plain", "shapes", "nothing", "only_rest", "cached", "wrapper", "instance", "partial",
                 "builtin", "lam"):
        fn = namespace[name]
        assert worker.parameters(fn) == [[p.name, p.kind.name] for p in inspect.signature(fn).parameters.values()], name
    started = subprocess.run([os.path.realpath(os.sys.executable), "-I", "-S", "-c",
                              f"import runpy, sys; runpy.run_path({str(worker_path)!r}); print('inspect' in sys.modules)"],
                             capture_output=True, text=True, check=True)
    assert started.stdout.strip() == "False"
