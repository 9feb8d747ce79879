"""The typed record of a grading: what results.json holds, written and read in one place.

    TestResult(item, check, kind, score, max_score, output)   one scored check of one item
    Result(assignment_id, student_id, tests, output, sandbox_mode)

`Result.to_gradescope()` writes the Gradescope results.json shape (each test's `name` is the
"<item>: <check>" Gradescope shows); the item, check and kind travel in each test's `extra_data`
(a field Gradescope keeps and ignores), so `Result.from_gradescope()` reads them back and nothing
parses names. A results file without them is not ours: ValueError names the test.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from autograder.engine import scoring

# example | property | hidden | item (not graded) | prediction | reflection | challenge (a design)
KINDS = ("example", "property", "hidden", "item", "prediction", "reflection", "challenge")


@dataclass(frozen=True)
class TestResult:
    item: str          # the graded item: a function name or a question id
    check: str         # "worked example: ...", "hidden checks", "prediction", ...
    kind: str          # one of KINDS
    score: float
    max_score: float
    output: str
    answer: str = ""          # questions: the option letter graded; challenges: the design ("" when none could be read)
    misconception: str = ""   # functions: the named wrong model the outputs match, if any

    __test__ = False   # a record, not a pytest test class

    @property
    def name(self) -> str:
        return f"{self.item}: {self.check}"

    def to_json(self) -> dict:
        return {"name": self.name, "score": self.score, "max_score": self.max_score, "output": self.output,
                "extra_data": {"item": self.item, "check": self.check, "kind": self.kind,
                               "answer": self.answer, "misconception": self.misconception}}

    @classmethod
    def from_json(cls, data: dict) -> "TestResult":
        extra = data.get("extra_data") if isinstance(data, dict) else None
        if not isinstance(extra, dict) or not {"item", "check", "kind"} <= set(extra):
            raise ValueError(f"results test {data.get('name') if isinstance(data, dict) else data!r} "
                             "has no scalelabs record (extra_data.item/check/kind)")
        return cls(str(extra["item"]), str(extra["check"]), str(extra["kind"]), float(data["score"]),
                   float(data["max_score"]), str(data.get("output", "")), str(extra.get("answer", "")),
                   str(extra.get("misconception", "")))


def item_totals(tests: Iterable[TestResult]) -> dict[str, tuple[float, float]]:
    """item id -> (score, max_score), in the order items first appear."""
    out: dict[str, tuple[float, float]] = {}
    for t in tests:
        s, m = out.get(t.item, (0.0, 0.0))
        out[t.item] = (scoring.total([s, t.score]), scoring.total([m, t.max_score]))
    return out


@dataclass
class Result:
    assignment_id: str
    student_id: str
    tests: list[TestResult] = field(default_factory=list)
    output: str = ""
    sandbox_mode: str = ""   # the boundary student code ran in (sandbox.client.MODES); also in `output`
    # what needs a person (course staff), one line each: a missing file, a module that does not import,
    # a notebook that cannot be read, a timeout (grade.needs_person); not part of the student's record
    attention: list[str] = field(default_factory=list)

    __test__ = False

    @property
    def score(self) -> float:
        return scoring.total(t.score for t in self.tests)

    @property
    def max_score(self) -> float:
        return scoring.total(t.max_score for t in self.tests)

    def item_scores(self) -> dict[str, tuple[float, float]]:
        """item id -> (score, max_score), in declaration order."""
        return item_totals(self.tests)

    def to_gradescope(self) -> dict:
        return {"score": self.score, "tests": [t.to_json() for t in self.tests], "output": self.output}

    @classmethod
    def from_gradescope(cls, data: dict, assignment_id: str = "", student_id: str = "") -> "Result":
        """The record of a results.json dict (ours: every test carries its extra_data)."""
        if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
            raise ValueError("results.json must be an object with a list of tests")
        meta = data.get("scalelabs") if isinstance(data.get("scalelabs"), dict) else {}
        return cls(assignment_id or str(meta.get("assignment", "")), student_id or str(meta.get("student", "")),
                   [TestResult.from_json(t) for t in data["tests"]], str(data.get("output", "")),
                   str(meta.get("sandbox", "")))
