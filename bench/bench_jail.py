"""What the bubblewrap jail's start costs, and grading from Debian's system Python (issue 26).

    python bench/bench_jail.py [ASSIGNMENT] [--runs 3]

For two graders, this environment's Python and a venv of Debian's /usr/bin/python3 (the layout whose
stdlib holds no site-packages; made like the test's, tests/security/debian_venv.py), it prints:
- the start, once per grader process, each in a fresh process (median of --runs): the binds
  (`jail.runtime_mounts`: a child of the grader's Python dlopens the stdlib's and numpy's extension
  modules to see what the loader maps) and the start check (`client.check_jail`: the real jail on the
  probe module), wall seconds and CPU seconds of the process and its children. The jailed probe's own
  CPU is not in the CPU column: bwrap's sandboxed process is never reaped into its caller's accounting.
- `scalelabs grade-batch ASSIGNMENT --jobs 1` of the lab's sample class (median of --runs), wall and
  CPU seconds per submission, the start check included.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "security")]

from autograder.classroom import samples  # noqa: E402
from debian_venv import debian_venv  # noqa: E402

START = """
import json, resource, time
from autograder.engine.config import GradingConfig
from autograder.engine.sandbox import client, jail

def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

wall0, cpu0 = time.perf_counter(), cpu()
mounts = jail.runtime_mounts()
wall1, cpu1 = time.perf_counter(), cpu()
client.check_jail(GradingConfig())
wall2, cpu2 = time.perf_counter(), cpu()
print(json.dumps({"binds": [wall1 - wall0, cpu1 - cpu0], "check": [wall2 - wall1, cpu2 - cpu1],
                  "count": len(mounts.binds)}))
"""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(command: list, cwd: Path, ok: tuple[int, ...] = (0, 1)) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the command and its children, stdout); an exit status in `ok` only
    (grade-batch's 1: a student who needs a person)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in ok:
        raise SystemExit(f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", nargs="?", default="lab06_collectives")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-jail-") as tmp:
        work = Path(tmp)
        pythons = {"this environment": Path(sys.executable)}
        debian = debian_venv(work / "debian-venv")
        if debian is None:
            print("no Debian /usr/bin/python3 of this Python version: the Debian rows are left out")
        else:
            pythons["Debian venv (/usr/bin/python3)"] = debian
        declared = samples.sample_class(args.assignment)
        for student in declared:
            samples.materialise(args.assignment, student, work / "class" / student)
        print(f"load average before: {load()}; {args.runs} runs each, medians")
        print(f"{'grader':34} {'binds wall':>10} {'CPU':>6} {'check wall':>10} {'CPU':>6} "
              f"{'batch wall/sub':>14} {'CPU/sub':>8}")
        for label, python in pythons.items():
            starts = [json.loads(run([python, "-c", START], work, ok=(0,))[2]) for _ in range(args.runs)]
            batches = []
            for i in range(args.runs):
                wall, cpu, out = run([python, "-c", "from autograder.cli import main; main()", "grade-batch",
                                      args.assignment, work / "class", "--jobs", "1", "--out", work / f"out-{label}-{i}"],
                                     REPO)
                if "failed 0" not in out:
                    raise SystemExit(f"{label}: a student failed to grade:\n{out[-2000:]}")
                batches.append((wall / len(declared), cpu / len(declared)))
            med = statistics.median
            print(f"{label:34} {med(s['binds'][0] for s in starts):10.3f} {med(s['binds'][1] for s in starts):6.3f} "
                  f"{med(s['check'][0] for s in starts):10.3f} {med(s['check'][1] for s in starts):6.3f} "
                  f"{med(b[0] for b in batches):14.3f} {med(b[1] for b in batches):8.3f}"
                  f"   ({starts[0]['count']} binds, class of {len(declared)})")
        print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
