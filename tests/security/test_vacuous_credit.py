"""Credit only for physics: on every lab, modules that compute no physics earn at most 10 % of the
function points (scoring.physics_gate), whatever they answer or raise on the hidden inputs: a
constant; a lookup table of the public worked examples (the first example's value elsewhere); the
worked examples answered and anything else raising ValueError, NotImplementedError or a
RecursionError, killing the worker, returning None or NaN, or echoing its first argument. Their share of
the hidden inputs counts every input drawn, answered or not (scoring.physics_gate). Modules are
built from the declarations' examples, as an attacker reading the released notebook would."""
import inspect
import json

import pytest

from attack import constant_module
from autograder.engine import scoring
from autograder.engine.checks import HiddenStats
from autograder.engine.config import GradingConfig
from autograder.engine.grade import grade_submission
from labs import all_assignments, load
from autograder.engine.checks import normalise

LABS = sorted(all_assignments())
CONFIG = GradingConfig(call_timeout_s=2.0, property_examples=5)  # the gate reads the hidden check (30 inputs)
CEILING = 0.10


def lookup_module(assignment, otherwise: str | None = None) -> str:
    """Each function answers the public worked examples from a table, anything else with the first
    example's value, or by running `otherwise` (a statement: raise, return something)."""
    lines = ["import json, math, os"]
    for item in assignment.functions:
        ref = getattr(assignment.reference, item.name)
        table = {json.dumps(sorted(dict(ex.kwargs).items())): normalise(ref(**dict(ex.kwargs))) for ex in item.examples}
        params = list(inspect.signature(ref).parameters)
        fallback = otherwise or f"return next(iter(_T_{item.name}.values()))"
        lines.append(f"_T_{item.name} = json.loads({json.dumps(table)!r})\n"
                     f"def {item.name}({', '.join(params)}):\n"
                     f"    key = json.dumps(sorted(dict({', '.join(f'{p}={p}' for p in params)}).items()))\n"
                     f"    if key in _T_{item.name}:\n"
                     f"        return _T_{item.name}[key]\n"
                     f"    {fallback.format(first=params[0])}\n")
    return "\n".join(lines)



KINDS = {"constant": constant_module,
         "lookup": lookup_module,
         "raising": lambda a: constant_module(a, body="raise ValueError('no physics here')"),
         "examples, else ValueError": lambda a: lookup_module(a, "raise ValueError('not in my table')"),
         "examples, else not implemented": lambda a: lookup_module(a, "raise NotImplementedError"),
         "examples, else recursion": lambda a: lookup_module(a, "return (lambda f: f(f))(lambda f: f(f))"),
         "examples, else the worker dies": lambda a: lookup_module(a, "os._exit(3)"),
         "examples, else None": lambda a: lookup_module(a, "return None"),
         "examples, else NaN": lambda a: lookup_module(a, "return math.nan"),
         "examples, else an echo": lambda a: lookup_module(a, "return {first}")}
# a worker killed on every hidden input costs a restart per item (6 s a lab): one lab shows it
ONE_LAB_ONLY = {"examples, else the worker dies": "lab06_collectives"}
# kinds that answer some worked example right, which is shown with why it earns nothing
ANSWER_EXAMPLES = {kind for kind in KINDS if kind.startswith(("examples", "lookup", "constant"))}


@pytest.mark.parametrize("lab", LABS)
def test_no_physics_no_credit(tmp_path, lab):
    assignment = load(lab)
    function_points = sum(f.points for f in assignment.functions)
    for kind, build in KINDS.items():
        if ONE_LAB_ONLY.get(kind, lab) != lab:
            continue
        folder = tmp_path / kind.replace(" ", "_").replace(",", "")
        folder.mkdir()
        (folder / f"{assignment.module}.py").write_text(build(assignment))
        result = grade_submission(assignment, folder, "mallory", config=CONFIG)
        earned = {t.name: t.score for t in result.tests if t.score and t.item in {f.name for f in assignment.functions}}
        assert sum(earned.values()) <= CEILING * function_points, (kind, earned)
        gated = [t.output for t in result.tests if "no credit:" in t.output]
        if kind in ANSWER_EXAMPLES:     # some example passes and is shown, with why it earns nothing
            assert gated, kind


def test_the_share_counts_every_hidden_input_answered_or_not():
    """The gate's share is of every input drawn: a function that answered 2 of 40 hidden inputs, both
    right, and raised on the other 38 matched 2 of 40, not 2 of 2 (and a batch it killed counts as
    unanswered: checks.hidden_stats)."""
    assert scoring.physics_gate(False, 2, 40, False, 1) is not None
    assert scoring.physics_gate(True, 0, 0, False, 0) is None          # no valid input drawn: nothing to hold against it
    stats = HiddenStats(matched=2, total=40, constant=False, blind=1)
    assert "2 of 40" in scoring.physics_gate(False, stats.matched, stats.total, stats.constant, stats.blind)
