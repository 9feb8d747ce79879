"""What a result was graded from: the submission's files and the grader, each as a fingerprint.

A class batch keeps both in every student's results file and regrades a student when either
changed (autograder.classroom.batch):

    submission_fingerprint(folder)              sha256 over what the grader takes from the folder
    grader_fingerprint(name, assignment, config, mode, secret)
        {"declaration": {file: sha}, "reference": {file: sha},   the lab's declaration and the
                                                                  reference modules it reaches
         "settings": {key: value},                               scalelabs.toml [grading], effective
         "sandbox": mode, "scalelabs": version, "hypothesis": version,
         "python": version, "numpy": version,                    the machine's (MACHINE: what a merge compares)
         "engine": sha,                                          autograder/engine's code
         "seeds": sha}                                           what seeds the hidden inputs
    grader_changes(old, new) -> ["scalelabs.toml show_expected", "labs/lab06_collectives/items.py", ...]
    machine_differences(old, new) -> ["Python 3.11.2 there, 3.11.9 here", ...]

Python's, numpy's and hypothesis' versions change the examples hypothesis draws and the floats the
reference returns: two machines that differ in them are two graders, so a class graded on one is
never merged with, or partly regraded on, the other (autograder.classroom.merge, batch).

Nothing secret is kept in clear: a setting whose name says secret is kept as its hash, and the seeds
component is a hash of seeds drawn for a probe student (it changes with whatever the seeds mix in,
a course secret included, and gives none of it away).
"""
from __future__ import annotations

import ast
import hashlib
import importlib.util
import platform
from dataclasses import asdict
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Iterator

from autograder.engine.config import GradingConfig
from autograder.engine.filetree import TREE_BYTES_CAP, read_regular, walk_submission
from autograder.engine.secret import CourseSecret
from autograder.engine.spec import Assignment

ENGINE_DIR = Path(__file__).resolve().parents[1] / "engine"
DEMO_CLASS = ("samples", "samples.toml")       # a lab's demo class: never part of grading
NOT_GRADING = {"allow_unsandboxed"}            # settings that choose whether to grade, not how
SHORT = 16                                     # hex digits kept of a file's sha256


def submission_fingerprint(folder: Path) -> str:
    """sha256 over what the grader takes from the submission (walk_submission: regular files, no
    links, bounded depth and count): relative path, size and bytes of each file while the total stays
    under TREE_BYTES_CAP (beyond it path and size only), and every skipped entry. Never reads a
    file over the copy cap, never follows a link, never recurses."""
    digest = hashlib.sha256()
    tree = walk_submission(Path(folder))
    total = 0
    for f in tree.files:
        digest.update(f"{f.rel}\0{f.size}\0".encode())
        if total + f.size <= TREE_BYTES_CAP:
            try:
                data = read_regular(f.path)
                total += len(data)
                digest.update(data)
            except (OSError, ValueError) as exc:
                digest.update(f"unreadable {exc}".encode())
        digest.update(b"\0")
    for line in tree.skipped:
        digest.update(f"skipped {line}\0".encode())
    return digest.hexdigest()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:SHORT]


def _ours(name: str, roots: tuple[Path, ...]) -> bool:
    """Whether the module `name` could lie under one of `roots` (asking importlib about any other name,
    matplotlib.pyplot in a notebook.py, would import its package: a second of a batch's start)."""
    first = name.split(".")[0]
    return any(first == root.name or (root / f"{first}.py").is_file() or (root / first / "__init__.py").is_file()
               for root in roots)


def _statements(body: list) -> Iterator[ast.stmt]:
    """Every statement, nested ones (in functions, classes, if/try/with/loops) included; an import is a
    statement, so the expressions (most of a module's nodes) are never walked."""
    todo = list(body)
    while todo:
        node = todo.pop()
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            todo.extend(getattr(node, name, None) or [])


def _imported_files(path: Path, package: str, roots: tuple[Path, ...]) -> set[Path]:
    """The source files of the modules `path` imports (absolute or relative) that may lie under `roots`."""
    found = set()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return found
    for node in _statements(tree.body):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:   # relative to `package`, the package the importing file is in
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for name in names:
            try:
                spec = importlib.util.find_spec(name) if name and _ours(name, roots) else None
            except (ImportError, ValueError, AttributeError):
                spec = None
            if spec is not None and spec.origin and spec.origin.endswith(".py"):
                found.add(Path(spec.origin).resolve())
    return found


def _package_of(path: Path) -> str:
    """The dotted package a source file belongs to (walking up while there is an __init__.py)."""
    parts = []
    folder = path.parent
    while (folder / "__init__.py").is_file():
        parts.insert(0, folder.name)
        folder = folder.parent
    return ".".join(parts)


@lru_cache(maxsize=None)
def _roots() -> tuple[Path, ...]:
    """The packages a grader's files can come from: the declarations and the reference."""
    return tuple(Path(importlib.util.find_spec(p).origin).resolve().parent for p in ("labs", "reference"))


def _display(path: Path, roots: tuple[Path, ...]) -> str:
    """`labs/<lab>/items.py`, `reference/collectives.py`; a declaration module of its own by its file name."""
    for root in roots:
        if path.is_relative_to(root):
            return str(path.relative_to(root.parent if root in _roots() else root))
    return path.name


