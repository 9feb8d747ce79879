"""The grader's side of the sandbox: start the worker inside a boundary, send JSON requests,
validate every reply as untrusted data, enforce the per-call timeout, the submission's time budget
and the memory limit, and turn every failure of student code into a `StudentError`.

Boundaries (`mode`, chosen by `choose_mode`; docs/ARCHITECTURE.md "Trust model"):

* "bubblewrap": uid/gid 65534 in a new user namespace, no capabilities, new session, no network,
  /usr and the base libraries, the stdlib (site-packages hidden), numpy in a private site dir, the
  worker script, a read-only *copy* of the submission and a size-capped tmpfs /tmp.
* "user" (root without a usable bwrap, e.g. a Gradescope container): a uid of its own (no
  capabilities, no_new_privs, via setpriv) on a private copy readable by that uid only; the course
  files and the submissions are checked to be unreadable to it (made so, or grading refuses).
* "unsandboxed": a plain subprocess with rlimits; only when the course opts in explicitly.
"""
from __future__ import annotations

import atexit
import builtins
import importlib.util
import itertools
import json
import os
import platform
import re
import resource
import select
import shutil
import signal
import stat
import struct
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from importlib.machinery import BYTECODE_SUFFIXES, EXTENSION_SUFFIXES, SOURCE_SUFFIXES
from pathlib import Path
from typing import Any, Callable, Collection

from autograder.engine.config import GradingConfig
from autograder.course import find_course, package_dirs

WORKER = Path(__file__).with_name("worker.py")
REPLY_CAP_BYTES = 4 << 20       # a reply longer than this is a flood on the protocol fd
FILE_CAP_BYTES = 64 << 20       # RLIMIT_FSIZE: files the student writes in /tmp
COPY_CAP_BYTES = 20 << 20       # submission files larger than this are not copied in
TREE_FILES_CAP = 2000           # entries of a submission tree looked at (copy and fingerprint)
TREE_DEPTH_CAP = 16             # folder depth of a submission tree looked at
TREE_BYTES_CAP = 100 << 20      # total bytes copied from one submission
SOURCE_LINE_CAP = 120           # characters of a student's source line quoted in feedback
MESSAGE_CAP = 200               # characters of student text (error message, printed output) kept from a reply
PARAMS_CAP = 64                 # parameters of a student function's signature reply
LIST_CAP = 10_000               # elements of a returned list (the worker's own cap, re-checked)
DEPTH_CAP = 3                   # nesting of a returned list
INT_BITS_CAP = 4_000            # bits of a returned int
FILES_OPEN_CAP = 256            # RLIMIT_NOFILE of the worker
JAIL_UID = 65534                # the unprivileged uid/gid inside bubblewrap (nobody)
USER_UID_BASE = 1_000_000       # "user" mode: uid = base + grader pid, one uid per live sandbox
MODES = ("bubblewrap", "user", "unsandboxed")


class StudentError(Exception):
    """The student's code failed: `message` is one line a student understands.

    `fatal` means the worker is gone (timeout, crash, exit, budget, malformed reply): calling again
    is pointless until the sandbox restarts it.
    """

    def __init__(self, message: str, kind: str = "exception", *, fatal: bool = False, output: str = "",
                 reported: bool = False, exc_type: str = "", where: tuple[str, int] | None = None):
        super().__init__(message)
        self.message, self.kind, self.fatal, self.output = message, kind, fatal, output
        # reported by the worker (so `message` and `output` are student text), with the exception's
        # builtin class and the student's own line where the worker named them (_check_error checks
        # their shape; the line is shown from the graded copy: autograder.engine.views)
        self.reported, self.exc_type, self.where = reported, exc_type, where


class SandboxUnavailable(RuntimeError):
    """No boundary can run here and the course did not opt in to grading without one."""


class BadReply(Exception):
    """A worker reply that is not what the protocol says (student code rewrote the worker)."""


# --- one task, no memory beside its limit: the seccomp filter bubblewrap loads ---

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


# --- which boundary ---

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
    """Why the "user" mode cannot run here, or None: it needs root (to switch uid) and setpriv."""
    if os.geteuid() != 0:
        return f"the grader runs as uid {os.geteuid()}, not root, so it cannot run student code as another user"
    if not shutil.which("setpriv"):
        return "setpriv (util-linux) is not installed"
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
        network = "no network" if _unshare_net() else "network NOT isolated"
        return (f"student code ran as a separate unprivileged user (no capabilities, no_new_privs, {network}), "
                "without bubblewrap")
    return ("WARNING: student code ran UNSANDBOXED (a plain subprocess with resource limits only; "
            "the course opted in to grading without a sandbox)")


