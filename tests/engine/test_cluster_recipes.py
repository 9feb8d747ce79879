"""The cluster recipes as a course runs them: the Kubernetes manifest's commands run as its Indexed Job
runs them (one process per completion index, JOB_COMPLETION_INDEX set, in the course folder, then the
merge Job's), the Slurm script run with an `sbatch` that runs what it is given as Slurm would (each array
task with SLURM_ARRAY_TASK_ID, the merge only after every task succeeded), each on a toy class whose
every student ends in the merged record; and the grader image's Containerfile installs scalelabs as the
README does, from the files it copies and nothing else of the course."""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder.doors import prairielearn
from test_cli_batch import make_class

HERE = Path(__file__).parent
REPO = HERE.parents[1]
BIN = Path(sys.executable).parent
K8S = REPO / "docs" / "cluster" / "scalelabs-k8s.yaml"
SLURM = REPO / "docs" / "cluster" / "scalelabs-slurm.sh"
STUDENTS = 4
SHARDS = 2      # the recipes' N (a parameter the course edits), small: each shard is a grade-batch process
TOY = "toy:ASSIGNMENT"


def environment(**extra) -> dict:
    """This venv's scalelabs first on PATH, the toy declaration importable, no job's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "JOB_COMPLETION"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    return env | extra


def merged_students(out: Path) -> list[str]:
    with (out / "grades.csv").open() as f:
        return sorted(row["student"] for row in csv.DictReader(f))


@pytest.fixture(scope="module")
def manifest() -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in yaml.safe_load_all(K8S.read_text())}


def container(job: dict) -> dict:
    [found] = job["spec"]["template"]["spec"]["containers"]
    return found


def env_of(job: dict) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container(job)["env"]}


def a_course(tmp_path: Path) -> Path:
    """A course folder as the recipes run in: nbgrader's config marks it (grade-batch refuses to grade
    a class outside one, which would apply no due date and no course secret)."""
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    return course


def test_the_kubernetes_manifest_is_an_indexed_job_of_n_shards_and_a_suspended_merge(manifest):
    shards, merge = manifest["scalelabs-shards"], manifest["scalelabs-merge"]
    n = int(env_of(shards)["SHARDS"])
    assert shards["spec"]["completionMode"] == "Indexed"
    assert shards["spec"]["completions"] == shards["spec"]["parallelism"] == n
    assert merge["spec"]["suspend"] is True
    assert container(shards)["image"] == container(merge)["image"]
    for job in (shards, merge):
        mounts = {m["name"]: m["mountPath"] for m in container(job)["volumeMounts"]}
        secret = next(v for v in job["spec"]["template"]["spec"]["volumes"] if "secret" in v)
        assert env_of(job)["SCALELABS_COURSE_SECRET_FILE"] == f"{mounts[secret['name']]}/course_secret"
        assert container(job)["securityContext"].get("privileged") is False
        assert env_of(job)["LAB"] == env_of(shards)["LAB"]


def test_the_kubernetes_jobs_commands_grade_and_merge_a_class(manifest, tmp_path):
    """Each completion index's command, as the Indexed Job runs it, then the merge Job's."""
    course = a_course(tmp_path)
    make_class(course / "class", STUDENTS)
    shards, merge = manifest["scalelabs-shards"], manifest["scalelabs-merge"]
    n = SHARDS

    def job_env(job: dict, **extra) -> dict:
        own = env_of(job) | {"LAB": TOY, "CLASS": str(course / "class")}
        own |= {"SHARDS": str(n)} if "SHARDS" in own else {}
        own.pop("SCALELABS_COURSE_SECRET_FILE")        # the tests' course secret (tests/conftest.py)
        return environment(**own, **extra)
    running = [subprocess.Popen([*container(shards)["command"], *container(shards)["args"]], cwd=course,
                                env=job_env(shards, JOB_COMPLETION_INDEX=str(index)), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True) for index in range(n)]
    for process in running:
        log, _ = process.communicate(timeout=900)
        assert process.returncode == 0, log[-3000:]
    done = subprocess.run([*container(merge)["command"], *container(merge)["args"]], cwd=course, env=job_env(merge),
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"merged {n} shards" in done.stdout
    assert merged_students(course / "grades" / TOY) == [f"s{i:02d}" for i in range(STUDENTS)]


# An sbatch that runs what it is given at once, as Slurm would once its turn comes: an array's tasks side
# by side with the array's variables; a job with afterok only when every task of its dependency exited 0,
# with afterany once they all ended.
FAKE_SBATCH = r'''#!{python}
import json, os, subprocess, sys
state_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobs.json")
state = json.load(open(state_file)) if os.path.exists(state_file) else {{}}
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
job = str(1000 + len(state))
first, last = map(int, args.get("array", "0-0").split("-"))
tasks = range(first, last + 1) if "array" in args else [None]
kind, _, after = args.get("dependency", "").partition(":")
if kind not in ("", "afterok", "afterany"):
    sys.exit(f"sbatch: this stand-in knows afterok and afterany, not {{kind}}")
running = {{}}
if not after or kind == "afterany" or all(code == 0 for code in state[after].values()):
    for task in tasks:
        env = dict(os.environ, SLURM_JOB_ID=job)
        if task is not None:
            env.update(SLURM_ARRAY_TASK_ID=str(task), SLURM_ARRAY_TASK_MIN=str(first),
                       SLURM_ARRAY_TASK_COUNT=str(len(tasks)), SLURM_ARRAY_JOB_ID=job)
        log = open(os.path.join(args["chdir"], args["output"].replace("%a", str(task))), "w")
        running[str(task)] = subprocess.Popen(["/bin/sh", "-c", args["wrap"]], cwd=args["chdir"], env=env,
                                              stdout=log, stderr=subprocess.STDOUT)
state[job] = {{task: process.wait() for task, process in running.items()}}
json.dump(state, open(state_file, "w"))
print(job)
'''


def test_the_slurm_script_grades_the_shards_then_merges_them(tmp_path):
    course = a_course(tmp_path)
    make_class(course / "class", STUDENTS)
    fake = tmp_path / "slurm-bin"
    fake.mkdir()
    (fake / "sbatch").write_text(FAKE_SBATCH.format(python=sys.executable))
    (fake / "sbatch").chmod(0o755)
    env = environment(SCALELABS=str(BIN / "scalelabs"))
    env["PATH"] = f"{fake}{os.pathsep}{env['PATH']}"
    done = subprocess.run(["bash", str(SLURM), TOY, "class", str(SHARDS)], cwd=course, env=env, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stderr
    jobs = json.loads((fake / "jobs.json").read_text())
    shards, merge = jobs["1000"], jobs["1001"]
    out = course / "grades" / TOY
    assert shards == {str(k): 0 for k in range(SHARDS)}, [(out / "shards" / f"slurm-{k}.log").read_text()[-2000:]
                                                           for k in range(SHARDS)]
    assert merge == {"None": 0}, (out / "merge.log").read_text()[-3000:]
    assert f"merged {SHARDS} shards" in (out / "merge.log").read_text()
    assert merged_students(out) == [f"s{i:02d}" for i in range(STUDENTS)]


def test_the_slurm_script_merges_nothing_when_a_shard_fails(tmp_path):
    course = a_course(tmp_path)
    make_class(course / "class", 2)
    fake = tmp_path / "slurm-bin"
    fake.mkdir()
    (fake / "sbatch").write_text(FAKE_SBATCH.format(python=sys.executable))
    (fake / "sbatch").chmod(0o755)
    env = environment(SCALELABS="sh -c 'exit 2' --")   # every shard refused (grade-batch's exit status 2)
    env["PATH"] = f"{fake}{os.pathsep}{env['PATH']}"
    done = subprocess.run(["bash", str(SLURM), TOY, "class", "2"], cwd=course, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    jobs = json.loads((fake / "jobs.json").read_text())
    assert jobs["1000"] == {"0": 1, "1": 1} and jobs["1001"] == {}


# --- the grader image ---

def containerfile() -> list[tuple[str, str]]:
    """The Containerfile's instructions, (KEYWORD, arguments), continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n\s*", " ", (REPO / "Containerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1] if " " in line else "") for line in lines]


