"""The Gradescope assignment as staff expect it (issue 28): what results.json shows per feedback mode
(scores visible at once, the rest with Gradescope's own visibility), the submission limit read from
Gradescope's submission_metadata.json (the last graded score stands), and what `scalelabs otter`
tells staff. (otter runs of the zip, the issue's figures and a zipped folder: tests/security/
test_feedback_policy.py.)"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from autograder.doors import gradescope
from autograder.doors import otter as otter_door
from autograder.engine.config import FeedbackPolicy
from autograder.engine.results import Result, TestResult

from door_helpers import toy

LAB = toy.make()


def _result() -> Result:
    """A result with one withheld detail: the question's key (its before view differs)."""
    f, q = LAB.functions[0], LAB.questions[0]
    tests = [TestResult(f.name, "worked example (Act I)", "example", 1.0, 1.0, "ring(...) = 5.5"),
             TestResult(f.name, "hidden checks", "hidden", 0.0, float(f.points) - 1.0, "ring(n=2) returned 1\nexpected 2",
                        brief="does not match the reference on 3 of 31 hidden inputs"),
             TestResult(q.id, q.kind, q.kind, 0.0, float(q.points), f"answered A: not the best answer\nThe best answer is {q.key}.",
                        "A", brief="answered A: not the best answer")]
    return Result(LAB.id, "sid-1", tests, "ran in the bubblewrap sandbox", "bubblewrap")


def _by_name(results: dict) -> dict:
    return {t["name"]: t for t in results["tests"]}


def test_due_date_mode_shows_every_score_at_once_and_the_rest_after_the_due_date():
    results = gradescope.results_json(LAB, _result(), FeedbackPolicy())
    tests = _by_name(results)
    f, q = LAB.functions[0], LAB.questions[0]
    assert [t["name"] for t in results["tests"] if "score" in t] == LAB.item_ids
    assert all(t["visibility"] == "visible" for t in results["tests"] if "score" in t)
    assert tests[f.name]["score"] == 1.0 and tests[f.name]["max_score"] == float(f.points)
    assert "expected 2" not in tests[f.name]["output"] and "3 of 31 hidden inputs" in tests[f.name]["output"]
    assert "best answer is" not in tests[q.id]["output"]
    assert tests[f"{f.name} (in full)"]["visibility"] == "after_due_date" and "expected 2" in tests[f"{f.name} (in full)"]["output"]
    assert tests[f"{q.id} (in full)"]["visibility"] == "after_due_date"
    assert all("score" not in t for t in results["tests"] if t["name"].endswith("(in full)"))   # no points: the total stays
    assert results["score"] == 1.0
    assert results["stdout_visibility"] == "hidden"   # otter's printed summary is staff's, whatever the default
    assert f"Score: 1 / {LAB.total_points:g}" in results["output"] and "appear after the due date" in results["output"]
    # nothing withheld rides in a visible test's extra_data
    visible = [t for t in results["tests"] if t["visibility"] == "visible"]
    assert "expected 2" not in repr(visible) and "The best answer" not in repr(visible)


@pytest.mark.parametrize("mode, detail", [("before", "hidden"), ("after", None)])
def test_the_other_modes(mode, detail):
    results = gradescope.results_json(LAB, _result(), FeedbackPolicy(gradescope=mode))
    tests = _by_name(results)
    q = LAB.questions[0]
    assert results["stdout_visibility"] == "hidden"
    if detail is None:   # everything at once, in the scored tests
        assert f"The best answer is {q.key}." in tests[q.id]["output"] and len(results["tests"]) == len(LAB.item_ids)
    else:                # the rest to staff only
        assert tests[f"{q.id} (in full)"]["visibility"] == detail and "best answer is" not in tests[q.id]["output"]


def test_an_engine_failure_scores_every_item_zero_with_the_reason():
    results = gradescope.results_json(LAB, None, FeedbackPolicy(), "sid-1", "the engine could not grade this")
    assert results["score"] == 0 and [t["name"] for t in results["tests"]] == LAB.item_ids
    assert all(t["score"] == 0 and "the engine could not grade this" in t["output"] for t in results["tests"])


# --- the submission limit -------------------------------------------------------------------------------

