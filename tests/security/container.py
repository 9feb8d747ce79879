"""A container-like grader without a Docker daemon: the process runs as root with only Docker's default
capabilities (setpriv shrinks the bounding set; a root exec keeps no more) under a seccomp filter that
refuses what Docker's default profile (moby profiles/seccomp/default.json) refuses a process without
CAP_SYS_ADMIN -- namespaces (unshare, setns, clone with a CLONE_NEW* flag; clone3 answers ENOSYS, so
libc falls back to clone), every mount call, bpf, perf_event_open and the kernel keyring. bubblewrap
then cannot start (no user namespace), as in a default `docker run`.

`no_landlock` adds the kernel (or an old container profile) without Landlock: the three landlock_*
syscalls answer ENOSYS (or EPERM); `no_chroot` takes CAP_SYS_CHROOT away as well.
"""
from __future__ import annotations

import ctypes
import errno
import platform
import struct
from typing import Callable

DOCKER_CAPS = ("chown", "dac_override", "fowner", "fsetid", "kill", "setgid", "setuid", "setpcap", "net_bind_service",
               "net_raw", "sys_chroot", "mknod", "audit_write", "setfcap")
X86_64 = 0xC000003E
REFUSED = dict(unshare=272, setns=308, mount=165, umount2=166, pivot_root=155, open_tree=428, move_mount=429,
               fsopen=430, fsconfig=431, fsmount=432, fspick=433, mount_setattr=442, bpf=321, perf_event_open=298,
               add_key=248, request_key=249, keyctl=250)
CLONE, CLONE3, LANDLOCK = 56, 435, (444, 445, 446)
NAMESPACE_FLAGS = 0x7E020000        # CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
_LOAD, _JEQ, _JSET, _RET = 0x20, 0x15, 0x45, 0x06
_ALLOW = 0x7FFF0000


def _errno(code: int) -> int:
    return 0x00050000 | code


def applies() -> bool:
    return platform.machine() == "x86_64"


def program(landlock_errno: int | None = None) -> bytes:
    """The filter's classic BPF: each row (op, jump if true, jump if false, k)."""
    rows = [(_LOAD, 0, 0, 4), (_JEQ, 1, 0, X86_64), (_RET, 0, 0, _ALLOW), (_LOAD, 0, 0, 0)]
    for nr in REFUSED.values():
        rows += [(_JEQ, 0, 1, nr), (_RET, 0, 0, _errno(errno.EPERM))]
    rows += [(_JEQ, 0, 1, CLONE3), (_RET, 0, 0, _errno(errno.ENOSYS))]
    if landlock_errno is not None:
        for nr in LANDLOCK:
            rows += [(_JEQ, 0, 1, nr), (_RET, 0, 0, _errno(landlock_errno))]
    rows += [(_JEQ, 0, 3, CLONE), (_LOAD, 0, 0, 16), (_JSET, 0, 1, NAMESPACE_FLAGS), (_RET, 0, 0, _errno(errno.EPERM)),
             (_RET, 0, 0, _ALLOW)]
    return b"".join(struct.pack("=HBBI", *row) for row in rows)


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def installer(landlock_errno: int | None = None) -> Callable[[], None]:
    """preexec_fn for the grader's command: the filter, installed by root (CAP_SYS_ADMIN, so without
    no_new_privs, as Docker's runtime does) before it execs."""
    code = program(landlock_errno)
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = _Program(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)

    def install() -> None:
        keep = (buffer, fprog)      # noqa: F841
        if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) != 0:       # PR_SET_SECCOMP, SECCOMP_MODE_FILTER
            raise OSError(ctypes.get_errno(), "seccomp")
    return install


def prefix(no_chroot: bool = False) -> list[str]:
    """The command prefix that leaves root only Docker's default capabilities."""
    caps = [c for c in DOCKER_CAPS if not (no_chroot and c == "sys_chroot")]
    return ["setpriv", "--bounding-set=-all," + ",".join("+" + c for c in caps), "--inh-caps=-all", "--"]
