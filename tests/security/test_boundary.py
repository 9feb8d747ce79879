"""The sandbox is a boundary, not the audit hook: with the hook's deny lists cleared (module globals
and closure cells), student code still cannot read the course files or a classmate's, write outside
its tmp, run /bin/sh as root, use the network or write past the caps -- under bubblewrap and in the
unprivileged-user mode (root without bwrap). Where neither can run, grading refuses."""
import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

import toy
from attack import FULL, REPO, UNHOOK, env_with_only, grade_class, grade_json, honest, outputs, run, TOY
from autograder.engine.config import GradingConfig
from autograder.engine.sandbox import Sandbox, bwrap_available
from autograder.engine.sandbox.modes import user_mode_problem

MODES = [pytest.param("bubblewrap", marks=pytest.mark.skipif(not bwrap_available(), reason="no usable bwrap")),
         pytest.param("user", marks=pytest.mark.skipif(user_mode_problem() is not None, reason="not root"))]
CONFIG = GradingConfig(call_timeout_s=20.0, import_timeout_s=10.0, tmp_mb=128)

PROBE = UNHOOK + '''
import os, sys, socket, subprocess

def _try(f):
    try:
        return f()
    except BaseException as exc:
        return "denied:" + type(exc).__name__

def read(path):
    return _try(lambda: open(path, "rb").read(40).decode("latin-1"))

def listdir(path):
    return _try(lambda: sorted(os.listdir(path))[:5])

def write(path):
    def go():
        with open(path, "w") as f:
            f.write("x")
        return "wrote"
    return _try(go)

def here():
    return sys.path[0]

def sh(command):
    return _try(lambda: subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, timeout=5).stdout.strip()[:200])

def ids():
    return [os.getuid(), os.geteuid(), os.getgid()]

def caps():
    return _try(lambda: [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0])

def net():
    def go():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(("1.1.1.1", 53))
        return "connected"
    return _try(go)

def fill(chunk_mb, chunks):
    """MB written to /tmp before the first failure (several files: the cap is on the total)."""
    written = 0
    block = b"x" * (1 << 20)
    for i in range(chunks):
        try:
            with open("/tmp/fill-%s-%d" % (TAG, i), "wb") as f:
                for _ in range(chunk_mb):
                    f.write(block)
                    f.flush()
                    written += 1
        except BaseException:
            return written
    return written

def big_file(mb):
    return fill(mb, 1)

def outside(files, mb):
    """MB held in memory outside the worker's limit (its address space and the capped /tmp), by
    place: tmpfs folders of the jail, memfd files, System V shared memory (filled, then detached)."""
    block = b"x" * (1 << 20)
    held = {}
    for place in ("/dev/shm", "/dev", "/", os.path.dirname(here())):
        held[place] = 0
        for i in range(files):
            try:
                with open(os.path.join(place, "held-%s-%d" % (TAG, i)), "wb") as f:
                    for _ in range(mb):
                        f.write(block)
                        held[place] += 1
            except BaseException:
                break
    held["memfd"] = 0
    for i in range(files):
        try:
            fd = os.memfd_create("held%d" % i)
            for _ in range(mb):
                os.write(fd, block)
                held["memfd"] += 1
        except BaseException:
            break
    held["sysv"] = 0
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        for i in range(files):
            segment = libc.shmget(0, mb << 20, 0o1600)
            if segment < 0:
                break
            address = libc.shmat(segment, None, 0)
            ctypes.memset(address, 1, mb << 20)
            libc.shmdt(ctypes.c_void_p(address))
            held["sysv"] += mb
    except BaseException:
        pass
    return sorted(held.items())

def own_tmpfs(mb):
    """MB written to a tmpfs mounted in a user and mount namespace of its own (uncounted memory)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(0x10000000 | 0x00020000) != 0:          # CLONE_NEWUSER | CLONE_NEWNS
        return "denied:unshare"
    try:
        open("/proc/self/setgroups", "w").write("deny")
        open("/proc/self/uid_map", "w").write("0 %d 1" % uid)
        open("/proc/self/gid_map", "w").write("0 %d 1" % gid)
        os.makedirs("/tmp/own", exist_ok=True)
    except OSError as exc:
        return "denied:" + type(exc).__name__
    if libc.mount(b"none", b"/tmp/own", b"tmpfs", 0, b"size=1g") != 0:
        return "denied:mount"
    return "held %d MB" % fill_in("/tmp/own", mb)

def fill_in(folder, mb):
    block = b"x" * (1 << 20)
    written = 0
    try:
        with open(os.path.join(folder, "held-" + TAG), "wb") as f:
            for _ in range(mb):
                f.write(block)
                written += 1
    except BaseException:
        pass
    return written

def multiply(n):
    """[processes, threads] started (each lives 2 s): beyond the worker, tasks escape its limits
    (memory and CPU are per process) and take host-wide pids."""
    import threading, time
    forked = started = 0
    for _ in range(n):
        try:
            if os.fork() == 0:
                time.sleep(2)
                os._exit(0)
            forked += 1
        except OSError:
            break
    threading.stack_size(32 << 10)
    for _ in range(n):
        try:
            threading.Thread(target=time.sleep, args=(2,), daemon=True).start()
            started += 1
        except RuntimeError:
            break
    return [forked, started]
'''


