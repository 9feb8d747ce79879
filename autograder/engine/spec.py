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
from typing import Any, Callable, Literal, Mapping, NamedTuple, Sequence, Union, overload

from hypothesis import strategies as st

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
    # letter -> why that option is right or wrong (one or two sentences; optional). A prediction's
    # are shown by its reveal (shipped encoded, autograder.build.predictions); every question's are
    # shown with its grade (the student's pick and the key).
    why: Mapping[str, str] = field(default_factory=dict)
    # what the question teaches, in a sentence or two (markdown; optional): it states the answer, so it
    # is shown only with the grade, never in the notebook
    takeaway: str = ""
    # a variant's question (labs/variants.py): shown letter -> the option's identity, its letter in the
    # lab's own layout (variant 0); empty: the lab's own layout, each letter its own identity
    identity: Mapping[str, str] = field(default_factory=dict)

    def option_identity(self, letter: str) -> str:
        """The identity of the option shown as `letter` (the class report counts answers by it)."""
        return self.identity.get(letter, letter)

    def __post_init__(self):
        if self.kind not in ("prediction", "reflection"):
            raise ValueError(f"question {self.id}: kind must be 'prediction' or 'reflection', not {self.kind!r}")
        stray = sorted(set(self.why) - set(self.options))
        if stray:
            raise ValueError(f"question {self.id}: explanations (why) for {stray}, which are not options "
                             f"{sorted(self.options)}")


@dataclass(frozen=True)
class Misconception:
    """A known wrong model of one graded function: what a student who believes it computes.

    When the function's item fails, the engine evaluates `model` (staff code, outside the sandbox)
    on the inputs the student's function was called with; if it reproduces every numeric output the
    student returned, the feedback names it (autograder.engine.diagnose)."""
    name: str                       # short: "ring AllReduce moves 2M per rank"
    explanation: str                # two lines a student understands: what is wrong and why
    where: str                      # the lab section that discusses it: "Act I, the ring"
    model: Callable[..., Any]       # model(**kwargs) -> what the wrong model computes (from reference/)


# --- The notebook's arc: a list of cells the notebook builder turns into an nbgrader notebook ---

@dataclass(frozen=True)
class Markdown:
    text: str                                   # story text, numbers already formatted
    reveal: str = ""                            # a prediction id: shown by its last reveal once the
                                                # student's functions have run ("check your
                                                # derivation"), never as a cell of its own


@dataclass(frozen=True)
class Code:
    """Provided, locked code: setup, an instrument plot, a prediction-vs-reality readout.
    It runs with the student's module imported as in `Assignment.module`."""
    source: str
    requires: Sequence[str] = ()                # question ids that must be answered before this
                                                # cell shows anything (the prediction lock); it is
                                                # then the reveal that records the required
                                                # predictions (autograder.build.predictions)
    hidden: bool = False                        # opens with its source collapsed (instruments, reveals)


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


@dataclass(frozen=True)
class Measurements:
    """Where the lab's model-vs-measurement element goes: the published setups of its declared
    `Measurement`s marked `notebook=True`, each evaluated with the student's own functions, beside
    the published number, its source and the ratio (autograder.build.measured)."""


Cell = Union[Markdown, Code, Answer, FunctionGrades, Challenge, Measurements]


# --- Open design challenges, graded against constraints (autograder.engine.challenges) ---

@dataclass(frozen=True)
class Field:
    """One number of the design: its name in the answer, what it is (with its unit), its allowed range."""
    name: str
    meaning: str
    low: float
    high: float
    integer: bool = True


@dataclass(frozen=True)
class Verdict:
    """One constraint measured on a design: met or not, and the computed number that decides it."""
    met: bool
    detail: str                 # e.g. "71.3 GB on the busiest GPU (capacity 80.0 GB)"
    # what the reference computes for a graded function at the student's inputs (e.g. the breakeven
    # a student was asked to compute): shown only when the course shows expected values
    expected: str = ""


class Invalid(ValueError):
    """The design is not one the scenario allows (e.g. TP x PP does not divide the GPUs); the
    message names the rule in words a student understands."""


@dataclass(frozen=True)
class DesignChallenge:
    """A graded design: `check(values)` (trusted) returns one Verdict per entry of `constraints`,
    in order, or raises Invalid. `reference_answer` is one design that meets every constraint
    (staff only: the reference submission and the tests use it)."""
    id: str                                     # the answer variable, e.g. "lab05_layout"
    points: float
    prompt: str                                 # markdown, numbers already formatted from reference/
    fields: Sequence[Field]
    constraints: Sequence[str]                  # the worked constraint list, shown in the prompt
    check: Callable[[Mapping[str, float]], Sequence[Verdict]]
    reference_answer: Mapping[str, float]


