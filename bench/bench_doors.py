"""Benchmark: one realistic class through every door, side by side, in one run.

    python bench/bench_doors.py [--class-size 24] [--large-class 96] [--otter-runs N] [--baseline-size 6]

The class cycles the shipped sample class of lab06_collectives (correct, partly_wrong, broken,
untouched, wrong_predictions) to --class-size students and grades it with

* `scalelabs grade-batch --jobs 1` pinned to one core, `--jobs 1` and `--jobs 2` (native: results,
  feedback pages, CSV, gradebook), and pinned to one core again for a class of --large-class students
  (default 96: what a batch's fixed costs come to over a course's size),
* `nbgrader autograde` in a temporary course root (the project's door: notebook executed, then the
  engine scores each grade cell),
* `otter run` of the Gradescope zip on each submission's zip (the first --otter-runs students, one
  after the other; default: all) in the environment the zip's setup.sh leaves on Gradescope, which
  uninstalls rfc3987-syntax (emulated here: a module on PYTHONPATH that raises ImportError, which is
  what jsonschema sees when the package is absent), and for --here-runs students in this
  environment as it is,
* and, as the outside baseline, plain `nbgrader autograde` of a trivial notebook with one test cell
  (no scalelabs at all) for --baseline-size students: what nbgrader alone costs per submission.

Then, for one correct submission: a whole `scalelabs grade --json` process and the released public
checks (`pytest` in the release folder), median of --runs.

Prints seconds per submission, the CPU seconds per submission (summed over each command's processes
that the kernel reports to it: the student code in a bubblewrap jail is not among them, its time lost
to the caller's accounting, so the per-core figure is the wall time of `--jobs 1` with the whole batch
pinned to one core by taskset; unpinned, `--jobs 1` hands the gradebook's import and the next
student's jail start to the idle core), the ratios, each figure against issue 16's target, and the load average before and after
(the machine may be shared: compare figures from one run only). The native batches are the median of
--batch-runs runs.
"""
from __future__ import annotations

import argparse
import json
import os
import re
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
from autograder.doors import otter as otter_door  # noqa: E402
from autograder.engine.grade import grade_submission  # noqa: E402
from labs import load as load_lab  # noqa: E402

LAB = "lab06_collectives"
PIN = ["taskset", "-c", "0"]    # every process, thread and jail of a batch on CPU 0: the cost per core
BIN = Path(sys.executable).parent
TRIVIAL = "trivial"


