"""The "user" mode (root without a usable bubblewrap, e.g. a Gradescope container): student code runs
as a uid of its own, and what that uid can reach is asked of the kernel and made safe first."""
from __future__ import annotations

import atexit
import ctypes
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from functools import lru_cache
from pathlib import Path
from typing import Callable

from autograder.course import find_course, package_dirs
from autograder.engine.sandbox.errors import SandboxUnavailable
from autograder.engine.sandbox.runtime import numpy_dirs, python_paths

USER_UID_BASE = 1_000_000       # "user" mode: the jail uids start here (take_uid)


# --- the user mode's checks: what the jail uid can reach ---

_PROBE = ("import json, os, sys\n"
          "out = {}\n"
          "for p in json.loads(sys.argv[1]):\n"
          "    out[p] = [os.access(p, os.R_OK) or os.access(p, os.X_OK), os.access(p, os.W_OK)]\n"
          "print(json.dumps(out))\n")


def course_secrets() -> list[Path]:
    """What student code must never read: the engine (autograder/), the declarations (labs/), the
    reference, the checkout around them when the packages are installed from one (pip install -e),
    and the course the grader runs in (source/, samples/, grades/, scalelabs.toml)."""
    found = package_dirs()
    checkouts = {p.parent for p in found if (p.parent / "pyproject.toml").is_file()}
    return found + [p for p in {*checkouts, find_course()} if p is not None]


