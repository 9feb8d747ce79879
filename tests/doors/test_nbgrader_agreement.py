"""nbgrader door: autograde + generate_feedback on the sample class; the gradebook's per-cell
scores equal the engine's per-item scores, and the feedback leaks nothing."""
from __future__ import annotations

import math
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.build import leakscan
from autograder.course import course_settings

from door_helpers import BIN, run
import release_toy as toy


SAID: dict[str, str] = {}   # what autograde printed


@pytest.fixture(scope="module")
def autograded(course, submissions, assignment):
    done = run([str(BIN / "nbgrader"), "autograde", assignment.id, "--force"], course)
    SAID["autograde"] = done.stdout + done.stderr
    run([str(BIN / "nbgrader"), "generate_feedback", assignment.id, "--force"], course)
    return course


def test_autograde_prints_a_line_per_student_with_the_score(autograded, assignment, engine_scores):
    """Before: 110 log lines for 4 students, one per file nbgrader copied, converted or wrote."""
    logged = [line for line in SAID["autograde"].splitlines() if line.startswith("[AutogradeApp")]
    expected = [f"[AutogradeApp | INFO] {s}: {sum(v[0] for v in engine_scores[s].values()):g}/"
                f"{assignment.total_points:g} points" for s in ("ada", "bob", "cy", "dee")]
    assert logged == expected, SAID["autograde"][-3000:]


def _gradebook_scores(course, assignment, student):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id=course_settings(course).id) as gb:
        submission = gb.find_submission_notebook(assignment.id, assignment.id, student)
        return {g.name: (g.auto_score, g.max_score) for g in submission.grades}


@pytest.mark.parametrize("student", ["ada", "bob", "cy", "dee"])
def test_gradebook_scores_equal_engine_item_scores(autograded, assignment, engine_scores, student):
    book = _gradebook_scores(autograded, assignment, student)
    engine = engine_scores[student]
    assert set(book) == set(engine) == set(assignment.item_ids)
    for item, (score, max_score) in engine.items():
        assert math.isclose(book[item][0], score, abs_tol=1e-6), (item, book[item], score)
        assert math.isclose(book[item][1], max_score, abs_tol=1e-9)


def test_sample_class_discriminates(engine_scores, assignment):
    total = {s: sum(v[0] for v in scores.values()) for s, scores in engine_scores.items()}
    assert total["ada"] == pytest.approx(assignment.total_points)
    assert total["dee"] == 0 and total["bob"] < total["ada"]
    # cy's answer cell is no literal ("ABCD"[3]) but its kernel held "D" when the reveal recorded it:
    # the record counts, and a recorded prediction earns its points (commitment, the default)
    assert engine_scores["cy"]["act1_prediction"][0] == assignment.question("act1_prediction").points


def test_stderr_never_zeroes_a_cell(autograded, assignment, engine_scores):
    book = _gradebook_scores(autograded, assignment, "cy")  # module writes to stderr and warns
    assert engine_scores["cy"]["ring_allreduce_time"][0] > 0
    assert book["ring_allreduce_time"][0] == pytest.approx(engine_scores["cy"]["ring_allreduce_time"][0])


def test_student_module_is_graded_not_overwritten(autograded, assignment, submissions):
    graded = autograded / "autograded" / "ada" / assignment.id / "collectives.py"
    assert graded.read_text() == (submissions["ada"] / "collectives.py").read_text()


def test_feedback_shows_item_feedback_and_leaks_nothing(autograded, assignment):
    pages = sorted((autograded / "feedback").rglob("*.html"))
    assert len(pages) == 4
    bob = (autograded / "feedback" / "bob" / assignment.id / f"{assignment.id}.html").read_text()
    assert "ring_allreduce_time: hidden checks" in bob
    # graded under the course's secret (the tests' one: conftest), so no note of public seeds
    assert "student code ran in" in bob and "has no course secret" not in bob
    secrets = leakscan.secrets_for([assignment], {assignment.id: Path(toy.__file__)})
    assert leakscan.scan(pages, secrets=secrets, keys=False) == []


def test_engine_scores_overwrite_every_grade_cell():
    """A grade cell the engine has no score for gets 0, never the kernel's (full-credit) output."""
    import nbformat
    from nbgrader.utils import determine_grade
    from autograder.doors.nbgrader import score_outputs

    cell = nbformat.v4.new_code_cell("print('x')", metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "grade_id": "x", "points": 2}})
    cell.outputs = score_outputs("feedback\n", 1.5, 3.0, 2.0)
    assert determine_grade(cell) == (1.0, 2.0)
    cell.outputs = score_outputs("x: not a graded item\n", 0, 1, 1)
    assert determine_grade(cell) == (0.0, 2.0)


def test_a_grade_cell_the_engine_does_not_grade_scores_zero_not_the_kernels_output(course, assignment, submissions,
                                                                                   monkeypatch):
    """EngineScores on ada's full-marks notebook plus a grade cell nbgrader knows but the engine does
    not grade (a source notebook edited by hand): that cell scores 0 of its points and says why, where
    the output saved in it claims full credit; ada's graded items keep the engine's scores."""
    import nbformat
    from nbgrader.utils import determine_grade
    from traitlets.config import Config

    from autograder.doors.nbgrader import EngineScores

    monkeypatch.chdir(course)
    nb = nbformat.read(submissions["ada"] / f"{assignment.id}.ipynb", as_version=4)
    extra = nbformat.v4.new_code_cell("assert True", metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "grade_id": "hand_added", "points": 2.0}})
    extra.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "2.0"}, execution_count=1)]
    nb.cells.append(extra)
    config = Config()
    config.CourseDirectory.root = str(course)
    config.EngineScores.declaration = "release_toy:ASSIGNMENT"
    nb, _ = EngineScores(config=config).preprocess(nb, {"nbgrader": {"student": "ada", "assignment": assignment.id}})
    graded = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}
    assert determine_grade(graded["hand_added"]) == (0.0, 2.0)
    assert "hand_added: not a graded item" in graded["hand_added"].outputs[0]["text"]
    assert sum(determine_grade(graded[item])[0] for item in assignment.item_ids) == assignment.total_points
