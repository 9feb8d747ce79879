"""Sharded class grading (issue 39): a class graded as 4 shards -- 4 separate `grade-batch --shard`
processes, each from a working folder of its own, two of them taking their shard from a Kubernetes or
Slurm job's environment -- and merged with `scalelabs merge` is the class one grade-batch run grades:
the same results and feedback pages byte for byte, the same grades.csv and the same gradebook
(timestamps and database ids aside). The merge refuses, in one line and before writing anything, what
would make the record wrong; a regrade on a machine with another Python, numpy or hypothesis is refused
with the versions named."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import toy
from autograder.classroom.merge import MergeRefused, merge
from autograder.classroom.shards import Shard, ShardError
from test_cli_batch import SCALELABS, TOY, make_class, run

HERE = Path(__file__).parent
N = 4
STUDENTS = 12


def scalelabs(*args, cwd: Path, environ: dict | None = None) -> subprocess.Popen:
    """`scalelabs ...` as a process of its own in `cwd`, the toy declaration importable from anywhere."""
    cwd.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]), **(environ or {})}
    for name in ("JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT"):
        if name not in (environ or {}):
            env.pop(name, None)
    return subprocess.Popen([*SCALELABS, *map(str, args)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def finish(process: subprocess.Popen) -> subprocess.CompletedProcess:
    out, err = process.communicate(timeout=900)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """work/: class/ graded once whole into full/, and as N shards into shards/<k>/ (the N processes at
    once, each from cwd-<k>/; shard 1 reads JOB_COMPLETION_INDEX, shard 2 SLURM_ARRAY_TASK_ID of an
    array numbered from 1), then merged into merged/ from yet another folder."""
    work = tmp_path_factory.mktemp("shards")
    make_class(work / "class", STUDENTS)
    full = run("grade-batch", TOY, work / "class", "--jobs", "2", "--out", work / "full")
    assert full.returncode == 0, full.stderr
    environs = {1: {"JOB_COMPLETION_INDEX": "1"},
                2: {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": str(N)}}
    shards = [scalelabs("grade-batch", TOY, work / "class", "--jobs", "1", "--out", work / "shards" / str(k),
                        "--shard", f"auto/{N}" if k in environs else f"{k}/{N}", "--no-course", cwd=work / f"cwd-{k}",
                        environ=environs.get(k)) for k in range(N)]
    for done in map(finish, shards):
        assert done.returncode == 0, done.stderr
    merged = finish(scalelabs("merge", TOY, *(work / "shards" / str(k) for k in range(N)), "--out", work / "merged",
                              cwd=work / "cwd-merge"))
    assert merged.returncode == 0, merged.stderr
    assert f"merged {N} shards: {STUDENTS} results written, 0 already there" in merged.stdout
    return work


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_every_student_is_graded_in_exactly_one_shard(graded):
    per_shard = [set(json.loads((graded / "shards" / str(k) / "shard.json").read_text())["students"]) for k in range(N)]
    assert sum(map(len, per_shard)) == STUDENTS and set().union(*per_shard) == {f"s{i:02d}" for i in range(STUDENTS)}
    assert sum(1 for s in per_shard if s) >= 3, "the hash spreads a class over the shards"
    for k, students in enumerate(per_shard):
        assert {p.stem for p in (graded / "shards" / str(k) / "results").glob("*.json")} == students


def test_the_merge_is_one_grade_batch_run_byte_for_byte(graded):
    full, merged = graded / "full", graded / "merged"
    assert files(merged / "results") == files(full / "results")
    assert files(merged / "feedback") == files(full / "feedback")
    assert (merged / "grades.csv").read_bytes() == (full / "grades.csv").read_bytes()


def gradebook_dump(db: Path) -> dict:
    """Everything the gradebook holds of the class, but database ids and timestamps."""
    from nbgrader.api import Gradebook

    def plain(row) -> dict:
        return {k: v for k, v in row.to_dict().items() if k not in ("id", "timestamp")}

    with Gradebook(f"sqlite:///{db}", course_id="scalelabs") as gb:
        dump = {"students": sorted((plain(s) for s in gb.students), key=repr), "assignments": []}
        for a in gb.assignments:
            dump["assignments"].append({
                "assignment": plain(a),
                "notebooks": [{"notebook": plain(nb), "cells": sorted((plain(c) for c in nb.grade_cells), key=repr)}
                              for nb in a.notebooks],
                "submissions": sorted(({"submission": plain(sub), "penalty": sub.late_submission_penalty,
                                        "grades": sorted((plain(g) for nb in sub.notebooks for g in nb.grades), key=repr),
                                        "comments": sorted((plain(c) for nb in sub.notebooks for c in nb.comments), key=repr)}
                                       for sub in a.submissions), key=repr)})
    return dump


def test_the_merged_gradebook_is_the_one_runs(graded):
    full = gradebook_dump(graded / "full" / "gradebook.db")
    assert len(full["assignments"][0]["submissions"]) == STUDENTS
    assert gradebook_dump(graded / "merged" / "gradebook.db") == full


def test_a_merge_run_again_writes_nothing_new_and_takes_a_regraded_shard(graded, tmp_path):
    work = tmp_path / "again"
    shutil.copytree(graded / "merged", work / "merged")
    shards = [graded / "shards" / str(k) for k in range(N)]
    again = merge(toy.ASSIGNMENT, shards, work / "merged")
    assert again.written == [] and len(again.unchanged) == STUDENTS and again.pages == 0
    moved = shutil.copytree(graded / "shards", work / "shards")
    owner = next(k for k in range(N) if (moved / str(k) / "results" / "s03.json").exists())
    text = (moved / str(owner) / "results" / "s03.json").read_text()
    (moved / str(owner) / "results" / "s03.json").write_text(text.replace('"score": 0.0', '"score": 0.0 ', 1))
    taken = merge(toy.ASSIGNMENT, [moved / str(k) for k in range(N)], work / "merged")
    assert taken.written == ["s03"] and len(taken.unchanged) == STUDENTS - 1


def shard_copies(graded: Path, dest: Path) -> list[Path]:
    shutil.copytree(graded / "shards", dest)
    return [dest / str(k) for k in range(N)]


def edit_results(shard: Path, change) -> None:
    for path in (shard / "results").glob("*.json"):
        data = json.loads(path.read_text())
        change(data["scalelabs"])
        path.write_text(json.dumps(data, indent=1, sort_keys=True))


def busy(shards: list[Path], n: int = 2) -> list[Path]:
    """The first n shards that graded someone (the hash may leave a shard of a small class empty)."""
    found = [s for s in shards if any((s / "results").glob("*.json"))]
    assert len(found) >= n
    return found[:n]


def refusals(graded: Path, tmp_path: Path) -> dict[str, tuple[list[Path], str, str]]:
    """case -> (the folders to merge, two things the one-line refusal says), each case on a copy of the shards."""
    import numpy

    cases = {}
    for case in ("secret", "numpy", "declaration", "two shards", "missing", "twice", "unfinished", "other class",
                 "not a shard", "malformed record", "linked result"):
        shards = shard_copies(graded, tmp_path / case.replace(" ", "-"))
        first, second = busy(shards)
        k = shards.index(second)
        folders = shards
        if case == "secret":
            edit_results(second, lambda meta: meta.update(course_secret="0123456789ab"))
            said, said2 = f"shard {k} of {N} ({second}) was graded by another grader than", "0123456789ab in shard"
        elif case == "numpy":
            edit_results(second, lambda meta: meta["grader"].update(numpy="1.26.0"))
            said = "was graded by another grader"
            said2 = f"numpy {numpy.__version__} in shard {shards.index(first)}, 1.26.0 in shard {k}"
        elif case == "declaration":
            grader = json.loads(next((second / "results").glob("*.json")).read_text())["scalelabs"]["grader"]
            name = next(iter(grader["declaration"]))
            edit_results(second, lambda meta: meta["grader"]["declaration"].update({name: "0" * 16}))
            said, said2 = "was graded by another grader", name
        elif case == "two shards":
            result = next((first / "results").glob("*.json"))
            shutil.copy(result, second / "results" / result.name)
            manifest = json.loads((second / "shard.json").read_text())
            manifest["students"].append(result.stem)
            (second / "shard.json").write_text(json.dumps(manifest))
            said, said2 = f"{result.stem} is in two shards", ""
        elif case == "missing":
            folders = [s for s in shards if s != second]
            said, said2 = f"shard {k} of {N} is missing", "pass every shard's folder"
        elif case == "twice":
            folders = shards + [second]
            said, said2 = f"shard {k} of {N} is given twice", ""
        elif case == "unfinished":
            victim = sorted((second / "results").glob("*.json"))[0]
            victim.unlink()
            said, said2 = f"shard {k} of {N} ({second}) is not finished", f"({victim.stem})"
        elif case == "other class":
            manifest = json.loads((second / "shard.json").read_text())
            manifest["class"] = "0" * 16
            (second / "shard.json").write_text(json.dumps(manifest))
            said, said2 = "were cut from different class lists", ""
        elif case == "not a shard":
            folders = shards + [graded / "full"]
            said, said2 = f"{graded / 'full'} is not a shard", ""
        elif case == "malformed record":    # one test of one result without its kind: refused by the record check
            victim = sorted((second / "results").glob("*.json"))[-1]
            data = json.loads(victim.read_text())
            del data["tests"][1]["extra_data"]["kind"]
            victim.write_text(json.dumps(data, indent=1, sort_keys=True))
            said, said2 = f"shard {k} of {N} ({second}): {victim.name} is not a result", "has no scalelabs record"
        elif case == "linked result":       # the very same text, but through a symbolic link: never followed
            victim = sorted((second / "results").glob("*.json"))[0]
            elsewhere = tmp_path / f"{case}-{victim.name}"
            victim.rename(elsewhere)
            victim.symlink_to(elsewhere)
            said, said2 = f"{victim.name} is a symbolic link", "never followed"
        cases[case] = (folders, said, said2)
    return cases


def test_each_refusal_is_one_line_and_writes_nothing(graded, tmp_path):
    for case, (folders, said, said2) in refusals(graded, tmp_path).items():
        out = tmp_path / f"out-{case.replace(' ', '-')}"
        with pytest.raises(MergeRefused) as refused:
            merge(toy.ASSIGNMENT, folders, out)
        message = str(refused.value)
        assert said in message and said2 in message and "\n" not in message, (case, message)
        assert not (out / "results").exists() or not any((out / "results").iterdir()), case
        assert not (out / "gradebook.db").exists() and not (out / "grades.csv").exists(), case


def test_the_command_line_merge_refuses_in_one_line_with_exit_status_2(graded, tmp_path):
    shards = shard_copies(graded, tmp_path / "shards")
    done = finish(scalelabs("merge", TOY, *shards[:-1], "--out", tmp_path / "out", cwd=HERE))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"shard {N - 1} of {N} is missing" in " ".join(done.stderr.split())
    into_a_shard = finish(scalelabs("merge", TOY, *shards, "--out", shards[0], cwd=HERE))
    assert into_a_shard.returncode == 2 and "merge into a folder of its own" in " ".join(into_a_shard.stderr.split())


def test_a_regrade_on_a_machine_with_another_python_is_refused_with_the_versions(graded, tmp_path):
    """Results graded where Python was 3.10.0: grade-batch here names both versions and grades nobody;
    --force regrades those results here, after which the folder is one machine's again."""
    import platform

    out = shutil.copytree(graded / "full", tmp_path / "full")
    path = out / "results" / "s05.json"
    data = json.loads(path.read_text())
    data["scalelabs"]["grader"]["python"] = "3.10.0"
    path.write_text(json.dumps(data, indent=1, sort_keys=True))
    before = {p.name: p.read_bytes() for p in (out / "results").iterdir()}
    refused = run("grade-batch", TOY, graded / "class", "--jobs", "1", "--out", out)
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 2 and f"Python 3.10.0 there, {platform.python_version()} here: s05" in said, said
    assert {p.name: p.read_bytes() for p in (out / "results").iterdir()} == before
    forced = run("grade-batch", TOY, graded / "class", "--jobs", "1", "--out", out, "--student", "s05", "--force")
    assert forced.returncode == 0, forced.stderr
    assert (out / "results" / "s05.json").read_bytes() == (graded / "full" / "results" / "s05.json").read_bytes()


