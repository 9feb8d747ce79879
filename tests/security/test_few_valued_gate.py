"""The physics gate for answers with few values (issue 26): a function whose answer takes a few values
("ring"/"tree", True/False, a count of links, a part's name) earns its worked examples and properties
only by doing clearly better on the hidden inputs than any answer that ignores the physics.

The attacker here is stronger than the issue's (a fixed 3 MB threshold, ignoring n, alpha and the
bandwidth: half its points for every student id): the best fixed threshold on one argument (or the
most common answer), fitted offline to 400 inputs drawn from the hidden domain itself, with the
worked examples answered from a table. Under every student id it earns nothing of those items, while
the reference earns all and a function wrong only on exact ties keeps its examples and properties.
"""
from collections import Counter
from dataclasses import replace
from numbers import Real

import pytest

from autograder.engine import scoring
from autograder.engine.checks import normalise
from autograder.engine.config import GradingConfig
from autograder.engine.draw import sample_inputs
from autograder.engine.grade import grade_submission
from autograder.engine.secret import CourseSecret
from labs import load
from test_predictable_inputs import RELEASE, handed_in

SECRET = CourseSecret(bytes.fromhex("feedface" * 8))
CONFIG = GradingConfig(call_timeout_s=2.0, property_examples=5)
STUDENTS = ("s01", "s02")
# every graded function whose answer takes few values, by lab (test_every_few_valued_function_is_listed)
FEW_VALUED = {
    "lab01_scale": ["cheapest_option"],
    "lab02_interconnect": ["min_ib_links"],
    "lab05_parallelism": ["tp_crosses_node", "fits_in_memory"],
    "lab06_collectives": ["best_allreduce_algorithm"],
    "lab09_performance": ["hotspot", "best_fix"],
}
FEW = 20    # distinct reference values over a few hundred hidden inputs: "few" (a count of links: 0..16)


def _reference_values(assignment, item, count=400, seed=424242):
    reference = getattr(assignment.reference, item.name)
    pairs = []
    for kwargs in sample_inputs(item.domain, seed, count, edges=True):
        try:
            pairs.append((kwargs, normalise(reference(**kwargs))))
        except (ValueError, ArithmeticError):
            continue
    return pairs


def _features(kwargs: dict) -> dict:
    """argument (or dict argument's key) -> its number"""
    found = {}
    for name, value in kwargs.items():
        if isinstance(value, Real) and not isinstance(value, bool):
            found[(name, None)] = float(value)
        elif isinstance(value, dict):
            found.update({(name, key): float(v) for key, v in value.items() if isinstance(v, Real)})
    return found


def best_blind_rule(pairs) -> tuple:
    """(feature, threshold, answer at or below, answer above) of the most accurate one-argument
    threshold rule on these (kwargs, answer) pairs; feature None: always the most common answer."""
    answers = [repr(a) for _, a in pairs]
    common = Counter(answers).most_common(1)[0][0]
    best, rule = answers.count(common), (None, 0.0, common, common)
    columns = {f for kw, _ in pairs for f in _features(kw)}
    for feature in sorted(columns, key=str):
        rows = sorted((_features(kw).get(feature, float("-inf")), repr(a)) for kw, a in pairs)
        low, high = Counter(), Counter(a for _, a in rows)
        for cut in range(1, len(rows)):
            low[rows[cut - 1][1]] += 1
            high[rows[cut - 1][1]] -= 1
            if rows[cut - 1][0] == rows[cut][0]:
                continue
            (a_low, n_low), (a_high, n_high) = low.most_common(1)[0], high.most_common(1)[0]
            if n_low + n_high > best:
                best, rule = n_low + n_high, (feature, rows[cut - 1][0], a_low, a_high)
    return rule


def blind_module(assignment, names) -> str:
    """Each named function: its worked examples from a table, the best blind rule everywhere else."""
    import inspect
    import json
    lines = ["import json"]
    for name in names:
        item = assignment.function(name)
        reference = getattr(assignment.reference, name)
        params = list(inspect.signature(reference).parameters)
        table = {json.dumps(sorted(dict(ex.kwargs).items())): normalise(reference(**ex.kwargs)) for ex in item.examples}
        (feature, threshold, low, high) = best_blind_rule(_reference_values(assignment, item))
        if feature is None:
            value = "None"
        elif feature[1] is None:
            value = feature[0]
        else:
            value = f"{feature[0]}.get({feature[1]!r}, float('-inf'))"
        lines += [f"_T_{name} = json.loads({json.dumps(table)!r})",
                  f"def {name}({', '.join(params)}):",
                  f"    key = json.dumps(sorted(dict({', '.join(f'{p}={p}' for p in params)}).items()))",
                  f"    if key in _T_{name}:",
                  f"        return _T_{name}[key]",
                  f"    x = {value}",
                  f"    return {low} if x is None or x <= {threshold!r} else {high}", ""]
    return "\n".join(lines)


def only(assignment, names):
    """The assignment with only these graded functions (and their wrong models)."""
    return replace(assignment, functions=[assignment.function(n) for n in names],
                   misconceptions={k: v for k, v in assignment.misconceptions.items() if k in names})


