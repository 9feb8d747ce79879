"""What the user sandbox's kernel confinement costs (issue 37): Landlock, its chroot fallback, and none.

    python bench/bench_user_sandbox.py [ASSIGNMENT] [--runs 3] [--compare DIR]

Run as root (the user mode needs it). For the lab's sample class, `scalelabs grade-batch --jobs 1` with
bubblewrap off PATH, wall and CPU seconds per submission (the grader and its children), median of --runs:
- user, Landlock: the mode as shipped on a kernel with Landlock;
- user, Landlock / no Landlock, no start check: the same without the once-per-process start check (whose
  canary would refuse a worker without Landlock), with the ruleset built and applied or neither: what
  Landlock adds per submission;
- user, chroot: the fallback, the grader under a filter whose landlock_* syscalls answer ENOSYS (a kernel
  without Landlock; tests/security/container.py), its tree made once per grader process;
- bubblewrap, for reference;
- with --compare DIR (a checkout of another commit, e.g. `git archive main | tar -x -C DIR`): its user mode
  (on main: no Landlock, chmod o-rwx of the course and two probes of the uid per submission).
Then, in this process, the once-per-process start of each mechanism (wall, CPU; fresh process each run)
and the per-sandbox Landlock ruleset (median of 50 builds, milliseconds).
"""
from __future__ import annotations

import argparse
import errno
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "security")]

from autograder.classroom import samples  # noqa: E402
import container  # noqa: E402

# the start check's probe would refuse a worker without Landlock (its canary is readable): both rows
# that compare with and without the step skip it, so that they differ by the step alone
NO_START_CHECK = ("from autograder.engine.sandbox import client\n"
                  "client._checked = type('Every', (set,), {'__contains__': lambda self, key: True})()\n")
NO_LANDLOCK_STEP = ("from autograder.engine.sandbox import landlock\n"
                    "class _Nothing:\n    fd = -1\n    def close(self): pass\n"
                    "landlock.ruleset = lambda rules: _Nothing()\n"
                    "landlock.restrictor = lambda made: (lambda: None)\n")
CLI = "from autograder.cli import main; main()"
START = """
import json, resource, sys, time
from pathlib import Path
import tempfile
from autograder.engine.config import GradingConfig
from autograder.engine.sandbox import client, landlock, usermode

def cpu():
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime

wall0, cpu0 = time.perf_counter(), cpu()
uid = usermode.take_uid()
if sys.argv[1] == "chroot":
    usermode.chroot_tree(uid)
else:
    usermode.runtime_rules(uid)
wall1, cpu1 = time.perf_counter(), cpu()
client.check_jail(GradingConfig(), [], "user")
wall2, cpu2 = time.perf_counter(), cpu()
ms = []
if sys.argv[1] == "landlock":
    root = Path(tempfile.mkdtemp())
    for name in ("submission", "site", "tmp"):
        (root / name).mkdir()
    (root / "worker.py").write_text("")
    for _ in range(50):
        t = time.perf_counter()
        landlock.ruleset(usermode.landlock_rules(uid, root)).close()
        ms.append((time.perf_counter() - t) * 1000)
print(json.dumps({"prepare": [wall1 - wall0, cpu1 - cpu0], "check": [wall2 - wall1, cpu2 - cpu1],
                  "rules": len(usermode.landlock_rules(uid, Path("/nonexistent"))), "ruleset_ms": ms}))
"""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(command: list, cwd: Path, env: dict | None = None, preexec=None) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the command and its children, stdout); exit 0 or 1 only."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, env=env,
                          preexec_fn=preexec)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1) or "failed 0" not in done.stdout and "grade-batch" in command:
        raise SystemExit(f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def without_bwrap(where: Path) -> dict:
    """This environment with a PATH holding only setpriv (bubblewrap hidden)."""
    (where / "bin").mkdir(exist_ok=True)
    link = where / "bin" / "setpriv"
    if not link.is_symlink():
        link.symlink_to(shutil.which("setpriv"))
    return dict(os.environ, PATH=str(where / "bin"))


def main() -> None:
    import json
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", nargs="?", default="lab06_collectives")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--compare", type=Path, help="a checkout of another commit to time its user mode")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the user mode needs root")
    with tempfile.TemporaryDirectory(prefix="bench-user-") as tmp:
        work = Path(tmp)
        declared = samples.sample_class(args.assignment)
        for student in declared:
            samples.materialise(args.assignment, student, work / "class" / student)
        env = without_bwrap(work)
        python = sys.executable
        rows = {
            "user, Landlock": ([python, "-c", CLI], REPO, env, None),
            "user, Landlock, no start check": ([python, "-c", NO_START_CHECK + CLI], REPO, env, None),
            "user, no Landlock, no start check": ([python, "-c", NO_START_CHECK + NO_LANDLOCK_STEP + CLI], REPO, env, None),
        }
        if container.applies():
            rows["user, chroot (no Landlock)"] = ([*container.prefix(), python, "-c", CLI], REPO, None,
                                                  container.installer(errno.ENOSYS))
        if shutil.which("bwrap"):
            rows["bubblewrap"] = ([python, "-c", CLI], REPO, None, None)
        if args.compare:
            rows[f"user, {args.compare.name}"] = ([python, "-c", CLI], args.compare.resolve(), env, None)
        print(f"load average before: {load()}; {args.runs} runs each, medians; class of {len(declared)}")
        print(f"{'grade-batch --jobs 1':34} {'wall/sub':>9} {'CPU/sub':>8}")
        for label, (command, cwd, environment, preexec) in rows.items():
            per = []
            for i in range(args.runs):
                out = work / f"out-{len(per)}-{label.replace(' ', '_').replace(',', '')}"
                wall, cpu, stdout = run([*command, "grade-batch", args.assignment, work / "class", "--jobs", "1",
                                         "--no-course", "--out", out], cwd, environment, preexec)
                results = json.loads(next((out / "results").glob("*.json")).read_text())
                expected = "bubblewrap" if label == "bubblewrap" else "user"
                if results["scalelabs"]["sandbox"] != expected:
                    raise SystemExit(f"{label}: graded in {results['scalelabs']['sandbox']}")
                per.append((wall / len(declared), cpu / len(declared)))
            print(f"{label:34} {statistics.median(p[0] for p in per):9.3f} {statistics.median(p[1] for p in per):8.3f}")
        print(f"\n{'once per grader process':34} {'prepare wall':>12} {'CPU':>6} {'check wall':>10} {'CPU':>6}")
        for mechanism, preexec in (("landlock", None), ("chroot", container.installer(errno.ENOSYS))):
            if mechanism == "chroot" and not container.applies():
                continue
            starts = [json.loads(run([python, "-c", START, mechanism], REPO, env, preexec)[2]) for _ in range(args.runs)]
            med = statistics.median
            print(f"{mechanism:34} {med(s['prepare'][0] for s in starts):12.3f} {med(s['prepare'][1] for s in starts):6.3f} "
                  f"{med(s['check'][0] for s in starts):10.3f} {med(s['check'][1] for s in starts):6.3f}")
            if mechanism == "landlock":
                ms = [m for s in starts for m in s["ruleset_ms"]]
                print(f"{'  ruleset per sandbox':34} {med(ms):9.2f} ms ({starts[0]['rules']} rules)")
        print(f"load average after: {load()}")


if __name__ == "__main__":
    main()
