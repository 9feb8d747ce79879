"""The typed record of a grading: what results.json holds, written and read in one place.

    TestResult(item, check, kind, score, max_score, output)   one scored check of one item
    Result(assignment_id, student_id, tests, output, sandbox_mode)

`Result.to_gradescope()` writes the record in the Gradescope results.json shape (each test's `name`
is the "<item>: <check>" Gradescope shows); the item, check and kind travel in each test's
`extra_data` (a field Gradescope keeps and ignores), so `Result.from_gradescope()` reads them back and
nothing parses names. A results file without them is not ours: ValueError names the test.

The record keeps both views of feedback (autograder.engine.views): `output` is everything the grader
found (the after view), `extra_data.before` the text shown before the due date where it differs. A
door renders one view: `Result.view("before")` is the record with each test's output replaced by it.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable

from autograder.engine import scoring
from autograder.engine.config import VIEWS

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
    brief: str | None = None  # the output before the due date, where it differs from `output`
    option: str = ""          # questions: the identity of the option graded (its letter in the lab as
                              # written; `answer` is the letter the student's version shows)

    __test__ = False   # a record, not a pytest test class

    @property
    def name(self) -> str:
        return f"{self.item}: {self.check}"

    def extra_data(self) -> dict:
        """What a results file keeps of the test beyond Gradescope's fields (ignored by Gradescope)."""
        return {"item": self.item, "check": self.check, "kind": self.kind,
                "answer": self.answer, "misconception": self.misconception} | ({"option": self.option}
                                                                               if self.option else {})

    def to_json(self) -> dict:
        extra = self.extra_data() | ({"before": self.brief} if self.brief is not None else {})
        return {"name": self.name, "score": self.score, "max_score": self.max_score, "output": self.output,
                "extra_data": extra}

    def shown(self, view: str) -> str:
        """The output a view shows: "after" everything, "before" the brief text where there is one."""
        if view not in VIEWS:
            raise ValueError(f"a feedback view is one of {', '.join(VIEWS)}, not {view!r}")
        return self.brief if view == "before" and self.brief is not None else self.output

    @classmethod
    def from_json(cls, data: dict) -> "TestResult":
        extra, score, max_score = _checked(data)
        brief = extra.get("before")
        return cls(str(extra["item"]), str(extra["check"]), str(extra["kind"]), score, max_score,
                   str(data.get("output", "")), str(extra.get("answer", "")), str(extra.get("misconception", "")),
                   None if brief is None else str(brief), str(extra.get("option", "")))


_RECORD_KEYS = frozenset(("item", "check", "kind"))


def _checked(data) -> tuple[dict, float, float]:
    """A results test as our record requires it: (its extra_data, score, max_score); ValueError naming
    the test otherwise. The one check of a test, whether the record is built (TestResult.from_json) or
    only its scores are wanted (record_item_scores)."""
    extra = data.get("extra_data") if isinstance(data, dict) else None
    if not isinstance(extra, dict) or not _RECORD_KEYS <= extra.keys():
        raise ValueError(f"results test {data.get('name') if isinstance(data, dict) else data!r} "
                         "has no scalelabs record (extra_data.item/check/kind)")
    return extra, float(data["score"]), float(data["max_score"])


def item_totals(tests: Iterable[TestResult]) -> dict[str, tuple[float, float]]:
    """item id -> (score, max_score), in the order items first appear."""
    tests = list(tests)
    scores, max_scores = _sums((t.item, t.score) for t in tests), _sums((t.item, t.max_score) for t in tests)
    return {item: (score, max_scores[item]) for item, score in scores.items()}


