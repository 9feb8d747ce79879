"""Mutation check: does some test fail when a behaviour breaks? (run on demand, not in CI)

Each [[mutation]] of bench/mutations.toml (the catalogue, data; loaded into MUTATIONS) is one
deliberate break: (file, exact old snippet, new snippet, what it breaks, the pytest arguments that
should catch it). For each, the tracked tree (`git ls-files`) is copied to one fixed folder of the run
(a git work tree of its own, committed, so the tests that need a clone run there), the break applied
there, and the named tests run in one process (`python -m pytest -n 0 -x -q ...`) with the run's own
interpreter: a venv made for the run (RunEnv) whose site-packages hold this environment's packages
but not scalelabs' install, and whose .pth puts the copy on every interpreter's path. So every process
a test starts (`sys.executable -c ...` with a PYTHONPATH of its own or from another folder, the
`scalelabs` and `nbgrader` commands, a spawned worker, a Debian venv adding our site folders) imports
the copy, never the installed package, and a probe in that venv records, in every such process, where
`autograder`, `reference` and `labs` were imported from. A break is

    caught               the tests failed, and every import of the packages was from the copy
    caught by the suite  (--survivors-full, --survivors-with) its tests passed, a wider run failed
    NOT caught           the tests passed: a behaviour no test guards
    invalid              some process imported the packages from outside the copy (the repository, an
                         installed package, or a copy a test made that lacks the break): the verdict would
                         compare two trees; never counted as caught
    control fails        its tests fail twice without any break: no verdict
    stale snippet        the old snippet is not in the file exactly once: an error, never a pass

A control run (no break) of every named selection comes first: a selection whose control fails twice
gives its breaks the verdict "control fails" (never counted as caught); one whose control failed once and
then passed is flaky on this machine, so a break's run there that fails only in the tests that failed in
the control is run again, and is caught only if it fails again.
Mutations run one after another (the machine is shared); keep each selection narrow.

    python bench/mutate.py                 # all
    python bench/mutate.py leak-rglob tol  # those whose id starts with one of these
    python bench/mutate.py --catalogue heldout.toml   # another catalogue, same format (a held-out set)
    python bench/mutate.py --survivors-full ...       # a break its tests miss: then the whole suite
    python bench/mutate.py --survivors-with 'tests/doors tests/classroom' ...   # or a wider selection
Exit status: 0 when every break is caught by its own tests, 1 otherwise.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
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


# --- the run's interpreter: what every process a test starts imports -------------------------------

WATCHED = ("autograder", "labs", "reference")
PROBE_MODULE = "_scalelabs_mutate_probe"
PROBE_PTH = "000-scalelabs-mutate.pth"

# Imported by the run venv's .pth, so in every interpreter of the venv that runs `site` (any `python`,
# `python -c`, console script or spawned worker of the venv, whatever its PYTHONPATH or folder). For an
# import from outside tree/ (a copy a test made, the repository, an installed package) it also records
# whether that tree holds the placed break (placed.json: its file and snippets; null when the break is
# in another package or none is placed).
PROBE = """\"\"\"Written by bench/mutate.py into its run's venv: where autograder, labs and reference are
imported from, one JSON line per import, appended to the run's log.\"\"\"
import json as _json
import os as _os
import sys as _sys

_LOG, _TREE, _PLACED = {log!r}, {tree!r}, {placed!r}
_WATCHED = {watched!r}


def _holds_the_break(root, name):
    try:
        with open(_PLACED, encoding="utf-8") as f:
            placed = _json.load(f)
    except (OSError, ValueError):
        return None
    if not placed or not placed["file"].startswith(name + "/"):
        return None
    try:
        with open(_os.path.join(root, placed["file"]), encoding="utf-8") as f:
            text = f.read()
    except (OSError, ValueError):
        return False
    return placed["new"] in text and (placed["old"] not in text or placed["old"] in placed["new"])


