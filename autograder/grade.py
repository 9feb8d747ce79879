"""Grade one submission: every function item in the sandbox, every question from the notebook.

    grade_submission(assignment, submission_dir, student_id) -> Result
    Result.to_gradescope() -> the Gradescope results.json dict

Test names begin with the item id and a colon. A regrade of the same submission by the same
student gives identical JSON (hypothesis seeds derive from assignment, student, item and check).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from . import scoring
from .checks import grade_function
from .config import GradingConfig, load_config
from .questions import grade_question
from .sandbox import Sandbox
from .spec import Assignment


@dataclass(frozen=True)
class TestResult:
    item: str
    name: str          # "<item>: <check>"
    score: float
    max_score: float
    output: str


@dataclass
class Result:
    assignment_id: str
    student_id: str
    tests: list[TestResult] = field(default_factory=list)
    output: str = ""
    sandbox_mode: str = ""

    @property
    def score(self) -> float:
        return scoring.total(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return scoring.total(t.max_score for t in self.tests)

    def item_scores(self) -> dict[str, tuple[float, float]]:
        """item id -> (score, max_score), in declaration order."""
        out: dict[str, tuple[float, float]] = {}
        for t in self.tests:
            s, m = out.get(t.item, (0.0, 0.0))
            out[t.item] = (scoring.total([s, t.score]), scoring.total([m, t.max_score]))
        return out

    def to_gradescope(self) -> dict:
        return {"score": self.score,
                "tests": [{"name": t.name, "score": t.score, "max_score": t.max_score, "output": t.output}
                          for t in self.tests],
                "output": self.output}


def _function_tests(assignment: Assignment, item, outcomes) -> list[TestResult]:
    points = scoring.check_points(item.points, [o.kind if o.kind != "item" else "hidden" for o in outcomes])
    return [TestResult(item.name, f"{item.name}: {o.name}", pts if o.passed else 0.0, pts, o.output)
            for o, pts in zip(outcomes, points)]


def grade_submission(assignment: Assignment, submission_dir: Path, student_id: str = "anonymous",
                     *, show_expected: bool | None = None, budget_s: float | None = None,
                     config: GradingConfig | None = None, use_bwrap: bool | None = None) -> Result:
    """Grade one submission folder (shaped like release/<id>/).

    show_expected / budget_s default to the course config (scalelabs.toml); use_bwrap=None uses
    bubblewrap when it works here and falls back to a plain subprocess otherwise (said in output).
    """
    config = config or load_config()
    show = config.show_expected if show_expected is None else show_expected
    budget = config.budget_s if budget_s is None else budget_s
    submission_dir = Path(submission_dir)
    result = Result(assignment.id, student_id)
    deadline = time.monotonic() + budget
    with Sandbox(submission_dir, assignment.module, config, deadline=deadline, use_bwrap=use_bwrap) as sandbox:
        result.sandbox_mode = sandbox.mode
        for item in assignment.functions:
            outcomes = grade_function(assignment, item, sandbox, student_id, config, show)
            result.tests += _function_tests(assignment, item, outcomes)
    for q in assignment.questions:
        score, feedback = grade_question(q, submission_dir, assignment.id)
        result.tests.append(TestResult(q.id, f"{q.id}: {q.kind}", score, float(q.points), feedback))
    if sandbox.mode == "bubblewrap":
        result.output = f"{assignment.title}: student code ran in the bubblewrap sandbox."
    else:
        result.output = (f"{assignment.title}: WARNING bubblewrap (bwrap) is not available, student code "
                         f"ran in a plain subprocess with resource limits only.")
    return result