# --- the user mode's checks: what the jail uid can reach ---

_PROBE = ("import json, os, sys\n"
          "out = {}\n"
          "for p in json.loads(sys.argv[1]):\n"
          "    out[p] = [os.access(p, os.R_OK) or os.access(p, os.X_OK), os.access(p, os.W_OK)]\n"
          "print(json.dumps(out))\n")


@lru_cache(maxsize=None)
def _unshare_net() -> list[str]:
    """`unshare --net --ipc --` where the grader may create namespaces (root with CAP_SYS_ADMIN),
    else [] (a container without it: the "user" mode then has the network, and System V shared
    memory its code leaves stays until removed). In an IPC namespace of its own, what the worker
    holds there goes with it."""
    path = shutil.which("unshare")
    command = [path, "--net", "--ipc", "--"]
    try:
        ok = bool(path) and subprocess.run(command + ["true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return command if ok else []


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
    exe = _python()[0]
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
    exe = _python()[0]
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
        for d in _numpy_dirs():
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


def _python() -> tuple[str, str, str]:
    """(interpreter binary, base prefix's lib dir, stdlib dir) of the Python running the grader."""
    exe = os.path.realpath(sys.executable)
    stdlib = os.path.realpath(sysconfig.get_paths(vars={"base": sys.base_prefix, "installed_base": sys.base_prefix})["stdlib"])
    return exe, os.path.dirname(stdlib), stdlib


def _numpy_dirs() -> list[str]:
    """numpy's package dir and its bundled shared libraries (numpy.libs), if numpy is installed."""
    spec = importlib.util.find_spec("numpy")
    if spec is None or not spec.submodule_search_locations:
        return []
    pkg = os.path.realpath(list(spec.submodule_search_locations)[0])
    libs = os.path.join(os.path.dirname(pkg), "numpy.libs")
    return [pkg] + ([libs] if os.path.isdir(libs) else [])


# --- the submission tree, walked without trusting it ---

@dataclass(frozen=True)
class TreeFile:
    rel: str         # posix path relative to the submission folder
    path: str
    size: int


@dataclass
class Tree:
    files: list[TreeFile]
    skipped: list[str]   # one line per thing not taken (link, FIFO, too big, too deep, ...)


def walk_submission(root: Path) -> Tree:
    """The regular files of a submission, bounded: symlinks (the root included), FIFOs, devices and
    sockets are never followed or opened, hidden entries and caches are left out, and depth, entry
    count and sizes are capped. Only lstat/scandir: no file is read here."""
    tree = Tree([], [])
    root = Path(root)
    try:
        if not stat.S_ISDIR(os.lstat(root).st_mode):
            tree.skipped.append(f"{root.name} is not a folder (a link?)")
            return tree
    except OSError as exc:
        tree.skipped.append(f"{root.name} cannot be read ({exc.strerror})")
        return tree
    stack: list[tuple[str, int]] = [("", 0)]
    seen = 0
    while stack:
        rel_dir, depth = stack.pop()
        try:  # never more than the cap listed: a folder of a million entries costs no more
            with os.scandir(root / rel_dir if rel_dir else root) as it:
                entries = sorted(itertools.islice(it, TREE_FILES_CAP + 1 - seen), key=lambda e: e.name)
        except OSError as exc:
            tree.skipped.append(f"{rel_dir or '.'}: cannot be listed ({exc.strerror})")
            continue
        for entry in entries:
            seen += 1
            if seen > TREE_FILES_CAP:
                tree.skipped.append(f"more than {TREE_FILES_CAP} entries: the rest is ignored")
                tree.files.sort(key=lambda f: f.rel)
                return tree
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.name.startswith(".") or entry.name == "__pycache__":
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                tree.skipped.append(f"{rel}: cannot be read")
                continue
            if stat.S_ISLNK(info.st_mode):
                tree.skipped.append(f"{rel} is a symbolic link (links are not followed)")
            elif stat.S_ISDIR(info.st_mode):
                if depth + 1 >= TREE_DEPTH_CAP:
                    tree.skipped.append(f"{rel}: folders nested deeper than {TREE_DEPTH_CAP} are ignored")
                else:
                    stack.append((rel, depth + 1))
            elif stat.S_ISREG(info.st_mode):
                if info.st_size > COPY_CAP_BYTES:
                    tree.skipped.append(f"{rel} is larger than {COPY_CAP_BYTES >> 20} MB")
                else:
                    tree.files.append(TreeFile(rel, entry.path, info.st_size))
            else:
                tree.skipped.append(f"{rel} is not a regular file (a FIFO or device?)")
    tree.files.sort(key=lambda f: f.rel)
    return tree


def read_regular(path: str | Path, cap_bytes: int = COPY_CAP_BYTES) -> bytes:
    """The bytes of a regular file, refusing links, FIFOs and devices (O_NOFOLLOW|O_NONBLOCK, then
    fstat) and anything over cap_bytes. OSError/ValueError name what is wrong."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_size > cap_bytes:
            raise ValueError(f"larger than {cap_bytes >> 20} MB")
        chunks, size = [], 0
        while size <= cap_bytes:
            chunk = os.read(fd, min(1 << 20, cap_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > cap_bytes:
            raise ValueError(f"larger than {cap_bytes >> 20} MB")
        return b"".join(chunks)
    finally:
        os.close(fd)


# every file suffix Python imports a module from, longest first ("x.abi3.so" is not module "x.abi3")
IMPORTABLE_SUFFIXES = sorted([(s, "a compiled module") for s in EXTENSION_SUFFIXES]
                             + [(s, "compiled bytecode") for s in BYTECODE_SUFFIXES]
                             + [(s, "another source file") for s in SOURCE_SUFFIXES], key=lambda p: -len(p[0]))


def shadowing(rel: str, modules: Collection[str]) -> str | None:
    """What `rel` (a path in the submission) is when Python could import it as one of `modules`
    in place of that module's own .py, else None. The worker puts the submission's folder first on
    sys.path, and its FileFinder takes a package folder, then an extension module, then source,
    then sourceless bytecode (importlib._bootstrap_external, with importlib.machinery's suffixes)."""
    top, _, rest = rel.partition("/")
    if top == "__pycache__" and rest.endswith(tuple(BYTECODE_SUFFIXES)) and rest.partition(".")[0] in modules:
        return "compiled bytecode"      # walk_submission leaves caches out; this holds without it
    if rest:
        return "a package folder" if top in modules else None
    for suffix, kind in IMPORTABLE_SUFFIXES:
        stem = rel[:-len(suffix)]
        if rel.endswith(suffix) and stem in modules and rel != f"{stem}.py":
            return kind
    return None


def cached_shadows(src: Path, modules: Collection[str]) -> list[str]:
    """The top-level __pycache__ entries compiled from `modules` (walk_submission never takes a
    __pycache__; an unchecked hash-based .pyc there would run in place of the .py, PEP 552), so
    that feedback can name what was left out. Bounded like walk_submission; links not followed."""
    cache = Path(src) / "__pycache__"
    try:
        if not (stat.S_ISDIR(os.lstat(src).st_mode) and stat.S_ISDIR(os.lstat(cache).st_mode)):
            return []
        with os.scandir(cache) as it:
            names = sorted(e.name for e in itertools.islice(it, TREE_FILES_CAP))
    except OSError:
        return []
    return [f"__pycache__/{n}" for n in names if shadowing(f"__pycache__/{n}", modules)]


def copy_submission(src: Path, dest: Path, modules: Collection[str] = ()) -> tuple[list[str], list[str]]:
    """Copy the submission's regular files (walk_submission: no links, no FIFOs, bounded), leaving
    out notebooks (never imported) and whatever Python could import as one of `modules` instead of
    its .py (`shadowing`: the .py a TA reads is what runs), `modules` and every module the submission
    holds as a top-level .py (a helper of the student's own beside its own package or .so). Returns
    (what was skipped, one line each; what was ignored as a shadow, each "path (what it is)")."""
    tree = walk_submission(src)
    sources = {f.rel for f in tree.files if "/" not in f.rel and f.rel.endswith(".py")}
    # A __pycache__ is never copied. Its bytecode of a lab module is named only where that module's
    # .py is missing (the student then learns why nothing ran); beside the .py, as running the code
    # or pytest leaves it in most folders, and for any other module it is not worth a line.
    ignored = [f"{rel} (compiled bytecode)" for rel in cached_shadows(src, modules)
               if f"{rel.split('/', 1)[1].partition('.')[0]}.py" not in sources]
    modules = {*modules, *(rel[:-3] for rel in sources)}
    dest.mkdir(parents=True, exist_ok=True)
    total = 0
    for f in tree.files:
        if f.rel.endswith(".ipynb"):
            continue
        kind = shadowing(f.rel, modules)
        if kind is not None:
            entry = f"{f.rel.partition('/')[0]}/ ({kind})" if kind == "a package folder" else f"{f.rel} ({kind})"
            if entry not in ignored:
                ignored.append(entry)
            continue
        if total + f.size > TREE_BYTES_CAP:
            tree.skipped.append(f"{f.rel}: the submission is over {TREE_BYTES_CAP >> 20} MB in total")
            continue
        try:
            data = read_regular(f.path)
        except (OSError, ValueError) as exc:
            tree.skipped.append(f"{f.rel}: {getattr(exc, 'strerror', None) or exc}")
            continue
        total += len(data)
        target = dest / f.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return tree.skipped, ignored


def ignored_note(ignored: list[str], shown: int = 5) -> str:
    """The one feedback line naming what copy_submission ignored as a shadow, and why ('' if nothing)."""
    if not ignored:
        return ""
    names = "; ".join(ignored[:shown]) + (f" (and {len(ignored) - shown} more)" if len(ignored) > shown else "")
    cache = (" Hand in the .py file itself: bytecode in __pycache__ is never graded."
             if any(entry.startswith("__pycache__/") for entry in ignored) else "")
    return ("Ignored, because Python would import it instead of the .py file of the same name (only your .py "
            f"files are graded, so what runs is the code you hand in): {names}.{cache}")


# --- replies are untrusted data ---

def _check_value(value: Any, depth: int = 0) -> None:
    """A returned value in the worker's vocabulary: None/bool/int/float/str and short lists of them."""
    kind = type(value)
    if value is None or kind in (bool, float):
        return
    if kind is int:
        if value.bit_length() > INT_BITS_CAP:
            raise BadReply("an integer too large")
        return
    if kind is str:
        if len(value) > LIST_CAP:
            raise BadReply("a string too long")
        return
    if kind is list:
        if depth >= DEPTH_CAP or len(value) > LIST_CAP:
            raise BadReply("a list too long or too deeply nested")
        for v in value:
            _check_value(v, depth + 1)
        return
    raise BadReply(f"a value of JSON type {kind.__name__}")


def _text(value: Any, cap: int = MESSAGE_CAP) -> str:
    if not isinstance(value, str):
        raise BadReply("a message that is not text")
    return value[:cap] + ("..." if len(value) > cap else "")


def _check_error(reply: dict) -> StudentError:
    err = reply.get("error")
    if not isinstance(err, dict):
        raise BadReply("an error without its description")
    kind = "wrong_type" if err.get("wrong_type") is True else err.get("kind", "exception")
    if not isinstance(kind, str) or len(kind) > 40:
        raise BadReply("an error of unknown kind")
    exc_type = err.get("type") if err.get("type") in BUILTIN_EXCEPTIONS else ""
    where = err.get("where")
    where = ((where[0], where[1]) if isinstance(where, list) and len(where) == 2 and isinstance(where[0], str)
             and _OWN_FILE.fullmatch(where[0]) and type(where[1]) is int and 0 < where[1] <= 1_000_000 else None)
    return StudentError(_text(err.get("message", "failed")), kind, output=_text(reply.get("output", "")),
                        reported=True, exc_type=exc_type, where=where)


# what a worker may name as an error's type and file (anything else is dropped, never shown)
BUILTIN_EXCEPTIONS = frozenset(name for name, obj in vars(builtins).items()
                               if isinstance(obj, type) and issubclass(obj, BaseException))
_OWN_FILE = re.compile(r"[A-Za-z0-9_]{1,80}\.py")


def _check_call(reply: Any) -> tuple[bool, Any, str]:
    """(ok, value or StudentError, output) of one call reply."""
    if not isinstance(reply, dict) or type(reply.get("ok")) is not bool:
        raise BadReply("a call reply that is not {ok: true|false, ...}")
    if not reply["ok"]:
        return False, _check_error(reply), ""
    if "value" not in reply:
        raise BadReply("a call reply without a value")
    _check_value(reply["value"])
    return True, reply["value"], _text(reply.get("output", ""))


class Sandbox:
    """One submission's worker. Use as a context manager; `load()` first, then `signature`/`call`.

    `deadline` is a time.monotonic() value: no call runs past it (the submission's budget).
    `mode` is one of MODES (see choose_mode); `secrets`/`outputs` are, in "user" mode, paths the
    jail uid must not read / write besides the course folder and the submission itself.
    `provided`: the modules shipped beside `module` (Assignment.provided); like `module`, only their
    .py files are copied in (copy_submission), and what was left out is in `ignored`.
    """

    def __init__(self, submission_dir: Path | None, module: str, config: GradingConfig,
                 *, deadline: float | None = None, mode: str | None = None,
                 secrets: list[Path] = (), outputs: list[Path] = (), provided: Collection[str] = ()):
        self.submission_dir = Path(submission_dir) if submission_dir is not None else None   # None: ahead()
        self.module = module
        self.modules = (module, *provided)
        self.config = config
        self.deadline = deadline
        self.mode = mode or choose_mode(config.sandbox, tmp_bytes=self.tmp_bytes)
        if self.mode not in MODES:
            raise ValueError(f"unknown sandbox mode {self.mode!r}")
        self.bwrap = bwrap_available(self.tmp_bytes) if self.mode == "bubblewrap" else None
        if self.mode == "bubblewrap" and not self.bwrap:
            raise SandboxUnavailable("bubblewrap was requested but is not usable here: apt-get install bubblewrap")
        if self.mode == "user":
            problem = user_mode_problem()
            if problem:
                raise SandboxUnavailable(f"the unprivileged-user sandbox cannot run: {problem}")
        self.uid = USER_UID_BASE + os.getpid()
        self.secrets = [*course_secrets(), *([self.submission_dir] if self.submission_dir else []), *map(Path, secrets)]
        self.outputs = list(map(Path, outputs))
        self.root: Path | None = None
        self._source_lines: dict[str, list[str]] = {}   # file name -> lines of the graded copy (source_line)
        self.skipped: list[str] = []
        self.ignored: list[str] = []
        self.proc: subprocess.Popen | None = None
        self.buffer = b""
        self.import_error: StudentError | None = None
        self.imported = False
        self.starting = False       # spawned, its "ready" line not read yet (ahead())

    @classmethod
    def ahead(cls, module: str, config: GradingConfig) -> "Sandbox":
        """A bubblewrap jail started before its submission is known, so that its interpreter starts
        while the grader works on something else (a batch starts the next student's jail while it
        grades this one); `take` then copies the submission in. Only bubblewrap: the "user" mode
        guards each submission's own files before its worker may start. The jail binds the copy's
        folder, so files copied in after the start are what the worker imports."""
        box = cls(None, module, config, mode="bubblewrap")
        try:
            box._make_root()
            box._spawn()
        except BaseException:
            box.close()
            raise
        return box

    def take(self, submission_dir: Path, deadline: float | None = None, provided: Collection[str] = ()) -> "Sandbox":
        """Copy a submission into a jail started ahead (nothing of it has run yet) and set its
        deadline; `provided` as in the constructor."""
        if self.submission_dir is not None or self.imported:
            raise ValueError("this sandbox already holds a submission")
        self.submission_dir, self.deadline = Path(submission_dir), deadline
        self.modules = (self.module, *provided)
        self.secrets.append(self.submission_dir)
        self._copy_in()
        return self

    @property
    def tmp_bytes(self) -> int:
        """Size of the jail's tmpfs /tmp: it is memory, so it counts against memory_mb (_limits
        gives the address space only the rest)."""
        return min(self.config.tmp_mb, self.config.memory_mb // 2) << 20

    # --- lifecycle ---

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._kill()
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def _prepare(self) -> None:
        if self.mode == "user":
            protect_secrets(self.uid, self.secrets, self.outputs)
        self._make_root()
        self._copy_in()

    def _copy_in(self) -> None:
        """The submission's copy in the jail's folder (_prepare, or take for a jail started ahead)."""
        self.skipped, self.ignored = copy_submission(self.submission_dir, self.root / "submission", self.modules)
        if self.mode == "user":
            # the jail uid may enter the root, read the copy and the worker, and write only its tmp;
            # the copy is root's, readable by the jail's group (its gid is its uid) alone: another
            # grader's jail, beside this one in /tmp, must not read (or import) this student's code
            self.root.chmod(0o711)
            for dirpath, dirnames, filenames in os.walk(self.root / "submission"):
                os.chown(dirpath, 0, self.uid)
                os.chmod(dirpath, 0o750)
                for name in filenames:
                    os.chown(os.path.join(dirpath, name), 0, self.uid)
                    os.chmod(os.path.join(dirpath, name), 0o640)
            (self.root / "site").chmod(0o755)
            (self.root / "worker.py").chmod(0o644)
            os.chown(self.root / "tmp", self.uid, self.uid)
            (self.root / "tmp").chmod(0o700)

    def _make_root(self) -> None:
        """The jail's folder: an empty submission/ (filled by _prepare or take), tmp/, site/, the worker.
        Named by the grader's pid, so that a later grader can tell a dead one's folder (sweep_stale_roots)."""
        _sweep_once()
        self.root = Path(tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-"))
        (self.root / "submission").mkdir()
        (self.root / "tmp").mkdir()
        site = self.root / "site"
        site.mkdir()
        if self.mode == "unsandboxed":
            for d in _numpy_dirs():
                (site / os.path.basename(d)).symlink_to(d)
        elif self.mode == "user":
            for d in private_numpy_site().iterdir():
                (site / d.name).symlink_to(d)
        shutil.copyfile(WORKER, self.root / "worker.py")

    def _command(self, seccomp_fd: int | None = None) -> tuple[list[str], dict[str, Any]]:
        """The worker's command line and its paths; bubblewrap loads the filter from `seccomp_fd`."""
        exe, libdir, stdlib = _python()
        roots = [stdlib, libdir]
        if self.mode == "bubblewrap":
            paths = {"submission": "/sandbox/submission", "site": "/sandbox/site", "tmp": "/tmp"}
            cmd = [self.bwrap, "--unshare-all", "--unshare-user", "--uid", str(JAIL_UID), "--gid", str(JAIL_UID),
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
            for d in _numpy_dirs():
                cmd += ["--ro-bind", d, f"/sandbox/site/{os.path.basename(d)}"]
            cmd += ["--ro-bind", str(self.root / "worker.py"), "/sandbox/worker.py",
                    "--ro-bind", str(self.root / "submission"), paths["submission"],
                    "--size", str(self.tmp_bytes), "--tmpfs", "/tmp",
                    "--proc", "/proc", "--dev", "/dev",
                    # bwrap's /dev and its root are tmpfs of their own, uncapped: nothing may be written there
                    "--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/tmp",
                    *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
                    exe, "-I", "-S", "/sandbox/worker.py"]
            roots += ["/sandbox"]
        else:
            paths = {k: str(self.root / k) for k in ("submission", "site", "tmp")}
            cmd = [exe, "-I", "-S", str(self.root / "worker.py")]
            if self.mode == "user":
                cmd = _unshare_net() + drop_command(self.uid) + cmd
                roots += [paths["submission"], paths["site"], str(private_numpy_site()), *jail_stdlib(self.uid)]
            else:
                roots += [paths["submission"], paths["site"]] + _numpy_dirs()
        config = dict(paths, module=self.module, read_roots=roots, output_cap=self.config.output_cap_chars)
        return cmd + [json.dumps(config)], paths

    def _limits(self) -> None:
        """Runs in the child before exec: memory, CPU backstop, file size, open files (each socket or
        pipe holds kernel memory), no core dumps; in "user" mode also a process cap (fork bombs
        count against the jail uid only)."""
        mem = (self.config.memory_mb << 20) - (self.tmp_bytes if self.mode == "bubblewrap" else 0)
        cpu = int(self.config.budget_s) + 10
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_CAP_BYTES, FILE_CAP_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (FILES_OPEN_CAP, FILES_OPEN_CAP))
        if self.mode == "user":
            resource.setrlimit(resource.RLIMIT_NPROC, (64, 64))

    def _spawn(self) -> None:
        seccomp = filter_fd() if self.mode == "bubblewrap" else None
        try:
            cmd, paths = self._command(seccomp)
            env = {"PATH": "/usr/bin:/bin", "HOME": paths["tmp"], "LANG": "C.UTF-8"}
            self.buffer = b""
            self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                         cwd=self.root / "tmp", env=env, preexec_fn=self._limits,
                                         start_new_session=True, close_fds=True,
                                         pass_fds=() if seccomp is None else (seccomp,))
        finally:
            if seccomp is not None:
                os.close(seccomp)
        self.starting = True

    def _start(self) -> None:
        if self.root is None:
            self._prepare()
        if not (self.starting and self.alive):   # a jail started ahead is used once, if it still runs
            if self.starting:
                self._kill()
            self._spawn()
        self.starting = False
        ready = self._read(self.config.import_timeout_s, what=f"starting Python for {self.module}.py")
        if not isinstance(ready, dict) or ready.get("ok") is not True:
            self._kill()
            raise StudentError(f"starting Python for {self.module}.py failed", "died", fatal=True)

    def _kill(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self.proc.wait()
            self.proc = None
        if self.mode == "user":
            kill_uid(self.uid)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # --- protocol ---

    def _death(self, what: str) -> StudentError:
        """The message for a worker that stopped without replying."""
        code = self.proc.wait() if self.proc else None
        self._kill()
        if code is not None and code < 0:
            sig = signal.Signals(-code)
            if sig is signal.SIGXCPU:
                return StudentError(f"{what} used up its CPU time", "timeout", fatal=True)
            if sig is signal.SIGXFSZ:
                return StudentError(f"{what} wrote a file larger than {FILE_CAP_BYTES >> 20} MB", "died", fatal=True)
            return StudentError(f"{what} crashed the worker process ({sig.name})", "died", fatal=True)
        return StudentError(f"{what} stopped the worker process (exit code {code}: os._exit() or a crash)",
                            "died", fatal=True)

    def _read(self, timeout_s: float, what: str) -> Any:
        """One reply line within the timeout (and the submission's deadline), parsed; else a fatal StudentError."""
        start = time.monotonic()
        limit = start + timeout_s
        budget_bound = self.deadline is not None and self.deadline < limit
        if budget_bound:
            limit = self.deadline
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            remaining = limit - time.monotonic()
            ready = select.select([fd], [], [], max(remaining, 0))[0] if remaining > 0 else []
            if not ready:
                self._kill()
                if budget_bound:
                    raise StudentError("the time budget for grading this submission ran out", "budget", fatal=True)
                raise StudentError(f"{what} did not finish within {timeout_s:g} s (an infinite loop?)",
                                   "timeout", fatal=True)
            chunk = os.read(fd, 65536)
            if not chunk:
                raise self._death(what)
            self.buffer += chunk
            if len(self.buffer) > REPLY_CAP_BYTES:
                self._kill()
                raise StudentError(f"{what} flooded the grader's channel", "died", fatal=True)
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: arrays nested 100k deep
            self._kill()
            raise StudentError(f"{what} corrupted the grader's channel", "died", fatal=True)

    def _malformed(self, what: str, why: str) -> StudentError:
        self._kill()
        return StudentError(f"{what}: the worker sent a malformed reply ({why}); "
                            "student code must not tamper with the grader's channel", "protocol", fatal=True)

    def _request(self, request: dict, timeout_s: float, what: str, check: Callable[[dict], Any]) -> Any:
        """Send one request; `check(reply)` validates an ok reply and returns what the caller needs."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self._kill()
            raise StudentError("the time budget for grading this submission ran out", "budget", fatal=True)
        if not self.alive:
            raise StudentError("the worker process is not running", "died", fatal=True)
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._death(what)
        reply = self._read(timeout_s, what)
        try:
            if not isinstance(reply, dict) or type(reply.get("ok")) is not bool:
                raise BadReply("not {ok: true|false, ...}")
            if not reply["ok"]:
                error = _check_error(reply)
            else:
                return check(reply)
        except (BadReply, RecursionError) as exc:
            raise self._malformed(what, str(exc) if isinstance(exc, BadReply) else "nested too deeply")
        raise error

    # --- the API the checks use ---

    def load(self) -> None:
        """Start the worker and import the module; a failure is kept in `import_error` and raised."""
        if self.import_error is not None:
            raise self.import_error
        if self.alive and self.imported:
            return
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise StudentError("the time budget for grading this submission ran out", "budget", fatal=True)
        if self.root is None:
            self._prepare()
        if not (self.root / "submission" / f"{self.module}.py").is_file():
            why = next((s for s in self.skipped if s.startswith(f"{self.module}.py ")), "")
            self.import_error = StudentError(f"{self.module}.py is not in the submission" + (f" ({why})" if why else ""),
                                             "missing_module")
            raise self.import_error
        what = f"importing {self.module}.py"
        try:
            self._start()
            self._request({"op": "import"}, self.config.import_timeout_s, what, lambda reply: None)
            self.imported = True
        except StudentError as exc:
            if exc.kind == "budget":
                raise
            self.import_error = exc
            raise

    def restart(self) -> None:
        """A fresh worker (after a timeout or crash), with the module imported again."""
        self._kill()
        self.imported = False
        self.load()

    def signature(self, name: str) -> list[str]:
        """The parameter names of the student's function, in order."""
        def check(reply: dict) -> list[str]:
            params = reply.get("params")
            if not isinstance(params, list) or len(params) > PARAMS_CAP:
                raise BadReply("a signature without a short list of parameters")
            if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) and len(x) < 200 for x in p)
                       for p in params):
                raise BadReply("a parameter that is not [name, kind]")
            return [p[0] for p in params if p[1] in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY", "POSITIONAL_ONLY")]
        return self._request({"op": "signature", "name": name}, self.config.call_timeout_s, f"inspecting {name}", check)

    def call(self, name: str, kwargs: dict) -> Any:
        """The student's name(**kwargs) as a JSON value, or StudentError."""
        return self._request({"op": "call", "name": name, "kwargs": kwargs}, self.config.call_timeout_s, name,
                             lambda reply: _check_call(reply)[1])

    def call_many(self, name: str, kwargs_list: list[dict]) -> list[tuple[bool, Any]]:
        """Many calls in one round trip: [(True, value) | (False, error message)], exactly one per
        input, or a fatal StudentError for the whole batch (which then has no culprit; callers
        retry one by one)."""
        def check(reply: dict) -> list[tuple[bool, Any]]:
            replies = reply.get("replies")
            if not isinstance(replies, list) or len(replies) != len(kwargs_list):
                raise BadReply(f"not one reply per input ({len(kwargs_list)} inputs)")
            out = []
            for r in replies:
                ok, value, _ = _check_call(r)
                out.append((True, value) if ok else (False, value.message))
            return out
        return self._request({"op": "call_many", "name": name, "kwargs_list": kwargs_list},
                             self.config.call_timeout_s, name, check)

    def source_line(self, filename: str, line: int) -> str | None:
        """Line `line` of the graded copy's top-level `filename`, stripped and capped (SOURCE_LINE_CAP):
        the student's own line an error points at, read by the grader from what was graded (a worker's
        claim names only the place). None where there is no such line."""
        if self.root is None or not _OWN_FILE.fullmatch(filename):
            return None
        lines = self._source_lines.get(filename)
        if lines is None:
            try:
                lines = read_regular(self.root / "submission" / filename).decode("utf-8", "replace").splitlines()
            except (OSError, ValueError):
                lines = []
            self._source_lines[filename] = lines
        if not 0 < line <= len(lines):
            return None
        text = " ".join(lines[line - 1].split())
        return text if len(text) <= SOURCE_LINE_CAP else text[:SOURCE_LINE_CAP - 3] + "..."


ROOT_PREFIX = "scalelabs-sandbox-"
_ROOT_NAME = re.compile(re.escape(ROOT_PREFIX) + r"(\d+)-")
STALE_AFTER_S = 3600    # a folder untouched this long whose grader is gone is stale (not merely slow)


def sweep_stale_roots(parent: Path | None = None, stale_after_s: float = STALE_AFTER_S) -> list[Path]:
    """Remove the jail folders that graders killed without cleaning up (kill -9, a lost machine) left
    behind: each holds a copy of a student's submission. A folder is stale when the pid in its name
    runs no longer and it was not modified for stale_after_s (a pid seen from another pid namespace
    may look dead; an hour-old jail is not in use). Returns what was removed."""
    removed = []
    parent = Path(parent or tempfile.gettempdir())
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        match = _ROOT_NAME.match(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            os.kill(int(match.group(1)), 0)
            continue                    # the grader still runs
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            continue
        try:
            if time.time() - entry.stat(follow_symlinks=False).st_mtime < stale_after_s:
                continue
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed


@lru_cache(maxsize=None)
def _sweep_once() -> None:
    sweep_stale_roots()


def kill_uid(uid: int) -> None:
    """SIGKILL every process of `uid` ("user" mode: a daemon that left the session dies too)."""
    for _ in range(3):
        found = False
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                try:
                    if entry.stat().st_uid == uid:
                        found = True
                        os.kill(int(entry.name), signal.SIGKILL)
                except (OSError, ProcessLookupError):
                    pass
        if not found:
            return
        time.sleep(0.01)