def test_the_grader_fingerprint_names_the_machines_python_numpy_and_hypothesis():
    import platform
    from importlib.metadata import version

    from autograder.classroom.fingerprints import grader_changes, grader_fingerprint
    from autograder.engine.config import GradingConfig

    grader = grader_fingerprint(TOY, toy.ASSIGNMENT, GradingConfig(), "bubblewrap")
    assert (grader["python"], grader["numpy"], grader["hypothesis"]) == (
        platform.python_version(), version("numpy"), version("hypothesis"))
    assert grader_changes(dict(grader, numpy="1.26.0"), grader) == ["numpy's version"]


@pytest.mark.parametrize("text, environ, expected", [
    ("2/4", {}, (2, 4)),
    ("0/1", {}, (0, 1)),
    ("auto/4", {"JOB_COMPLETION_INDEX": "3"}, (3, 4)),
    ("auto/4", {"SLURM_ARRAY_TASK_ID": "0"}, (0, 4)),
    ("auto/4", {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "4"}, (2, 4)),
    ("auto/4", {"JOB_COMPLETION_INDEX": "1", "SLURM_ARRAY_TASK_ID": "3"}, (1, 4)),
])
def test_a_shard_is_read_from_the_option_or_the_jobs_environment(text, environ, expected):
    shard = Shard.parse(text, environ)
    assert (shard.k, shard.n) == expected


@pytest.mark.parametrize("text, environ, message", [
    ("4/4", {}, "shard 4 is not one of 0 .. 3"),
    ("2", {}, "write K/N"),
    ("a/4", {}, "K must be a whole number"),
    ("1/0", {}, "N must be 1 or more"),
    ("auto/4", {}, "neither is set: pass --shard K/4"),
    ("auto/4", {"SLURM_ARRAY_TASK_ID": "4"}, "(a Slurm array of 4 shards is --array=0-3)"),
    ("auto/4", {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "8"}, "the Slurm array has 8 tasks"),
    ("auto/4", {"JOB_COMPLETION_INDEX": "x"}, "JOB_COMPLETION_INDEX must be a whole number"),
])
def test_a_shard_that_cannot_be_used_is_one_line(text, environ, message):
    with pytest.raises(ShardError, match=None) as refused:
        Shard.parse(text, environ)
    assert message in str(refused.value)


def test_grade_batch_refuses_a_shard_with_chosen_students(tmp_path):
    done = run("grade-batch", TOY, tmp_path, "--shard", "0/2", "--student", "s00")
    assert done.returncode == 2 and "pass one of them" in " ".join(done.stderr.split())