def _metadata(times: list[str], now: str = "2026-11-20T12:00:00.000000-08:00") -> dict:
    previous = [{"submission_time": t, "score": float(i), "results": {"score": float(i), "output": f"try {i}",
                 "tests": [], "extra_data": {"scalelabs": {"summary": f"Score: {i} / 29"}}}}
                for i, t in enumerate(times)]
    return {"created_at": now, "previous_submissions": previous, "users": [{"sid": "sid-1"}]}


def test_under_the_limit_a_submission_is_graded():
    assert gradescope.over_limit(_metadata(["2026-11-20T10:00:00.000000-08:00"]), FeedbackPolicy(submission_limit=2)) is None
    assert gradescope.over_limit(_metadata(["2026-11-20T10:00:00.000000-08:00"] * 5), FeedbackPolicy()) is None   # no limit


def test_at_the_limit_the_last_graded_results_stand_with_a_line_saying_so():
    times = ["2026-11-19T10:00:00.000000-08:00", "2026-11-20T10:00:00.000000-08:00"]
    kept = gradescope.over_limit(_metadata(times), FeedbackPolicy(submission_limit=2))
    assert kept["score"] == 1.0   # the latest earlier submission's
    assert kept["stdout_visibility"] == "hidden"
    assert kept["output"].startswith("Submission limit reached: 2 graded submissions. This upload was not graded; "
                                     f"your score is that of your submission of {times[1]}.")
    assert kept["output"].endswith("Score: 1 / 29")
    # the next upload carries the same results on, saying so once
    metadata = _metadata(times)
    metadata["previous_submissions"].append({"submission_time": "2026-11-20T11:00:00.000000-08:00", "score": 1.0,
                                             "results": kept})
    again = gradescope.over_limit(metadata, FeedbackPolicy(submission_limit=2))
    assert again["output"].count("Submission limit reached") == 1 and times[1] in again["output"]


def test_a_window_counts_only_the_submissions_inside_it():
    times = ["2026-11-19T10:00:00.000000-08:00", "2026-11-20T10:00:00.000000-08:00"]
    policy = FeedbackPolicy(submission_limit=2, submission_window_hours=24)
    assert gradescope.over_limit(_metadata(times), policy) is None          # one of them is 26 hours old
    assert gradescope.over_limit(_metadata(times, now="2026-11-20T09:00:00.000000-08:00"), policy) is not None


def test_the_plugin_grades_nothing_over_the_limit(tmp_path):
    """The door itself: at the limit before_grading runs no student code and results.json is the last
    graded one with the line; under it the submission is graded."""
    from otter.test_files import GradingResults
    from autograder.classroom import samples
    lab_id = "lab06_collectives"
    config = otter_door.otter_config(lab_id, feedback={"submission_limit": 1})["plugins"][0][otter_door.PLUGIN]
    folder = samples.materialise(lab_id, "correct", tmp_path / "submission")
    metadata = _metadata(["2026-11-20T10:00:00.000000-08:00"])
    plugin = otter_door.EngineOverride(str(folder / f"{lab_id}.ipynb"), metadata, config)
    plugin.before_grading(None)
    assert plugin.result is None and plugin.limited is not None
    results = GradingResults([])
    plugin.after_grading(results)
    out = results.to_gradescope_dict(None)
    assert out["score"] == 0.0 and out["output"].startswith("Submission limit reached: 1 graded submission.")


def test_scalelabs_otter_prints_the_total_and_the_upload_steps(tmp_path):
    from labs import load
    lab = load("lab06_collectives")
    total = sum(f.points for f in lab.functions) + sum(q.points for q in lab.questions) + sum(c.points for c in lab.challenges)
    steps = gradescope.upload_steps(lab, tmp_path / "z.zip", FeedbackPolicy(submission_limit=3, submission_window_hours=24))
    lines = steps.splitlines()
    assert lines[0] == f"total: {total:g} points"
    assert f"worth {total:g} points" in steps and f"upload {tmp_path / 'z.zip'}" in steps
    assert f"Students upload {lab.id}.ipynb and {lab.module}.py" in steps and "(the two files, or the folder zipped)" in steps
    assert lines[-1] == "Submission limit ([feedback] submission_limit): 3 graded submissions every 24 hours."


# --- a zipped folder: which folder of the upload is graded ----------------------------------------------

