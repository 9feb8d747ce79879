"""Honest predictions through every door, on a real lab (lab06): a student who ran the reveals and
then changed a prediction is graded on the first answer by the native grade, `nbgrader autograde`
and `otter run`, and each door's feedback says the change did not count; by default (commitment) a
prediction recorded as wrong earns its points whatever the answer cell says later; a notebook whose
outputs were cleared (and handed in without its record file) is unrecorded through every door: no
points, and the feedback says why. The notebooks are executed headless (nbclient), as a student's Run
All would record them. nbgrader and otter run without rfc3987-syntax, as on Gradescope
(door_helpers.env): predictions do not depend on it."""
from __future__ import annotations

import html
import json
import shutil
import subprocess

import nbformat

import pytest
from nbgrader.api import Gradebook

from autograder.classroom import samples
from autograder.doors import otter as otter_door
from autograder.engine.grade import grade_submission
from autograder.engine.secret import load_secret   # the course's, which every door grades under
from autograder.engine.questions import UNRECORDED
from autograder.engine.submission import RECORD_FILE
from labs import load

from door_helpers import BIN, REPO, env, run
from release_helpers import execute_notebook

LAB = "lab06_collectives"
QID = "act1_prediction"


@pytest.fixture(scope="module")
def lab():
    return load(LAB)


@pytest.fixture(scope="module")
def course(tmp_path_factory, lab):
    """A course root with lab06's committed source/ and two submitted students, each with the
    reference module, who ran the whole notebook and then edited act1_prediction:
    `early` recorded the key then wrote a wrong letter, `late` recorded a wrong letter then the key."""
    root = tmp_path_factory.mktemp("predcourse")
    shutil.copytree(REPO / "source" / LAB, root / "source" / LAB)
    (root / "nbgrader_config.py").write_text(
        f"exec(compile(open({str(REPO / 'nbgrader_config.py')!r}).read(), 'nbgrader_config.py', 'exec'))\n")
    run([str(BIN / "nbgrader"), "generate_assignment", LAB, "--force"], root, without_rfc3987=True)
    for student, (ran, then) in {"early": ("@key", "@wrong"), "late": ("@wrong", "@key")}.items():
        # each in their own version (their id in the notebook: its reveals record nothing without one)
        folder = samples.reference_submission(lab, root / "submitted" / student / LAB, REPO / "release" / LAB,
                                              recorded=False, student=student)
        notebook = folder / f"{LAB}.ipynb"
        samples.write_answers(lab, notebook, {QID: ran}, student=student)
        execute_notebook(notebook)
        samples.write_answers(lab, notebook, {QID: then}, student=student)  # edited after the reveal, not re-run
    # `cleared`: early's notebook with every output cleared (one menu click), handed in without the
    # record file (an upload of the notebook alone): the key in its answer cell, no record anywhere
    cleared = shutil.copytree(root / "submitted" / "early" / LAB, root / "submitted" / "cleared" / LAB)
    (cleared / RECORD_FILE).unlink()
    nb = nbformat.read(cleared / f"{LAB}.ipynb", 4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, cleared / f"{LAB}.ipynb")
    samples.write_answers(lab, cleared / f"{LAB}.ipynb", {QID: "@key"}, student="cleared")
    return root


STUDENTS = ("early", "late", "cleared")


def _expected(lab, student, mode="commitment") -> float:
    """early recorded the key, late a wrong letter (both earn it by commitment), cleared nothing."""
    if student == "cleared" or (mode == "correctness" and student == "late"):
        return 0.0
    return lab.question(QID).points


def _says(student: str, output: str, lab) -> bool:
    """The door's feedback on QID says what happened to this student's prediction (the letters written
    are the student's version's)."""
    q = samples.version(lab, student).question(QID)
    if student == "cleared":
        return UNRECORDED in output and f"your answer cell says {q.key}" in output
    return f"you changed {QID} from" in output and "your first answer" in output