class ScalelabsMutateProbe:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in _WATCHED:
            return None
        spec = None
        for finder in list(_sys.meta_path):
            if finder is not cls and hasattr(finder, "find_spec"):
                spec = finder.find_spec(name, path, target)
                if spec is not None:
                    break
        if spec is None:
            return None
        where = [_os.path.dirname(spec.origin)] if spec.has_location and spec.origin else list(spec.submodule_search_locations or [])
        roots = sorted({{_os.path.dirname(_os.path.realpath(w)) for w in where}})
        inside = lambda r: r == _TREE or r.startswith(_TREE + _os.sep)
        record = {{"pid": _os.getpid(), "name": name, "where": where, "roots": roots,
                  "break": [None if inside(r) else _holds_the_break(r, name) for r in roots],
                  "argv": [str(a) for a in _sys.argv[:6]], "executable": _sys.executable}}
        try:
            fd = _os.open(_LOG, _os.O_WRONLY | _os.O_APPEND | _os.O_CREAT, 0o666)
            try:
                _os.write(fd, (_json.dumps(record) + "\\n").encode())
            finally:
                _os.close(fd)
        except OSError:
            pass
        return spec


_sys.meta_path.insert(0, ScalelabsMutateProbe)
"""


class IsolationError(RuntimeError):
    """The run's interpreter does not import the copy, or its probe does not see where imports come from."""