def test_the_graded_folder_is_the_one_holding_the_assignment(tmp_path):
    from labs import load
    lab = load("lab06_collectives")
    def upload(*files):
        top = tmp_path / f"u{len(list(tmp_path.iterdir()))}"
        for f in files:
            (top / f).parent.mkdir(parents=True, exist_ok=True)
            (top / f).write_text("")
        (top / "tests").mkdir(exist_ok=True)
        return top
    flat = upload("collectives.py", "lab06_collectives.ipynb", otter_door.UPLOAD_ENTRY)
    assert otter_door.graded_folder(flat, lab) == flat
    nested = upload(otter_door.UPLOAD_ENTRY, "lab06_collectives/collectives.py", "__MACOSX/lab06_collectives/collectives.py")
    assert otter_door.graded_folder(nested, lab) == nested / "lab06_collectives"
    deeper = upload("Downloads/lab06 (1)/lab06_collectives.ipynb")
    assert otter_door.graded_folder(deeper, lab) == deeper / "Downloads" / "lab06 (1)"
    assert otter_door.graded_folder(upload("a/collectives.py", "b/collectives.py"), lab) is None   # which one?
    assert otter_door.graded_folder(upload("notes/readme.txt"), lab) is None
    linked = upload("x.txt")
    (linked / "elsewhere").symlink_to(nested / "lab06_collectives")
    assert otter_door.graded_folder(linked, lab) is None


def test_scalelabs_otter_writes_the_zip_where_out_names_it_from_where_it_was_typed(tmp_path, monkeypatch):
    """`scalelabs otter LAB --course DIR --out NAME.zip` typed in another folder: a relative --out is
    that folder's (like every path argument), not the course's, though the command runs in the course.
    (The zip's build itself is stood in for: tests/security/test_door_otter.py builds real ones.)"""
    from typer.testing import CliRunner

    from autograder import cli

    course, here = tmp_path / "course", tmp_path / "here"
    (course / "release" / "lab06_collectives").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("")
    here.mkdir()
    monkeypatch.chdir(here)

    def build_zip(assignment_id, dest=None, **_):   # a zip holding the plugin's settings `scalelabs otter` prints
        from autograder.doors import gradescope_settings as gs
        with zipfile.ZipFile(dest, "w") as zf:
            zf.writestr(gs.CONFIG, json.dumps({"plugins": [{gs.PLUGIN: {"assignment": assignment_id}}]}))
        return Path(dest).resolve()
    monkeypatch.setattr(otter_door, "build_zip", build_zip)
    done = CliRunner().invoke(cli.app, ["otter", "lab06_collectives", "--course", str(course), "--out", "mine.zip"])
    assert done.exit_code == 0, done.output
    assert (here / "mine.zip").is_file() and not (course / "mine.zip").exists()
    assert done.stdout.splitlines()[0] == str(here / "mine.zip")


def test_a_late_penalty_takes_its_share_of_the_students_score_not_of_the_total():
    """Gradescope's late test subtracts the policy's share of what the student earned (as nbgrader's
    export and grade-batch do): 10 % of the 1 point earned is 0.1, not 10 % of the assignment's total."""
    from autograder.classroom.deadlines import Lateness

    late = Lateness("late", "2026-11-20T23:59:00-08:00", "2026-11-20T23:59:00-08:00", "2026-11-21T10:00:00-08:00",
                    "gradescope", 36060.0, 10.0, "10 % per day late")
    results = gradescope.results_json(LAB, _result(), FeedbackPolicy(), late=late)
    penalty = _by_name(results)[gradescope.LATE_TEST]
    assert LAB.total_points > 1
    assert penalty["score"] == pytest.approx(-0.1) and penalty["max_score"] == 0.0
    assert results["score"] == pytest.approx(0.9)


def test_a_window_counts_an_earlier_submission_whose_time_cannot_be_read():
    """Within a submission window, an earlier submission whose time Gradescope gave unreadable counts
    against the limit: a malformed time never buys a student an extra graded submission."""
    policy = FeedbackPolicy(submission_limit=2, submission_window_hours=24)
    kept = gradescope.over_limit(_metadata(["2026-11-20T10:00:00.000000-08:00", "yesterday"]), policy)
    assert kept is not None and kept["output"].startswith("Submission limit reached: 2 graded submissions every 24 hours.")
