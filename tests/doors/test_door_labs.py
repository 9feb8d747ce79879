"""The three front doors agree on every declared lab's shipped sample class: the nbgrader gradebook's
per-cell scores (every sample of every lab) and `otter run`'s per-item scores equal the native
engine's, and their feedback leaks nothing.

`otter run` (about 6 s of CPU a submission) runs every sample of one lab (OTTER_EVERY_SAMPLE) and, on
the other labs, the three samples the design-challenge test reads (full, partial, nothing: every
item of the lab's zip at its points). What the other samples vary -- a module that does not import,
an answer written as code -- takes the same plugin path in every lab's zip, and their per-lab scores
are the engine's, which the gradebook test checks for every sample of every lab.

nbgrader and otter run as the otter zip's setup.sh leaves Gradescope, without rfc3987-syntax
(door_helpers.env): what they compute here does not depend on it, and the toy-course door tests run
both tools with it installed."""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys

import pytest
from nbgrader.api import Gradebook

from autograder.build import leakscan

from autograder.classroom import samples
from autograder.doors import otter as otter_door
from autograder.engine.grade import grade_submission
from autograder.engine.secret import load_secret   # the course's, which every door grades under
from labs import all_assignments

from door_helpers import BIN, OTTER_WITH_METADATA, REPO, env, run

LABS = sorted(lab_id for lab_id in all_assignments() if samples.students(lab_id))
OTTER_EVERY_SAMPLE = "lab06_collectives"
CHALLENGE_SAMPLES = ("correct", "partly_wrong", "untouched")


def otter_students(lab_id: str) -> list[str]:
    """The samples `otter run` grades for this lab (module docstring: why not all of them)."""
    students = samples.students(lab_id)
    if lab_id == OTTER_EVERY_SAMPLE:
        return list(students)
    chosen = [s for s in students if s in CHALLENGE_SAMPLES]
    assert len(chosen) == len(CHALLENGE_SAMPLES), f"{lab_id}'s sample class lacks some of {CHALLENGE_SAMPLES}"
    return chosen


@pytest.fixture(scope="module", params=LABS)
def lab(request):
    return all_assignments()[request.param]


@pytest.fixture(scope="module")
def lab_course(tmp_path_factory, lab):
    """A course root with the committed source/<lab>, the class submitted, autograded, fed back."""
    root = tmp_path_factory.mktemp("labcourse")
    shutil.copytree(REPO / "source" / lab.id, root / "source" / lab.id)
    (root / "nbgrader_config.py").write_text(
        f"exec(compile(open({str(REPO / 'nbgrader_config.py')!r}).read(), 'nbgrader_config.py', 'exec'))\n")
    for student in samples.students(lab.id):
        samples.materialise(lab.id, student, root / "submitted" / student / lab.id)
    run([str(BIN / "nbgrader"), "generate_assignment", lab.id, "--force"], root, without_rfc3987=True)
    run([str(BIN / "nbgrader"), "autograde", lab.id, "--force"], root, without_rfc3987=True)
    run([str(BIN / "nbgrader"), "generate_feedback", lab.id, "--force"], root, without_rfc3987=True)
    return root


