"""Session fixtures of the door tests: the toy course root, the sample class, the engine's scores."""
from __future__ import annotations

from pathlib import Path

import pytest

from door_helpers import sample_class, toy_course
import release_toy as toy

from autograder.classroom import samples
from autograder.engine.grade import grade_submission
from autograder.engine.secret import load_secret   # the course's, which every door grades under


@pytest.fixture(scope="session")
def assignment():
    return toy.make()


@pytest.fixture(scope="session")
def course(tmp_path_factory, assignment):
    """A course root: nbgrader_config.py (the repository's + the toy), source/, release/, gradebook."""
    return toy_course(tmp_path_factory.mktemp("doors"), assignment, sample_class())


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
    return {student: grade_submission(assignment, folder, student, secret=load_secret()).item_scores()
            for student, folder in submissions.items()}