class RunEnv:
    """One mutation run's interpreter and tree, under `home`:

    venv/        a venv of this Python whose site-packages link every package of the environment
                 running this script except scalelabs' own install (an editable finder, a .pth naming
                 the repository, an installed autograder/labs/reference), plus a .pth that puts tree/ on
                 every interpreter's path and imports the probe; bin/ holds this environment's console
                 scripts (scalelabs, nbgrader, otter, jupyter...) rewritten to run the venv's python;
                 share/ and etc/ (Jupyter's data and config) are this environment's
    tree/        the copy under test: the tracked files, committed; each break is placed here in turn
                 (a copy of pristine/, made once)
    imports.log  the probe's records: every import of autograder, labs or reference, its process and where
    """

    def __init__(self, home: Path):
        self.home = home
        self.venv, self.tree, self.log = home / "venv", home / "tree", home / "imports.log"
        self.placed, self.pristine = home / "placed.json", home / "pristine"
        self.python = self.venv / "bin" / "python"

    def create(self) -> "RunEnv":
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(self.venv)], check=True,
                       capture_output=True)
        [site_dir] = (self.venv / "lib").glob("python3*/site-packages")
        own = {PROBE_PTH, f"{PROBE_MODULE}.py", "__pycache__"}
        for packages in dict.fromkeys(Path(p) for p in site.getsitepackages() if Path(p).is_dir()):
            for entry in sorted(packages.iterdir()):
                link = site_dir / entry.name
                if (entry.name in own or entry.name in WATCHED or entry.name.startswith("__editable__")
                        or link.exists() or _names_the_repository(entry)):
                    continue
                link.symlink_to(entry)
        (site_dir / f"{PROBE_MODULE}.py").write_text(PROBE.format(
            log=str(self.log), tree=os.path.realpath(self.tree), placed=str(self.placed), watched=WATCHED), encoding="utf-8")
        (site_dir / PROBE_PTH).write_text(f"{self.tree}\nimport {PROBE_MODULE}\n", encoding="utf-8")
        ours = Path(sys.executable).parent
        for script in sorted(ours.iterdir()):
            target = self.venv / "bin" / script.name
            if target.exists() or target.is_symlink() or script.is_symlink() or not script.is_file():
                continue
            head, _, rest = script.read_bytes().partition(b"\n")
            if head.startswith(b"#!") and Path(head[2:].decode(errors="replace").strip()).parent == ours:
                target.write_bytes(b"#!" + str(self.python).encode() + b"\n" + rest)
                target.chmod(0o755)
        for folder in ("share", "etc"):
            if (Path(sys.prefix) / folder).is_dir() and not (self.venv / folder).exists():
                (self.venv / folder).symlink_to(Path(sys.prefix) / folder)
        return self

    def env(self) -> dict[str, str]:
        """The tests' environment: the venv first on PATH, this environment's bin and PYTHONPATH gone."""
        ours = str(Path(sys.executable).parent)
        path = [str(self.venv / "bin"), *(p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != ours)]
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
        return {**env, "PATH": os.pathsep.join(path), "VIRTUAL_ENV": str(self.venv)}

    def place(self, m: Mutation | None) -> bool:
        """A fresh copy at tree/ with `m` applied (none: the control); False if m's snippet is stale."""
        if not self.pristine.exists():
            copy_tree(self.pristine)
        shutil.rmtree(self.tree, ignore_errors=True)
        shutil.copytree(self.pristine, self.tree, symlinks=True)
        self.clear_log()
        applied = apply(self.tree, m) if m is not None else True
        placed = {"file": m.file, "old": m.old, "new": m.new} if m is not None and applied else {}
        self.placed.write_text(json.dumps(placed), encoding="utf-8")
        return applied

    def clear_log(self) -> None:
        self.log.write_text("", encoding="utf-8")
        self.log.chmod(0o666)

    def imports(self) -> list[dict]:
        records = []
        for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                records.append({"name": "?", "where": [f"(an unreadable record: {line[:200]!r})"], "argv": []})
        return records

    def outside(self, records: list[dict]) -> list[dict]:
        """The imports a verdict cannot rest on: from the repository itself, from an installed package
        (any site folder of this Python or its base), or from a tree that does not hold the placed break.
        A copy a test made of tree/ (a course cloned into its tmp_path) holds the break: it counts as the
        tree; so does one of a package the break is not in."""
        tree = self.tree.resolve()
        base = {"base": sys.base_prefix, "platbase": sys.base_prefix, "installed_base": sys.base_prefix}
        installed = {Path(p).resolve() for p in (*site.getsitepackages(), sysconfig.get_paths()["purelib"],
                                                 sysconfig.get_paths(vars=base)["purelib"], self.venv)}
        foreign = [REPO.resolve(), *installed]

        def invalid(record: dict) -> bool:
            roots, holds = record.get("roots") or ["?"], record.get("break") or []
            for root, has_break in zip(roots, [*holds, *[False] * len(roots)]):
                root = Path(root).resolve()
                if root.is_relative_to(tree):
                    continue
                if has_break is False or any(root == f or root.is_relative_to(f) for f in foreign):
                    return True
            return False
        return [r for r in records if invalid(r)]

    def run(self, args: tuple[str, ...], *, workers: int = 0, timeout: float | None = None,
            exitfirst: bool = True) -> Outcome:
        """pytest with `args` in tree/, from the venv (stopping at the first failure unless `exitfirst` is
        False); then where every process imported the packages from."""
        basetemp = self.home / "pytest"   # a private --basetemp: never other runs' folders in /tmp
        shutil.rmtree(basetemp, ignore_errors=True)
        self.clear_log()
        command = [str(self.python), "-m", "pytest", *["-x"] * exitfirst, "-q", "-p", "no:cacheprovider", f"--basetemp={basetemp}",
                   *(["-n", "0"] if workers == 0 else ["-n", str(workers)]), *args]
        started = time.perf_counter()
        proc = subprocess.Popen(command, cwd=self.tree, env=self.env(), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, start_new_session=True)
        try:
            out, _ = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            timed_out = True
        shutil.rmtree(basetemp, ignore_errors=True)
        records = self.imports()
        return Outcome(proc.returncode, out, time.perf_counter() - started, timed_out, records, self.outside(records))


def _names_the_repository(entry: Path) -> bool:
    """A .pth or egg-link of this environment that puts the repository itself on the path."""
    if entry.suffix not in (".pth", ".egg-link") or not entry.is_file():
        return False
    return str(REPO) in entry.read_text(encoding="utf-8", errors="replace")


