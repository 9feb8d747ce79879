"""Every resource cap of each sandbox mode, read from inside the worker (issue 31, kind 9): student code
with the audit hook cleared asks the kernel what it may use (getrlimit, statvfs, the network namespace)
and then tries to go past it. The expected figures are the documented ones (docs/ARCHITECTURE.md,
"Trust model"), written here as numbers, not read from the constants under test:

    open files 256 . file size 64 MB . address space memory_mb minus the tmpfs (bubblewrap) or memory_mb
    (user) . CPU budget_s + 10 s . no core file . no POSIX message queue . no new process (both) and
    RLIMIT_NPROC 64 (user) . /tmp a tmpfs of min(tmp_mb, memory_mb / 2) (bubblewrap), no new file (user)
    . no network: no socket at all, and a network namespace of its own holding only lo

The network check tells isolation from an offline host: a machine without a route answers a connect
with ENETUNREACH whether or not the jail isolates anything, so the test asks for the socket itself to be
refused and for a namespace that is not the grader's, with no interface but lo."""
from __future__ import annotations

import os
import select
import socket
import subprocess
from pathlib import Path

import pytest

from attack import UNHOOK, honest
from autograder.engine.config import GradingConfig
from autograder.engine.sandbox import Sandbox, bwrap_available
from autograder.engine.sandbox.modes import user_mode_problem

MODES = [pytest.param("bubblewrap", marks=pytest.mark.skipif(not bwrap_available(), reason="no usable bwrap")),
         pytest.param("user", marks=pytest.mark.skipif(user_mode_problem() is not None, reason="not root"))]
CONFIG = GradingConfig(memory_mb=512, tmp_mb=128, budget_s=30.0, call_timeout_s=20.0)
MB = 1 << 20

PROBE = UNHOOK + '''
import errno, os, resource

def limits():
    names = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_NPROC", "RLIMIT_CORE", "RLIMIT_MSGQUEUE")
    return [[name, *resource.getrlimit(getattr(resource, name))] for name in names]

def _error(exc):
    return errno.errorcode.get(getattr(exc, "errno", None) or 0, type(exc).__name__)

def open_files(n):
    """How many more files open (of n tried), and why the next one did not."""
    fds = []
    try:
        for _ in range(n):
            fds.append(os.open("/dev/null", os.O_RDONLY))
        return [len(fds), ""]
    except OSError as exc:
        return [len(fds), _error(exc)]
    finally:
        for fd in fds:
            os.close(fd)

def allocate(mb):
    try:
        block = bytearray(mb << 20)
        return len(block) >> 20
    except MemoryError:
        return "MemoryError"

def write_file(path, mb):
    """MB written to one new file before the first failure, and the failure."""
    written, block = 0, b"x" * (1 << 20)
    try:
        with open(path, "wb") as f:
            for _ in range(mb):
                f.write(block)
                f.flush()
                written += 1
    except OSError as exc:
        return [written, _error(exc)]
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return [written, ""]

def tmpfile(folder):
    """An unnamed file in `folder` (O_TMPFILE: no O_CREAT, no name): "created", else why not."""
    try:
        os.close(os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o600))
        return "created"
    except OSError as exc:
        return _error(exc)

def tmp_bytes():
    st = os.statvfs("/tmp")
    return st.f_blocks * st.f_frsize

def fork():
    try:
        pid = os.fork()
    except OSError as exc:
        return _error(exc)
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return "forked"

def network():
    import socket
    out = {"netns": os.readlink("/proc/self/ns/net")}
    try:
        with open("/proc/self/net/dev") as f:
            out["interfaces"] = _interfaces(f.read())
    except OSError as exc:          # the user mode's Landlock rules: the grader reads it (test below)
        out["interfaces"] = _error(exc)
    for family in (socket.AF_INET, socket.AF_INET6, socket.AF_UNIX):
        try:
            socket.socket(family, socket.SOCK_STREAM).close()
            out[family.name] = "created"
        except OSError as exc:
            out[family.name] = _error(exc)
    return sorted([key, value] for key, value in out.items())      # the worker returns lists, not dicts

def _interfaces(text):
    return sorted(line.split(":")[0].strip() for line in text.splitlines()[2:])

def connect(port):
    """Connect to the grader's loopback listener: "connected", else why not."""
    import socket
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        return "connected"
    except OSError as exc:
        return _error(exc)
'''


@pytest.fixture
def box(request, tmp_path):
    """A sandbox of `request.param`'s mode on the probe module, an honest classmate graded beside it."""
    classmate = honest(tmp_path / "class", "bob")
    sub = tmp_path / "class" / "mallory"
    sub.mkdir()
    (sub / "probe.py").write_text(PROBE)
    sandbox = Sandbox(sub, "probe", CONFIG, mode=request.param, secrets=[tmp_path / "class"])
    try:
        sandbox.load()
        yield request.param, sandbox
    finally:
        sandbox.close()
    with Sandbox(classmate, "collectives", CONFIG, mode=request.param) as other:   # still graded as before
        other.load()
        assert other.call("comm_fraction", {"comm_s": 1.0, "compute_s": 3.0}) == 0.25


def _limits(sandbox) -> dict[str, tuple[int, int]]:
    return {name: (soft, hard) for name, soft, hard in sandbox.call("limits", {})}


