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
from autograder.engine.config import GradingConfig
from autograder.engine.diagnose import diagnose, feedback_line
from autograder.engine.draw import run_drawn
from autograder.engine.scoring import input_blind_matches
from autograder.engine.sandbox import Sandbox, StudentError
from autograder.engine.secret import CourseSecret
from autograder.engine.spec import Assignment, FunctionItem, Property

REFERENCE_REJECTS = (ValueError, ArithmeticError)  # the reference says: not a valid input


@dataclass(frozen=True)
class CheckOutcome:
    kind: str        # "example" | "hidden" | "property" | "item" (the whole item, one failure)
    name: str        # shown after "<item>: "
    passed: bool
    output: str
    hidden: "HiddenStats | None" = None   # the hidden check only: how the student did on its inputs
    misconception: str = ""               # the named wrong model (autograder.engine.diagnose), if any


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

    def __call__(self, **kwargs: Any) -> Any:
        if self.abort is not None:
            raise self.abort
        try:
            key = call_key(kwargs)
            value = self.prefetched[key] if key in self.prefetched else self.sandbox.call(self.name, kwargs)
        except StudentError as exc:
            if exc.kind == "wrong_type":
                exc = StudentError(f"{exc.message}, expected {self.expected}", "wrong_type", output=exc.output)
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

    def describe_calls(self, limit: int = 3) -> list[str]:
        lines = []
        for kwargs, value, error in self.calls[:limit]:
            like = {"a string": "", "True or False": True}.get(self.expected, 0.0)
            result = error.message if error else f"returned {show(value, like)}"
            lines.append(f"{self.call_text(kwargs)} {result}")
            if error and error.output:
                lines.append(f"  it printed: {error.output[:300]}")
        if len(self.calls) > limit:
            lines.append(f"(and {len(self.calls) - limit} more calls)")
        return lines


def aborted_outcome(kind: str, name: str, abort: Abort, student_fn: StudentFunction) -> CheckOutcome:
    where = f" on {student_fn.call_text(abort.kwargs)}" if abort.kwargs else ""
    return CheckOutcome(kind, name, False, f"{abort.error.message}{where}")


def run_example(student_fn: StudentFunction, label: str, kwargs: dict, item: FunctionItem) -> CheckOutcome:
    name = f"worked example ({label})"
    expected = normalise(student_fn.reference_fn(**kwargs))
    student_fn.calls = []
    try:
        got = student_fn(**kwargs)
    except StudentError as exc:
        return CheckOutcome("example", name, False, f"{student_fn.call_text(kwargs)} {exc.message}")
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
               show_expected: bool) -> CheckOutcome:
    """The differential check: student vs reference on drawn inputs, under the item's tolerance.

    The student's values for all drawn inputs come in one round trip (the reference value is
    computed once per input); hypothesis only shrinks a failure already found."""
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
    call = student_fn.call_text(last["kwargs"])
    if last["error"] is not None:
        return CheckOutcome("hidden", name, False, f"{call} {last['error'].message}", stats[0] if stats else None)
    lines = [f"{call} returned {show(last['got'], last['expected'])}"]
    if show_expected:
        numeric = isinstance(last["expected"], (int, float)) and not isinstance(last["expected"], bool)
        tolerance = f" (tolerance: relative {item.rel_tol:g}, absolute {item.abs_tol:g})" if numeric else ""
        lines.append(f"expected {show(last['expected'])}{tolerance}")
    else:
        lines.append("which does not match the reference value")
    return CheckOutcome("hidden", name, False, "\n".join(lines), stats[0] if stats else None)


