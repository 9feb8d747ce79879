"""Session fixtures of the door tests: the toy course root, the sample class, the engine's scores."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from door_helpers import BIN, COURSE_CONFIG, REPO, TESTS_RELEASE, run, sample_class
import release_toy as toy

from autograder.build import release

from autograder.classroom import samples
from autograder.engine.grade import grade_submission


@pytest.fixture(scope="session")
def assignment():
    return toy.make()


@pytest.fixture(scope="session")
def course(tmp_path_factory, assignment):
    """A course root: nbgrader_config.py (the repository's + the toy), source/, release/, gradebook."""
    root = tmp_path_factory.mktemp("doors")
    release.build_source(assignment, root, toy.PROPERTIES_PATH)
    (root / "nbgrader_config.py").write_text(COURSE_CONFIG.format(
        tests_release=str(TESTS_RELEASE), config=str(REPO / "nbgrader_config.py"), toy_id=assignment.id))
    run([str(BIN / "nbgrader"), "generate_assignment", assignment.id, "--force"], root)
    sample_root = root / "samples"
    for student, (module, answers) in sample_class().items():
        folder = sample_root / student
        folder.mkdir(parents=True)
        if module is not None:
            (folder / "collectives.py").write_text(module)
        (folder / "answers.json").write_text(json.dumps(answers))
    return root


@pytest.fixture(scope="session")
def submissions(course, assignment) -> dict[str, Path]:
    """student -> submitted/<student>/<id>/ (the release with the student's module and answers)."""
    return {student: samples.materialise(assignment.id, student, course / "submitted" / student / assignment.id,
                                         assignment=assignment, release_dir=course / "release" / assignment.id,
                                         samples_dir=course / "samples")
            for student in sample_class()}


@pytest.fixture(scope="session")
def engine_scores(submissions, assignment) -> dict[str, dict[str, tuple[float, float]]]:
    """student -> the native engine's item scores (nbgrader student id = engine student id)."""
    return {student: grade_submission(assignment, folder, student).item_scores()
            for student, folder in submissions.items()}