@pytest.mark.parametrize("box", MODES, indirect=True)
def test_open_files_are_capped_at_256(box):
    mode, sandbox = box
    assert _limits(sandbox)["RLIMIT_NOFILE"] == (256, 256)
    opened, why = sandbox.call("open_files", {"n": 400})
    assert 240 <= opened < 256 and why == "EMFILE", (opened, why)


@pytest.mark.parametrize("box", MODES, indirect=True)
def test_memory_is_capped_at_memory_mb_less_the_tmpfs(box):
    """512 MB in all: bubblewrap's address space is 512 - 128 (its /tmp is memory), the user mode's 512."""
    mode, sandbox = box
    address_space = (384 if mode == "bubblewrap" else 512) * MB
    assert _limits(sandbox)["RLIMIT_AS"] == (address_space, address_space)
    assert sandbox.call("allocate", {"mb": (address_space // MB) - 150}) == (address_space // MB) - 150
    assert sandbox.call("allocate", {"mb": address_space // MB}) == "MemoryError"


@pytest.mark.parametrize("box", MODES, indirect=True)
def test_cpu_core_and_message_queues_are_capped(box):
    mode, sandbox = box
    found = _limits(sandbox)
    assert found["RLIMIT_CPU"] == (40, 40)              # budget_s 30 + 10
    assert found["RLIMIT_CORE"] == (0, 0)
    assert found["RLIMIT_MSGQUEUE"] == (0, 0)


@pytest.mark.parametrize("box", MODES, indirect=True)
def test_no_new_process_and_the_user_modes_process_cap(box):
    mode, sandbox = box
    assert sandbox.call("fork", {}) == "EPERM"
    if mode == "user":
        assert _limits(sandbox)["RLIMIT_NPROC"] == (64, 64)


@pytest.mark.parametrize("box", MODES, indirect=True)
def test_files_are_capped_at_64_mb_and_tmp_at_its_size(box):
    """Bubblewrap: one file stops at 64 MB (EFBIG), /tmp is a tmpfs of 128 MB. The user mode has no
    capped tmpfs, so it creates no file at all (EPERM), while its RLIMIT_FSIZE stays 64 MB."""
    mode, sandbox = box
    assert _limits(sandbox)["RLIMIT_FSIZE"] == (64 * MB, 64 * MB)
    if mode == "bubblewrap":
        assert sandbox.call("write_file", {"path": "/tmp/big", "mb": 100}) == [64, "EFBIG"]
        assert sandbox.call("tmp_bytes", {}) == 128 * MB
    else:
        for folder in ("/tmp", "/dev/shm", str(sandbox.root / "tmp")):
            assert sandbox.call("write_file", {"path": f"{folder}/scalelabs-limit-test", "mb": 1}) == [0, "EPERM"], folder
            assert sandbox.call("tmpfile", {"folder": folder}) == "EPERM", folder   # nor an unnamed one


def _can_unshare_net() -> bool:
    return subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode == 0


@pytest.mark.parametrize("box", MODES, indirect=True)
def test_no_network_isolated_not_merely_offline(box):
    """No socket of any family (the filter: EPERM at socket(), before any route is looked up), and a
    network namespace that is not the grader's, holding only lo (in the user mode where the grader may
    make one: a container refusing it still has no socket)."""
    mode, sandbox = box
    found = {key: value for key, value in sandbox.call("network", {})}
    assert (found["AF_INET"], found["AF_INET6"], found["AF_UNIX"]) == ("EPERM",) * 3, found
    if mode == "user":      # Landlock keeps the worker out of /proc: its interfaces, seen by the grader
        assert found["interfaces"] == "EACCES", found
        lines = Path(f"/proc/{sandbox.proc.pid}/net/dev").read_text().splitlines()[2:]
        found["interfaces"] = sorted(line.split(":")[0].strip() for line in lines)
    if mode == "bubblewrap" or _can_unshare_net():
        assert found["netns"] != os.readlink("/proc/self/ns/net"), found
        assert found["interfaces"] == ["lo"], found


@pytest.mark.parametrize("box", MODES, indirect=True)
def test_a_listener_on_the_graders_loopback_is_out_of_reach(box):
    """A listener the test opens on the grader's 127.0.0.1: this process reaches it (so the host's
    network is up), student code in the jail does not, and the listener never sees a connection."""
    mode, sandbox = box
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=3):
            listener.accept()[0].close()                      # outside the jail: reached
        answer = sandbox.call("connect", {"port": port})
        assert answer != "connected", answer
        assert select.select([listener], [], [], 0.5)[0] == [], "the jail's connection reached the listener"


@pytest.mark.skipif(not bwrap_available(), reason="no usable bwrap")
def test_tmp_takes_at_most_half_of_memory_mb_and_the_worker_the_rest(tmp_path):
    """memory_mb = 384 with tmp_mb = 256 asked: /tmp is 192 MB (half of 384, the documented ceiling),
    and the worker's address space the other 192 MB, read from inside the jail."""
    sub = tmp_path / "mallory"
    sub.mkdir()
    (sub / "probe.py").write_text(PROBE)
    config = GradingConfig(memory_mb=384, tmp_mb=256, budget_s=30.0, call_timeout_s=20.0)
    with Sandbox(sub, "probe", config, mode="bubblewrap") as sandbox:
        sandbox.load()
        assert sandbox.call("tmp_bytes", {}) == 192 * MB
        assert _limits(sandbox)["RLIMIT_AS"] == (192 * MB, 192 * MB)
