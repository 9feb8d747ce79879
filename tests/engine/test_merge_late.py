"""`scalelabs merge` and the course's deadlines now (issue 39): a class graded as 2 shards in a course
with a due date, an extension granted in extensions.csv after the shards ran, then merged. The merged
class is what one grade-batch run of the whole class gives now: the extended student's late penalty is
gone (final score = their on-time score, page and record saying the extension), a classmate late without
an extension keeps theirs, an honest classmate's result is the shard's file; results, pages and
grades.csv equal a fresh grade-batch run's byte for byte. Where the result cannot say the lateness now
(no course found, or no lateness recorded while the lab has a due date now) the merge refuses in one line."""
from __future__ import annotations

import csv
import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

import toy
from autograder.classroom.batch import grade_batch
from autograder.classroom.merge import MergeRefused, merge
from autograder.classroom.shards import Shard, shard_of
from test_cli_batch import TOY
from test_shards import finish, scalelabs

ZONE = ZoneInfo("America/Los_Angeles")
DUE = (datetime.now(ZONE) - timedelta(days=10)).replace(hour=23, minute=59, second=0, microsecond=0)
REF = toy.reference_source()
WRONG = toy.with_function(REF, "comm_fraction", "def comm_fraction(comm_s, compute_s):\n    return comm_s / compute_s\n")
# student -> (module, answer letter, when they submitted); `extended` and `late` are in shard 0, `honest` in 1
CLASS = {"extended": (REF, toy.key, DUE + timedelta(hours=26)),       # 2 started days late: 20 %, until extended
         "late": (WRONG, toy.WRONG_LETTER, DUE + timedelta(hours=26)),  # 20 %, no extension
         "honest": (REF, toy.key, DUE - timedelta(hours=1))}           # on time
EXTENDED = DUE + timedelta(days=3)


def rows(folder: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader((folder / "grades.csv").open())}


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> tuple[Path, object]:
    """course/: a course (policy 10 % a started day, at most 30 %) and its class graded as 2 shards into
    shards/<k>; then `extended` is granted an extension; merged/ is the merge run in the course, full/ a
    fresh grade-batch of the whole class now. Returns (course, the merge's summary)."""
    root = tmp_path_factory.mktemp("merge-late")
    assert {shard_of(s, 2) for s in CLASS} == {0, 1} and shard_of("extended", 2) != shard_of("honest", 2)
    (root / "nbgrader_config.py").write_text("")
    (root / "extensions.csv").write_text("student,lab,due\n")
    (root / "scalelabs.toml").write_text(f"""[deadlines]
timezone = "America/Los_Angeles"
policy = "per_day"
penalty_percent = 10
max_penalty_percent = 30
grace_minutes = 10
extensions = "extensions.csv"

[deadlines.{toy.ASSIGNMENT.id}]
due = {DUE.replace(tzinfo=None).isoformat()}
""")
    (root / "timestamps.csv").write_text("student,submitted_at\n" + "".join(f"{s},{when.isoformat()}\n"
                                                                          for s, (_, _, when) in CLASS.items()))
    for student, (module, answer, _) in CLASS.items():
        toy.make_submission(root / "class" / student, module, answer)
    mp = pytest.MonkeyPatch()
    mp.chdir(root)
    try:
        for k in range(2):
            grade_batch(TOY, root / "class", root / "shards" / str(k), jobs=1, shard=Shard(k, 2),
                        timestamps=root / "timestamps.csv")
        (root / "extensions.csv").write_text(f"student,lab,due\nextended,{toy.ASSIGNMENT.id},{EXTENDED.isoformat()}\n")
        merged = merge(toy.ASSIGNMENT, [root / "shards" / "0", root / "shards" / "1"], root / "merged")
        grade_batch(TOY, root / "class", root / "full", jobs=1, timestamps=root / "timestamps.csv")
    finally:
        mp.undo()
    return root, merged


