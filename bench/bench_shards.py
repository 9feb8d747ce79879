"""Benchmark: what grading a class in shards costs over one run, and what `scalelabs merge` costs.

    python bench/bench_shards.py [--class-size 24] [--shards 4] [--merge-size 2000] [--runs 3]

1. Shard overhead. The shipped sample class of lab06_collectives, cycled to --class-size students, is
   graded by one `scalelabs grade-batch --jobs 1`, then by --shards `grade-batch --jobs 1 --shard K/N`
   processes one after the other, each from a working folder of its own, then joined by `scalelabs
   merge`; every process pinned to CPU 0 (taskset), so wall time is the cost per core (the student code
   in a bubblewrap jail is not in the CPU the kernel reports to the caller). Prints each side's seconds,
   the overhead (the shards and the merge less the one run) in all and per shard, and checks that the
   merged results and grades.csv are the one run's, byte for byte.
2. The merge at scale. The graded class's results are copied under --merge-size new ids (each with its
   feedback page, as grade-batch writes them) into --shards shard folders with their shard.json, as N
   machines would have left them, and merged into a fresh folder (median of --runs), its time split
   into the merge's own work (reading and checking the shards, copying results and pages; target: under
   2 s for 2,000 results) and the record it ends with (nbgrader's gradebook and grades.csv: the code,
   and the cost, that grade-batch ends with for a class of that size); then once more into the same
   folder (a rerun: nothing to write), and once as the whole `scalelabs merge` command.

Prints the load average before and after: the machine may be shared, compare figures from one run only.
"""
from __future__ import annotations

import argparse
import json
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
sys.path.insert(0, str(ROOT))

from autograder.classroom import samples  # noqa: E402
from autograder.classroom.batch import _write_record  # noqa: E402
from autograder.classroom.roster import Submitter  # noqa: E402
from autograder.classroom.shards import Shard, shard_of, write_manifest  # noqa: E402
from labs import load as load_lab  # noqa: E402

LAB = "lab06_collectives"
PIN = ["taskset", "-c", "0"]
SCALELABS = [str(Path(sys.executable).parent / "scalelabs")]
MERGE_TARGET_S = 2.0


def timed(command: list[str], cwd: Path, pin: bool = True) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall s, CPU s of the process and its children, the run) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run((PIN if pin else []) + command, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):      # 1: graded, someone needs a person (the sample class has some)
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return wall, cpu, done


def make_class(root: Path, size: int) -> None:
    students = samples.students(LAB)
    for i in range(size):
        samples.materialise(LAB, students[i % len(students)], root / f"s{i:03d}")


def shard_overhead(work: Path, size: int, n: int) -> dict:
    make_class(work / "class", size)
    one_wall, one_cpu, _ = timed([*SCALELABS, "grade-batch", LAB, str(work / "class"), "--jobs", "1", "--no-course",
                                  "--out", str(work / "one")], work)
    shard_walls, shard_cpus = [], []
    for k in range(n):
        cwd = work / f"cwd-{k}"
        cwd.mkdir()
        wall, cpu, _ = timed([*SCALELABS, "grade-batch", LAB, str(work / "class"), "--jobs", "1", "--no-course", "--shard",
                              f"{k}/{n}", "--out", str(work / "shards" / str(k))], cwd)
        shard_walls.append(wall)
        shard_cpus.append(cpu)
    merge_wall, merge_cpu, _ = timed([*SCALELABS, "merge", LAB, *(str(work / "shards" / str(k)) for k in range(n)),
                                      "--out", str(work / "merged")], work)
    same = all((work / "merged" / "results" / p.name).read_bytes() == p.read_bytes()
               for p in (work / "one" / "results").glob("*.json")) and \
        (work / "merged" / "grades.csv").read_bytes() == (work / "one" / "grades.csv").read_bytes()
    return {"one_wall": one_wall, "one_cpu": one_cpu, "shard_walls": shard_walls, "shard_cpus": shard_cpus,
            "merge_wall": merge_wall, "merge_cpu": merge_cpu, "same": same}


def synthetic_shards(graded: Path, dest: Path, size: int, n: int) -> list[Path]:
    """`size` results made from the graded class's (under new ids), split into n shard folders as
    grade-batch --shard leaves them: results, feedback pages, shard.json."""
    assignment = load_lab(LAB)
    graded_results = [json.loads(p.read_text()) for p in sorted((graded / "results").glob("*.json"))]
    ids = [f"x{i:05d}" for i in range(size)]
    whole = [Submitter(dest / "class" / s, s, (s,)) for s in ids]
    folders = [dest / str(k) for k in range(n)]
    for k, folder in enumerate(folders):
        mine = [s for s in whole if shard_of(s.graded_as, n) == k]
        (folder / "results").mkdir(parents=True)
        (folder / "feedback").mkdir()
        write_manifest(folder, assignment.id, Shard(k, n), whole, mine)
        for sub in mine:
            data = json.loads(json.dumps(graded_results[ids.index(sub.name) % len(graded_results)]))
            data["scalelabs"].update(student=sub.name, graded_as=sub.name)
            _write_record(folder, assignment.title, sub.name, data)
    return folders