@dataclass(frozen=True)
class Assignment:
    id: str                                     # e.g. "lab06_collectives"
    title: str
    module: str                                 # the stub module students edit, e.g. "collectives"
    reference: ModuleType                       # reference.<module>
    functions: Sequence[FunctionItem]
    questions: Sequence[Question]
    # The notebook's arc. A lab folder's is a labs.authoring.NotebookFile: its notebook.py, read when
    # the notebook is first built (reading needs jupytext, ~2 s of imports grading never pays).
    notebook: Sequence[Cell]
    provided: Sequence[str] = ("_domain", "constants")  # reference modules shipped as-is (no secrets)
    # reference modules the notebook imports but grading never needs (no secrets, no graded function):
    # shipped beside the stub with flat imports, e.g. ("cluster",) for a cluster's ring link
    notebook_modules: Sequence[str] = ()
    # The public lab this assignment retells and corrects: "Vol II Lab NN, Title: where it is published".
    source_lab: str = ""
    # What students build, in one line (the README's lab table, generated: autograder/author/docs.py).
    summary: str = ""
    # function name -> its known wrong models, in the order they are tried (labs/<id>/misconceptions.py)
    misconceptions: Mapping[str, Sequence[Misconception]] = field(default_factory=dict)
    # Open design challenges graded against constraints (autograder.engine.challenges).
    challenges: Sequence[DesignChallenge] = ()
    # Published measurements held against the model (labs/<id>/measurements.py, docs/measurements.md).
    measurements: Sequence["Measurement"] = ()
    # Per-student variants (labs/<id>/variants.py, labs/variants.py): an object with `count` and
    # `assignment(index)` (that variant's Assignment); None: one version for every student.
    variants: Any = field(default=None, compare=False, repr=False)
    variant: int = 0                            # which variant this is (0: the lab as written)

    def __post_init__(self) -> None:
        unknown = sorted(set(self.misconceptions) - {f.name for f in self.functions})
        if unknown:
            raise ValueError(f"{self.id}: misconceptions declared for {unknown}, which are not function items")

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

    def challenge(self, cid: str) -> DesignChallenge:
        for c in self.challenges:
            if c.id == cid:
                return c
        raise KeyError(f"{self.id} has no design challenge {cid!r}")

    @property
    def setup(self) -> str:
        """The notebook's own setup cell (a lab folder's, scenario values as literals); empty: the
        generated default that imports the module, constants, numpy and matplotlib."""
        return getattr(self.notebook, "setup", "")

    @property
    def item_points(self) -> dict[str, float]:
        """item id -> points, in grading order: functions, questions, challenges."""
        return ({f.name: float(f.points) for f in self.functions} | {q.id: float(q.points) for q in self.questions}
                | {c.id: float(c.points) for c in self.challenges})

    @property
    def variant_count(self) -> int:
        """How many versions of the lab there are (1 without variants)."""
        return self.variants.count if self.variants is not None else 1

    @property
    def item_ids(self) -> list[str]:
        return list(self.item_points)

    @property
    def total_points(self) -> float:
        return sum(self.item_points.values())



# --- The model against the published record (labs/<lab>/measurements.py, docs/measurements.md) ---

_OPERATORS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b}


class Expr:
    """A model value written with a lab's functions: calls of reference functions by module and name,
    numbers and + - * /. One expression gives the value docs/measurements.md shows (evaluated with
    reference/) and the source of the notebook's comparison (the same calls on the student's module)."""

    def __add__(self, other): return BinOp("+", self, other)
    def __radd__(self, other): return BinOp("+", other, self)
    def __sub__(self, other): return BinOp("-", self, other)
    def __rsub__(self, other): return BinOp("-", other, self)
    def __mul__(self, other): return BinOp("*", self, other)
    def __rmul__(self, other): return BinOp("*", other, self)
    def __truediv__(self, other): return BinOp("/", self, other)
    def __rtruediv__(self, other): return BinOp("/", other, self)

    def evaluate(self, modules: Mapping[str, ModuleType]) -> Any:
        raise NotImplementedError

    def source(self) -> str:
        raise NotImplementedError

    def modules(self) -> set[str]:
        raise NotImplementedError

    def functions(self) -> list[str]:
        """"module.function" of every call, in the order the source reads them."""
        raise NotImplementedError


def _value(x: Any, modules: Mapping[str, ModuleType]) -> Any:
    return x.evaluate(modules) if isinstance(x, Expr) else x


def _source(x: Any) -> str:
    if isinstance(x, Expr):
        return x.source()
    if isinstance(x, bool) or not isinstance(x, (int, float, str)):
        raise TypeError(f"a model expression holds numbers, strings and calls, not {x!r}")
    return repr(x)