def test_an_extension_granted_after_sharding_applies_at_merge_as_one_grade_batch_run_now(course):
    course, summary = course
    assert summary.reassessed == {"extended": "their extension changed"} and sorted(summary.written) == sorted(CLASS)
    shard = {**rows(course / "shards" / "0"), **rows(course / "shards" / "1")}
    merged, full = rows(course / "merged"), rows(course / "full")
    # the shard recorded extended as late; the merge takes the penalty off: final score = their on-time score
    assert float(shard["extended"]["late_penalty"]) > 0
    assert float(merged["extended"]["late_penalty"]) == 0
    assert float(merged["extended"]["final_score"]) == float(merged["extended"]["raw_score"]) \
        == float(shard["extended"]["raw_score"]) == float(full["extended"]["final_score"]) > 0
    page = (course / "merged" / "feedback" / "extended.html").read_text()
    assert "extended from" in page and "extensions.csv" in page
    late = json.loads((course / "merged" / "results" / "extended.json").read_text())["scalelabs"]["late"]
    assert late["status"] == "on_time" and late["due_source"] == "extensions.csv"
    # a classmate late without an extension keeps their penalty; the honest one's result is the shard's file
    assert float(merged["late"]["late_penalty"]) == float(shard["late"]["late_penalty"]) > 0
    assert (course / "merged" / "results" / "honest.json").read_bytes() == \
        (course / "shards" / "1" / "results" / "honest.json").read_bytes()
    # the whole class as one grade-batch run of it now gives it
    assert files(course / "merged" / "results") == files(course / "full" / "results")
    assert files(course / "merged" / "feedback") == files(course / "full" / "feedback")
    assert (course / "merged" / "grades.csv").read_bytes() == (course / "full" / "grades.csv").read_bytes()


def test_a_merge_run_again_in_the_course_writes_nothing_new(course, tmp_path, monkeypatch):
    course, _ = course
    shutil.copytree(course / "merged", tmp_path / "merged")
    monkeypatch.chdir(course)
    again = merge(toy.ASSIGNMENT, [course / "shards" / "0", course / "shards" / "1"], tmp_path / "merged")
    assert again.written == [] and again.pages == 0 and len(again.unchanged) == len(CLASS)
    assert again.reassessed == {"extended": "their extension changed"}
    # the command line, in the course, says whose lateness it recorded again and why
    done = finish(scalelabs("merge", TOY, course / "shards" / "0", course / "shards" / "1", "--out", tmp_path / "cli",
                            cwd=course))
    assert done.returncode == 0, done.stderr
    assert "lateness recorded again under the course's deadlines now, their extension changed: extended" in \
        " ".join(done.stdout.split())
    assert (tmp_path / "cli" / "grades.csv").read_bytes() == (course / "full" / "grades.csv").read_bytes()


def test_a_merge_that_cannot_know_the_lateness_now_refuses_in_one_line(course, tmp_path, monkeypatch):
    course, _ = course
    # no course where the merge runs: the course's extensions cannot apply (the command line: exit 2)
    away = tmp_path / "away"
    done = finish(scalelabs("merge", TOY, course / "shards" / "0", course / "shards" / "1", "--out", tmp_path / "out",
                            cwd=away))
    said = " ".join(done.stderr.split())
    assert done.returncode == 2 and "records lateness under a course's [deadlines]" in said and "--course DIR" in said
    assert not (tmp_path / "out" / "results").exists() or not any((tmp_path / "out" / "results").iterdir())
    # a shard graded without the course's deadlines, merged in the course: its submission times are not recorded
    shards = shutil.copytree(course / "shards", tmp_path / "shards")
    for path in (shards / "0" / "results").glob("*.json"):
        data = json.loads(path.read_text())
        del data["scalelabs"]["late"]
        path.write_text(json.dumps(data, indent=1, sort_keys=True))
    monkeypatch.chdir(course)
    with pytest.raises(MergeRefused, match=r"records no lateness .* has a due date in .*scalelabs.toml now: only the "
                                           r"class folder has their submission time; run that shard's grade-batch "
                                           r"again in the course"):
        merge(toy.ASSIGNMENT, [shards / "0", shards / "1"], tmp_path / "out2")
    assert not any((tmp_path / "out2").glob("results/*.json"))
