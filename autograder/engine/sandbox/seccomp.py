"""One task, no memory beside its limit: the seccomp filter the bubblewrap jail loads (`bwrap --seccomp`)."""
from __future__ import annotations

import os
import platform
import struct
from functools import lru_cache

# machine -> (its audit arch, the syscalls refused: the ones that start a task (clone, clone3, fork,
# vfork) or hold memory no limit of the worker counts (memfd_create, shmget, semget, msgget))
REFUSED_SYSCALLS = {"x86_64": (0xC000003E, (56, 435, 57, 58, 319, 29, 64, 68)),
                    "aarch64": (0xC00000B7, (220, 435, 279, 194, 190, 186))}
_X32_BIT = 0x40000000   # x86_64's x32 ABI: the same calls with this bit set


@lru_cache(maxsize=None)
def jail_filter() -> bytes | None:
    """The classic-BPF seccomp program `bwrap --seccomp FD` loads: the syscalls of REFUSED_SYSCALLS
    and every syscall of another ABI (i386 on x86_64, x32) fail with EPERM. Student code stays one
    process of one thread, since memory and CPU limits are per process and bubblewrap's jail is root's
    outside its user namespace, where RLIMIT_NPROC counts nothing (forks, or 32 KB-stack threads,
    would take memory and the host's pids without bound); and it cannot hold memory in memfd files
    or System V IPC, which RLIMIT_AS does not count (seccomp(2); layout as in linux/seccomp.h).
    None on another machine."""
    known = REFUSED_SYSCALLS.get(platform.machine())
    if known is None:
        return None
    arch, calls = known
    load, jump_eq, jump_ge, ret = 0x20, 0x15, 0x35, 0x06          # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K
    allow, deny = 0x7FFF0000, 0x00050000 | 1                      # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    checks = [(jump_ge, _X32_BIT)] + [(jump_eq, nr) for nr in calls]
    program = [(load, 0, 0, 4), (jump_eq, 1, 0, arch), (ret, 0, 0, deny), (load, 0, 0, 0)]  # 4: arch, 0: nr
    program += [(op, len(checks) - i, 0, k) for i, (op, k) in enumerate(checks)]           # a match: to deny
    program += [(ret, 0, 0, allow), (ret, 0, 0, deny)]
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


def filter_fd() -> int | None:
    """A pipe's read end holding jail_filter() for `bwrap --seccomp` (the caller closes it), or None."""
    program = jail_filter()
    if program is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, program)    # a few hundred bytes: far below a pipe's buffer
    finally:
        os.close(write)
    return read
