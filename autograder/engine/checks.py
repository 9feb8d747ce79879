"""The checks of one function item: worked examples, the hidden differential check, properties.

Every student call goes through `StudentFunction`, which calls the sandbox (or answers from the
values prefetched for a check in one round trip). The hidden check and the properties run over
inputs drawn from their hypothesis strategies with a seed derived from (assignment, student, item,
check) under the course secret (autograder.engine.secret), so a regrade is identical, two students
see different hidden inputs and nobody without the secret can compute them (autograder.engine.draw).
Hypothesis shrinks a failure and replays the shrunk failing example last, so the last failing call
recorded in a test body is the counterexample.
"""
from __future__ import annotations

import hashlib
import inspect
import json
import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from hypothesis import reject
from hypothesis.errors import HypothesisException

from autograder.engine.compare import normalise, values_match
from autograder.engine.config import BeforeView, GradingConfig
from autograder.engine.diagnose import diagnose, feedback_line
from autograder.engine.draw import run_drawn
from autograder.engine.scoring import input_blind_matches
from autograder.engine.sandbox import Sandbox, StudentError
from autograder.engine.secret import CourseSecret
from autograder.engine.spec import Assignment, FunctionItem, Property
from autograder.engine.views import error_text, printed

REFERENCE_REJECTS = (ValueError, ArithmeticError)  # the reference says: not a valid input


@dataclass(frozen=True)
class CheckOutcome:
    kind: str        # "example" | "hidden" | "property" | "item" (the whole item, one failure)
    name: str        # shown after "<item>: "
    passed: bool
    output: str
    hidden: "HiddenStats | None" = None   # the hidden check only: how the student did on its inputs
    misconception: str = ""               # the named wrong model (autograder.engine.diagnose), if any
    brief: str | None = None              # the output before the due date, where it differs (autograder.engine.views)


@dataclass(frozen=True)
class HiddenStats:
    """How the student's function did on the hidden check's drawn inputs (scoring.physics_gate)."""
    matched: int     # inputs where it matches the reference
    total: int       # inputs drawn (valid for the reference), whatever the function returned or raised
    constant: bool   # it returned one value everywhere while the reference's values vary
    blind: int = 0   # inputs the best input-blind answer matches (scoring.input_blind_matches)


class Abort(BaseException):
    """Stops a check at once (hypothesis does not catch BaseException): the worker is gone, the
    budget ran out, memory ran out, or the function is not implemented -- nothing more to learn
    from this item, and shrinking would only repeat the failure."""

    def __init__(self, error: StudentError, kwargs: dict):
        super().__init__(error.message)
        self.error, self.kwargs = error, kwargs


def seed_for(assignment_id: str, student_id: str, item: str, check: str, secret: CourseSecret | None = None) -> int:
    """The seed of one check, 64 bits: HMAC-SHA256 of (assignment, student, item, check) under the
    course secret; without one (a course that never released), their plain sha256, which anyone can
    compute from public values."""
    message = "\0".join((assignment_id, student_id, item, check)).encode()
    digest = secret.seed(message) if secret is not None else hashlib.sha256(message).digest()
    return int.from_bytes(digest[:8], "big")


VALUE_CAP = 100  # characters of any one value shown in feedback
# begins the output of a property that does not hold (not of one never run because the item aborted):
# the class report counts failed properties by it
PROPERTY_FAILED = "Property failed: "


def show(value: Any, like: Any = None) -> str:
    """A value as feedback shows it: repr capped to VALUE_CAP characters. Given `like` (the
    expected value) and a value of another kind, only its type: a wrong-typed return (a string
    that collects the hidden inputs, a 4 MB list) is never echoed."""
    if like is not None and isinstance(value, (str, list)) and _kind(value) != _kind(like):
        size = f" of {len(value)} elements" if isinstance(value, list) else f" of {len(value)} characters"
        return f"a {type(value).__name__}{size}"
    text = repr(value)
    return text if len(text) <= VALUE_CAP else text[:VALUE_CAP - 3] + "..."