def drop_command(uid: int) -> list[str]:
    """setpriv prefix: run as `uid` (gid alike, no groups), no capabilities, no_new_privs."""
    return [shutil.which("setpriv") or "setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups",
            "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]


def reachable_as(uid: int, paths: list[str]) -> dict[str, tuple[bool, bool]]:
    """{path: (readable or enterable, writable)} for `uid`, asked of the kernel by a process running as it."""
    exe = python_paths()[0]
    done = subprocess.run(drop_command(uid) + [exe, "-I", "-S", "-c", _PROBE, json.dumps(paths)],
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise SandboxUnavailable(f"uid {uid} cannot run Python ({exe}): make it and the stdlib readable "
                                 f"by all users ({done.stderr.strip()[-200:]})")
    return {p: tuple(v) for p, v in json.loads(done.stdout).items()}


def protect_secrets(uid: int, secrets: list[Path], outputs: list[Path]) -> None:
    """Make every secret unreadable and every output unwritable to `uid` (chmod o-rwx on exactly
    those paths), then check with the kernel; SandboxUnavailable if that did not work."""
    secrets = [Path(p) for p in secrets if Path(p).exists()]
    outputs = [Path(p) for p in outputs if Path(p).exists()]
    found = reachable_as(uid, [str(p) for p in secrets + outputs])
    for p in secrets + outputs:
        readable, writable = found[str(p)]
        if (p in secrets and readable) or writable:
            try:
                os.chmod(p, os.stat(p).st_mode & ~0o007)
            except OSError:
                pass
    found = reachable_as(uid, [str(p) for p in secrets + outputs])
    leaks = [str(p) for p in secrets if found[str(p)][0]] + [str(p) for p in outputs if found[str(p)][1]]
    if leaks:
        raise SandboxUnavailable("the unprivileged-user sandbox cannot hide these from student code (chmod o-rwx "
                                 f"failed; a read-only or shared mount?): {', '.join(leaks)}")


@lru_cache(maxsize=None)
def jail_stdlib(uid: int) -> tuple[str, ...]:
    """The stdlib folders the grader's interpreter uses when `uid` runs it (a root-only install,
    e.g. pyenv under /root, falls back to the system's libpython and stdlib): the worker's guard
    must let it read those. SandboxUnavailable if that is not the grader's Python version."""
    exe = python_paths()[0]
    code = "import json, sys; print(json.dumps([list(sys.version_info[:2]), [p for p in sys.path if p]]))"
    done = subprocess.run(drop_command(uid) + [exe, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=30)
    try:
        version, paths = json.loads(done.stdout)
    except ValueError:
        version, paths = None, []
    if version != list(sys.version_info[:2]):
        raise SandboxUnavailable(f"uid {uid} cannot run Python {sys.version_info[0]}.{sys.version_info[1]} "
                                 f"({exe}): make the interpreter and its stdlib readable by all users")
    return tuple(paths)


_private_site: dict[str, Path] = {}


def private_numpy_site() -> Path:
    """A root-owned, world-readable copy of numpy (once per process): the course folder that holds
    the virtualenv is closed to the jail uid, numpy is not secret."""
    if "site" not in _private_site:
        site = Path(tempfile.mkdtemp(prefix="scalelabs-site-"))
        for d in numpy_dirs():
            shutil.copytree(d, site / os.path.basename(d), symlinks=True)
        for dirpath, dirnames, filenames in os.walk(site):
            for name in dirnames:
                os.chmod(os.path.join(dirpath, name), 0o755)
            for name in filenames:
                path = os.path.join(dirpath, name)
                if not os.path.islink(path):
                    os.chmod(path, 0o755 if os.access(path, os.X_OK) else 0o644)
        site.chmod(0o755)
        atexit.register(shutil.rmtree, site, True)
        _private_site["site"] = site
    return _private_site["site"]


def hand_over(root: Path, uid: int) -> None:
    """Give a jail's folder to `uid`: it may enter the root, read the copy and the worker, and write
    only its tmp. The copy is root's, readable by the jail's group (its gid is its uid) alone:
    another grader's jail, beside this one in /tmp, must not read (or import) this student's code."""
    root.chmod(0o711)
    for dirpath, dirnames, filenames in os.walk(root / "submission"):
        os.chown(dirpath, 0, uid)
        os.chmod(dirpath, 0o750)
        for name in filenames:
            os.chown(os.path.join(dirpath, name), 0, uid)
            os.chmod(os.path.join(dirpath, name), 0o640)
    (root / "site").chmod(0o755)
    (root / "worker.py").chmod(0o644)
    os.chown(root / "tmp", uid, uid)
    (root / "tmp").chmod(0o700)


# --- a uid per student graded at once ---

UID_SLOTS = 256                 # sandboxes alive at once in one grader process
_slots: set[int] = set()
_slots_lock = threading.Lock()


def take_uid() -> int:
    """A uid no other live sandbox uses: USER_UID_BASE + pid * UID_SLOTS + the lowest free slot of
    this process (a grade-batch grades one student per process at a time; threads or a caller
    holding several sandboxes get one uid each, so one student's code never shares a uid with
    another's: the copies are readable by their own uid alone). At most 1e6 + 2^22 * 256 < 2^31."""
    with _slots_lock:
        slot = next((i for i in range(UID_SLOTS) if i not in _slots), None)
        if slot is None:
            raise SandboxUnavailable(f"more than {UID_SLOTS} unprivileged-user sandboxes at once in one process")
        _slots.add(slot)
    return USER_UID_BASE + os.getpid() * UID_SLOTS + slot


def give_back_uid(uid: int) -> None:
    with _slots_lock:
        _slots.discard((uid - USER_UID_BASE) % UID_SLOTS)


# --- the worker's own namespaces, made in the child before the filter (which refuses unshare) ---

CLONE_NEWNET, CLONE_NEWIPC = 0x40000000, 0x08000000


def namespaces() -> Callable[[], None]:
    """A function for the grader's child, before exec: a network and an IPC namespace of its own
    where the grader may make them (root with CAP_SYS_ADMIN; a container may refuse it). Either way
    the seccomp filter refuses sockets and System V IPC: the namespaces are a second wall."""
    libc = ctypes.CDLL(None, use_errno=True)

    def enter() -> None:
        libc.unshare(CLONE_NEWNET | CLONE_NEWIPC)
    return enter