def test_native_grade_counts_the_first_answer(course, lab):
    for student in STUDENTS:
        q = samples.version(lab, student).question(QID)
        wrong = samples.wrong_letter(q.options, q.key)
        result = grade_submission(lab, course / "submitted" / student / LAB, student, secret=load_secret())
        assert result.item_scores()[QID][0] == _expected(lab, student)
        test = next(t for t in result.tests if t.item == QID)
        assert _says(student, test.output, lab), test.output
        if student != "cleared":
            first, now = (q.key, wrong) if student == "early" else (wrong, q.key)
            assert f"you changed {QID} from {first} to {now} after its reveal; your first answer {first} counts" in test.output
            assert ("it was the best answer" if student == "early" else "it was not the best answer") in test.output
        # the functions earn full marks; the other prediction, recorded with the key, too; `cleared`
        # lost both records
        others = [p for p in lab.questions if p.kind == "prediction" and p.id != QID]
        lost = (q.points - _expected(lab, student)) + (sum(p.points for p in others) if student == "cleared" else 0)
        assert result.score == lab.total_points - lost


def test_nbgrader_autograde_counts_the_first_answer(course, lab):
    run([str(BIN / "nbgrader"), "autograde", LAB, "--force"], course, without_rfc3987=True)
    run([str(BIN / "nbgrader"), "generate_feedback", LAB, "--force"], course, without_rfc3987=True)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id="scalelabs") as gb:
        for student in STUDENTS:
            grades = {g.name: g.auto_score for g in gb.find_submission_notebook(LAB, LAB, student).grades}
            engine = grade_submission(lab, course / "submitted" / student / LAB, student,
                                      secret=load_secret()).item_scores()
            assert grades[QID] == pytest.approx(_expected(lab, student))
            assert grades == pytest.approx({item: s for item, (s, _) in engine.items()}, abs=1e-6)
    for student in STUDENTS:
        page = html.unescape((course / "feedback" / student / LAB / f"{LAB}.html").read_text())
        assert _says(student, page, lab), student


def test_otter_run_counts_the_first_answer(course, lab, tmp_path):
    zip_path = otter_door.build_zip(LAB, tmp_path / "autograder.zip")
    for student in STUDENTS:
        archive = shutil.make_archive(str(tmp_path / student), "zip", course / "submitted" / student / LAB)
        out = tmp_path / f"{student}-out"
        out.mkdir()
        done = subprocess.run([str(BIN / "otter"), "run", "-a", str(zip_path), "-o", str(out), "--no-logo", archive],
                              cwd=tmp_path, env=env(without_rfc3987=True), capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout + done.stderr
        tests = {t["name"]: t for t in json.loads((out / "results.json").read_text())["tests"] if "score" in t}
        assert tests[QID]["score"] == pytest.approx(_expected(lab, student))
        assert _says(student, tests[QID]["output"], lab), tests[QID]["output"]
        engine = grade_submission(lab, course / "submitted" / student / LAB, "anonymous",
                                  secret=load_secret()).item_scores()
        assert {n: t["score"] for n, t in tests.items()} == pytest.approx({i: s for i, (s, _) in engine.items()}, abs=1e-4)


def test_otter_grades_with_the_courses_prediction_setting(course, lab, tmp_path):
    """The zip carries the course's [grading] table: in correctness mode the plugin gives nothing for
    `late`'s recorded wrong answer (the key it wrote later does not count), as the native grade with
    the same setting does."""
    folder = shutil.copytree(course / "submitted" / "late" / LAB, tmp_path / "late")
    config = otter_door.otter_config(LAB, grading={"predictions": "correctness"})
    plugin = otter_door.EngineOverride(str(folder / f"{LAB}.ipynb"), {}, config["plugins"][0][otter_door.PLUGIN])
    plugin.before_grading(None)
    assert plugin.error == "" and plugin.result.item_scores()[QID][0] == _expected(lab, "late", "correctness") == 0
    course_toml = tmp_path / "course"
    course_toml.mkdir()
    (course_toml / "nbgrader_config.py").write_text("")
    (course_toml / "scalelabs.toml").write_text('[grading]\npredictions = "effort"\n')
    with pytest.raises(ValueError, match="predictions"):
        otter_door.build_zip(LAB, tmp_path / "bad.zip", course=course_toml)
