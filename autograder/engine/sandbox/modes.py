"""Which boundary student code runs in: bubblewrap where it works, else a separate uid where the
grader is root, else unsandboxed only where the course opted in (docs/ARCHITECTURE.md, "Trust model")."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
from functools import lru_cache

from autograder.engine.config import SANDBOX_MODES as MODES
from autograder.engine.sandbox.errors import SandboxUnavailable
from autograder.engine.sandbox.jail import JAIL_UID
from autograder.engine.sandbox.seccomp import filter_fd, jail_filter
from autograder.engine.sandbox.usermode import mechanism


@lru_cache(maxsize=None)
def _bwrap_probe(path: str, tmp_bytes: int) -> bool:
    seccomp = filter_fd()
    probe = [path, "--unshare-all", "--unshare-user", "--uid", str(JAIL_UID), "--gid", str(JAIL_UID),
             "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
             "--size", str(tmp_bytes), "--tmpfs", "/tmp",
             *(["--seccomp", str(seccomp)] if seccomp is not None else []), "true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=10,
                              pass_fds=() if seccomp is None else (seccomp,)).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        if seccomp is not None:
            os.close(seccomp)


def bwrap_available(tmp_bytes: int = 64 << 20) -> str | None:
    """Path of a bwrap that runs the jail's real flags here (it may exist but be unusable without
    user namespaces), else None. Looked up on PATH at each call, probed once per path."""
    path = shutil.which("bwrap")
    return path if path and _bwrap_probe(path, tmp_bytes) else None


def user_mode_problem() -> str | None:
    """Why the "user" mode cannot run here, or None: it needs root (to switch uid), setpriv, a seccomp
    filter for this machine, and Landlock or else CAP_SYS_CHROOT (usermode.mechanism), without which
    nothing in the kernel keeps student code out of what every user may read."""
    if os.geteuid() != 0:
        return f"the grader runs as uid {os.geteuid()}, not root, so it cannot run student code as another user"
    if not shutil.which("setpriv"):
        return "setpriv (util-linux) is not installed"
    if jail_filter(False) is None:
        return f"scalelabs has no seccomp filter for this machine ({platform.machine()})"
    kind, why = mechanism()
    if not kind:
        return (f"{why}; without Landlock or a chroot nothing in the kernel would keep student code from the files "
                "every user may read")
    return None


def choose_mode(requested: str = "auto", allow_unsandboxed: bool = False, tmp_bytes: int = 64 << 20) -> str:
    """The boundary to use: "bubblewrap" where it works, else "user" where the grader is root,
    else "unsandboxed" only if the course opted in; otherwise SandboxUnavailable naming the fix.

    requested: "auto" or one of MODES (scalelabs.toml `[grading] sandbox`, checked by GradingConfig)."""
    if requested == "unsandboxed":
        return "unsandboxed"
    if requested in ("auto", "bubblewrap"):
        if bwrap_available(tmp_bytes):
            return "bubblewrap"
        if requested == "bubblewrap":
            raise SandboxUnavailable("scalelabs.toml asks for the bubblewrap sandbox but bwrap is not usable here: "
                                     "apt-get install bubblewrap, and allow user namespaces "
                                     "(sysctl kernel.unprivileged_userns_clone=1)")
    problem = user_mode_problem()
    if problem is None:
        return "user"
    if requested == "user":
        raise SandboxUnavailable(f"scalelabs.toml asks for the unprivileged-user sandbox but {problem}")
    if allow_unsandboxed:
        return "unsandboxed"
    raise SandboxUnavailable(
        "no sandbox can run student code here, so grading refuses: bubblewrap is missing or unusable "
        f"(apt-get install bubblewrap; it needs user namespaces) and {problem}. To grade anyway, "
        "UNSANDBOXED (student code can read the reference and change other results), pass "
        "--allow-unsandboxed or set `sandbox = \"unsandboxed\"` under [grading] in scalelabs.toml")


def mode_note(mode: str) -> str:
    """The sentence every result carries about the boundary its student code ran in."""
    if mode == "bubblewrap":
        return "student code ran in the bubblewrap sandbox (uid 65534, no network, no capabilities)"
    if mode == "user":
        confined = {"landlock": "Landlock", "chroot": "a chroot"}.get(mechanism()[0], "nothing")
        return ("student code ran as a separate unprivileged user (no capabilities, no_new_privs, one process, "
                f"no network, no new files; {confined} kept it to its own files and Python's), without bubblewrap")
    return ("WARNING: student code ran UNSANDBOXED (a plain subprocess with resource limits, which can read "
            "what the grader can; the course opted in to grading without a sandbox)")
