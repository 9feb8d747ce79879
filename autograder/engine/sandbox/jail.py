"""The bubblewrap jail's command line: what the worker sees, read-only, and nothing else writable
but a size-capped tmpfs /tmp (docs/ARCHITECTURE.md, "Trust model")."""
from __future__ import annotations

import os
from pathlib import Path

from autograder.engine.sandbox.runtime import numpy_dirs, python_paths

JAIL_UID = 65534                # the unprivileged uid/gid inside bubblewrap (nobody)
PATHS = {"submission": "/sandbox/submission", "site": "/sandbox/site", "tmp": "/tmp"}   # as the worker sees them


def bwrap_command(bwrap: str, root: Path, tmp_bytes: int, seccomp_fd: int | None = None) -> list[str]:
    """bwrap and its flags up to the worker's own arguments: uid/gid JAIL_UID in a new user
    namespace, no capabilities, no network, a new session; /usr and the base libraries, the stdlib
    (site-packages hidden), numpy in a private site dir, the jail folder's worker and copy
    (`root`), a tmpfs /tmp of tmp_bytes; the filter loaded from `seccomp_fd`."""
    exe, libdir, stdlib = python_paths()
    cmd = [bwrap, "--unshare-all", "--unshare-user", "--uid", str(JAIL_UID), "--gid", str(JAIL_UID),
           "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--clearenv",
           "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8",
           "--ro-bind", "/usr", "/usr"]
    for top in ("/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if os.path.islink(top):
            cmd += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            cmd += ["--ro-bind", top, top]
    cmd += ["--ro-bind", exe, exe, "--ro-bind", libdir, libdir,
            "--tmpfs", os.path.join(stdlib, "site-packages")]
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