@pytest.fixture
def jail(tmp_path):
    """A sandbox per mode on a probe module, with a classmate and a results folder next to it."""
    classmate = honest(tmp_path / "class", "bob")
    sub = tmp_path / "class" / "mallory"
    sub.mkdir()
    tag = f"scalelabs-test-{uuid.uuid4().hex}"     # names what the probe writes: no run meets another's files
    (sub / "probe.py").write_text(PROBE + f"\nTAG = {tag!r}\n")
    results = tmp_path / "out" / "results"
    results.mkdir(parents=True)
    (results / "bob.json").write_text("{}")
    boxes = []

    def make(mode):
        box = Sandbox(sub, "probe", CONFIG, mode=mode, secrets=[tmp_path / "class"],
                      outputs=[tmp_path / "out", results])
        boxes.append(box)
        box.load()
        return box
    yield make, classmate, sub, results
    for box in boxes:
        box.close()
    for left in (*Path("/tmp").glob(f"*{tag}*"), *Path("/dev/shm").glob(f"*{tag}*")):   # a failing run's (user mode)
        left.unlink()


@pytest.mark.parametrize("mode", MODES)
def test_unhooked_student_code_stays_in_the_jail(jail, mode):
    make, classmate, sub, results = jail
    box = make(mode)
    call = box.call
    assert call("ids", {})[0] != 0 and call("ids", {})[1] != 0
    assert call("caps", {}) in ("0000000000000000",) or call("caps", {}).startswith("denied")
    if mode == "user":      # its Landlock rules keep it out of /proc: the grader reads the worker's own
        status = dict(line.split(":\t", 1) for line in Path(f"/proc/{box.proc.pid}/status").read_text().splitlines()
                      if line.startswith("Cap"))
        assert {key: value.strip() for key, value in status.items()} == {
            key: "0000000000000000" for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}, status
    secrets = [REPO / "reference" / "collectives.py", REPO / "labs" / "lab06_collectives" / "__init__.py",
               classmate / "collectives.py", sub / "probe.py", REPO / "scalelabs.toml", REPO / "pyproject.toml"]
    for path in secrets:
        assert str(call("read", {"path": str(path)})).startswith("denied"), path
    for folder in (REPO, REPO / "reference", classmate.parent, results):
        assert str(call("listdir", {"path": str(folder)})).startswith("denied"), folder
    for path in (results / "bob.json", results / "mallory.json", classmate / "collectives.py",
                 sub / "probe.py", Path(call("here", {})) / "probe.py", "/etc/passwd", "/usr/lib/x"):
        assert call("write", {"path": str(path)}).startswith("denied"), path
    assert json.loads((results / "bob.json").read_text()) == {}
    # /bin/sh cannot start in either mode: the seccomp filter refuses every new task
    assert call("sh", {"command": "id -u"}).startswith("denied")
    assert call("sh", {"command": f"cat {REPO / 'reference' / 'collectives.py'} | head -c 20"}).startswith("denied")
    # refused at socket() (the filter), not merely unreachable: an offline host answers a connect with
    # ENETUNREACH (an OSError) whether or not the jail isolates anything (tests/security/test_limits.py)
    assert call("net", {}) == "denied:PermissionError"


