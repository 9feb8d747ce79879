"""Benchmark: one submission (in-process and as a `scalelabs grade` process) and a class with --jobs 2.

    python bench/bench_grade.py [ASSIGNMENT] [--runs 5] [--class-size 100] [--jobs 2] [--module FILE]

ASSIGNMENT defaults to lab06_collectives when declared, else the engine tests' toy assignment. The
submission is the reference module flattened like release/ (every function item fully exercised:
all examples, hidden inputs and properties run), or `--module FILE` in its place (e.g. a lab's
tests/labs/<lab>/impls/wrong_a.py: a failing submission, whose items are also diagnosed for named
misconceptions); `--class-size 0` skips the class. Targets (issue 3): one submission <= 2 s median,
100 submissions within 2 minutes on the 2-core machine.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "engine")]

import toy  # noqa: E402

from labs import load  # noqa: E402
from autograder.engine.grade import grade_submission  # noqa: E402


def reference_submission(dest: Path, module: str = "", module_file: Path | None = None) -> Path:
    """Every reference module flattened like release/; `module_file` replaces `module`.py."""
    dest.mkdir(parents=True)
    for path in toy.REFERENCE_DIR.glob("*.py"):
        if path.name != "__init__.py":
            (dest / path.name).write_text(toy.flat_imports(path.read_text()))
    if module_file is not None:
        shutil.copyfile(module_file, dest / f"{module}.py")
    return dest


def cpu_s() -> float:
    """CPU seconds of this process and its finished children (the sandboxed workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", nargs="?")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--class-size", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--module", type=Path, help="grade this module instead of the reference")
    args = parser.parse_args()
    name = args.assignment
    if name is None:
        try:
            load("lab06_collectives")
            name = "lab06_collectives"
        except Exception:
            name = "toy:ASSIGNMENT"
    spec = load(name)
    work = Path(tempfile.mkdtemp(prefix="scalelabs-bench-"))
    try:
        one = reference_submission(work / "one", spec.module, args.module and args.module.resolve())
        grade_submission(spec, one, "warmup")
        times, cpus = [], []
        print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        for i in range(args.runs):
            start, cpu = time.perf_counter(), cpu_s()
            result = grade_submission(spec, one, f"student{i}")
            times.append(time.perf_counter() - start)
            cpus.append(cpu_s() - cpu)
        print(f"{spec.id}: one submission, median of {args.runs}: {statistics.median(times):.2f} s wall "
              f"(min {min(times):.2f}, max {max(times):.2f}), {statistics.median(cpus):.2f} s CPU; "
              f"score {result.score}/{result.max_score}, {len(result.tests)} checks, sandbox {result.sandbox_mode}")
        walls = []
        for i in range(args.runs):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "autograder.cli", "grade", name, str(one), "--json",
                            "--student", f"cli{i}"], cwd=ROOT / "tests" / "engine", capture_output=True, check=True)
            walls.append(time.perf_counter() - start)
        print(f"{spec.id}: `scalelabs grade --json` (a whole process: start-up, imports, sandbox, grading), "
              f"median of {args.runs}: {statistics.median(walls):.2f} s wall")
        if args.class_size == 0:
            return 0
        root = work / "class"
        for i in range(args.class_size):
            shutil.copytree(one, root / f"student{i:03d}")
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", "from autograder.cli import main; main()", "grade-batch", name,
                               str(root), "--jobs", str(args.jobs), "--out", str(work / "out")],
                              cwd=ROOT / "tests" / "engine", capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if proc.returncode not in (0, 1) or ", failed 0" not in proc.stdout:   # 1: needs a person (no notebook here)
            print(proc.stdout, proc.stderr)
            return 1
        print(f"{spec.id}: class of {args.class_size} with --jobs {args.jobs}: {elapsed:.1f} s "
              f"(incl. process start-up, feedback pages, CSV and gradebook)")
        # the rerun a TA makes after a crash or to see the summary again: every student skipped (both
        # fingerprints checked, every feedback page compared with its result, the record rewritten)
        resumes = []
        for _ in range(args.runs):
            start = time.perf_counter()
            again = subprocess.run(proc.args, cwd=ROOT / "tests" / "engine", capture_output=True, text=True)
            resumes.append(time.perf_counter() - start)
            if f"graded 0, skipped {args.class_size}" not in again.stdout:
                print(again.stdout, again.stderr)
                return 1
        print(f"{spec.id}: the same class again, nothing changed (all skipped), median of {args.runs}: "
              f"{statistics.median(resumes):.2f} s wall")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
