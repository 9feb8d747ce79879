"""One task, no memory beside its limit, no network: the seccomp filter every jail loads before any
student code runs. Under bubblewrap, bwrap loads it (`bwrap --seccomp FD`); in the "user" mode (and
unsandboxed) the grader's child installs it itself, under no_new_privs, before it execs the worker
(`installer`), where it also refuses every new file, since that mode has no capped tmpfs.

Refused (EPERM), and why:
* a new task (clone, clone3, fork, vfork): memory and CPU limits are per process, and bubblewrap's
  jail is root's outside its user namespace, where RLIMIT_NPROC counts nothing; 12 forked children
  held 2.3 GB under memory_mb = 256 in the user mode;
* memory no limit of the worker counts: memfd files (and memfd_secret's), System V IPC, POSIX message queues, keys, and
  a user + mount namespace of its own (unshare, setns, mount and the new mount API), in which a
  tmpfs of its own took 512 MB outside memory_mb = 256 in both modes;
* io_uring, which does all of the above and opens files by its own path;
* sockets (the network, whatever the namespaces allow), bpf and userfaultfd;
* every syscall of another ABI (i386 on x86_64, x32), whose numbers differ.
"""
from __future__ import annotations

import ctypes
import os
import platform
import struct
from functools import lru_cache
from typing import Callable

# machine -> (its audit arch, its syscall numbers by name); aarch64 has no open/creat/mkdir/... of
# its own (only the *at forms)
SYSCALLS = {
    "x86_64": (0xC000003E, dict(
        clone=56, clone3=435, fork=57, vfork=58, memfd_create=319, memfd_secret=447, shmget=29, semget=64, msgget=68,
        mq_open=240, add_key=248, request_key=249, keyctl=250, unshare=272, setns=308, mount=165,
        umount2=166, pivot_root=155, open_tree=428, move_mount=429, fsopen=430, fsconfig=431,
        fsmount=432, fspick=433, io_uring_setup=425, io_uring_enter=426, io_uring_register=427,
        socket=41, socketpair=53, bpf=321, userfaultfd=323, openat2=437,
        open=2, openat=257, creat=85, mkdir=83, mkdirat=258, mknod=133, mknodat=259, link=86,
        linkat=265, symlink=88, symlinkat=266, truncate=76)),
    "aarch64": (0xC00000B7, dict(
        clone=220, clone3=435, memfd_create=279, memfd_secret=447, shmget=194, semget=190, msgget=186, mq_open=180,
        add_key=217, request_key=218, keyctl=219, unshare=97, setns=268, mount=40, umount2=39,
        pivot_root=41, open_tree=428, move_mount=429, fsopen=430, fsconfig=431, fsmount=432, fspick=433,
        io_uring_setup=425, io_uring_enter=426, io_uring_register=427, socket=198, socketpair=199,
        bpf=280, userfaultfd=282, openat2=437,
        openat=56, mkdirat=34, mknodat=33, linkat=37, symlinkat=36, truncate=45)),
}
REFUSED = ("clone", "clone3", "fork", "vfork", "memfd_create", "memfd_secret", "shmget", "semget", "msgget", "mq_open",
           "add_key", "request_key", "keyctl", "unshare", "setns", "mount", "umount2", "pivot_root",
           "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "io_uring_setup",
           "io_uring_enter", "io_uring_register", "socket", "socketpair", "bpf", "userfaultfd", "openat2")
# without a capped tmpfs (the user mode): no new file or folder anywhere (/tmp, /dev/shm and the
# jail's own tmp would otherwise take files of 64 MB each without a total); nor truncate by path, which
# Landlock handles only from its ABI 3 (opening to write, its ABI 1 refuses outside the jail's tmp)
CREATING = ("creat", "mkdir", "mkdirat", "mknod", "mknodat", "link", "linkat", "symlink", "symlinkat", "truncate")
OPENING = {"open": 1, "openat": 2}          # syscall -> the argument holding its flags
CREATE_FLAGS = 0o100 | 0o20000000           # O_CREAT | __O_TMPFILE (O_TMPFILE includes it)
_X32_BIT = 0x40000000   # x86_64's x32 ABI: the same calls with this bit set

# classic BPF (linux/filter.h, linux/seccomp.h)
_LOAD, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06   # LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, JMP|JSET|K, RET|K
_ALLOW, _DENY = 0x7FFF0000, 0x00050000 | 1                        # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM


@lru_cache(maxsize=None)
def jail_filter(create_files: bool = True) -> bytes | None:
    """The classic-BPF seccomp program refusing the syscalls above (with EPERM); with
    create_files=False also every new file or folder (open/openat with O_CREAT or O_TMPFILE, creat,
    mkdir, mknod, link, symlink) and truncate by path. None on a machine not listed in SYSCALLS."""
    known = SYSCALLS.get(platform.machine())
    if known is None:
        return None
    arch, numbers = known
    refused = [numbers[n] for n in REFUSED + (() if create_files else CREATING) if n in numbers]
    flagged = [] if create_files else [(numbers[n], arg) for n, arg in OPENING.items() if n in numbers]
    # (op, jump-if-true label, jump-if-false label, k); labels: "deny", "allow", ("flags", i), or 0 (next)
    program: list[tuple] = [(_LOAD, 0, 0, 4), (_JEQ, 0, "deny", arch), (_LOAD, 0, 0, 0), (_JGE, "deny", 0, _X32_BIT)]
    program += [(_JEQ, "deny", 0, nr) for nr in refused]
    program += [(_JEQ, ("flags", i), 0, nr) for i, (nr, _) in enumerate(flagged)]
    program += [(_RET, 0, 0, _ALLOW)]
    labels: dict = {}
    for i, (_, arg) in enumerate(flagged):       # the low 32 bits of args[arg] (seccomp_data: 16 + 8 * arg)
        labels[("flags", i)] = len(program)
        program += [(_LOAD, 0, 0, 16 + 8 * arg), (_JSET, "deny", "allow", CREATE_FLAGS)]
    labels.update(allow=len(program), deny=len(program) + 1)      # classic BPF jumps forward only
    program += [(_RET, 0, 0, _ALLOW), (_RET, 0, 0, _DENY)]
    out = []
    for at, (op, true, false, k) in enumerate(program):
        jump = [labels[t] - at - 1 if t != 0 else 0 for t in (true, false)]
        out.append(struct.pack("=HBBI", op, *jump, k))
    return b"".join(out)


def filter_fd(create_files: bool = True) -> int | None:
    """A pipe's read end holding jail_filter() for `bwrap --seccomp` (the caller closes it), or None."""
    program = jail_filter(create_files)
    if program is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, program)    # a few hundred bytes: far below a pipe's buffer
    finally:
        os.close(write)
    return read


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]   # struct sock_fprog


PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def installer(create_files: bool = False) -> Callable[[], None] | None:
    """A function for a child between fork and exec (subprocess' preexec_fn) that sets
    no_new_privs and installs jail_filter(create_files) on itself, kept across exec; OSError if the
    kernel refuses. Everything it needs is prepared here, in the parent. None where there is no
    filter for this machine."""
    program = jail_filter(create_files)
    if program is None:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _Program(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))

    def install() -> None:
        keep = (buffer, fprog)      # noqa: F841  (alive until the exec)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
                libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "the seccomp filter could not be installed")
    return install