@dataclass(frozen=True, eq=False)
class Call(Expr):
    module: str                                 # "collectives": reference/collectives.py, the student's collectives.py
    function: str
    kwargs: tuple[tuple[str, Any], ...]         # keyword arguments: numbers, strings or Exprs

    def evaluate(self, modules):
        return getattr(modules[self.module], self.function)(**{k: _value(v, modules) for k, v in self.kwargs})

    def source(self):
        return f"{self.module}.{self.function}({', '.join(f'{k}={_source(v)}' for k, v in self.kwargs)})"

    def modules(self):
        return {self.module}.union(*(v.modules() for _, v in self.kwargs if isinstance(v, Expr)))

    def functions(self):
        inner = [f for _, v in self.kwargs if isinstance(v, Expr) for f in v.functions()]
        return [*inner, f"{self.module}.{self.function}"]


@dataclass(frozen=True, eq=False)
class BinOp(Expr):
    op: str
    left: Any
    right: Any

    def evaluate(self, modules):
        return _OPERATORS[self.op](_value(self.left, modules), _value(self.right, modules))

    def source(self):
        return f"({_source(self.left)} {self.op} {_source(self.right)})"

    def modules(self):
        return set().union(*(x.modules() for x in (self.left, self.right) if isinstance(x, Expr)))

    def functions(self):
        return [f for x in (self.left, self.right) if isinstance(x, Expr) for f in x.functions()]


class model:
    """`model("collectives").ring_allreduce_time(message_bytes=1e9, n=8, ...)` is the Call of that
    reference function (keyword arguments only, so the notebook's source names every input)."""

    def __init__(self, module: str) -> None:
        self._module = module

    def __getattr__(self, function: str) -> Callable[..., Call]:
        if function.startswith("_"):
            raise AttributeError(function)
        return lambda **kwargs: Call(self._module, function, tuple(kwargs.items()))


@dataclass(frozen=True)
class Measurement:
    """One published measurement held against the model at the same inputs.

    `model` is the model's value in SI units (an Expr over reference functions); `published` the
    published value in the same units, a (low, high) range when the source gives one, or a string
    for a non-numeric result (a layout). `source` is where it is published (a repository#issue, a
    file of a repository, a paper), `url` its address and `quote` the figure exactly as the source
    writes it. `why` says why model and measurement differ; a ratio outside the project's band
    (0.67-1.5) needs `effect`, the named effect the lab teaches that explains the gap, in words
    the lab's notebook uses. `notebook=True` rows appear in the lab's model-vs-measurement element
    (their calls must be of the lab's own module)."""
    id: str
    quantity: str                               # "ring bus bandwidth, 8 H100 in one DGX node"
    setup: str                                  # the inputs, in words (markdown)
    model: Expr
    published: float | tuple[float, float] | str
    unit: tuple[float, str]                     # (scale, name): (1e9, "GB/s") shows 4.5e11 as 450 GB/s
    source: str
    url: str
    quote: str
    why: str
    effect: str = ""
    notebook: bool = False

    def value(self, modules: Mapping[str, ModuleType]) -> Any:
        return self.model.evaluate(modules)

    def reference_value(self) -> Any:
        """The model's value at the measurement's inputs, computed with reference/."""
        import importlib
        return self.value({name: importlib.import_module(f"reference.{name}") for name in self.model.modules()})

    @property
    def published_value(self) -> float | str:
        """The published figure a ratio divides by: the middle of a range."""
        if isinstance(self.published, tuple):
            return (self.published[0] + self.published[1]) / 2
        return self.published

    def ratio(self, value: Any) -> float | None:
        """model / published; None for a non-numeric result (then compare for equality)."""
        if isinstance(self.published, str):
            return None
        return value / self.published_value

class Option(NamedTuple):
    """An option's text with why it is right or wrong, for `letters` to lay out."""
    text: str
    why: str


@overload
def letters(options_in_order: Sequence[Any], key_index: int, offset: int = 0) -> tuple[dict[str, Any], str]: ...
@overload
def letters(options_in_order: Sequence[Option], key_index: int,
            offset: int = 0) -> tuple[dict[str, str], str, dict[str, str]]: ...


def letters(options_in_order, key_index, offset=0):
    """Lay out option texts as A, B, C, ... rotated by `offset`, returning (options, key letter).

    Declarations use it so that which letter is correct follows from the computed key index and a
    per-question offset, never from typing a letter. Given `Option(text, why)` pairs, it returns
    (options, key, why): each explanation under its option's letter, for `Question.why`.
    """
    explained = [isinstance(o, Option) for o in options_in_order]
    if any(explained) and not all(explained):
        raise ValueError("letters(): give every option as Option(text, why), or none")
    n = len(options_in_order)
    order = [(i + offset) % n for i in range(n)]
    laid_out = {chr(ord("A") + pos): options_in_order[src] for pos, src in enumerate(order)}
    key = chr(ord("A") + order.index(key_index))
    if not any(explained):
        return laid_out, key
    return ({letter: o.text for letter, o in laid_out.items()}, key,
            {letter: o.why for letter, o in laid_out.items()})


field  # re-exported for declarations that need default factories