@dataclass
class Outcome:
    returncode: int
    output: str
    seconds: float
    timed_out: bool
    imports: list[dict]
    outside: list[dict]

    @property
    def failed(self) -> bool:
        """Tests failed (or errored, or the run stopped on its time limit); 5 is "no tests collected"."""
        return self.timed_out or self.returncode not in (0, 5)

    def failures(self) -> list[str]:
        return [line.split(" ")[1] for line in self.output.splitlines() if line.startswith(("FAILED ", "ERROR "))
                and len(line.split(" ")) > 1]

    def detail(self) -> str:
        if self.outside:
            r = self.outside[0]
            return (f"{len(self.outside)} import(s) from outside the copy, e.g. {r.get('name')} from "
                    f"{(r.get('where') or ['?'])[0]} by {' '.join(r.get('argv') or [])[:160]}")
        if self.timed_out:
            return f"stopped after {self.seconds:.0f} s (its time limit)"
        failed = self.failures()
        lines = self.output.strip().splitlines()
        return failed[0] if failed else lines[-1] if lines else ""


def check_isolation(run: RunEnv) -> None:
    """The run's interpreter imports the copy whatever a process's PYTHONPATH or folder, so does its
    `scalelabs` command, the probe records both, and it records an import from elsewhere (the repository
    itself, through a PYTHONPATH naming it) as outside the copy."""
    code = "import autograder, labs, reference; print(autograder.__file__, labs.__file__, reference.__file__)"
    elsewhere = {**run.env(), "PYTHONPATH": str(run.home)}
    run.clear_log()
    done = subprocess.run([str(run.python), "-c", code], cwd="/", env=elsewhere, capture_output=True, text=True)
    found = done.stdout.split()
    if len(found) != 3 or not all(Path(f).resolve().is_relative_to(run.tree.resolve()) for f in found):
        raise IsolationError(f"the run's python, with a PYTHONPATH of its own, imports {found or done.stderr[-500:]}, "
                             f"not {run.tree}")
    done = subprocess.run([str(run.venv / "bin" / "scalelabs"), "--help"], cwd="/", env={"PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True)
    records = run.imports()
    if done.returncode != 0 or not any(str(r.get("argv", [""])[0]).endswith("scalelabs") for r in records):
        raise IsolationError(f"the run's scalelabs command did not run, or the probe did not see it: {done.stderr[-500:]}")
    if run.outside(records) or {r["name"] for r in records} != set(WATCHED):
        raise IsolationError(f"the probe's records: {records}")
    run.clear_log()
    subprocess.run([str(run.python), "-c", "import autograder"], cwd="/", env={**run.env(), "PYTHONPATH": str(REPO)},
                   capture_output=True, text=True)
    if not run.outside(run.imports()) and REPO.resolve() != run.tree.resolve():
        raise IsolationError(f"the probe did not see autograder imported from {REPO}")
    run.clear_log()


def apply(root: Path, m: Mutation) -> bool:
    path = root / m.file
    text = path.read_text(encoding="utf-8")
    if not m.old or text.count(m.old) != 1:
        return False
    path.write_text(text.replace(m.old, m.new), encoding="utf-8")
    return True


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/mutate.py", description="Apply each break to a copy of the tree "
                                     "and run the tests that should catch it.")
    parser.add_argument("prefixes", nargs="*", help="run the breaks whose id starts with one of these (default: all)")
    parser.add_argument("--catalogue", type=Path, default=CATALOGUE, help="a TOML file of [[mutation]] tables")
    wider = parser.add_mutually_exclusive_group()
    wider.add_argument("--survivors-full", action="store_const", const="tests", dest="wider",
                       help="run the whole suite (two workers) for each break its own tests miss")
    wider.add_argument("--survivors-with", metavar="ARGS", dest="wider",
                       help="pytest arguments (one string) run for each break its own tests miss")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    options = _arguments(argv)
    try:
        catalogue = MUTATIONS if options.catalogue == CATALOGUE else load(options.catalogue)
    except (OSError, ValueError) as e:
        print(e)
        return 2
    chosen = [m for m in catalogue if not options.prefixes or any(m.id.startswith(a) for a in options.prefixes)]
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="scalelabs-mutate-") as tmp:
        run = RunEnv(Path(tmp)).create()
        run.place(None)
        check_isolation(run)
        limits, flaky, broken = {}, {}, set()
        for args in sorted({m.tests for m in chosen}):
            control = run.run(args)
            if control.failed and not control.outside:   # once more: a loaded machine fails a timed test now and then
                flaky[args] = control.failures() or ["(the run)"]
                control = run.run(args)
            if control.failed or control.outside:
                print(f"CONTROL FAILS (no break applied): {' '.join(args)}\n{control.detail()}\n{control.output[-3000:]}",
                      flush=True)
                broken.add(args)
                continue
            if args in flaky:
                print(f"control of {' '.join(args)}: {', '.join(flaky[args])} failed once and passed again: a failure "
                      f"of a break's run there is run again", flush=True)
            limits[args] = max(600.0, 5 * control.seconds)
        survivors = []
        for m in chosen:
            if m.tests in broken:
                verdict, seconds, detail = "control fails", 0.0, "its tests fail without any break (above)"
            elif not run.place(m):
                verdict, seconds, detail = "stale snippet", 0.0, f"{m.file}: old snippet not found exactly once"
            else:
                outcome = run.run(m.tests, timeout=limits[m.tests])
                if outcome.failed and not outcome.outside and m.tests in flaky and (
                        set(outcome.failures()) <= set(flaky[m.tests]) or not outcome.failures()):
                    outcome = run.run(m.tests, timeout=limits[m.tests])   # the control's flaky test: once more
                verdict = "invalid" if outcome.outside else "caught" if outcome.failed else "NOT caught"
                seconds, detail = outcome.seconds, outcome.detail()
            print(f"{m.id:24s} {verdict:13s} {seconds:5.0f} s  {m.breaks}\n{'':24s} {detail}", flush=True)
            rows.append((m.id, verdict))
            if verdict == "NOT caught":
                survivors.append(m)
        if survivors and options.wider:
            rows = _run_wider(run, options.wider, survivors, dict(rows))
    counts = {v: sum(r[1] == v for r in rows) for v in ("caught", "caught by the suite", "invalid", "stale snippet",
                                                        "control fails")}
    print(f"\n{counts['caught']} of {len(rows)} breaks caught" +
          (f" by their own tests; {counts['caught by the suite']} more by `{options.wider}`" if options.wider else "") +
          "".join(f"; {n} {v}" for v, n in counts.items() if n and v in ("invalid", "stale snippet", "control fails")))
    return 0 if all(v == "caught" for _, v in rows) else 1


