"""Mutation check: does some test fail when a behaviour breaks? (run on demand, not in CI)

Each [[mutation]] of bench/mutations.toml (the catalogue, data; loaded into MUTATIONS) is one
deliberate break: (file, exact old snippet, new snippet, what it breaks, the pytest arguments that
should catch it). For each, the tracked tree (`git ls-files`) is copied to a temporary folder (a git
work tree of its own, committed, so the tests that need a clone run there), the break applied there,
and the named tests run in one process (`python -m pytest -n 0 -x -q ...`) with the copy first on
PYTHONPATH, so the copy is what is tested, never the installed package. A break is

    caught         the tests failed
    NOT caught     the tests passed: a behaviour no test guards
    stale snippet  the old snippet is not in the file exactly once: an error, never a pass

A control run (no break) of every named test comes first; if it fails, nothing below is meaningful.
Mutations run one after another (the machine is shared); keep each selection narrow.

    python bench/mutate.py                 # all
    python bench/mutate.py leak-rglob tol  # those whose id starts with one of these
    python bench/mutate.py --catalogue heldout.toml   # another catalogue, same format (a held-out set)
Exit status: 0 when every break is caught, 1 otherwise.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    id: str
    file: str
    old: str
    new: str
    breaks: str
    tests: tuple[str, ...]


CATALOGUE = Path(__file__).with_name("mutations.toml")
KEYS = [f.name for f in fields(Mutation)]


def load(path: Path = CATALOGUE) -> list[Mutation]:
    """The catalogue's `[[mutation]]` tables as Mutations, in file order. A table with a key missing,
    a key Mutation does not have, or a value of the wrong type is a ValueError naming the table."""
    try:
        catalogue = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML: {e}") from None
    entries = catalogue.get("mutation")
    if set(catalogue) != {"mutation"} or not isinstance(entries, list):
        raise ValueError(f"{path}: expected [[mutation]] tables and nothing else, got the keys {sorted(catalogue)}")
    return [_mutation(entry, f"{path.name}: mutation {number}") for number, entry in enumerate(entries, 1)]


def _mutation(entry, where: str) -> Mutation:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a [[mutation]] table, got {entry!r}")
    where += f" ({entry.get('id', 'no id')!r})"
    missing = [key for key in KEYS if key not in entry]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    unknown = [key for key in entry if key not in KEYS]
    if unknown:
        raise ValueError(f"{where}: unknown {', '.join(unknown)} (the keys are {', '.join(KEYS)})")
    for key in KEYS[:-1]:
        if not isinstance(entry[key], str) or not entry[key]:
            raise ValueError(f"{where}: {key} must be a non-empty string, got {entry[key]!r}")
    tests = entry["tests"]
    if not isinstance(tests, list) or not tests or not all(isinstance(arg, str) for arg in tests):
        raise ValueError(f"{where}: tests must be a non-empty list of pytest arguments (strings), got {tests!r}")
    return Mutation(**{**entry, "tests": tuple(tests)})


MUTATIONS = load()


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [f for f in out.decode().split("\0") if f]


# the copy's own git: any user, no hooks, no signing, quiet
GIT = ["git", "-c", "user.name=mutate", "-c", "user.email=mutate@localhost", "-c", "commit.gpgsign=false",
       "-c", "core.hooksPath=/dev/null", "-c", "init.defaultBranch=main"]


def copy_tree(dest: Path) -> None:
    """dest/ as a fresh clone of the tree: its tracked files (as they are in the work tree now),
    committed in a git repository of dest's own, so the tests that copy a clone (course week,
    install, standalone: tests/repo_copy.py) run in the copy as in a work tree."""
    for rel in tracked_files():
        src = REPO / rel
        if src.is_file():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "--no-verify", "-m", "bench/mutate.py copy"]):
        subprocess.run([*GIT, *args], cwd=dest, check=True, capture_output=True)


def run_tests(root: Path, args: tuple[str, ...]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # a private --basetemp: pytest never touches (or trips over) other runs' folders in /tmp
    basetemp = root.parent / f"{root.name}-pytest"
    return subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-x", "-q", "-p", "no:cacheprovider",
                           f"--basetemp={basetemp}", *args], cwd=root, env=env, capture_output=True, text=True)


def check_isolation(root: Path) -> None:
    """The copy, not the installed worktree, is what imports."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    found = subprocess.run([sys.executable, "-c", "import autograder, reference; print(autograder.__file__); "
                            "print(reference.__file__)"], cwd=root, env=env, capture_output=True, text=True).stdout
    assert all(Path(line).is_relative_to(root) for line in found.split()), found


def apply(root: Path, m: Mutation) -> bool:
    path = root / m.file
    text = path.read_text(encoding="utf-8")
    if not m.old or text.count(m.old) != 1:
        return False
    path.write_text(text.replace(m.old, m.new), encoding="utf-8")
    return True


def main(argv: list[str]) -> int:
    catalogue = MUTATIONS
    if argv[:1] == ["--catalogue"]:
        if len(argv) < 2:
            print("--catalogue needs a TOML file of [[mutation]] tables")
            return 2
        try:
            catalogue = load(Path(argv[1]))
        except (OSError, ValueError) as e:
            print(e)
            return 2
        argv = argv[2:]
    chosen = [m for m in catalogue if not argv or any(m.id.startswith(a) for a in argv)]
    rows, ok = [], True
    with tempfile.TemporaryDirectory(prefix="scalelabs-mutate-") as tmp:
        base = Path(tmp) / "control"
        copy_tree(base)
        check_isolation(base)
        for args in sorted({m.tests for m in chosen}):
            control = run_tests(base, args)
            if control.returncode != 0:
                print(f"CONTROL FAILS (no break applied): {' '.join(args)}\n{control.stdout[-3000:]}")
                return 1
        for m in chosen:
            root = Path(tmp) / m.id
            copy_tree(root)
            started = time.perf_counter()
            if not apply(root, m):
                verdict, detail = "stale snippet", f"{m.file}: old snippet not found exactly once"
            else:
                proc = run_tests(root, m.tests)
                caught = proc.returncode != 0
                failed = [line.split(" ")[1] for line in proc.stdout.splitlines() if line.startswith("FAILED ")]
                verdict = "caught" if caught else "NOT caught"
                detail = failed[0] if failed else proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
            seconds = time.perf_counter() - started
            ok &= verdict == "caught"
            rows.append((m.id, verdict, f"{seconds:.0f} s", m.breaks, detail))
            print(f"{m.id:24s} {verdict:13s} {seconds:5.0f} s  {m.breaks}\n{'':24s} {detail}", flush=True)
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(root.parent / f"{root.name}-pytest", ignore_errors=True)
    caught = sum(r[1] == "caught" for r in rows)
    print(f"\n{caught} of {len(rows)} breaks caught")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