@pytest.mark.parametrize("mode", MODES)
def test_writes_are_capped(jail, mode):
    """Under bubblewrap a file holds at most 64 MB (RLIMIT_FSIZE) and all files together the tmpfs's
    tmp_mb; the user mode, with no capped tmpfs, creates no file at all (its filter refuses O_CREAT),
    where before it wrote 64 MB files without a total into /tmp, /dev/shm and its own tmp."""
    make, *_ = jail
    box = make(mode)
    if mode == "bubblewrap":
        assert 0 < box.call("big_file", {"mb": 100}) <= 64
        assert 64 < box.call("fill", {"chunk_mb": 40, "chunks": 10}) <= CONFIG.tmp_mb
    else:
        assert box.call("big_file", {"mb": 100}) == 0
        assert box.call("fill", {"chunk_mb": 40, "chunks": 10}) == 0


@pytest.mark.parametrize("mode", MODES)
def test_student_code_cannot_multiply(jail, mode):
    """fork, threads and subprocesses: none in either mode (the seccomp filter refuses every new task;
    in the user mode 12 forked children held 2.3 GB under memory_mb = 256); the worker still answers."""
    make, *_ = jail
    box = make(mode)
    forked, threads = box.call("multiply", {"n": 100})
    assert forked + threads == 0, (forked, threads)
    assert box.call("sh", {"command": "echo hi"}).startswith("denied")
    assert box.call("ids", {})[0] != 0


def _segments_of(uid):
    """System V shared memory segments of `uid` in the grader's IPC namespace."""
    rows = [line.split() for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]]
    return [row for row in rows if int(row[7]) == uid]


@pytest.mark.parametrize("mode", MODES)
def test_memory_outside_the_limit_is_refused_or_dies_with_the_jail(jail, mode):
    """Memory a limit on the worker does not count: files in tmpfs folders (/dev, /dev/shm, the
    jail's root or folder), memfd files, System V shared memory, a tmpfs in a mount namespace of its
    own. All are refused in both modes (the filter; before, the user mode took memfd files and System
    V memory, and both modes a tmpfs of their own); what the user mode's uid leaves is none."""
    make, *_ = jail
    box = make(mode)
    held = dict(box.call("outside", {"files": 3, "mb": 20}))
    assert set(held.values()) == {0}, held
    assert box.call("own_tmpfs", {"mb": 40}).startswith("denied"), mode
    uid = box.uid
    box.close()
    left = _segments_of(uid) if mode == "user" else []
    for row in left:    # a failing run must not leave its memory behind on the machine
        subprocess.run(["ipcrm", "-m", row[1]], capture_output=True)
    assert left == []


@pytest.mark.skipif(user_mode_problem() is not None, reason="the unprivileged-user mode needs root")
def test_user_mode_jails_keep_their_copies_from_each_other(jail):
    """grade-batch runs graders side by side, each student code as the uid of its grader: a jail's
    copy of its submission is readable by its own uid only, so a student cannot read (or import and
    run) the classmate being graded at the same time, whose jail sits in the same /tmp."""
    make, classmate, *_ = jail
    victim = Sandbox(classmate, "collectives", CONFIG, mode="user")
    try:
        victim.load()
        assert make("user").uid != victim.uid   # one uid per student graded at once
        copy = victim.root / "submission" / "collectives.py"
        assert str(make("user").call("read", {"path": str(copy)})).startswith("denied"), copy
        # nor list it: the names of a classmate's files (a helper module, a notes file) are theirs too
        assert str(make("user").call("listdir", {"path": str(copy.parent)})).startswith("denied"), copy.parent
        assert victim.call("comm_fraction", {"comm_s": 1.0, "compute_s": 1.0}) == 0.5   # its own copy it reads
        for path in [copy.parent, *copy.parent.rglob("*")]:     # behind Landlock, the file modes: its group's alone
            found = path.stat()
            assert found.st_mode & 0o007 == 0 and (found.st_uid, found.st_gid) == (0, victim.uid), path
    finally:
        victim.close()


