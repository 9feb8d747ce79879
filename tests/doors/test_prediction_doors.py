"""Honest predictions through every door, on a real lab (lab06): a student who ran the reveals and
then changed a prediction is graded on the first answer by the native grade, `nbgrader autograde`
and `otter run`, and each door's feedback says the change did not count. The notebooks are
executed headless (nbclient), as a student's Run All would record them. nbgrader and otter run
without rfc3987-syntax, as on Gradescope (door_helpers.env): predictions do not depend on it."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from nbgrader.api import Gradebook

from autograder.classroom import samples
from autograder.doors import otter as otter_door
from autograder.engine.grade import grade_submission
from autograder.engine.secret import load_secret   # the course's, which every door grades under
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
        folder = samples.reference_submission(lab, root / "submitted" / student / LAB, REPO / "release" / LAB)
        notebook = folder / f"{LAB}.ipynb"
        samples.write_answers(lab, notebook, {QID: ran})
        execute_notebook(notebook)
        samples.write_answers(lab, notebook, {QID: then})  # edited after the reveal, not re-run
    return root


def _expected(lab, student) -> float:
    return lab.question(QID).points if student == "early" else 0.0


def test_native_grade_counts_the_first_answer(course, lab):
    q = lab.question(QID)
    wrong = samples.wrong_letter(q.options, q.key)
    for student in ("early", "late"):
        result = grade_submission(lab, course / "submitted" / student / LAB, student, secret=load_secret())
        assert result.item_scores()[QID][0] == _expected(lab, student)
        test = next(t for t in result.tests if t.item == QID)
        first, now = (q.key, wrong) if student == "early" else (wrong, q.key)
        assert f"you changed {QID} from {first} to {now} after its reveal; your first answer {first} counts" in test.output
        # every function and the other questions (answered with the key, unchanged) earn full marks
        assert result.score == lab.total_points - (q.points - _expected(lab, student))


def test_nbgrader_autograde_counts_the_first_answer(course, lab):
    run([str(BIN / "nbgrader"), "autograde", LAB, "--force"], course, without_rfc3987=True)
    run([str(BIN / "nbgrader"), "generate_feedback", LAB, "--force"], course, without_rfc3987=True)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id="scalelabs") as gb:
        for student in ("early", "late"):
            grades = {g.name: g.auto_score for g in gb.find_submission_notebook(LAB, LAB, student).grades}
            engine = grade_submission(lab, course / "submitted" / student / LAB, student,
                                      secret=load_secret()).item_scores()
            assert grades[QID] == pytest.approx(_expected(lab, student))
            assert grades == pytest.approx({item: s for item, (s, _) in engine.items()}, abs=1e-6)
    page = (course / "feedback" / "early" / LAB / f"{LAB}.html").read_text()
    assert f"you changed {QID} from" in page and "your first answer" in page


def test_otter_run_counts_the_first_answer(course, lab, tmp_path):
    zip_path = otter_door.build_zip(LAB, tmp_path / "autograder.zip")
    for student in ("early", "late"):
        archive = shutil.make_archive(str(tmp_path / student), "zip", course / "submitted" / student / LAB)
        out = tmp_path / f"{student}-out"
        out.mkdir()
        done = subprocess.run([str(BIN / "otter"), "run", "-a", str(zip_path), "-o", str(out), "--no-logo", archive],
                              cwd=tmp_path, env=env(without_rfc3987=True), capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout + done.stderr
        tests = {t["name"]: t for t in json.loads((out / "results.json").read_text())["tests"] if "score" in t}
        assert tests[QID]["score"] == pytest.approx(_expected(lab, student))
        assert f"you changed {QID} from" in tests[QID]["output"]   # failed (late) or passed (early) alike
        engine = grade_submission(lab, course / "submitted" / student / LAB, "anonymous",
                                      secret=load_secret()).item_scores()
        assert {n: t["score"] for n, t in tests.items()} == pytest.approx({i: s for i, (s, _) in engine.items()}, abs=1e-4)


def test_otter_grades_with_the_courses_prediction_setting(course, lab, tmp_path):
    """The zip carries the course's [grading] table: in commitment mode the plugin credits `late`'s
    recorded wrong answer, as the native grade with the same setting does."""
    folder = shutil.copytree(course / "submitted" / "late" / LAB, tmp_path / "late")
    config = otter_door.otter_config(LAB, grading={"predictions": "commitment"})
    plugin = otter_door.EngineOverride(str(folder / f"{LAB}.ipynb"), {}, config["plugins"][0][otter_door.PLUGIN])
    plugin.before_grading(None)
    assert plugin.error == "" and plugin.result.item_scores()[QID][0] == lab.question(QID).points
    course_toml = tmp_path / "course"
    course_toml.mkdir()
    (course_toml / "nbgrader_config.py").write_text("")
    (course_toml / "scalelabs.toml").write_text('[grading]\npredictions = "effort"\n')
    with pytest.raises(ValueError, match="predictions"):
        otter_door.build_zip(LAB, tmp_path / "bad.zip", course=course_toml)