def _run_wider(run: RunEnv, wider: str, survivors: list[Mutation], verdicts: dict[str, str]) -> list[tuple[str, str]]:
    """Each survivor against the wider selection. Its control runs first (without -x): a test that fails
    there is deselected from every break's run; a test that fails only with the break is run again
    alone, and the break counts as caught by the suite only if it fails again."""
    args = tuple(shlex.split(wider))
    run.place(None)
    control = run.run(tuple(a for a in args if a != "-x"), workers=2, exitfirst=False)   # every failure, not the first
    known = control.failures()
    if control.outside or (control.failed and not known):
        print(f"\nCONTROL OF `{wider}` UNUSABLE: {control.detail()}\n{control.output[-2000:]}")
        return list(verdicts.items())
    deselect = tuple(x for node in known for x in ("--deselect", node))
    if known:
        print(f"\n`{wider}` fails without any break: {', '.join(known)} (deselected below)")
    for m in survivors:
        run.place(m)
        outcome = run.run((*args, *deselect), workers=2)
        if outcome.outside:
            verdict, detail = "invalid", outcome.detail()
        elif outcome.failed and (again := outcome.failures()):
            confirm = run.run(tuple(again[:1]))
            verdict = "caught by the suite" if confirm.failed and not confirm.outside else "NOT caught"
            detail = again[0] + ("" if verdict != "NOT caught" else " (failed once, passed alone: flaky, not counted)")
        else:
            verdict, detail = "NOT caught", outcome.detail()
        print(f"{m.id:24s} {verdict:13s} {outcome.seconds:5.0f} s  with `{wider}`\n{'':24s} {detail}", flush=True)
        verdicts[m.id] = verdict
    return list(verdicts.items())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