def compile_project() -> None:
    """Bytecode for the project's own modules, as installing a wheel compiles them. This machine sets
    PYTHONDONTWRITEBYTECODE, so without it every timed process would compile the project from source
    (~0.05 s each), a cost no installed course pays; installed packages already have theirs."""
    import compileall

    for package in ("autograder", "labs", "reference"):
        compileall.compile_dir(ROOT / package, quiet=1, rx=re.compile(r"/samples/"))  # a broken one on purpose


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(command: list, cwd: Path, **extra_env: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the command and its children)."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **extra_env)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([str(c) for c in command], cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # grade-batch exits 1 when a student needs a person (the class's broken submissions do): graded
    attention = done.returncode == 1 and "needs attention:" in done.stdout
    if done.returncode != 0 and not attention:
        raise SystemExit(f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def course_root(root: Path, config: str) -> Path:
    root.mkdir(parents=True)
    (root / "nbgrader_config.py").write_text(config)
    return root


def lab_class(work: Path, size: int) -> tuple[Path, list[str]]:
    """A course root with source/<lab> and submitted/<student>/<lab>/ for the cycled sample class."""
    root = course_root(work / "course", f"exec(compile(open({str(ROOT / 'nbgrader_config.py')!r}).read(), "
                                        f"'nbgrader_config.py', 'exec'))\n")
    shutil.copytree(ROOT / "source" / LAB, root / "source" / LAB)
    kinds = samples.students(LAB)
    students = [f"s{i:03d}_{kinds[i % len(kinds)]}" for i in range(size)]
    for student in students:
        samples.materialise(LAB, student.split("_", 1)[1], root / "submitted" / student / LAB)
    run([BIN / "nbgrader", "generate_assignment", LAB, "--force"], root)
    return root, students


def trivial_class(work: Path, size: int) -> Path:
    """A plain nbgrader course: one notebook, one autograded test cell, `size` identical submissions."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    root = course_root(work / "trivial", "c = get_config()\nc.CourseDirectory.course_id = 'baseline'\n")
    meta = {"nbgrader": {"grade": True, "grade_id": "test-sum", "locked": True, "points": 1,
                         "schema_version": 3, "solution": False, "task": False}}
    nb = new_notebook(cells=[new_code_cell("assert 1 + 1 == 2", metadata=meta)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    (root / "source" / TRIVIAL).mkdir(parents=True)
    nbformat.write(nb, str(root / "source" / TRIVIAL / f"{TRIVIAL}.ipynb"))
    run([BIN / "nbgrader", "generate_assignment", TRIVIAL, "--force"], root)
    for i in range(size):
        shutil.copytree(root / "release" / TRIVIAL, root / "submitted" / f"b{i:03d}" / TRIVIAL)
    return root


def without_rfc3987(work: Path) -> dict[str, str]:
    """The environment change the zip's setup.sh makes on Gradescope (pip uninstall rfc3987-syntax),
    for one command: importing the module fails, exactly what jsonschema meets when it is absent."""
    shim = work / "no-rfc3987"
    shim.mkdir(exist_ok=True)
    (shim / "rfc3987_syntax.py").write_text('raise ImportError("uninstalled by the zip\'s setup.sh")\n')
    return {"PYTHONPATH": str(shim)}


def otter_runs(zip_path: Path, root: Path, students: list[str], work: Path, label: str,
               **extra_env: str) -> tuple[float, float]:
    total_wall = total_cpu = 0.0
    for student in students:
        archive = shutil.make_archive(str(work / "otter" / student), "zip", root / "submitted" / student / LAB)
        out = work / "otter" / f"{student}-out-{label}"
        out.mkdir(parents=True)
        wall, cpu = run([BIN / "otter", "run", "-a", zip_path, "-o", out, "--no-logo", archive], work / "otter",
                        **extra_env)
        json.loads((out / "results.json").read_text())
        total_wall, total_cpu = total_wall + wall, total_cpu + cpu
    return total_wall, total_cpu


def medians(command: list, cwd: Path, runs: int) -> tuple[float, float]:
    """(median wall s, median CPU s) of `runs` runs of command."""
    walls, cpus = zip(*(run(command, cwd) for _ in range(runs)))
    return statistics.median(walls), statistics.median(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--class-size", type=int, default=24)
    parser.add_argument("--otter-runs", type=int, default=None, help="default: the whole class")
    parser.add_argument("--here-runs", type=int, default=6, help="otter runs in this environment as it is")
    parser.add_argument("--baseline-size", type=int, default=6)
    parser.add_argument("--runs", type=int, default=5, help="runs of the single-submission figures")
    parser.add_argument("--batch-runs", type=int, default=3, help="runs of each native batch")
    parser.add_argument("--large-class", type=int, default=96,
                        help="a second class of this size graded pinned to one core (0: none): a batch's "
                             "fixed costs (start-up, nbgrader's import) spread over a course's size")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="scalelabs-bench-doors-"))
    compile_project()
    rows: list[tuple[str, int, float, float | None]] = []   # door, submissions, wall s, CPU s
    try:
        print(f"load average before: {load()} ({os.cpu_count()} cores)")
        root, students = lab_class(work, args.class_size)
        n = len(students)
        # one core: pinned (with both cores, --jobs 1 hands the gradebook's import and the next jail's
        # start to the idle one)
        batches = [("--jobs 1, pinned to one core", root, n, 1, PIN), ("--jobs 1", root, n, 1, []),
                   ("--jobs 2", root, n, 2, [])]
        if args.large_class:
            large, _ = lab_class(work / "large", args.large_class)
            batches.append((f"--jobs 1, pinned to one core, class of {args.large_class}", large,
                            args.large_class, 1, PIN))
        for label, course, size, jobs, pin in batches:
            runs = []
            for i in range(args.batch_runs):
                shutil.rmtree(work / f"native{jobs}", ignore_errors=True)   # a fresh batch, nothing to resume
                runs.append(run([*pin, sys.executable, "-m", "autograder.cli", "grade-batch", LAB, course / "submitted",
                                 "--jobs", jobs, "--out", work / f"native{jobs}"], ROOT))
            walls, cpus = zip(*runs)
            rows.append((f"scalelabs grade-batch {label}", size, statistics.median(walls), statistics.median(cpus)))
        wall, cpu = run([BIN / "nbgrader", "autograde", LAB, "--force"], root)
        rows.append(("nbgrader autograde (scalelabs door)", n, wall, cpu))
        zip_path = otter_door.build_zip(LAB, work / "autograder.zip")
        otter_students = students[:args.otter_runs] if args.otter_runs else students
        wall, cpu = otter_runs(zip_path, root, otter_students, work, "gradescope", **without_rfc3987(work))
        rows.append(("otter run (zip, Gradescope's environment)", len(otter_students), wall, cpu))
        if args.here_runs:
            wall, cpu = otter_runs(zip_path, root, students[:args.here_runs], work, "here")
            rows.append(("otter run (zip, this environment)", min(args.here_runs, n), wall, cpu))
        trivial = trivial_class(work, args.baseline_size)
        wall, cpu = run([BIN / "nbgrader", "autograde", TRIVIAL, "--force"], trivial)
        rows.append(("baseline: nbgrader autograde, trivial notebook", args.baseline_size, wall, cpu))
        correct = next(s for s in students if s.endswith("_correct"))
        folder = root / "submitted" / correct / LAB
        assignment = load_lab(LAB)
        grade_submission(assignment, folder, "warm-up")
        in_process = []
        for i in range(args.runs):
            start = time.perf_counter()
            grade_submission(assignment, folder, f"run{i}")
            in_process.append(time.perf_counter() - start)
        single = medians([sys.executable, "-m", "autograder.cli", "grade", LAB, folder, "--json", "--student", correct], ROOT,
                         args.runs)
        public = medians([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], folder, args.runs)
        native_correct = json.loads((work / "native1" / "results" / f"{correct}.json").read_text())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    per_sub = {door: wall / count for door, count, wall, _ in rows}
    native, baseline = per_sub[rows[0][0]], per_sub[rows[-1][0]]
    print(f"{'door':<48} {'subs':>4} {'wall s':>7} {'s/sub':>6} {'CPU s/sub':>9} {'x one core':>11} "
          f"{'x baseline':>10}")
    for door, count, wall, cpu in rows:
        per = per_sub[door]
        print(f"{door:<48} {count:>4} {wall:>7.1f} {per:>6.2f} {cpu / count:>9.2f} {per / native:>11.2f} "
              f"{per / baseline:>10.2f}")
    print(f"\n{'one correct submission, median of ' + str(args.runs):<48} {'wall s':>7} {'CPU s':>7}")
    print(f"{'grade_submission in a warm process (the engine)':<48} {statistics.median(in_process):>7.2f}")
    print(f"{'`scalelabs grade --json` (whole process)':<48} {single[0]:>7.2f} {single[1]:>7.2f}")
    print(f"{'`pytest` in its release folder (public checks)':<48} {public[0]:>7.2f} {public[1]:>7.2f}")
    otter_wall = per_sub["otter run (zip, Gradescope's environment)"]
    large = (f" (class of {args.large_class}: "
             f"{per_sub[f'scalelabs grade-batch --jobs 1, pinned to one core, class of {args.large_class}']:.2f})"
             if args.large_class else "")
    print("\nissue 16 targets (s): native per submission per core (one core) <= 0.3: "
          f"{native:.2f}{large}; correct module <= 0.2: {statistics.median(in_process):.2f}; otter run <= 3: {otter_wall:.2f}; scalelabs grade <= 0.6: {single[0]:.2f}; "
          f"public pytest <= 2: {public[0]:.2f}; correct submission's score "
          f"{sum(t['score'] for t in native_correct['tests']):g}")
    print(f"load average after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
