"""The submission's file tree, walked and read without trusting it, and the copy the sandbox grades.

A submission folder is student data: links (the folder itself included), FIFOs, devices and sockets
are never followed or opened, depth, entry count and sizes are capped, and files are read with
O_NOFOLLOW|O_NONBLOCK and fstat'ed (docs/ARCHITECTURE.md, "submission tree"). What Python would
import in place of a graded, provided or helper module's .py is never copied (`shadowing`).
"""
from __future__ import annotations

import itertools
import os
import stat
from dataclasses import dataclass
from importlib.machinery import BYTECODE_SUFFIXES, EXTENSION_SUFFIXES, SOURCE_SUFFIXES
from pathlib import Path
from typing import Collection

COPY_CAP_BYTES = 20 << 20       # submission files larger than this are not copied in
TREE_FILES_CAP = 2000           # entries of a submission tree looked at (copy and fingerprint)
TREE_DEPTH_CAP = 16             # folder depth of a submission tree looked at
TREE_BYTES_CAP = 100 << 20      # total bytes copied from one submission


@dataclass(frozen=True)
class TreeFile:
    rel: str         # posix path relative to the submission folder
    path: str
    size: int


@dataclass
class Tree:
    files: list[TreeFile]
    skipped: list[str]   # one line per thing not taken (link, FIFO, too big, too deep, ...)


def walk_submission(root: Path, hidden: bool = False, owner: int | None = None) -> Tree:
    """The regular files of a submission, bounded: symlinks (the root included), FIFOs, devices and
    sockets are never followed or opened, hidden entries (unless `hidden`) and caches are left out,
    and depth, entry count and sizes are capped. `owner`: a uid; an entry (the root included) owned
    by anyone else is left out (a hard link to another user's file is that user's file). Only
    lstat/scandir: no file is read here."""
    tree = Tree([], [])
    root = Path(root)
    try:
        info = os.lstat(root)
        if not stat.S_ISDIR(info.st_mode):
            tree.skipped.append(f"{root.name} is not a folder (a link?)")
            return tree
        if owner is not None and info.st_uid != owner:
            tree.skipped.append(f"{root.name} is owned by uid {info.st_uid}, not {owner}")
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
            if (entry.name.startswith(".") and not hidden) or entry.name == "__pycache__":
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                tree.skipped.append(f"{rel}: cannot be read")
                continue
            if owner is not None and info.st_uid != owner:
                tree.skipped.append(f"{rel} is owned by uid {info.st_uid}, not {owner}")
            elif stat.S_ISLNK(info.st_mode):
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


def read_regular(path: str | Path, cap_bytes: int = COPY_CAP_BYTES, owner: int | None = None) -> bytes:
    """The bytes of a regular file, refusing links, FIFOs and devices (O_NOFOLLOW|O_NONBLOCK, then
    fstat), anything over cap_bytes and, with `owner` (a uid), a file owned by anyone else: what was
    opened is checked, so a folder of the path swapped for a link after a walk reads nothing of
    another user's. OSError/ValueError name what is wrong."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if owner is not None and info.st_uid != owner:
            raise ValueError(f"owned by uid {info.st_uid}, not {owner}")
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


def copy_submission(src: Path, dest: Path, modules: Collection[str] = (),
                    tree: Tree | None = None) -> tuple[list[str], list[str]]:
    """Copy the submission's regular files (walk_submission: no links, no FIFOs, bounded), leaving
    out notebooks (never imported) and whatever Python could import as one of `modules` instead of
    its .py (`shadowing`: the .py a TA reads is what runs), `modules` and every module the submission
    holds as a top-level .py (a helper of the student's own beside its own package or .so). `tree`:
    src's walk when it was already taken (the submission record's). Returns (what was skipped, one
    line each; what was ignored as a shadow, each "path (what it is)")."""
    tree = walk_submission(src) if tree is None else Tree(tree.files, list(tree.skipped))
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
