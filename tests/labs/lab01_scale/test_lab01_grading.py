"""Lab 01 grading power, through the engine: every wrong implementation loses points on its item,
a differently written correct one and the reference get full marks.

impls/wrong_a.py holds the source lab's own wrong formulas, impls/wrong_b.py other plausible
slips, impls/alt_correct.py a correct module in other algebra (numpy, ints). Four gradings in all.
"""
from pathlib import Path

import pytest

import reference
from autograder.engine.grade import grade_submission
from labs.lab01_scale import ASSIGNMENT
from autograder.build.stubgen import flat_imports as _flat

IMPLS = Path(__file__).parent / "impls"
REFERENCE = Path(reference.__file__).parent
FUNCTIONS = [f.name for f in ASSIGNMENT.functions]


def _submission(root: Path, name: str, module_source: str) -> Path:
    folder = root / name
    folder.mkdir()
    for provided in ASSIGNMENT.provided:
        (folder / f"{provided}.py").write_text(_flat((REFERENCE / f"{provided}.py").read_text()))
    # the reference imports ring_allreduce_time / compute_time from Lab 06's module
    (folder / "collectives.py").write_text(_flat((REFERENCE / "collectives.py").read_text()))
    (folder / "scaling.py").write_text(module_source)
    return folder


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab01_submissions")
    sources = {"reference": _flat((REFERENCE / "scaling.py").read_text())}
    sources.update({name: (IMPLS / f"{name}.py").read_text() for name in ("alt_correct", "wrong_a", "wrong_b")})
    return {name: grade_submission(ASSIGNMENT, _submission(root, name, src), name).item_scores()
            for name, src in sources.items()}


@pytest.mark.parametrize("submission", ["reference", "alt_correct"])
def test_correct_implementations_get_full_marks(scores, submission):
    for item in FUNCTIONS:
        score, max_score = scores[submission][item]
        assert score == max_score, f"{submission} lost points on {item}: {score}/{max_score}"


@pytest.mark.parametrize("submission", ["wrong_a", "wrong_b"])
@pytest.mark.parametrize("item", FUNCTIONS)
def test_wrong_implementation_loses_points(scores, submission, item):
    score, max_score = scores[submission][item]
    assert score < max_score, f"{submission}.{item} is wrong but scored full marks"


def test_questions_score_zero_without_a_notebook(scores):
    for q in ASSIGNMENT.questions:
        assert scores["reference"][q.id] == (0.0, q.points)