def _scores(assignment, folder, student) -> dict:
    return grade_submission(assignment, folder, student, config=CONFIG, secret=SECRET).item_scores()


@pytest.mark.parametrize("lab", sorted(FEW_VALUED))
def test_every_few_valued_function_is_listed(lab):
    """The reference's answers over its hidden domain take few values exactly for the listed functions."""
    assignment = load(lab)
    found = [item.name for item in assignment.functions
             if len({repr(a) for _, a in _reference_values(assignment, item, 200)}) <= FEW]
    assert found == FEW_VALUED[lab]


@pytest.mark.parametrize("lab", sorted(FEW_VALUED))
def test_the_best_input_blind_answer_earns_nothing_under_any_student_id(tmp_path, lab):
    full = load(lab)
    assignment = only(full, FEW_VALUED[lab])
    attacker = handed_in(tmp_path, "blind", blind_module(assignment, FEW_VALUED[lab]), full.module,
                         RELEASE.parent / lab)
    for student in STUDENTS:
        scores = _scores(assignment, attacker, student)
        assert all(scores[name][0] == 0 for name in FEW_VALUED[lab]), (student, scores)
    honest = _honest(tmp_path, full)
    honest_scores = _scores(assignment, honest, "honest")
    assert all(honest_scores[name][0] == honest_scores[name][1] for name in FEW_VALUED[lab]), honest_scores


def test_the_issues_3_mb_threshold_earns_nothing_and_a_tie_slip_keeps_the_rest(tmp_path):
    """Lab 06: "ring" above 3 MB (n, alpha and the bandwidth ignored) earns nothing for any student;
    a function wrong only on exact ties ("tree" when ring and tree take the same time) fails the
    hidden check (its anchors are ties) and keeps the examples and properties."""
    full = load("lab06_collectives")
    assignment = only(full, ["best_allreduce_algorithm"])
    threshold = ("\ndef best_allreduce_algorithm(message_bytes, n, alpha_s, bandwidth):\n"
                 "    return 'ring' if message_bytes > 3e6 else 'tree'\n")
    tie_slip = ("\ndef best_allreduce_algorithm(message_bytes, n, alpha_s, bandwidth):\n"
                "    ring = ring_allreduce_time(message_bytes, n, alpha_s, bandwidth)\n"
                "    tree = tree_allreduce_time(message_bytes, n, alpha_s, bandwidth)\n"
                "    return 'ring' if ring < tree else 'tree'\n")
    fixed = handed_in(tmp_path, "threshold", _solved(full) + threshold, full.module)
    for student in STUDENTS + ("s03", "s04", "s05", "s06"):
        assert _scores(assignment, fixed, student)["best_allreduce_algorithm"][0] == 0, student
    slip = grade_submission(assignment, handed_in(tmp_path, "tie", _solved(full) + tie_slip, full.module), "s01",
                            config=CONFIG, secret=SECRET)
    lost = {t.check for t in slip.tests if t.score < t.max_score and t.item == "best_allreduce_algorithm"}
    assert lost == {"hidden checks"}, [(t.check, t.output) for t in slip.tests if t.score < t.max_score]


def test_the_gate_counts_what_an_input_blind_answer_gets():
    """scoring.input_blind_matches: the most common answer, or the best threshold on one argument."""
    inputs = [{"m": m, "n": n} for m, n in [(1, 5), (2, 1), (3, 4), (4, 2), (5, 3), (6, 6)]]
    assert scoring.input_blind_matches(inputs, ["a", "a", "a", "b", "b", "b"]) == 6      # m <= 3
    assert scoring.input_blind_matches(inputs, ["a", "b", "a", "b", "a", "b"]) == 5      # n <= 2: b, else a
    assert scoring.input_blind_matches(inputs, ["x"] * 5 + ["y"]) == 6
    assert scoring.input_blind_matches([{"p": {"u": 0.1}}, {"p": {"u": 0.9}}], ["a", "b"]) == 2
    assert scoring.input_blind_matches(inputs, [1.5, 2.5, 3.5, 4.5, 5.5, 6.5]) == 2     # many values
    # matches needed: half of them, and what the blind answer gets plus a third of the rest
    assert scoring.needed_matches(40, 2) == 20 and scoring.needed_matches(40, 31) == 34
    assert scoring.needed_matches(80, 58) == 66 and scoring.needed_matches(40, 40) == 40
    assert scoring.physics_gate(False, 33, 40, False, 31) and scoring.physics_gate(False, 34, 40, False, 31) is None
    assert scoring.physics_gate(False, 19, 40, False, 2) and scoring.physics_gate(False, 20, 40, False, 2) is None


def _solved(assignment) -> str:
    from pathlib import Path

    from autograder.classroom.samples import solved_module
    return solved_module(Path(assignment.reference.__file__).read_text(encoding="utf-8"))


def _honest(tmp_path, assignment):
    """The lab's released folder with the reference's solution (and the solved modules it imports)."""
    from autograder.classroom.samples import solved_dependencies
    folder = handed_in(tmp_path, "honest", _solved(assignment), assignment.module, RELEASE.parent / assignment.id)
    for name, text in solved_dependencies(assignment).items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder
