"""The offline-table attack of issue 26: every call the grader will make under one student id,
computed at home from the released files, handed in as a table with no formula.

What the attacker has: the released folder (`_properties.py` with its strategies and checks, the
public test file with the worked examples, the stub's signatures), the engine's source (the draw
algorithm and how seeds are derived are open source), the names of the hidden properties (every
feedback page prints them) and the right values for any input (a classmate's correct module run at
home, or last year's solutions): the table stands in for a formula the attacker never wrote.

The attacker guesses each check's inputs: for every check of every function (the hidden check, each
property) and every strategy the released `_properties.py` ships, the inputs the engine would draw
under the seed it would derive, and every call the public property checks make on them. A call
outside the table raises.
"""
from __future__ import annotations

import importlib.util
import inspect
import json
import sys
from pathlib import Path

from autograder.engine.checks import normalise, seed_for
from autograder.engine.draw import sample_inputs

CHECK_EXAMPLES = 30     # what the attacker assumes the grader draws per check (the defaults: 30, 20)


def released_properties(release_dir: Path) -> list[dict]:
    """The PROPERTIES list of a released folder's _properties.py, imported as a student would."""
    sys.path.insert(0, str(release_dir))
    try:
        for name in ("_properties", "_property_kit"):
            sys.modules.pop(name, None)
        spec = importlib.util.spec_from_file_location("_properties", release_dir / "_properties.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return list(module.PROPERTIES)
    finally:
        sys.path.remove(str(release_dir))
        sys.modules.pop("_property_kit", None)


def _key(kwargs: dict) -> str:
    return json.dumps(sorted(kwargs.items()))


def predicted_calls(assignment, release_dir: Path, student_id: str, seed_of=seed_for,
                    insider: bool = False) -> dict[str, list[dict]]:
    """function name -> every call the attacker predicts the grader makes under `student_id`. On
    every check of a function the attacker tries each strategy the released _properties.py ships for
    that function (its public properties'); an `insider` (a control: the staff's declarations in
    hand) uses each check's own strategy and checks."""
    properties = released_properties(release_dir)
    calls: dict[str, list[dict]] = {}
    for item in assignment.functions:
        wanted = [dict(ex.kwargs) for ex in item.examples]
        if insider:
            checks = [("hidden", [item.domain], [])] + [(p.name, [p.strategy], [p.check]) for p in item.properties]
        else:   # hidden property names: from any feedback page
            own = [p for p in properties if p["item"] == item.name]
            shipped = list({id(p["strategy"]): p["strategy"] for p in own}.values())
            checks = [(name, shipped, [p["check"] for p in own]) for name in ["hidden"] + [p.name for p in item.properties]]
        for check, strategies, recorded in checks:
            for strategy in strategies:
                try:
                    drawn = sample_inputs(strategy, seed_of(assignment.id, student_id, item.name, check), CHECK_EXAMPLES,
                                          edges=check == "hidden")     # as the engine draws them
                except Exception:
                    continue
                for d in drawn:
                    if isinstance(d, dict):
                        wanted.append(d)
                    for check_fn in recorded:
                        wanted += _recorded(check_fn, d, getattr(assignment.reference, item.name))
        calls[item.name] = wanted
    return calls


def _recorded(check, drawn, reference) -> list[dict]:
    made: list[dict] = []

    def f(**kwargs):
        made.append(kwargs)
        return normalise(reference(**kwargs))
    try:
        check(f, drawn)
    except Exception:
        pass
    return made


def table_module(assignment, release_dir: Path, student_id: str, seed_of=seed_for, insider: bool = False) -> str:
    """The module handed in: per function a table of predicted calls -> the right value; no formula."""
    lines = ["import json", "", "def _key(kwargs):", "    return json.dumps(sorted(kwargs.items()))", ""]
    for name, wanted in predicted_calls(assignment, release_dir, student_id, seed_of, insider).items():
        reference = getattr(assignment.reference, name)
        table = {}
        for kwargs in wanted:
            try:
                bound = inspect.signature(reference).bind(**kwargs)
                bound.apply_defaults()      # the module keys every call by all its parameters
                table[_key(dict(bound.arguments))] = normalise(reference(**kwargs))
            except Exception:
                continue
        params = list(inspect.signature(reference).parameters)
        lines += [f"_{name} = json.loads({json.dumps(table)!r})",
                  f"def {name}({', '.join(params)}):",
                  f"    key = _key(dict({', '.join(f'{p}={p}' for p in params)}))",
                  f"    if key not in _{name}:",
                  "        raise ValueError('not in my table')",
                  f"    return _{name}[key]", ""]
    return "\n".join(lines)
