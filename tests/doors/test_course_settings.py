"""nbgrader grades with the course's own settings, wherever it is started from (issue 31, kind 7).

A TA often runs `nbgrader autograde LAB --CourseDirectory.root=/srv/course` from a shell that is not
in the course folder (a cron job, a home directory). The course's scalelabs.toml must still decide how
the door grades: here it grades predictions the way the defaults do not (`[grading] predictions`, the
other of "correctness" and "commitment") and shows the before view in the grade cells (`[feedback]
nbgrader = "before"`, no keys), so a door that read the settings of the folder it was started from (the
defaults) would score bob's wrong prediction the other way and print its key in his grade cell. ada,
who answered the key, scores the same either way."""
from __future__ import annotations

import subprocess

import nbformat
import pytest
from nbgrader.api import Gradebook

from door_helpers import BIN, env, sample_class, toy_course
import release_toy as toy

from autograder.classroom import samples
from autograder.course import course_settings
from autograder.engine.config import PREDICTION_MODES, GradingConfig, load_config
from autograder.engine.grade import grade_submission
from autograder.engine.secret import load_secret

NOT_DEFAULT = next(mode for mode in PREDICTION_MODES if mode != GradingConfig().predictions)
SETTINGS = f'[grading]\npredictions = "{NOT_DEFAULT}"\n\n[feedback]\nnbgrader = "before"\n'
QID = "act1_prediction"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """(assignment, course, student -> submitted folder, grade cells, gradebook scores) after
    `nbgrader autograde` started in a folder outside the course."""
    assignment = toy.make()
    work = tmp_path_factory.mktemp("course-settings")
    class_ = {s: sample_class()[s] for s in ("ada", "bob")}
    course = toy_course(work / "course", assignment, class_)
    (course / "scalelabs.toml").write_text(SETTINGS)
    folders = {s: samples.materialise(assignment.id, s, course / "submitted" / s / assignment.id,
                                      assignment=assignment, release_dir=course / "release" / assignment.id,
                                      samples_dir=course / "samples")
               for s in class_}
    elsewhere = work / "elsewhere"      # no nbgrader_config.py, no scalelabs.toml: the defaults
    elsewhere.mkdir()
    done = subprocess.run([str(BIN / "nbgrader"), "autograde", assignment.id, "--force",
                           f"--CourseDirectory.root={course}"],
                          cwd=elsewhere, capture_output=True, text=True, env=env(), timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cells, book = {}, {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=course_settings(course).id) as gb:
        for student in folders:
            book[student] = {g.name: g.score for g in gb.find_submission_notebook(assignment.id, assignment.id,
                                                                                    student).grades}
    for student in folders:
        nb = nbformat.read(course / "autograded" / student / assignment.id / f"{assignment.id}.ipynb", as_version=4)
        cells[student] = {c.metadata.nbgrader["grade_id"]: "".join(o.get("text", "") for o in c.outputs)
                          for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}
    assert not list(elsewhere.iterdir()), "nbgrader wrote into the folder it was started from"
    return assignment, course, folders, cells, book


def test_the_courses_grading_settings_decide_the_scores(graded):
    assignment, course, folders, _, book = graded
    q = assignment.question(QID)
    course_config = load_config(course / "scalelabs.toml")
    secret = load_secret(course)       # the door grades under the course's secret: so does the expectation
    assert course_config.predictions == NOT_DEFAULT != GradingConfig().predictions
    for student, folder in folders.items():
        expected = {item: score for item, (score, _) in
                    grade_submission(assignment, folder, student, config=course_config,
                                     secret=secret).item_scores().items()}
        assert book[student] == pytest.approx(expected, abs=1e-6), student
    # bob's wrong prediction: its points under commitment, none under correctness; the defaults give
    # the other; ada's answer is the key, full points either way
    defaults = grade_submission(assignment, folders["bob"], "bob").item_scores()
    wanted = q.points if NOT_DEFAULT == "commitment" else 0
    assert book["bob"][QID] == wanted and defaults[QID][0] == q.points - wanted
    assert book["ada"][QID] == q.points


def test_the_grade_cells_show_the_courses_feedback_view(graded):
    assignment, _, _, cells, _ = graded
    q = assignment.question(QID)
    bob, ada = cells["bob"][QID], cells["ada"][QID]
    wrong = samples.wrong_letter(q.options, q.key)
    assert f"answered {wrong}" in bob and "not the best answer" in bob, bob
    assert f"The best answer is {q.key}" not in bob and not any(why in bob for why in q.why.values()), bob
    assert f"answered {q.key}" in ada and "not the best answer" not in ada, ada