def test_no_sandbox_refuses_with_the_fix(tmp_path):
    """bwrap and setpriv hidden from PATH: no boundary, so `scalelabs grade` and `grade-batch`
    refuse (exit 2, one line naming the fix and the opt-in), and grade nothing."""
    env = env_with_only(tmp_path)
    folder = honest(tmp_path / "class")
    for args in (("grade", TOY, folder, "--student", "honest"),
                 ("grade-batch", TOY, tmp_path / "class", "--out", tmp_path / "out")):
        proc = run(*args, env=env)
        message = " ".join(proc.stderr.split())
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "apt-get install bubblewrap" in message and "--allow-unsandboxed" in message, message
        assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out" / "results" / "honest.json").exists()


def test_opt_in_grades_unsandboxed_and_every_result_says_so(tmp_path):
    env = env_with_only(tmp_path)
    folder = honest(tmp_path / "class")
    data = grade_json(folder, "honest", "--allow-unsandboxed", env=env)
    assert data["score"] == FULL and "UNSANDBOXED" in data["output"]
    results, _ = grade_class(tmp_path / "class", tmp_path / "out", "--allow-unsandboxed", env=env)
    assert results["honest"]["scalelabs"]["sandbox"] == "unsandboxed" and "UNSANDBOXED" in results["honest"]["output"]
    assert "UNSANDBOXED" in (tmp_path / "out" / "feedback" / "honest.html").read_text()


def test_opt_in_through_scalelabs_toml(tmp_path):
    env = env_with_only(tmp_path)
    env["PYTHONPATH"] = str(Path(toy.__file__).parent)
    (tmp_path / "scalelabs.toml").write_text('[grading]\nsandbox = "unsandboxed"\n')
    data = json.loads(run("grade", TOY, honest(tmp_path / "class"), "--json", "--student", "honest", cwd=tmp_path,
                          env=env).stdout)
    assert data["score"] == FULL and "UNSANDBOXED" in data["output"]


@pytest.mark.skipif(user_mode_problem() is not None, reason="the unprivileged-user mode needs root")
def test_root_without_bwrap_grades_as_a_separate_user_and_protects_the_class(tmp_path):
    """bwrap hidden from PATH, grader is root (a Gradescope container): grade-batch runs student code
    as its own uid; an attacker that unhooks and writes a classmate's results file, reads the
    reference or overwrites the classmate's module gets nothing, and the classmate keeps full marks."""
    env = env_with_only(tmp_path, "setpriv", "unshare")
    root, out = tmp_path / "class", tmp_path / "out"
    honest(root)
    target = out / "results" / "honest.json"
    attack = toy.reference_source() + UNHOOK + f'''
def _steal():
    for p in ({str(REPO / "reference" / "collectives.py")!r}, {str(root / "honest" / "collectives.py")!r}):
        try:
            return open(p).read()
        except OSError:
            pass
    return ""
STOLEN = _steal()
for _p in ({str(target)!r}, {str(root / "honest" / "collectives.py")!r}):
    try:
        open(_p, "w").write("{{}}")
    except OSError:
        pass
def comm_fraction(comm_s, compute_s):
    return float(len(STOLEN))
'''
    toy.make_submission(root / "mallory", attack, toy.key)
    results, _ = grade_class(root, out, env=env)
    results2, _ = grade_class(root, out, env=env)   # a resumed batch: the honest result was not touched
    for data in (results, results2):
        assert data["honest"]["score"] == FULL
        assert data["honest"]["scalelabs"]["sandbox"] == "user"
        assert "separate unprivileged user" in data["honest"]["output"]
        assert data["mallory"]["scalelabs"]["max_score"] == FULL
    fraction = [t for t in results["mallory"]["tests"] if t["name"].startswith("comm_fraction: worked")]
    assert fraction and fraction[0]["score"] == 0 and "returned 0.0" in fraction[0]["output"]  # nothing stolen
    assert (root / "honest" / "collectives.py").read_text() == toy.reference_source()