def _sums(points: Iterable[tuple[str, float]]) -> dict[str, float]:
    """item id -> the sum of its points, in the order items first appear, summed as scoring.total sums
    (rounded at each step: scoring.total((sum, points)), inline: a merge of 2,000 results sums 170,000 times)."""
    out: dict[str, float] = {}
    for item, value in points:
        out[item] = round(out.get(item, 0.0) + value, scoring.DIGITS)
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
        """The record (both views: `output` and `extra_data.before`)."""
        return {"score": self.score, "tests": [t.to_json() for t in self.tests], "output": self.output}

    def view(self, view: str) -> "Result":
        """The result as a view shows it ("before" or "after", autograder.engine.views): each test's
        output is that view's text, and no test carries the other view."""
        tests = [replace(t, output=t.shown(view), brief=None) for t in self.tests]
        return replace(self, tests=tests)

    @classmethod
    def from_gradescope(cls, data: dict, assignment_id: str = "", student_id: str = "") -> "Result":
        """The record of a results.json dict: ours (every test carries its extra_data), or what the
        Gradescope door wrote (autograder.doors.gradescope: a test per item, its checks in
        `extra_data.scalelabs`, the after view in the item's "(in full)" test where the before view
        differs), e.g. from a Gradescope export."""
        if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
            raise ValueError("results.json must be an object with a list of tests")
        extra = data.get("extra_data") if isinstance(data.get("extra_data"), dict) else {}
        meta = next((m for m in (data.get("scalelabs"), extra.get("scalelabs")) if isinstance(m, dict)), {})
        if any(_door_record(t) for t in data["tests"]):
            tests, output = _from_door(data["tests"]), str(meta.get("output", data.get("output", "")))
        else:
            tests, output = [TestResult.from_json(t) for t in data["tests"]], str(data.get("output", ""))
        return cls(assignment_id or str(meta.get("assignment", "")), student_id or str(meta.get("student", "")),
                   tests, output, str(meta.get("sandbox", "")))


def record_item_scores(data: dict) -> dict[str, float]:
    """item id -> score of a results.json dict, as Result.from_gradescope(data).item_scores() has them
    (and its ValueError otherwise), without building the record when it is in our shape: each test
    checked by the one check (_checked), only the scores kept. What a merge of 2,000 results (158,000
    tests) needs of each. Anything else (the Gradescope door's per-item tests, a test that fails the
    check) is left to from_gradescope, which decides and names what is wrong."""
    tests = data.get("tests") if isinstance(data, dict) else None
    scored = []
    try:
        for test in tests:
            if "scalelabs" in test["extra_data"]:    # perhaps a door's test: the record decides
                break
            extra, score, _ = _checked(test)
            scored.append((str(extra["item"]), score))
        else:
            if isinstance(tests, list):
                return _sums(scored)
    except (ValueError, TypeError, KeyError):
        pass
    return {item: s for item, (s, _) in Result.from_gradescope(data).item_scores().items()}


def _door_record(test) -> dict | None:
    """A Gradescope door test's record ({"item", "view", "checks"}), or None."""
    extra = test.get("extra_data") if isinstance(test, dict) else None
    record = extra.get("scalelabs") if isinstance(extra, dict) else None
    return record if isinstance(record, dict) and isinstance(record.get("checks"), list) else None


def _late_record(test) -> bool:
    """Whether a results test is the Gradescope door's late penalty (extra_data.scalelabs.late)."""
    extra = test.get("extra_data") if isinstance(test, dict) else None
    record = extra.get("scalelabs") if isinstance(extra, dict) else None
    return isinstance(record, dict) and isinstance(record.get("late"), dict) and "checks" not in record


def _from_door(tests: list) -> list[TestResult]:
    """The engine's tests from the Gradescope door's per-item tests: each item's checks in the after
    view where its "(in full)" test is there, with the before view's text as their brief."""
    views: dict[str, dict[str, list]] = {}
    for test in tests:
        record = _door_record(test)
        if record is None and _late_record(test):   # the lateness, beside the engine's tests
            continue
        if record is None:
            raise ValueError(f"results test {test.get('name') if isinstance(test, dict) else test!r} "
                             "has no scalelabs record (extra_data.scalelabs)")
        views.setdefault(str(record.get("item", "")), {})[str(record.get("view", "after"))] = record["checks"]
    out = []
    for item, by_view in views.items():
        after, before = by_view.get("after"), by_view.get("before")
        for index, check in enumerate(after if after is not None else before):
            if not isinstance(check, dict):
                raise ValueError(f"results of {item}: a check that is not an object")
            brief = None
            if after is not None and before is not None and index < len(before):
                shown = str(before[index].get("output", ""))
                brief = None if shown == str(check.get("output", "")) else shown
            out.append(TestResult(item, str(check.get("check", "")), str(check.get("kind", "")),
                                  float(check.get("score", 0.0)), float(check.get("max_score", 0.0)),
                                  str(check.get("output", "")), str(check.get("answer", "")),
                                  str(check.get("misconception", "")), brief, str(check.get("option", ""))))
    return out