@pytest.fixture(scope="module")
def lab_otter(tmp_path_factory, lab, lab_course):
    """student -> results.json of `otter run` with the lab's zip, for otter_students(lab)."""
    work = tmp_path_factory.mktemp("labotter")
    zip_path = otter_door.build_zip(lab.id, work / "autograder.zip")
    # At most cores / xdist-workers otter runs at once: more only thrash the two cores.
    at_once = max(1, (os.cpu_count() or 1) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    results = {}
    pending = otter_students(lab.id)
    while pending:
        running = {}
        for student in pending[:at_once]:
            archive = shutil.make_archive(str(work / student), "zip", lab_course / "submitted" / student / lab.id)
            out = work / f"{student}-out"
            out.mkdir()
            metadata = {"users": [{"sid": student, "email": f"{student}@uni.edu"}]}   # Gradescope's, as it runs
            running[student] = (out, subprocess.Popen(
                [sys.executable, "-c", OTTER_WITH_METADATA, json.dumps(metadata), str(zip_path), archive, str(out)],
                cwd=work, env=env(without_rfc3987=True), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        pending = pending[at_once:]
        for student, (out, process) in running.items():
            log, _ = process.communicate(timeout=900)
            assert process.returncode == 0, log
            results[student] = json.loads((out / "results.json").read_text())
    return results


def _close(a: dict, b: dict) -> bool:
    return set(a) == set(b) and all(math.isclose(a[k][0], b[k][0], abs_tol=1e-4) for k in a)


def test_nbgrader_gradebook_equals_engine_for_every_sample(lab, lab_course):
    with Gradebook(f"sqlite:///{lab_course / 'gradebook.db'}", course_id="scalelabs") as gb:
        for student in samples.students(lab.id):
            nb = gb.find_submission_notebook(lab.id, lab.id, student)
            book = {g.name: (g.auto_score, g.max_score) for g in nb.grades}
            engine = grade_submission(lab, lab_course / "submitted" / student / lab.id, student,
                                      secret=load_secret()).item_scores()
            assert _close(book, engine), (student, book, engine)


def test_otter_run_equals_engine_for_every_sample_it_runs(lab, lab_course, lab_otter):
    """Each sample through the zip as Gradescope runs it (its sid in Gradescope's metadata): the engine's
    per-item scores for that student, in the student's own version of the lab, as the gradebook holds them."""
    assert OTTER_EVERY_SAMPLE in LABS and sorted(lab_otter) == sorted(otter_students(lab.id))
    with Gradebook(f"sqlite:///{lab_course / 'gradebook.db'}", course_id="scalelabs") as gb:
        for student, results in lab_otter.items():
            otter = {t["name"]: (t["score"], t["max_score"]) for t in results["tests"] if "score" in t}
            engine = grade_submission(lab, lab_course / "submitted" / student / lab.id, student,
                                      secret=load_secret()).item_scores()
            book = {g.name: (g.auto_score, g.max_score) for g in gb.find_submission_notebook(lab.id, lab.id, student).grades}
            assert _close(otter, engine) and _close(book, engine), (student, otter, book, engine)


def test_the_doors_grade_each_sample_in_its_own_version(lab, lab_course):
    """Where the lab has versions the sample class spans several, each graded in its own: the same
    answers graded as a student of another version lose the points of the questions whose key moved."""
    if lab.variants is None:
        pytest.skip(f"{lab.id} declares no variants")
    from autograder.engine.variants import variant_of
    versions = {variant_of(lab, student) for student in samples.students(lab.id)}
    assert len(versions) > 1, versions
    folder = lab_course / "submitted" / "correct" / lab.id
    mine = grade_submission(lab, folder, "correct", secret=load_secret()).item_scores()
    other = next(s for s in (f"other-{n}" for n in range(100)) if variant_of(lab, s) != variant_of(lab, "correct"))
    theirs = grade_submission(lab, folder, other, secret=load_secret()).item_scores()
    reflections = [q.id for q in lab.questions if q.kind == "reflection"]
    assert all(mine[q][0] == mine[q][1] for q in reflections)
    assert sum(theirs[q][0] for q in reflections) < sum(mine[q][0] for q in reflections)


def test_design_challenges_reach_the_gradebook_and_otter(lab, lab_course, lab_otter):
    """Each design challenge's grade cell holds the engine's partial credit in both doors: full for the
    `correct` sample's valid design, a share for `partly_wrong`'s, 0 for the unanswered `untouched`."""
    if not lab.challenges:
        pytest.skip(f"{lab.id} declares no design challenge")
    with Gradebook(f"sqlite:///{lab_course / 'gradebook.db'}", course_id="scalelabs") as gb:
        book = {student: {g.name: g.auto_score for g in gb.find_submission_notebook(lab.id, lab.id, student).grades}
                for student in ("correct", "partly_wrong", "untouched")}
    otter = {student: {t["name"]: t["score"] for t in lab_otter[student]["tests"] if "score" in t}
             for student in ("correct", "partly_wrong", "untouched")}
    for c in lab.challenges:
        for door in (book, otter):
            assert door["correct"][c.id] == pytest.approx(c.points)
            assert 0 < door["partly_wrong"][c.id] < c.points
            assert door["untouched"][c.id] == 0


def test_lab_feedback_leaks_nothing(lab, lab_course, lab_otter):
    pages = sorted((lab_course / "feedback").rglob("*.html"))
    assert len(pages) == len(samples.students(lab.id))
    for student in samples.students(lab.id):
        page = lab_course / "feedback" / student / lab.id
        own = [lab_course / "submitted" / student / lab.id / f"{lab.module}.py"]
        assert leakscan.scan([page], [lab], keys=False, own=own) == []
    secrets = leakscan.secrets_for([lab])
    for student, results in lab_otter.items():
        assert leakscan.scan_text(student, json.dumps(results, indent=1), secrets, keys=False) == []
