"""The declaration of an assignment: what is graded, how, and what the student's notebook says.

A lab is three things: a reference module (reference/<module>.py), a source folder
(source/<assignment>/, generated) and one declaration, the package labs/<assignment>/
whose `ASSIGNMENT` is an `Assignment` below. Everything else (stub generation, notebook building,
release, the three grading front doors, the demo) reads these objects and nothing lab-specific.

The declaration is staff-only: it holds the keys and the hidden-check domains, so nothing under
autograder/ is ever copied into source/ or release/.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, Sequence, Union

from hypothesis import strategies as st

if TYPE_CHECKING:
    from autograder.engine.challenges import DesignChallenge

# A callable standing for the student's function in the sandbox: f(**kwargs) -> JSON scalar.
# It raises StudentError (autograder.engine.sandbox) when the student's code fails in any way.
StudentFn = Callable[..., Any]


@dataclass(frozen=True)
class Example:
    """A public worked example: one call at a lab scenario's parameters.

    The expected value is never typed: the engine computes it from the reference function at
    grading time, and the public tests shipped to students carry the value computed at release.
    """
    label: str                      # e.g. "Act I: 140 GB over 128 GPUs on NDR InfiniBand"
    kwargs: Mapping[str, Any]


@dataclass(frozen=True)
class Property:
    """A named property the student's function must satisfy over a hypothesis domain.

    `check(f, drawn)` calls the student's function `f` (keyword arguments only) as often as it
    needs and raises AssertionError with a short message when the property fails. It may call
    reference functions (trusted) but must not compare f with the reference on the same inputs:
    that is the hidden differential check's job.
    """
    name: str                       # short, shown after the item: "zero for a single rank"
    meaning: str                    # one sentence a student understands, shown when it fails
    strategy: st.SearchStrategy     # draws the value passed as `drawn` (usually a dict of kwargs)
    check: Callable[[StudentFn, Any], None]
    public: bool = True             # also shipped in the released public tests (no reference needed)
    max_examples: int | None = None  # None: the engine's default


@dataclass(frozen=True)
class FunctionItem:
    """One graded function. Its points are split over worked examples, the hidden differential
    check and the properties (see autograder.engine.scoring for the shares)."""
    name: str                                   # the required function name in the stub module
    points: float
    examples: Sequence[Example]
    domain: st.SearchStrategy                   # draws kwargs dicts over the valid domain (hidden)
    properties: Sequence[Property] = ()
    rel_tol: float = 1e-9                       # relative tolerance against the reference
    abs_tol: float = 1e-12                      # absolute floor for values near zero
    hidden_examples: int | None = None          # None: the engine's default


@dataclass(frozen=True)
class Question:
    """A multiple-choice prediction or reflection, answered in the notebook by one literal
    assignment `<id> = "B"`. Option texts and the key are computed from reference/ in the
    declaration; a wrong or missing answer scores 0 (no format-check share)."""
    id: str                                     # the answer variable, e.g. "act1_prediction"
    kind: Literal["prediction", "reflection"]
    prompt: str                                 # markdown, numbers already formatted
    options: Mapping[str, str]                  # "A" -> option text
    key: str                                    # the correct letter (computed, never typed)
    points: float
    hint: str = ""                              # shown when wrong; must not reveal the key


# --- The notebook's arc: a list of cells the notebook builder turns into an nbgrader notebook ---

@dataclass(frozen=True)
class Markdown:
    text: str                                   # story text, numbers already formatted


@dataclass(frozen=True)
class Code:
    """Provided, locked code: setup, an instrument plot, a prediction-vs-reality readout.
    It runs with the student's module imported as in `Assignment.module`."""
    source: str
    requires: Sequence[str] = ()                # question ids that must be answered before this
                                                # cell shows anything (the prediction lock)


@dataclass(frozen=True)
class Answer:
    """Where the question `question_id` is asked: prompt, options, the answer cell, a grade cell."""
    question_id: str


@dataclass(frozen=True)
class FunctionGrades:
    """Where the grade cells of the function items go (one per item)."""
    names: Sequence[str] = ()                   # empty: all function items, in declaration order


@dataclass(frozen=True)
class Challenge:
    """Where the design challenge `challenge_id` is posed: prompt, answer cell, grade cell. A
    declared challenge placed nowhere goes after the notebook's last Answer (where the acts end)."""
    challenge_id: str


Cell = Union[Markdown, Code, Answer, FunctionGrades, Challenge]


@dataclass(frozen=True)
class Assignment:
    id: str                                     # e.g. "lab06_collectives"
    title: str
    module: str                                 # the stub module students edit, e.g. "collectives"
    reference: ModuleType                       # reference.<module>
    functions: Sequence[FunctionItem]
    questions: Sequence[Question]
    notebook: Sequence[Cell]
    provided: Sequence[str] = ("_domain", "constants")  # reference modules shipped as-is (no secrets)
    # The public lab this assignment retells and corrects: "Vol II Lab NN, Title: where it is published".
    source_lab: str = ""
    # Open design challenges graded against constraints (autograder.engine.challenges).
    challenges: Sequence["DesignChallenge"] = ()

    def function(self, name: str) -> FunctionItem:
        for item in self.functions:
            if item.name == name:
                return item
        raise KeyError(f"{self.id} has no function item {name!r}")

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(f"{self.id} has no question {qid!r}")

    def challenge(self, cid: str) -> "DesignChallenge":
        for c in self.challenges:
            if c.id == cid:
                return c
        raise KeyError(f"{self.id} has no design challenge {cid!r}")

    @property
    def item_points(self) -> dict[str, float]:
        """item id -> points, in grading order: functions, questions, challenges."""
        return ({f.name: float(f.points) for f in self.functions} | {q.id: float(q.points) for q in self.questions}
                | {c.id: float(c.points) for c in self.challenges})

    @property
    def item_ids(self) -> list[str]:
        return list(self.item_points)

    @property
    def total_points(self) -> float:
        return sum(self.item_points.values())


def letters(options_in_order: Sequence[str], key_index: int, offset: int = 0) -> tuple[dict[str, str], str]:
    """Lay out option texts as A, B, C, ... rotated by `offset`, returning (options, key letter).

    Declarations use it so that which letter is correct follows from the computed key index and a
    per-question offset, never from typing a letter.
    """
    n = len(options_in_order)
    order = [(i + offset) % n for i in range(n)]
    options = {chr(ord("A") + pos): options_in_order[src] for pos, src in enumerate(order)}
    key = chr(ord("A") + order.index(key_index))
    return options, key


field  # re-exported for declarations that need default factories