def merge_in_process(assignment, folders: list[Path], out: Path) -> dict:
    """One merge in this process, its time split: the merge's own work (reading and checking the shards,
    copying results and pages) and the record it then writes (gradebook and grades.csv, the code
    grade-batch ends with: batch.write_class_record)."""
    from autograder.classroom import merge as merging

    spent = {}
    real = merging.write_class_record

    def record(*args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            spent["record"] = (time.perf_counter() - wall, time.process_time() - cpu)
    merging.write_class_record = record
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        summary = merging.merge(assignment, folders, out)
        total = (time.perf_counter() - wall, time.process_time() - cpu)
    finally:
        merging.write_class_record = real
    own = (total[0] - spent["record"][0], total[1] - spent["record"][1])
    return {"total": total, "own": own, "record": spent["record"], "written": len(summary.written)}


def merge_at_scale(graded: Path, work: Path, size: int, n: int, runs: int) -> dict:
    assignment = load_lab(LAB)
    folders = synthetic_shards(graded, work / "synthetic", size, n)
    fresh = [merge_in_process(assignment, folders, work / f"merged-{run}") for run in range(runs)]
    assert all(f["written"] == size for f in fresh)
    rerun = merge_in_process(assignment, folders, work / "merged-0")
    assert rerun["written"] == 0
    wall, cpu, done = timed([*SCALELABS, "merge", LAB, *map(str, folders), "--out", str(work / "merged-cli")], work,
                            pin=False)
    assert f"{size} results written" in done.stdout, done.stdout

    def median(part: str, which: int) -> float:
        return statistics.median(f[part][which] for f in fresh)
    return {"own": (median("own", 0), median("own", 1)), "record": (median("record", 0), median("record", 1)),
            "rerun": rerun, "cli": (wall, cpu)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class-size", type=int, default=24)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--merge-size", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("taskset") is None:
        raise SystemExit("taskset (util-linux) is needed to pin the batches to one core")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="scalelabs-bench-shards-") as tmp:
        work = Path(tmp)
        o = shard_overhead(work, args.class_size, args.shards)
        shards_wall, shards_cpu = sum(o["shard_walls"]), sum(o["shard_cpus"])
        extra = shards_wall + o["merge_wall"] - o["one_wall"]
        print(f"\n1. {LAB}, {args.class_size} students, one core (taskset -c 0):")
        print(f"   one grade-batch --jobs 1             {o['one_wall']:7.2f} s wall  {o['one_cpu']:7.2f} s CPU")
        print(f"   {args.shards} shards, one after the other     {shards_wall:7.2f} s wall  {shards_cpu:7.2f} s CPU  "
              f"(each: {', '.join(f'{w:.2f}' for w in o['shard_walls'])} s)")
        print(f"   merge                                {o['merge_wall']:7.2f} s wall  {o['merge_cpu']:7.2f} s CPU")
        print(f"   overhead of sharding: {extra:.2f} s ({extra / args.shards:.2f} s a shard, "
              f"{100 * extra / o['one_wall']:.0f}% of the one run)")
        print(f"   merged results and grades.csv byte-identical to the one run's: {o['same']}")
        m = merge_at_scale(work / "one", work / "scale", args.merge_size, args.shards, args.runs)
        verdict = "meets" if m["own"][0] < MERGE_TARGET_S else "MISSES"
        print(f"\n2. scalelabs merge of {args.merge_size} results in {args.shards} shards (median of {args.runs}):")
        print(f"   the merge (read, check, copy results and pages) {m['own'][0]:7.2f} s wall {m['own'][1]:7.2f} s CPU: "
              f"{verdict} the target of {MERGE_TARGET_S:g} s")
        print(f"   the record (gradebook, grades.csv; grade-batch's end) {m['record'][0]:7.2f} s wall "
              f"{m['record'][1]:7.2f} s CPU")
        print(f"   run again into the same folder: merge {m['rerun']['own'][0]:.2f} s wall, record "
              f"{m['rerun']['record'][0]:.2f} s wall (nothing written)")
        print(f"   the whole `scalelabs merge` command: {m['cli'][0]:.2f} s wall, {m['cli'][1]:.2f} s CPU")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
