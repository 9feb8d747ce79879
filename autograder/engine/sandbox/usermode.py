"""The "user" mode (root without a usable bubblewrap, e.g. a Gradescope or Docker container): student code
runs as a uid of its own, and the kernel keeps it to its own files: a Landlock ruleset (landlock.py)
allows the interpreter, the files the loader maps for it, its stdlib (not the packages folder inside
it), numpy, the worker, the copy of the submission, its scratch folder and /dev/null, and nothing
else, applied in the grader's child before it execs the worker. Where the kernel has no Landlock the
worker is chrooted into a tree of the same files (chroot.py); where the grader cannot chroot either,
the mode refuses (modes.user_mode_problem): file modes alone would leave it every world-readable file."""
from __future__ import annotations

import atexit
import ctypes
import errno
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
from autograder.engine.sandbox import chroot, landlock
from autograder.engine.sandbox.errors import SandboxUnavailable
from autograder.engine.sandbox.jail import PACKAGE_FOLDERS
from autograder.engine.sandbox.runtime import JAIL_ENV, MAPPED_PROBE, numpy_dirs, python_paths

USER_UID_BASE = 1_000_000       # "user" mode: the jail uids start here (take_uid)


def course_secrets() -> list[Path]:
    """What student code must never read: the engine (autograder/), the declarations (labs/), the
    reference, the checkout around them when the packages are installed from one (pip install -e),
    and the course the grader runs in (source/, samples/, grades/, scalelabs.toml)."""
    found = package_dirs()
    checkouts = {p.parent for p in found if (p.parent / "pyproject.toml").is_file()}
    return found + [p for p in {*checkouts, find_course()} if p is not None]


def drop_command(uid: int) -> list[str]:
    """setpriv prefix: run as `uid` (gid alike, no groups), no capabilities, no_new_privs (the
    grader's probes of what the uid's interpreter is; the worker itself is started by `become`)."""
    return [shutil.which("setpriv") or "setpriv", "--reuid", str(uid), "--regid", str(uid), "--clear-groups",
            "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]


# --- becoming the jail's uid, in the grader's child before exec ---

PR_SET_KEEPCAPS, PR_CAPBSET_DROP = 8, 24
_CAPABILITY_V3 = 0x20080522


def _last_capability() -> int:
    try:
        return int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        return 63


def become(uid: int) -> Callable[[], None]:
    """A function for the grader's child (root) between fork and exec that does what `setpriv --reuid
    UID --regid UID --clear-groups --inh-caps=-all --bounding-set=-all` does: the bounding set emptied,
    no groups, uid and gid `uid`, no inheritable capability. Like setpriv it keeps its permitted
    capabilities effective until the exec, so that the exec finds the interpreter through folders
    only root may enter (a pyenv under /root); the exec then gives the uid none (and no_new_privs,
    set after this, forbids gaining any from a file). Everything it needs is prepared here."""
    libc = ctypes.CDLL(None, use_errno=True)
    last = _last_capability()
    header = (ctypes.c_uint32 * 2)(_CAPABILITY_V3, 0)
    data = (ctypes.c_uint32 * 6)()          # two of {effective, permitted, inheritable}

    def drop() -> None:
        for capability in range(last + 1):
            if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
                raise OSError(ctypes.get_errno(), "the bounding set could not be emptied")
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        if libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "PR_SET_KEEPCAPS")
        os.setresuid(uid, uid, uid)
        if libc.capget(header, data) != 0:
            raise OSError(ctypes.get_errno(), "capget")
        data[0], data[3] = data[1], data[4]         # effective = permitted, until the exec
        data[2] = data[5] = 0                       # no inheritable capability
        if libc.capset(header, data) != 0:
            raise OSError(ctypes.get_errno(), "capset")
    return drop


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


def _numpy_file(source: str, target: str) -> None:
    """One file of the private numpy: a hard link where the file is root's, others may read it and none
    may write it (what a copy would be, without copying numpy's 70 MB, 0.6 s of CPU, in every grader
    process: the jail uid reaches it through the private folder alone, and cannot change it), else (or on
    another filesystem) a copy, made root's and readable by all."""
    found = os.lstat(source)
    if found.st_uid == 0 and not found.st_mode & 0o022 and found.st_mode & 0o004:
        try:
            os.link(source, target)
            return
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES):
                raise
    shutil.copy2(source, target)
    os.chmod(target, 0o755 if os.access(target, os.X_OK) else 0o644)


