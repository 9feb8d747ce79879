"""The user mode where the kernel has no Landlock: the worker runs chrooted (as root, in the grader's
child, before it becomes the jail's uid) into a tree the grader prepared, which holds what the
worker needs and nothing else -- the interpreter, the files the loader maps for it with the links it
finds them by, ld.so.cache, the stdlib folders the uid's interpreter uses (packages folders left
out), the private numpy, and the jails' own folders. Files are hard links where the tree shares a
filesystem with them (else copies), made once per grader process.

What a chroot leaves out is out of reach however a path is spelled: `..` stops at the tree's root,
there is no /proc inside (no capability to mount one), no fd from outside (the worker inherits only
its pipes), and the uid has no CAP_SYS_CHROOT to leave. It needs the grader to hold CAP_SYS_CHROOT
(Docker keeps it by default) and the chroot syscall allowed (Docker's default profile allows it with
that capability).
"""
from __future__ import annotations

import atexit
import errno
import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path
from typing import Callable

from autograder.engine.sandbox.jail import PACKAGE_FOLDERS, TOP_LINKS, aliases, expose, interpreter_of
from autograder.engine.sandbox.roots import ROOT_PREFIX

CAP_SYS_CHROOT = 18
JAILS = "jails"         # the tree's folder holding one folder per worker


def can_chroot() -> str:
    """"" where this process may chroot (root holding CAP_SYS_CHROOT), else why not."""
    try:
        with open("/proc/self/status") as status:
            effective = next(int(line.split()[1], 16) for line in status if line.startswith("CapEff:"))
    except (OSError, StopIteration, ValueError):
        return "the grader's capabilities cannot be read (/proc/self/status)"
    if os.geteuid() != 0 or not effective >> CAP_SYS_CHROOT & 1:
        return "the grader lacks CAP_SYS_CHROOT (a container started with --cap-drop SYS_CHROOT or ALL)"
    return ""


def _place(source: str, target: str) -> None:
    """A hard link of `source` at `target`, else a copy (another filesystem, or links refused); a
    file already placed (a mapped library inside a stdlib folder) is kept. A file that is not root's
    or that others may write is copied, never linked: through a link the jail would change the host's."""
    if os.path.lexists(target):
        return
    found = os.lstat(source)
    if found.st_uid != 0 or found.st_mode & 0o022:
        shutil.copy2(source, target)
        os.chmod(target, found.st_mode & 0o755)
        return
    try:
        os.link(source, target)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EACCES):
            raise
        shutil.copy2(source, target)


def _inside(tree: Path, path: str) -> str:
    return str(tree) + path


class Tree:
    """The prepared tree of one grader process (`tree()`): its folder, and the host paths it holds."""

    def __init__(self, folder: Path, sources: tuple[str, ...]):
        self.folder, self.sources = folder, sources

    def jail(self) -> Path:
        """A new folder for one worker inside the tree (removed by the Sandbox that asked)."""
        return Path(tempfile.mkdtemp(prefix="jail-", dir=self.folder / JAILS))

    def inside(self, path: Path | str) -> str:
        """What the chrooted worker calls the host path `path` of the tree."""
        return "/" + os.path.relpath(path, self.folder)


_trees: dict[tuple, Tree] = {}
_lock = threading.Lock()


def tree(files: tuple[str, ...], folders: tuple[str, ...], numpy_site: str | None) -> Tree:
    """The process's tree (made on first call, removed at exit): `files` (the interpreter, what the
    loader maps, ld.so.cache) each at its own path, with every symbolic link along it, the ELF
    interpreter's and the sonames beside each library; `folders` (the stdlib's) whole but their
    packages folders; `numpy_site`, the private numpy, at its own path."""
    key = (files, folders, numpy_site)
    with _lock:
        if key not in _trees:
            _trees[key] = _make(files, folders, numpy_site)
        return _trees[key]


def _make(files: tuple[str, ...], folders: tuple[str, ...], numpy_site: str | None) -> Tree:
    folder = Path(tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-tree-"))
    atexit.register(shutil.rmtree, folder, True)
    binds: set[str] = set()
    links: dict[str, str] = {top: os.readlink(top) for top in TOP_LINKS if os.path.islink(top)}
    for path in files:
        expose(path, binds, links)
        interpreter = interpreter_of(path) if os.access(path, os.X_OK) else None
        if interpreter:
            expose(interpreter, binds, links)
    for path in (*folders, *([numpy_site] if numpy_site else [])):
        expose(path, binds, links)
    links.update(aliases({p for p in binds if os.path.isfile(p)}))
    for where, target in sorted(links.items()):
        at = Path(_inside(folder, where))
        at.parent.mkdir(parents=True, exist_ok=True)
        if not at.is_symlink() and not at.exists():
            at.symlink_to(target)
    for path in sorted(binds):
        at = _inside(folder, path)
        os.makedirs(os.path.dirname(at), exist_ok=True)
        if os.path.isdir(path):
            shutil.copytree(path, at, symlinks=True, copy_function=_place, dirs_exist_ok=True,
                            ignore=lambda where, names: [n for n in names if n in PACKAGE_FOLDERS])
        elif not os.path.lexists(at):
            _place(path, at)
    (folder / JAILS).mkdir()
    for dirpath, dirnames, _ in os.walk(folder):    # enterable by the jail's uid; the jails' folder not listable
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode | 0o555)
    folder.chmod(0o755)
    (folder / JAILS).chmod(0o711)
    return Tree(folder, tuple(sorted(binds)))


def enter(where: Tree, cwd: str) -> Callable[[], None]:
    """A function for the grader's child (root) between fork and exec: chroot into the tree, then
    into `cwd` (a path inside it); before the uid changes (become), which takes CAP_SYS_CHROOT away."""
    folder = str(where.folder)

    def go() -> None:
        os.chroot(folder)
        os.chdir(cwd)
    return go


def device_null(where: Tree) -> bool:
    """/dev/null inside the tree, made once (root holds CAP_MKNOD in Docker's default set); False
    where it cannot be made or opened (a folder on a nodev mount): the worker then has only the
    /dev/null the grader hands it."""
    null = where.folder / "dev" / "null"
    if not null.exists():
        try:
            null.parent.mkdir(exist_ok=True)
            null.parent.chmod(0o755)
            os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
            null.chmod(0o666)
        except OSError:
            return False
    try:
        os.close(os.open(null, os.O_RDWR))
        return True
    except OSError:
        return False