def _kind(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return type(value).__name__
    return "number" if isinstance(value, (int, float)) else type(value).__name__


_KEY_JSON = json.JSONEncoder(sort_keys=True)   # json.dumps(sort_keys=True) builds one per call (thousands a submission)
_SCALARS = frozenset({float, int, bool, str, type(None)})


def call_key(kwargs: dict) -> str | None:
    """A key for these kwargs such that equal keys are equal calls of the worker (which receives
    their JSON); None if the worker could not receive them. Keyword arguments of plain numbers and
    strings, nearly every call, are keyed by their repr, at a third of the cost of encoding them: a
    repr tells 1 from 1.0, True from 1 and -0.0 from 0.0 as the JSON does (two orders of the same
    keywords give two keys: the second call is fetched again, never answered wrongly)."""
    if all(type(value) in _SCALARS for value in kwargs.values()):
        return repr(kwargs)
    try:
        return _KEY_JSON.encode(kwargs)
    except (TypeError, ValueError):
        return None


def format_call(name: str, kwargs: Any) -> str:
    """`name(a=1.0, n=2)`: the call a student can paste into their notebook."""
    if isinstance(kwargs, dict):
        return f"{name}({', '.join(f'{k}={show(v)}' for k, v in kwargs.items())})"
    return f"{name} with drawn value {show(kwargs)}"


def expected_kind(reference_fn: Callable) -> str:
    """What the reference returns, in words, from its return annotation."""
    annotation = str(inspect.signature(reference_fn).return_annotation)
    return {"float": "a number", "int": "a whole number", "str": "a string", "bool": "True or False"}.get(
        annotation.replace("<class '", "").replace("'>", ""), "a number")


# a worker that stopped on a hidden input: one text before the due date, whatever the way
WORKER_STOPS = ("died", "protocol", "timeout")
STOPPED_ON_HIDDEN = "stopped the worker process (how: shown after the due date)"


class StudentFunction:
    """Stands for the student's function: f(**kwargs) -> JSON value, or StudentError.

    It records the calls of the current example (for the counterexample), turns a fatal error
    or "not implemented" into Abort so hypothesis does not shrink against a dead worker, and
    keeps failing fast after that.
    """

    def __init__(self, sandbox: Sandbox, name: str, reference_fn: Callable, params: Sequence[str] = ()):
        self.sandbox, self.name, self.reference_fn = sandbox, name, reference_fn
        self.params = list(params)     # the function's parameters: a counterexample's call lists them in order
        self.expected = expected_kind(reference_fn)
        self.calls: list[tuple[dict, Any, StudentError | None]] = []
        self.abort: Abort | None = None
        self.reject_reference_errors = False
        self.prefetched: dict[str, Any] = {}    # call key -> the value the student's function returned
        # call key -> (kwargs, value) of the worked examples and the hidden check's sampled inputs:
        # the evidence autograder.engine.diagnose replays through the item's wrong models
        self.observed: dict[str, tuple[dict, Any]] = {}
        # the before view's lines of the student's file: those a public check showed (set while
        # `hidden_phase` is False) are the only ones a hidden input's error may name, so a line
        # number never carries a hidden input (a padded file and exec(compile(..., __file__))
        # make the line any function of it)
        self.hidden_phase = False
        self.public_lines: set[str] = set()

    def __call__(self, **kwargs: Any) -> Any:
        if self.abort is not None:
            raise self.abort
        try:
            key = call_key(kwargs)
            value = self.prefetched[key] if key in self.prefetched else self.sandbox.call(self.name, kwargs)
        except StudentError as exc:
            if exc.kind == "wrong_type":
                exc = StudentError(f"{exc.message}, expected {self.expected}", "wrong_type", output=exc.output,
                                   reported=exc.reported, exc_type=exc.exc_type, where=exc.where)
            self.calls.append((kwargs, None, exc))
            if exc.fatal or exc.kind in ("not_implemented", "memory"):
                self.abort = Abort(exc, kwargs)
                raise self.abort
            if self.reject_reference_errors and exc.message.startswith("raised ValueError"):
                self._reject_if_reference_rejects(kwargs)
            raise exc
        if isinstance(value, float) and not math.isfinite(value) and self._reference_is_finite(kwargs):
            exc = StudentError(f"returned {value!r}, expected a finite number")
            self.calls.append((kwargs, None, exc))
            raise exc
        self.calls.append((kwargs, value, None))
        return value

    def prefetch(self, kwargs_list: list[dict]) -> bool:
        """Fetch the student's values for these calls in one round trip. Only successful calls are
        kept: a failing call runs again live, so its error (kind, printed output) is exact. If the
        batch itself fails (a timeout somewhere in it) the worker restarts, every call runs live and
        this returns False; tampering with the channel aborts the item."""
        wanted = {call_key(kw): kw for kw in kwargs_list}
        wanted = {key: kw for key, kw in wanted.items() if key is not None and key not in self.prefetched}
        if not wanted or self.abort is not None:
            return True
        try:
            replies = self.sandbox.call_many(self.name, list(wanted.values()))
        except StudentError as exc:
            if exc.kind == "protocol":
                self.abort = Abort(exc, {})
                raise self.abort
            try:
                self.sandbox.restart()
            except StudentError as exc:
                self.abort = Abort(exc, {})
                raise self.abort
            return False
        self.prefetched.update((key, value) for key, (ok, value) in zip(wanted, replies) if ok)
        return True

    def calls_of(self, check: Callable[[Callable, Any], None], drawn_values: list) -> list[dict]:
        """The calls `check(f, drawn)` makes for each drawn value when f is the reference (a correct
        student makes the same ones; a call the student's values lead elsewhere runs live)."""
        calls: list[dict] = []

        def recorder(**kwargs: Any) -> Any:
            calls.append(kwargs)
            return normalise(self.reference_fn(**kwargs))

        for drawn in drawn_values:
            try:
                check(recorder, drawn)
            except Exception:
                pass
        return calls

    def _reference_is_finite(self, kwargs: dict) -> bool:
        """NaN or inf is wrong wherever the reference gives a finite number (or rejects the input)."""
        try:
            expected = normalise(self.reference_fn(**kwargs))
        except Exception:
            return True
        return not (isinstance(expected, float) and not math.isfinite(expected))

    def _reject_if_reference_rejects(self, kwargs: dict) -> None:
        """A property drew an input outside the valid domain: not the student's fault."""
        try:
            self.reference_fn(**kwargs)
        except REFERENCE_REJECTS:
            reject()
        except Exception:
            pass

    def call_text(self, kwargs: dict) -> str:
        """A call as a student writes it: its arguments in the signature's order (checks build them in
        others: zero_when appends the one it changes), then any the signature does not name."""
        return format_call(self.name, {k: kwargs[k] for k in self.params if k in kwargs} | kwargs)

    def error_text(self, error: StudentError, before: BeforeView | None) -> str:
        """The error as the after view (before=None) or the before view shows it."""
        if before is None:
            return error.message
        where = repr(getattr(error, "where", None))   # the worker's claim: any shape, compared as text
        if not self.hidden_phase:
            self.public_lines.add(where)
            return error_text(error, self.sandbox, before)
        if error.kind in WORKER_STOPS and not before.hidden_inputs:
            return STOPPED_ON_HIDDEN   # how it stopped (an exit code, a signal, which reply broke) is the code's choice
        return error_text(error, self.sandbox, before, line=before.hidden_inputs or where in self.public_lines)

    def describe_calls(self, limit: int = 3, before: BeforeView | None = None) -> list[str]:
        """The current example's calls (a counterexample), in the after view or, given `before`, the before view."""
        lines = []
        for kwargs, value, error in self.calls[:limit]:
            like = {"a string": "", "True or False": True}.get(self.expected, 0.0)
            result = self.error_text(error, before) if error else f"returned {show(value, like)}"
            lines.append(f"{self.call_text(kwargs)} {result}")
            if error and (said := printed(error, before)):
                lines.append(f"  it printed: {said[:300]}")
        if len(self.calls) > limit:
            lines.append(f"(and {len(self.calls) - limit} more calls)")
        return lines


def _brief(full: str, brief: str) -> str | None:
    return None if brief == full else brief


def aborted_outcome(kind: str, name: str, abort: Abort, student_fn: StudentFunction, public: bool = True,
                    before: BeforeView = BeforeView()) -> CheckOutcome:
    """The check stopped the item (a dead worker, the budget, not implemented). The before view names
    the input only for a public check (or where the course shows hidden inputs)."""
    where = f" on {student_fn.call_text(abort.kwargs)}" if abort.kwargs else ""
    full = f"{abort.error.message}{where}"
    brief = student_fn.error_text(abort.error, before) + (where if public or before.hidden_inputs else "")
    return CheckOutcome(kind, name, False, full, brief=_brief(full, brief))


def run_example(student_fn: StudentFunction, label: str, kwargs: dict, item: FunctionItem,
                before: BeforeView = BeforeView()) -> CheckOutcome:
    name = f"worked example ({label})"
    expected = normalise(student_fn.reference_fn(**kwargs))
    student_fn.calls = []
    try:
        got = student_fn(**kwargs)
    except StudentError as exc:
        call = student_fn.call_text(kwargs)
        return CheckOutcome("example", name, False, f"{call} {exc.message}",
                            brief=_brief(f"{call} {exc.message}", f"{call} {student_fn.error_text(exc, before)}"))
    student_fn.observed[call_key(kwargs)] = (kwargs, got)
    if values_match(expected, got, item.rel_tol, item.abs_tol):
        return CheckOutcome("example", name, True, f"{student_fn.call_text(kwargs)} = {show(got)}")
    return CheckOutcome("example", name, False,
                        f"{student_fn.call_text(kwargs)} returned {show(got, expected)}, expected {show(expected)}")


def hidden_stats(student_fn: StudentFunction, item: FunctionItem, drawn: list[tuple[dict, Any]],
                 batch_ran: bool) -> HiddenStats:
    """How the student did on the drawn (kwargs, expected) pairs, from the prefetched values. If the
    batch killed the worker it had no culprit: the inputs go one by one (a worker killed on purpose
    must not hide a lookup table from scoring.physics_gate), up to the first fatal error."""
    if not batch_ran:
        for kwargs, _ in drawn:
            try:
                if not student_fn.sandbox.alive:
                    student_fn.sandbox.restart()
                student_fn.prefetched[call_key(kwargs)] = student_fn.sandbox.call(item.name, kwargs)
            except StudentError as exc:
                if exc.fatal:
                    break
        if not student_fn.sandbox.alive:  # the check goes on live: its failure must be the student's own
            try:
                student_fn.sandbox.restart()
            except StudentError as exc:
                student_fn.abort = Abort(exc, {})
                raise student_fn.abort
    replies = [(call_key(kw) in student_fn.prefetched, student_fn.prefetched.get(call_key(kw))) for kw, _ in drawn]
    student_fn.observed.update((call_key(kw), (kw, value)) for (ok, value), (kw, _) in zip(replies, drawn) if ok)
    matched = sum(ok and values_match(expected, value, item.rel_tol, item.abs_tol)
                  for (ok, value), (_, expected) in zip(replies, drawn))
    distinct = lambda values: len({repr(v) for v in values})  # noqa: E731
    constant = distinct([v for ok, v in replies if ok]) == 1 and distinct([e for _, e in drawn]) > 1 \
        and all(ok for ok, _ in replies)
    blind = input_blind_matches([kw for kw, _ in drawn], [expected for _, expected in drawn])
    return HiddenStats(matched, len(drawn), constant, blind)


def run_hidden(student_fn: StudentFunction, item: FunctionItem, seed: int, max_examples: int,
               show_expected: bool, before: BeforeView = BeforeView()) -> CheckOutcome:
    """The differential check: student vs reference on drawn inputs, under the item's tolerance.

    The student's values for all drawn inputs come in one round trip (the reference value is
    computed once per input); hypothesis only shrinks a failure already found. Its before view
    (`hidden_brief`) says how many inputs match, never the input or the reference's value unless the
    course shows them."""
    name = "hidden checks"
    last: dict[str, Any] = {}
    expected_of: dict[str | None, Any] = {}     # call key -> reference value, for the drawn inputs
    stats: list[HiddenStats] = []                # of the first (sampled) inputs: for the physics gate

    def prefetch(drawn: list[dict]) -> None:
        for kwargs in drawn:
            try:
                expected_of[call_key(kwargs)] = normalise(student_fn.reference_fn(**kwargs))
            except REFERENCE_REJECTS:
                pass    # not a valid input: the student is not asked
        valid = [kwargs for kwargs in drawn if call_key(kwargs) in expected_of]
        batch_ran = student_fn.prefetch(valid)
        if not stats and valid:
            stats.append(hidden_stats(student_fn, item, [(kw, expected_of[call_key(kw)]) for kw in valid], batch_ran))

    def body(kwargs: dict) -> None:
        key = call_key(kwargs)
        try:
            expected = expected_of[key] if key in expected_of else normalise(student_fn.reference_fn(**kwargs))
        except REFERENCE_REJECTS:
            reject()
        student_fn.calls = []
        try:
            got = student_fn(**kwargs)
        except StudentError as exc:
            last.update(kwargs=kwargs, expected=expected, error=exc)
            raise
        if not values_match(expected, got, item.rel_tol, item.abs_tol):
            last.update(kwargs=kwargs, expected=expected, got=got, error=None)
            raise AssertionError("mismatch")

    try:
        run_drawn(body, item.domain, seed, max_examples, prefetch=prefetch, edges=True)
    except (StudentError, AssertionError):
        pass
    except HypothesisException as exc:  # Unsatisfiable etc.: no valid input, not the student's fault
        if not last:
            return CheckOutcome("hidden", name, True, f"no valid hidden inputs were drawn ({type(exc).__name__})",
                                stats[0] if stats else None)
    else:
        return CheckOutcome("hidden", name, True, f"{max_examples} hidden inputs match the reference",
                            stats[0] if stats else None)
    stat = stats[0] if stats else None
    full = _hidden_text(student_fn, item, last, show_expected, None)
    return CheckOutcome("hidden", name, False, full, stat,
                        brief=_brief(full, hidden_brief(student_fn, item, last, show_expected, stat, before)))


def _hidden_text(student_fn: StudentFunction, item: FunctionItem, last: dict, show_expected: bool,
                 before: BeforeView | None) -> str:
    """The failing hidden input (shrunk), what the student's function did there and, with
    `show_expected`, the reference's value: the after view (before=None), or the before view's detail."""
    call = student_fn.call_text(last["kwargs"])
    if last["error"] is not None:
        return f"{call} {student_fn.error_text(last['error'], before)}"
    lines = [f"{call} returned {show(last['got'], last['expected'])}"]
    if show_expected and (before is None or before.reference_values):
        numeric = isinstance(last["expected"], (int, float)) and not isinstance(last["expected"], bool)
        tolerance = f" (tolerance: relative {item.rel_tol:g}, absolute {item.abs_tol:g})" if numeric else ""
        lines.append(f"expected {show(last['expected'])}{tolerance}")
    else:
        lines.append("which does not match the reference value")
    return "\n".join(lines)


def hidden_brief(student_fn: StudentFunction, item: FunctionItem, last: dict, show_expected: bool,
                 stats: "HiddenStats | None", before: BeforeView) -> str:
    """A failed hidden check before the due date: on how many of its inputs the function differs and,
    for an error, its type and the student's own line; the input and the reference's value only where
    the course shows them ([feedback.before] hidden_inputs, reference_values)."""
    differs = stats.total - stats.matched if stats is not None else 0
    head = (f"does not match the reference on {differs} of {stats.total} hidden inputs" if differs
            else "does not match the reference on a hidden input")
    if before.hidden_inputs or before.reference_values:
        return f"{head}; one of them:\n{_hidden_text(student_fn, item, last, show_expected, before)}"
    if last["error"] is not None:
        return f"{head}; on one it {student_fn.error_text(last['error'], before)}"
    return head


def run_property(student_fn: StudentFunction, prop: Property, seed: int, max_examples: int,
                 before: BeforeView = BeforeView()) -> CheckOutcome:
    """A named property over its own strategy; on failure: its meaning and the shrunk counterexample.
    Before the due date (`property_text`) a hidden property shows its meaning, and its counterexample
    and check only where the course shows hidden inputs and reference values."""
    last: dict[str, Any] = {}

    def body(drawn: Any) -> None:
        student_fn.calls = []
        try:
            prop.check(student_fn, drawn)
        except Exception as exc:
            last.update(drawn=drawn, error=exc, calls=student_fn.describe_calls(),
                        brief_calls=student_fn.describe_calls(before=before))
            raise

    student_fn.reject_reference_errors = True
    try:
        run_drawn(body, prop.strategy, seed, max_examples,
                  prefetch=lambda values: student_fn.prefetch(student_fn.calls_of(prop.check, values)))
    except HypothesisException as exc:
        if not last:
            return CheckOutcome("property", prop.name, True, f"no valid inputs were drawn ({type(exc).__name__})")
    except Exception:
        pass
    else:
        return CheckOutcome("property", prop.name, True, "holds")
    finally:
        student_fn.reject_reference_errors = False
    if not last:
        return CheckOutcome("property", prop.name, False, f"{PROPERTY_FAILED}{prop.meaning}")
    full = property_text(student_fn, prop, last, None)
    return CheckOutcome("property", prop.name, False, full, brief=_brief(full, property_text(student_fn, prop, last, before)))


def property_text(student_fn: StudentFunction, prop: Property, last: dict, before: BeforeView | None) -> str:
    """A failed property: its meaning (always), the counterexample's calls and the check's message, in
    the after view (before=None) or the before view."""
    error = last["error"]
    lines = [f"{PROPERTY_FAILED}{prop.meaning}"]
    hidden = before is not None and not prop.public
    if not hidden or before.hidden_inputs:
        lines.append("Counterexample:")
        lines += [f"  {c}" for c in last["calls" if before is None else "brief_calls"]] \
            or [f"  {student_fn.call_text(last['drawn'])}"]
    elif isinstance(error, StudentError):
        lines.append(f"On one of its inputs your function {student_fn.error_text(error, before)}")
    if isinstance(error, AssertionError) and str(error):
        if not hidden or before.reference_values:   # a hidden property's check may state reference numbers
            lines.append(f"Check: {str(error)[:300]}")
    elif not isinstance(error, (AssertionError, StudentError)):
        said = f": {str(error)[:200]}" if before is None or before.student_text else ""
        lines.append(f"(the check stopped with {type(error).__name__}{said})")
    return "\n".join(lines)


def planned_checks(item: FunctionItem) -> list[tuple[str, str]]:
    """(kind, name) of every check of the item, in the order they run."""
    return ([("example", f"worked example ({ex.label})") for ex in item.examples] + [("hidden", "hidden checks")]
            + [("property", p.name) for p in item.properties])


class ItemGrading:
    """The checks of one function item, run in two phases: `run(public=True)` (the item's import and
    signature, its worked examples and public properties), then `run(public=False)` (the hidden check
    and hidden properties). A submission runs every item's public phase before any item's hidden
    phase (autograder.engine.grade), so no value the before view shows of a public check (a returned
    value, a counterexample) comes from a worker that has seen a hidden input. `outcomes()` gives
    them in declaration order; item-level failures (import, missing function, signature) give one
    outcome of kind "item"; an abort fails the remaining checks with its reason. Each outcome carries
    the before view of its text where it differs (config.feedback.before)."""

    def __init__(self, assignment: Assignment, item: FunctionItem, sandbox: Sandbox, student_id: str,
                 config: GradingConfig, show_expected: bool, secret: CourseSecret | None = None):
        self.item, self.sandbox = item, sandbox
        self.before = before = config.feedback.before
        self.reference_fn = getattr(assignment.reference, item.name)
        self.item_outcome: CheckOutcome | None = None
        self.student_fn: StudentFunction | None = None
        self.done: dict[int, CheckOutcome] = {}

        def fn() -> StudentFunction:   # set by _start, before any check runs
            return self.student_fn
        # (kind, name, public: its inputs and values are the student's to see, run)
        self.runs: list[tuple[str, str, bool, Callable[[], CheckOutcome]]] = []
        for ex in item.examples:
            self.runs.append(("example", f"worked example ({ex.label})", True,
                              lambda ex=ex: run_example(fn(), ex.label, dict(ex.kwargs), item, before)))
        hidden_n = item.hidden_examples or config.hidden_examples
        self.runs.append(("hidden", "hidden checks", False, lambda: run_hidden(
            fn(), item, seed_for(assignment.id, student_id, item.name, "hidden", secret), hidden_n, show_expected, before)))
        for prop in item.properties:
            self.runs.append(("property", prop.name, prop.public, lambda prop=prop: run_property(
                fn(), prop, seed_for(assignment.id, student_id, item.name, prop.name, secret),
                prop.max_examples or config.property_examples, before)))

    def _start(self) -> bool:
        """Import and signature; False (and the item's one outcome) when the item cannot be graded."""
        before, item, sandbox = self.before, self.item, self.sandbox
        try:
            if not sandbox.alive or not sandbox.imported:
                sandbox.restart() if sandbox.imported else sandbox.load()
            params = sandbox.signature(item.name)
        except StudentError as exc:
            brief = error_text(exc, sandbox, before)
            self.item_outcome = CheckOutcome("item", "not graded", False, exc.message, brief=_brief(exc.message, brief))
            return False
        expected_params = list(inspect.signature(self.reference_fn).parameters)
        if params != expected_params:
            expected = f"expected ({', '.join(expected_params)}) in this order"
            full = f"{item.name} has parameters ({', '.join(params)}); {expected}"
            # the names come from the worker's reply: student text, like a message
            brief = full if before.student_text else f"{item.name} has other parameters; {expected}"
            self.item_outcome = CheckOutcome("item", "wrong signature", False, full, brief=_brief(full, brief))
            return False
        self.student_fn = StudentFunction(sandbox, item.name, self.reference_fn, expected_params)
        return True

    def run(self, public: bool) -> None:
        """Run the checks of one phase (the first call also imports and reads the signature)."""
        if self.item_outcome is not None or (self.student_fn is None and not self._start()):
            return
        student_fn, before = self.student_fn, self.before
        student_fn.hidden_phase = not public
        for index, (kind, name, is_public, run) in enumerate(self.runs):
            if is_public != public:
                continue
            if student_fn.abort is not None:
                full = f"not run: {student_fn.abort.error.message}"
                brief = f"not run: {student_fn.error_text(student_fn.abort.error, before)}"
                self.done[index] = CheckOutcome(kind, name, False, full, brief=_brief(full, brief))
                continue
            if not public and not (self.sandbox.alive and self.sandbox.imported):
                try:   # another item's check left the worker dead: this phase needs one
                    self.sandbox.restart() if self.sandbox.imported else self.sandbox.load()
                except StudentError as exc:
                    student_fn.abort = Abort(exc, {})
                    self.done[index] = aborted_outcome(kind, name, student_fn.abort, student_fn, is_public, before)
                    continue
            try:
                self.done[index] = run()
            except Abort as abort:
                self.done[index] = aborted_outcome(kind, name, abort, student_fn, is_public, before)
            except Exception as exc:  # a fault of the declaration or the grader, never the student's
                self.done[index] = CheckOutcome(kind, name, False, f"the grader could not run this check "
                                                                   f"({type(exc).__name__}); tell the course staff")

    def outcomes(self, misconceptions=()) -> list[CheckOutcome]:
        """Every check's outcome in declaration order (both phases must have run), diagnosed."""
        if self.item_outcome is not None:
            return [self.item_outcome]
        if self.student_fn is None:
            return [CheckOutcome("item", "not graded", False, "the grader did not grade this item; tell the course staff")]
        missing = CheckOutcome("item", "not graded", False, "not run")
        outcomes = [self.done.get(i, replace(missing, kind=kind, name=name))
                    for i, (kind, name, _, _) in enumerate(self.runs)]
        return with_diagnosis(outcomes, misconceptions, self.student_fn, self.item)


def grade_function(assignment: Assignment, item: FunctionItem, sandbox: Sandbox, student_id: str,
                   config: GradingConfig, show_expected: bool, secret: CourseSecret | None = None) -> list[CheckOutcome]:
    """Every check of one item, both phases (ItemGrading); a submission grades all its items with
    grade.grade_submission, public phases first."""
    grading = ItemGrading(assignment, item, sandbox, student_id, config, show_expected, secret)
    grading.run(public=True)
    grading.run(public=False)
    return grading.outcomes(assignment.misconceptions.get(item.name, ()))


def with_diagnosis(outcomes: list[CheckOutcome], misconceptions, student_fn: StudentFunction,
                   item: FunctionItem) -> list[CheckOutcome]:
    """A failing item's first failed check names the wrong model its observed values match, if one does
    (in both views: the name and its explanation say what is wrong, not the reference's values)."""
    failed = next((i for i, o in enumerate(outcomes) if not o.passed), None)
    if failed is None or not misconceptions:
        return outcomes
    found = diagnose(misconceptions, list(student_fn.observed.values()), student_fn.reference_fn,
                     item.rel_tol, item.abs_tol)
    if found is None:
        return outcomes
    o = outcomes[failed]
    line = feedback_line(found)
    outcomes[failed] = replace(o, output=f"{o.output}\n{line}", misconception=found.name,
                               brief=None if o.brief is None else f"{o.brief}\n{line}")
    return outcomes