def readme_install() -> str:
    """The README's quick start install: its first bash block, without the command it then runs."""
    block = re.search(r"```bash\n(.*?)\n```", (REPO / "README.md").read_text(), re.S).group(1)
    return block.split(" && scalelabs ")[0].strip()


def test_the_image_installs_scalelabs_as_the_readme_does_and_the_door_finds_it():
    steps = containerfile()
    runs = [args for keyword, args in steps if keyword == "RUN"]
    assert readme_install() in runs, (readme_install(), runs)
    assert any("bubblewrap" in r and "util-linux" in r for r in runs), "the sandbox's tools"
    workdir = install_dir = ""
    for keyword, args in steps:     # the folder the install runs in
        workdir = args if keyword == "WORKDIR" else workdir
        install_dir = workdir if (keyword, args) == ("RUN", readme_install()) else install_dir
    assert prairielearn.IMAGE_PYTHON == f"{install_dir}/.venv/bin/python"
    assert ("ENV", f"PATH={install_dir}/.venv/bin:$PATH") in steps
    assert [args for keyword, args in steps if keyword == "USER"] in ([], ["root"]), "the user sandbox needs root"


def test_the_image_copies_what_the_install_reads_and_nothing_of_the_course(tmp_path):
    """Only tracked files of the package are copied (no course secret, grades, gradebook or class), and
    from those alone the package's metadata builds (what `pip install -e .` reads first)."""
    copies = [args.split() for keyword, args in containerfile() if keyword == "COPY"]
    sources = [s.rstrip("/") for *srcs, _dest in copies for s in srcs]
    assert sources and "." not in sources and not {".scalelabs", "grades", "samples", "submitted"} & set(sources)
    tracked = subprocess.run(["git", "ls-files", *sources], cwd=REPO, capture_output=True, text=True).stdout.split()
    for source in sources:
        assert any(t == source or t.startswith(source + "/") for t in tracked), f"{source} is not tracked"
    image = tmp_path / "image"
    for path in tracked:
        (image / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / path, image / path)
    (image / "meta").mkdir()
    done = subprocess.run([sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "egg_info",
                           "--egg-base", "meta"], cwd=image, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    listed = (image / "meta" / "scalelabs.egg-info" / "SOURCES.txt").read_text().split()
    assert {"autograder/doors/prairielearn.py", "labs/lab06_collectives/__init__.py", "reference/collectives.py"} <= set(listed)


def test_the_image_is_built_from_the_public_base_or_a_local_one_of_the_same_debian_and_python():
    """A course builds FROM the public python image; a host without docker.io (this one) passes BASE, and
    bench/bench_image.py (run by hand: root, minutes) builds and grades with a debootstrapped base of the
    same Debian release and Python minor version."""
    steps = containerfile()
    public = "docker.io/library/python:3.11-slim-bookworm"
    assert steps[0] == ("ARG", f"BASE={public}") and [a for k, a in steps if k == "FROM"] == ["${BASE}"]
    bench = (REPO / "bench" / "bench_image.py").read_text()
    local = re.search(r'^BASE = "(.*)"$', bench, re.M).group(1)
    assert local.endswith(":3.11-bookworm") and '"--include=python3,python3-venv' in bench and '"bookworm"' in bench
    assert '"--build-arg", f"BASE={BASE}"' in bench
