"""The bubblewrap jail's command line: what the worker needs, read-only, and nothing else.

The jail's root is an empty tmpfs. Into it go, each at its own path: the interpreter, its stdlib
(every site-packages or dist-packages folder inside it hidden under an empty tmpfs), the shared
libraries the loader maps for them (runtime.mapped_files) with the symbolic links the loader finds
them by, numpy under /sandbox/site, the worker, the read-only copy of the submission and a
size-capped tmpfs /tmp. Not /usr, not the grader's site-packages, the course or the package: where
Python lives decides nothing (docs/ARCHITECTURE.md, "Trust model").
"""
from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from autograder.engine.sandbox.runtime import JAIL_ENV, mapped_files, numpy_dirs, python_paths

JAIL_UID = 65534                # the unprivileged uid/gid inside bubblewrap (nobody)
PATHS = {"submission": "/sandbox/submission", "site": "/sandbox/site", "tmp": "/tmp"}   # as the worker sees them
PACKAGE_FOLDERS = ("site-packages", "dist-packages")   # hidden wherever a bound folder holds one
TOP_LINKS = ("/lib", "/lib64", "/lib32", "/libx32", "/bin", "/sbin")   # merged-/usr links the loader goes through
LINK_DEPTH_CAP = 40             # symbolic links followed to expose one path (the kernel's own limit)


@dataclass(frozen=True)
class Mounts:
    """The runtime's part of the jail: host paths bound read-only at the same path (`binds`),
    symbolic links recreated (`links`: (target, where)) and folders hidden by an empty tmpfs."""
    binds: tuple[str, ...]
    links: tuple[tuple[str, str], ...]
    hidden: tuple[str, ...]


def interpreter_of(exe: str) -> str | None:
    """The ELF program interpreter (PT_INTERP, the dynamic loader's path) of `exe`, or None."""
    try:
        with open(exe, "rb") as f:
            head = f.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2:     # 64-bit ELF only; a 32-bit grader has none
                return None
            order = "little" if head[5] == 1 else "big"
            phoff, phsize, phnum = (int.from_bytes(head[32:40], order), int.from_bytes(head[54:56], order),
                                    int.from_bytes(head[56:58], order))
            for i in range(min(phnum, 256)):
                f.seek(phoff + i * phsize)
                header = f.read(phsize)
                if int.from_bytes(header[0:4], order) == 3:            # PT_INTERP
                    offset, size = int.from_bytes(header[8:16], order), int.from_bytes(header[32:40], order)
                    f.seek(offset)
                    return f.read(min(size, 4096)).rstrip(b"\0").decode()
    except (OSError, UnicodeDecodeError, IndexError):
        return None
    return None


def expose(path: str, binds: set[str], links: dict[str, str]) -> None:
    """Make `path` resolve in the jail as it does here: each symbolic link along it recreated (the
    loader opens /lib64/ld-linux-x86-64.so.2 through two of them), the file at its end bound."""
    for _ in range(LINK_DEPTH_CAP):
        parts = Path(os.path.normpath(path)).parts
        current = "/"
        for i, part in enumerate(parts[1:], 1):
            current = os.path.join(current, part)
            if os.path.islink(current):
                target = os.readlink(current)
                links[current] = target
                path = os.path.join(os.path.dirname(current), target, *parts[i + 1:])
                break
        else:
            if os.path.exists(current):
                binds.add(current)
            return


def aliases(files: set[str]) -> dict[str, str]:
    """The symbolic links beside each file that point at it (libz.so.1 -> libz.so.1.2.13: the
    loader asks for the soname)."""
    found: dict[str, str] = {}
    for folder in sorted({os.path.dirname(f) for f in files}):
        try:
            with os.scandir(folder) as it:
                entries = [e for e in it if e.is_symlink()]
        except OSError:
            continue
        for entry in entries:
            if os.path.realpath(entry.path) in files:
                found[entry.path] = os.readlink(entry.path)
    return found