def private_numpy_site() -> Path:
    """A root-owned, world-readable copy of numpy (once per process): the course folder that holds
    the virtualenv is closed to the jail uid, numpy is not secret. Its files are hard links where that
    changes nothing (_numpy_file); its folders are its own."""
    if "site" not in _private_site:
        site = Path(tempfile.mkdtemp(prefix="scalelabs-site-"))
        for d in numpy_dirs():
            shutil.copytree(d, site / os.path.basename(d), symlinks=True, copy_function=_numpy_file)
        for dirpath, dirnames, _ in os.walk(site):
            for name in dirnames:
                if not os.path.islink(os.path.join(dirpath, name)):
                    os.chmod(os.path.join(dirpath, name), 0o755)
        site.chmod(0o755)
        atexit.register(shutil.rmtree, site, True)
        _private_site["site"] = site
    return _private_site["site"]


@lru_cache(maxsize=None)
def mapped_as(uid: int) -> tuple[str, ...]:
    """runtime.mapped_files as `uid` runs the interpreter (started as the worker is, by `become`): the
    loader may find other libraries than root's (a pyenv under /root falls back to the system's
    libpython), and the uid's numpy is the private copy's. () if it fails: the worker then cannot
    start, which the start check reports."""
    exe = python_paths()[0]
    dynload = next((p for p in jail_stdlib(uid) if os.path.basename(p) == "lib-dynload"), "")
    numpy = str(private_numpy_site() / os.path.basename(numpy_dirs()[0])) if numpy_dirs() else ""
    try:
        done = subprocess.run([exe, "-I", "-S", "-c", MAPPED_PROBE, dynload, numpy], capture_output=True, text=True,
                              timeout=60, env=JAIL_ENV, cwd="/", preexec_fn=become(uid))
        return tuple(os.path.realpath(p) for p in json.loads(done.stdout))
    except (OSError, ValueError, subprocess.SubprocessError):
        return ()


@lru_cache(maxsize=None)
def runtime_rules(uid: int) -> tuple[tuple[str, int], ...]:
    """The Landlock rules of what the worker needs of this machine, read-only: the interpreter, the
    files the loader maps for it and its extension modules (mapped_as), ld.so.cache, the stdlib folders
    the uid's interpreter uses (jail_stdlib) -- each entry of them but the packages folders
    (PACKAGE_FOLDERS), the folder itself listable only, since a rule holds for everything beneath it
    -- and the private numpy."""
    rules = [(python_paths()[0], landlock.READ), ("/etc/ld.so.cache", landlock.READ)]
    rules += [(path, landlock.READ) for path in mapped_as(uid)]
    for entry in jail_stdlib(uid):
        if not os.path.isdir(entry):
            rules.append((entry, landlock.READ))
            continue
        rules.append((entry, landlock.READ_DIR))
        rules += [(os.path.join(entry, name), landlock.READ) for name in sorted(os.listdir(entry))
                  if name not in PACKAGE_FOLDERS]
    if numpy_dirs():
        rules.append((str(private_numpy_site()), landlock.READ))
    return tuple(rules)


def landlock_rules(uid: int, root: Path) -> list[tuple[str, int]]:
    """Everything one worker may open: runtime_rules, its jail folder's worker, site (links to the
    private numpy) and copy of the submission read-only, its tmp (its filter refuses new files
    there), and /dev/null."""
    return [*runtime_rules(uid), (str(root / "worker.py"), landlock.READ), (str(root / "site"), landlock.READ),
            (str(root / "submission"), landlock.READ), (str(root / "tmp"), landlock.SCRATCH),
            (os.devnull, landlock.DEVICE)]


def mechanism() -> tuple[str, str]:
    """How the kernel keeps the worker to its files here: ("landlock", ""), else ("chroot", why not
    Landlock) where the grader may chroot, else ("", why neither)."""
    version, why = landlock.abi()
    if version:
        return "landlock", ""
    cannot = chroot.can_chroot()
    return ("chroot", why) if not cannot else ("", f"{why}, and {cannot}")


def chroot_tree(uid: int) -> chroot.Tree:
    """The prepared tree of this grader process (chroot.tree) holding what `uid`'s worker needs."""
    exe = python_paths()[0]
    folders = tuple(p for p in jail_stdlib(uid) if os.path.isdir(p))
    files = (exe, "/etc/ld.so.cache", *mapped_as(uid), *(p for p in jail_stdlib(uid) if os.path.isfile(p)))
    made = chroot.tree(tuple(p for p in files if os.path.exists(p)), folders,
                       str(private_numpy_site()) if numpy_dirs() else None)
    chroot.device_null(made)
    return made


def exposed_by(path: str | Path, rules: list[tuple[str, int]]) -> str | None:
    """The allowed path through which student code could read or write `path` (it lies at or beneath
    it), or None. Folders allowed only to be listed (the stdlib's own) expose names, not files."""
    real = os.path.realpath(path)
    for where, rights in rules:
        if rights & (landlock.READ_FILE | landlock.WRITE_FILE):
            allowed = os.path.realpath(where)
            if real == allowed or real.startswith(allowed.rstrip(os.sep) + os.sep):
                return allowed
    return None


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
