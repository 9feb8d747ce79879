"""Landlock (Linux 5.13+, an LSM any process may apply to itself): the kernel's list of what the user
mode's worker may open, applied in the grader's child before it execs the worker, so it holds from
the interpreter's first instruction, whatever student code later does.

A ruleset names folders and files (each a hierarchy: the rights hold for everything beneath) and the
rights allowed there; every other open of a handled kind is refused with EACCES, however the path is
spelled (relative, `dir_fd`, `openat2`, `/proc/self/root`, `/proc/<pid>/cwd`, a symbolic or hard
link, after `chdir`): the kernel checks the file reached, not the string. Rules are taken beneath
folders opened by the grader (root) in the parent; the child only calls `landlock_restrict_self`.

ABI 1 suffices: its rights cover reading, listing, writing, executing and making files. What later
ABIs add is refused here by other means (truncate by path and sockets by the seccomp filter, signals
and ptrace by the worker's uid of its own); each right the kernel knows is handled, so a newer kernel
refuses more, never less. Not checked by Landlock at any ABI: stat, access, readlink and chdir (the
metadata of a path, never its content), and files already open (the worker inherits only its pipes).
"""
from __future__ import annotations

import ctypes
import errno
import os
import stat
import struct
from dataclasses import dataclass
from functools import lru_cache

# the three syscalls have these numbers on every architecture (asm-generic and x86_64 alike)
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1 << 0
PR_SET_NO_NEW_PRIVS = 38
RULE_PATH_BENEATH = 1

# LANDLOCK_ACCESS_FS_* (include/uapi/linux/landlock.h) and the ABI that brought each
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR, MAKE_REG = 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8
MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1                  # ABI 4: no TCP bind or connect
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1       # ABI 6: no signal or socket outside

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV   # the only ones a rule on a file takes
READ = READ_FILE | READ_DIR | EXECUTE       # a read-only hierarchy (EXECUTE: the loader opens libraries for exec)
SCRATCH = READ | WRITE_FILE | TRUNCATE | REMOVE_FILE    # the worker's own tmp (its filter refuses new files)
DEVICE = READ_FILE | WRITE_FILE             # /dev/null, where the worker sends fds 0-2


def _libc():
    return ctypes.CDLL(None, use_errno=True)


@lru_cache(maxsize=None)
def abi() -> tuple[int, str]:
    """(the kernel's Landlock ABI version, "") where a process here may use it, else (0, why not:
    one phrase naming the cause and the fix)."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(ctypes.c_long(CREATE_RULESET), None, ctypes.c_size_t(0),
                           ctypes.c_uint32(CREATE_RULESET_VERSION))
    if version > 0:
        return int(version), ""
    code = ctypes.get_errno()
    if code == errno.ENOSYS:
        return 0, (f"the kernel has no Landlock (Linux {os.uname().release}; it needs 5.13 or later built with "
                   "CONFIG_SECURITY_LANDLOCK)")
    if code == errno.EOPNOTSUPP:
        return 0, ("the kernel has Landlock but it is not enabled (add landlock to the lsm= boot parameter "
                   "or CONFIG_LSM)")
    if code == errno.EPERM:
        return 0, ("this container's seccomp profile refuses the Landlock syscalls (Docker's default profile "
                   "allows them since Docker 23; use it or add landlock_create_ruleset, landlock_add_rule and "
                   "landlock_restrict_self to yours)")
    return 0, f"Landlock is unusable here ({errno.errorcode.get(code, code)})"


@dataclass
class Ruleset:
    """A Landlock ruleset made in the grader (root) for one worker: `fd`, or closed (-1)."""
    fd: int
    version: int

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _ruleset_attr(version: int) -> bytes:
    """struct landlock_ruleset_attr as this ABI knows it: handled fs rights, then net (ABI 4), scopes (ABI 6)."""
    fs = FS_BY_ABI[min(version, max(FS_BY_ABI))]
    fields = [fs]
    if version >= 4:
        fields.append(NET_BIND_TCP | NET_CONNECT_TCP)
    if version >= 6:
        fields.append(SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    return struct.pack(f"={len(fields)}Q", *fields)


def ruleset(rules: list[tuple[str, int]]) -> Ruleset:
    """A ruleset allowing each (path, rights) beneath path and nothing else of what the kernel's ABI
    handles. A path that does not exist is left out (it can be reached by no one); a file takes only
    the file rights of its rule. OSError if the kernel refuses (abi() says whether it can)."""
    version, why = abi()
    if not version:
        raise OSError(errno.EOPNOTSUPP, why)
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    handled = FS_BY_ABI[min(version, max(FS_BY_ABI))]
    attr = ctypes.create_string_buffer(_ruleset_attr(version))
    fd = libc.syscall(ctypes.c_long(CREATE_RULESET), attr, ctypes.c_size_t(len(attr.raw)), ctypes.c_uint32(0))
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"landlock_create_ruleset: {os.strerror(code)}")
    made = Ruleset(int(fd), version)
    try:
        for path, rights in rules:
            try:
                parent = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                allowed = rights & handled
                if not stat.S_ISDIR(os.fstat(parent).st_mode):
                    allowed &= FILE_RIGHTS
                beneath = ctypes.create_string_buffer(struct.pack("=Qi", allowed, parent))   # packed: 12 bytes
                if libc.syscall(ctypes.c_long(ADD_RULE), ctypes.c_int(made.fd), ctypes.c_int(RULE_PATH_BENEATH),
                                beneath, ctypes.c_uint32(0)) != 0:
                    code = ctypes.get_errno()
                    raise OSError(code, f"landlock_add_rule {path}: {os.strerror(code)}")
            finally:
                os.close(parent)
    except BaseException:
        made.close()
        raise
    return made


def restrictor(made: Ruleset):
    """A function for the child between fork and exec: the calling thread (the child's only one) sets
    no_new_privs (which Landlock needs of a process without CAP_SYS_ADMIN) and enters the ruleset's
    domain, for good and across exec; OSError if the kernel refuses. Everything is prepared here, in
    the parent."""
    libc = _libc()
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    number, fd = ctypes.c_long(RESTRICT_SELF), ctypes.c_int(made.fd)

    def restrict() -> None:
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or syscall(number, fd, ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self refused")
    return restrict