def _hidden_inside(folder: str) -> list[str]:
    """The package folders (PACKAGE_FOLDERS) directly inside `folder` or one of its python*/ folders."""
    found = []
    candidates = [folder] + [os.path.join(folder, n) for n in _listing(folder) if n.startswith("python")]
    for parent in candidates:
        for name in PACKAGE_FOLDERS:
            path = os.path.join(parent, name)
            if not os.path.islink(path) and os.path.isdir(path):
                found.append(path)
    return found


def _listing(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


_mounts_lock = threading.Lock()


def runtime_mounts() -> Mounts:
    """What the worker needs of this machine (computed once per grader process: a thread that asks
    while another computes it waits for that one, rather than running the probes again)."""
    with _mounts_lock:
        return _runtime_mounts()


@lru_cache(maxsize=None)
def _runtime_mounts() -> Mounts:
    exe, _, stdlib = python_paths()
    binds: set[str] = set()
    links: dict[str, str] = {}
    for top in TOP_LINKS:
        if os.path.islink(top):
            links[top] = os.readlink(top)
    expose(exe, binds, links)
    interpreter = interpreter_of(exe)
    if interpreter:
        expose(interpreter, binds, links)
    expose(stdlib, binds, links)
    files = {p for p in mapped_files() if not (p == stdlib or p.startswith(stdlib + os.sep))
             and not any(p.startswith(d + os.sep) for d in numpy_dirs())}
    for path in sorted(files):
        expose(path, binds, links)
    links.update(aliases({p for p in binds if os.path.isfile(p)}))
    if os.path.isfile("/etc/ld.so.cache"):
        binds.add("/etc/ld.so.cache")
    hidden = [h for b in sorted(binds) if os.path.isdir(b) for h in _hidden_inside(b)]
    return Mounts(tuple(sorted(binds)), tuple(sorted((t, w) for w, t in links.items())), tuple(hidden))


def seen_through(path: str | Path) -> str | None:
    """The bound host path through which `path` would be readable in the jail, or None (it is not
    bound, or it lies in a hidden package folder). The copy and the worker are the jail's own."""
    real = os.path.realpath(path)
    mounts = runtime_mounts()
    if any(real == h or real.startswith(h + os.sep) for h in mounts.hidden):
        return None
    for source in (*mounts.binds, *numpy_dirs()):
        if real == source or real.startswith(source.rstrip(os.sep) + os.sep):
            return source
    return None


def bwrap_command(bwrap: str, root: Path, tmp_bytes: int, seccomp_fd: int | None = None) -> list[str]:
    """bwrap and its flags up to the worker's own arguments: uid/gid JAIL_UID in a new user
    namespace, no capabilities, no network, a new session; runtime_mounts() read-only, numpy in a
    private site dir, the jail folder's worker and copy (`root`), a tmpfs /tmp of tmp_bytes; the
    filter loaded from `seccomp_fd`."""
    exe, _, _ = python_paths()
    mounts = runtime_mounts()
    cmd = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(JAIL_UID), "--gid", str(JAIL_UID),
           "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--clearenv",
           *(a for key, value in JAIL_ENV.items() for a in ("--setenv", key, value)), "--setenv", "HOME", "/tmp"]
    for target, where in mounts.links:
        cmd += ["--symlink", target, where]
    for path in mounts.binds:
        cmd += ["--ro-bind", path, path]
    for path in mounts.hidden:
        cmd += ["--tmpfs", path]
    for d in numpy_dirs():
        cmd += ["--ro-bind", d, f"/sandbox/site/{os.path.basename(d)}"]
    cmd += ["--ro-bind", str(root / "worker.py"), "/sandbox/worker.py",
            "--ro-bind", str(root / "submission"), PATHS["submission"],
            "--size", str(tmp_bytes), "--tmpfs", "/tmp",
            "--proc", "/proc", "--dev", "/dev",
            # bwrap's /dev and its root are tmpfs of their own, uncapped: nothing may be written there
            "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/tmp",
            *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
            exe, "-I", "-S", "/sandbox/worker.py"]
    return cmd
