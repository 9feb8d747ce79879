"""Benchmark: `scalelabs lint LAB` per lab (target, issue 32: under 10 s a lab) and what the lab's own
import costs every grading process (lint's import-time budget, CPU seconds).

    python bench/bench_lint.py [LAB ...] [--runs 3]

Each run is a fresh `scalelabs lint LAB` process: wall seconds (as an author waits for it) and CPU
seconds (lint's own processes: what it costs on a quiet machine; the wall time grows with the load,
which is printed). The import cost is lint's own measure (a fresh interpreter, the shared packages
imported first). Medians printed.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.author import lint  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("labs", nargs="*")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; medians of {args.runs} runs")
    print(f"{'lab':22s} {'lint wall s':>11s} {'lint CPU s':>11s} {'import CPU s':>13s}  problems")
    for lab in args.labs or lint.lab_ids():
        walls, cpus, imports, problems = [], [], [], 0
        for _ in range(args.runs):
            start, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run([sys.executable, "-m", "autograder.cli", "lint", lab], cwd=ROOT,
                                  capture_output=True, text=True)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            walls.append(time.perf_counter() - start)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            problems = sum(" (fix: " in line for line in done.stdout.splitlines())
            timed = subprocess.run([sys.executable, "-I", "-c", lint._TIMER.format(repo=str(ROOT), lab=lab)],
                                   cwd=ROOT, capture_output=True, text=True)
            imports.append(float(timed.stdout.split()[-1]) if timed.returncode == 0 else float("nan"))
        print(f"{lab:22s} {statistics.median(walls):11.1f} {statistics.median(cpus):11.1f} "
              f"{statistics.median(imports):13.3f}  {problems}")


if __name__ == "__main__":
    main()