def _reachable(start: list[Path], roots: tuple[Path, ...]) -> dict[str, str]:
    """file (relative to its package's parent) -> sha, for `start` and every file it imports, transitively,
    that lies under one of `roots`."""
    seen: dict[Path, None] = {}
    todo = [p.resolve() for p in start]
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file() or not any(path.is_relative_to(r) for r in roots):
            continue
        seen[path] = None
        todo.extend(_imported_files(path, _package_of(path), roots))
    return {_display(p, roots): _sha(p.read_bytes()) for p in sorted(seen)}


def declaration_files(assignment_name: str) -> list[Path]:
    """The declaration's own files: a lab's folder under labs/ without its demo class, or the module
    of a `package.module:NAME` declaration."""
    from labs import lab_folder

    if ":" in assignment_name:
        spec = importlib.util.find_spec(assignment_name.split(":", 1)[0])
        return [Path(spec.origin)] if spec and spec.origin else []
    folder = lab_folder(assignment_name)
    if folder is None:
        return []
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".py", ".md", ".toml")
                  and "__pycache__" not in p.parts and p.relative_to(folder).parts[0] not in DEMO_CLASS)


def _engine_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(ENGINE_DIR.rglob("*.py")):
        digest.update(f"{path.relative_to(ENGINE_DIR)}\0".encode() + path.read_bytes() + b"\0")
    return digest.hexdigest()[:SHORT]


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "unknown"


def _settings(config: GradingConfig) -> dict:
    """The effective settings that change how a submission is graded; a secret only as its hash."""
    out = {}
    for key, value in sorted(asdict(config).items()):
        if key in NOT_GRADING:
            continue
        out[key] = f"sha256:{_sha(repr(value).encode())}" if "secret" in key.lower() else value
    return out


def _seeds_digest(assignment: Assignment, secret: CourseSecret | None) -> str:
    """A hash of the seeds a probe student's checks would get under the course secret the grading
    uses: it changes with whatever the engine mixes into its seeds (the secret included), and reveals
    none of it."""
    from autograder.engine.checks import seed_for

    probe = [seed_for(assignment.id, "scalelabs-probe", item, "hidden", secret) for item in assignment.item_ids]
    return _sha(repr(probe).encode())


def grader_fingerprint(assignment_name: str, assignment: Assignment, config: GradingConfig, mode: str,
                       secret: CourseSecret | None = None) -> dict:
    """What grades this assignment, component by component (module docstring); `secret`: the course
    secret the grading processes draw the hidden inputs under (autograder.engine.secret.load_secret)."""
    roots = _roots()
    declaration = declaration_files(assignment_name)
    if ":" in assignment_name:   # a course's or a test's declaration module: its folder counts as ours
        roots = roots + tuple({p.resolve().parent for p in declaration})
    files = _reachable(declaration + [Path(assignment.reference.__file__)], roots)
    files |= {_display(p.resolve(), roots): _sha(p.read_bytes()) for p in declaration}   # .md and .toml too
    return {
        "declaration": {f: s for f, s in sorted(files.items()) if not f.startswith("reference/")},
        "reference": {f: s for f, s in sorted(files.items()) if f.startswith("reference/")},
        "settings": _settings(config),
        "sandbox": mode,
        "scalelabs": _version("scalelabs"),
        "hypothesis": _version("hypothesis"),
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "engine": _engine_digest(),
        "seeds": _seeds_digest(assignment, secret),
    }


LABELS = {"sandbox": "the sandbox mode", "scalelabs": "scalelabs' version", "hypothesis": "hypothesis' version",
          "python": "Python's version", "numpy": "numpy's version",
          "engine": "scalelabs' grading engine", "seeds": "the hidden inputs' seeds (the course secret)"}
MACHINE = {"python": "Python", "numpy": "numpy", "hypothesis": "hypothesis"}   # what a machine brings to grading


def grader_changes(old: dict | None, new: dict) -> list[str]:
    """What changed between the grader of a result (`old`) and this one, each named as a person would
    look for it: `scalelabs.toml show_expected`, `labs/lab06_collectives/items.py`, `reference/collectives.py`,
    `scalelabs' version`; empty when nothing did."""
    if not isinstance(old, dict):
        return ["the result records no grader (graded by an older scalelabs)"]
    changes = []
    for part in ("settings", "declaration", "reference"):
        before, after = old.get(part), new[part]
        before = before if isinstance(before, dict) else {}
        for key in sorted(set(before) | set(after)):
            if before.get(key) != after.get(key):
                changes.append(f"scalelabs.toml {key}" if part == "settings" else key)
    changes += [LABELS[part] for part in LABELS if old.get(part) != new.get(part)]
    return changes


def machine_versions(grader: dict | None) -> dict[str, str]:
    """{"python": "3.11.2", "numpy": ..., "hypothesis": ...} of a grader fingerprint ("" for a part an
    older fingerprint does not record)."""
    grader = grader if isinstance(grader, dict) else {}
    return {part: str(grader.get(part) or "") for part in MACHINE}


def machine_differences(old: dict | None, new: dict, there: str = "there", here: str = "here") -> list[str]:
    """How the machine of grader `old` differs from that of `new`, each part named with both versions
    (`Python 3.11.2 there, 3.11.9 here`); empty when they agree. A part `old` does not record (a
    fingerprint older than the part) is no difference: such results are regraded, never compared."""
    before, after = machine_versions(old), machine_versions(new)
    return [f"{MACHINE[part]} {before[part]} {there}, {after[part]} {here}"
            for part in MACHINE if before[part] and before[part] != after[part]]
