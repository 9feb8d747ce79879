"""Credit only for physics: on every lab, a module that returns a constant, one that looks up the
public worked examples, and one that only raises earn at most 10 % of the function points
(scoring.physics_gate), while the reference earns them all. Modules are built from the
declarations' examples, as an attacker reading the released notebook would."""
import inspect
import json

import pytest

from attack import constant_module
from autograder.engine.config import GradingConfig
from autograder.engine.grade import grade_submission
from labs import all_assignments, load
from autograder.engine.checks import normalise

LABS = sorted(all_assignments())
CONFIG = GradingConfig(call_timeout_s=2.0, property_examples=5)  # the gate reads the hidden check (30 inputs)
CEILING = 0.10


def lookup_module(assignment) -> str:
    """Each function answers the public worked examples from a table, anything else with the first
    example's value."""
    lines = ["import json"]
    for item in assignment.functions:
        ref = getattr(assignment.reference, item.name)
        table = {json.dumps(sorted(dict(ex.kwargs).items())): normalise(ref(**dict(ex.kwargs))) for ex in item.examples}
        params = list(inspect.signature(ref).parameters)
        lines.append(f"_T_{item.name} = json.loads({json.dumps(table)!r})\n"
                     f"def {item.name}({', '.join(params)}):\n"
                     f"    key = json.dumps(sorted(dict({', '.join(f'{p}={p}' for p in params)}).items()))\n"
                     f"    return _T_{item.name}.get(key, next(iter(_T_{item.name}.values())))\n")
    return "\n".join(lines)


KINDS = {"constant": constant_module,
         "lookup": lookup_module,
         "raising": lambda a: constant_module(a, body="raise ValueError('no physics here')")}


@pytest.mark.parametrize("lab", LABS)
def test_no_physics_no_credit(tmp_path, lab):
    assignment = load(lab)
    function_points = sum(f.points for f in assignment.functions)
    for kind, build in KINDS.items():
        folder = tmp_path / kind
        folder.mkdir()
        (folder / f"{assignment.module}.py").write_text(build(assignment))
        result = grade_submission(assignment, folder, "mallory", config=CONFIG)
        earned = {t.name: t.score for t in result.tests if t.score and t.item in {f.name for f in assignment.functions}}
        assert sum(earned.values()) <= CEILING * function_points, (kind, earned)
        gated = [t.output for t in result.tests if "no credit:" in t.output]
        if kind != "raising":  # some example passes and is shown, with why it earns nothing
            assert gated, kind