def run_property(student_fn: StudentFunction, prop: Property, seed: int, max_examples: int) -> CheckOutcome:
    """A named property over its own strategy; on failure: its meaning and the shrunk counterexample."""
    last: dict[str, Any] = {}

    def body(drawn: Any) -> None:
        student_fn.calls = []
        try:
            prop.check(student_fn, drawn)
        except Exception as exc:
            last.update(drawn=drawn, error=exc, calls=student_fn.describe_calls())
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
    error = last["error"]
    lines = [f"{PROPERTY_FAILED}{prop.meaning}", "Counterexample:"]
    lines += [f"  {c}" for c in last["calls"]] or [f"  {student_fn.call_text(last['drawn'])}"]
    if isinstance(error, AssertionError) and str(error):
        lines.append(f"Check: {str(error)[:300]}")
    elif not isinstance(error, (AssertionError, StudentError)):
        lines.append(f"(the check stopped with {type(error).__name__}: {str(error)[:200]})")
    return CheckOutcome("property", prop.name, False, "\n".join(lines))


def planned_checks(item: FunctionItem) -> list[tuple[str, str]]:
    """(kind, name) of every check of the item, in the order they run."""
    return ([("example", f"worked example ({ex.label})") for ex in item.examples] + [("hidden", "hidden checks")]
            + [("property", p.name) for p in item.properties])


def grade_function(assignment: Assignment, item: FunctionItem, sandbox: Sandbox, student_id: str,
                   config: GradingConfig, show_expected: bool, secret: CourseSecret | None = None) -> list[CheckOutcome]:
    """Run all checks of one item. Item-level failures (import, missing function, signature)
    give one outcome of kind "item"; an abort mid-item fails the remaining checks with its reason."""
    reference_fn = getattr(assignment.reference, item.name)
    try:
        if not sandbox.alive or not sandbox.imported:
            sandbox.restart() if sandbox.imported else sandbox.load()
        params = sandbox.signature(item.name)
    except StudentError as exc:
        return [CheckOutcome("item", "not graded", False, exc.message)]
    expected_params = list(inspect.signature(reference_fn).parameters)
    if params != expected_params:
        return [CheckOutcome("item", "wrong signature", False,
                             f"{item.name} has parameters ({', '.join(params)}); "
                             f"expected ({', '.join(expected_params)}) in this order")]

    student_fn = StudentFunction(sandbox, item.name, reference_fn, expected_params)
    outcomes: list[CheckOutcome] = []
    runs: list[tuple[str, str, Callable[[], CheckOutcome]]] = []
    for ex in item.examples:
        runs.append(("example", f"worked example ({ex.label})",
                     lambda ex=ex: run_example(student_fn, ex.label, dict(ex.kwargs), item)))
    hidden_n = item.hidden_examples or config.hidden_examples
    runs.append(("hidden", "hidden checks", lambda: run_hidden(
        student_fn, item, seed_for(assignment.id, student_id, item.name, "hidden", secret), hidden_n, show_expected)))
    for prop in item.properties:
        runs.append(("property", prop.name, lambda prop=prop: run_property(
            student_fn, prop, seed_for(assignment.id, student_id, item.name, prop.name, secret),
            prop.max_examples or config.property_examples)))
    for kind, name, run in runs:
        if student_fn.abort is not None:
            outcomes.append(CheckOutcome(kind, name, False, f"not run: {student_fn.abort.error.message}"))
            continue
        try:
            outcomes.append(run())
        except Abort as abort:
            outcomes.append(aborted_outcome(kind, name, abort, student_fn))
        except Exception as exc:  # a fault of the declaration or the grader, never the student's
            outcomes.append(CheckOutcome(kind, name, False,
                                         f"the grader could not run this check ({type(exc).__name__}); tell the course staff"))
    return with_diagnosis(outcomes, assignment.misconceptions.get(item.name, ()), student_fn, item)


def with_diagnosis(outcomes: list[CheckOutcome], misconceptions, student_fn: StudentFunction,
                   item: FunctionItem) -> list[CheckOutcome]:
    """A failing item's first failed check names the wrong model its observed values match, if one does."""
    failed = next((i for i, o in enumerate(outcomes) if not o.passed), None)
    if failed is None or not misconceptions:
        return outcomes
    found = diagnose(misconceptions, list(student_fn.observed.values()), student_fn.reference_fn,
                     item.rel_tol, item.abs_tol)
    if found is None:
        return outcomes
    o = outcomes[failed]
    outcomes[failed] = replace(o, output=f"{o.output}\n{feedback_line(found)}", misconception=found.name)
    return outcomes
