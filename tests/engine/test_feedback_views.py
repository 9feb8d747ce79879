"""Every line a student reads in feedback (issue 31 kind 3), in the two views of the feedback policy
(issue 26): "after" (everything) and "before" (before the due date: what failed, worked examples and
public counterexamples; never a key, an option's explanation, the reference's value at a hidden
input, a design's reference numbers or text the student's code wrote).

One submission of a declaration built on the toy (a hidden property, explained options, a design
challenge, a named misconception) fails every kind of check once; each test reads the lines one kind
of check shows, as a student reads them, in both views. Expected texts are written out here, with
numbers computed from the reference and line numbers found in the submitted file, never taken from
the engine's own output.
"""
from __future__ import annotations

import dataclasses
import math
import re

import pytest

import toy
from autograder.classroom.feedback import render_feedback
from autograder.engine.challenges import DesignChallenge, Field, Verdict
from autograder.engine.checks import seed_for
from autograder.engine.config import BeforeView, FeedbackPolicy
from autograder.engine.draw import sample_inputs
from autograder.engine.grade import grade_submission
from autograder.engine.results import Result
from autograder.engine.spec import Misconception, Property
from reference import collectives as C

# --- the declaration -----------------------------------------------------------------------------

LATENCY_AT_ZERO = "latency only at zero bytes"
LATENCY_MEANING = "With an empty message the ring pays only its 2(n-1) latency steps."


def _latency_at_zero(f, d):
    """Hidden: the reference's latency term, stated in the check's message (a reference number)."""
    want = C.ring_allreduce_time(0.0, d["n"], d["alpha_s"], d["bandwidth"])
    got = f(**{**d, "message_bytes": 0.0})
    if not math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-15):   # no assert: pytest would rewrite its message
        raise AssertionError(f"got {got!r}, the reference's latency is {want!r}")


def _n_for_n_minus_1(message_bytes, n, alpha_s, bandwidth):
    return 2 * n * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth


WHY = {letter: f"Because option {letter} is the reasoning {letter.lower() * 3}." for letter in toy.options}
TAKEAWAY = "A ring rank sends 2(n-1)/n of the message, the least any point-to-point AllReduce can."   # states the key


def _budget(design):
    ring = C.ring_allreduce_time(design["message_bytes"], design["n"], 5e-6, 50e9)
    return [Verdict(design["n"] >= 2, f"{design['n']} ranks"),
            Verdict(ring <= 1.0, f"ring AllReduce takes {ring:.6g} s", f"the reference's time is {ring!r}")]


PLAN = DesignChallenge(
    id="toy_plan", points=2.0, prompt="Pick a message and a rank count.",
    fields=(Field("message_bytes", "bytes", 0, 1e12, integer=False), Field("n", "ranks", 1, 4096)),
    constraints=("at least two ranks", "one ring AllReduce within a second"),
    check=_budget, reference_answer=dict(message_bytes=1e9, n=8))

RING = toy.ASSIGNMENT.functions[0]
ASSIGNMENT = dataclasses.replace(
    toy.ASSIGNMENT,
    functions=[dataclasses.replace(RING, properties=[*RING.properties, Property(
        LATENCY_AT_ZERO, LATENCY_MEANING, toy.link, _latency_at_zero, public=False)]),
        *toy.ASSIGNMENT.functions[1:]],
    questions=[dataclasses.replace(toy.ASSIGNMENT.questions[0], why=WHY, takeaway=TAKEAWAY)],
    challenges=[PLAN],
    misconceptions={"ring_allreduce_time": [Misconception(
        "n latency steps instead of n - 1", "You counted n latency steps; a ring of n ranks takes n - 1 per phase.",
        "Act I, the ring", _n_for_n_minus_1)]})

# --- the submission: a wrong ring, a tree that raises and prints, a wrong answer, a design -----------

RAISE_LINE = "    raise ValueError(f'packed {n} {message_bytes} {alpha_s} {bandwidth}')"
MODULE = toy.with_function(
    toy.with_function(toy.reference_source(), "ring_allreduce_time",
                      "def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
                      "    return 2 * n * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth\n"),
    "tree_allreduce_time",
    "def tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
    "    print('seen', n, message_bytes)\n" + RAISE_LINE + "\n")
DESIGN = "toy_plan = dict(message_bytes=1e12, n=8)"   # 1 of 2 constraints met


def _line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if line == needle)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = toy.make_submission(tmp_path_factory.mktemp("views") / "s", MODULE, toy.WRONG_LETTER)
    notebook = folder / f"{toy.ASSIGNMENT_ID}.ipynb"
    nb = __import__("json").loads(notebook.read_text())
    nb["cells"].append({"cell_type": "code", "execution_count": None, "outputs": [], "metadata": {},
                        "source": DESIGN})
    notebook.write_text(__import__("json").dumps(nb))
    return grade_submission(ASSIGNMENT, folder, "viewer", config=toy.FAST)


def _hidden_inputs(student: str, item) -> list[dict]:
    """The inputs the hidden check of `item` draws for `student` (the simplest, one per edge of its
    domain, then hidden_examples random ones) that the reference accepts."""
    seed = seed_for(ASSIGNMENT.id, student, item.name, "hidden")
    drawn = sample_inputs(item.domain, seed, item.hidden_examples or toy.FAST.hidden_examples, edges=True)
    return [kw for kw in drawn if _reference_accepts(item.name, kw)]


def _reference_accepts(name: str, kwargs: dict) -> bool:
    try:
        getattr(C, name)(**kwargs)
    except (ValueError, ArithmeticError):
        return False
    return True


def shown(result: Result, name: str, view: str) -> list[str]:
    """The lines of one check's feedback as `view` shows it."""
    return next(t for t in result.view(view).tests if t.name == name).output.splitlines()


def everything(result: Result, view: str) -> str:
    return "\n".join(t.output for t in result.view(view).tests) + "\n" + result.output


# --- worked examples: public, the same in both views but for student text ---------------------------

def test_a_failed_worked_example_shows_the_call_the_value_and_the_expected_value(graded):
    ex = toy.ACT1
    got, want = _n_for_n_minus_1(**ex), C.ring_allreduce_time(**ex)
    call = (f"ring_allreduce_time(message_bytes={ex['message_bytes']!r}, n={ex['n']!r}, alpha_s={ex['alpha_s']!r}, "
            f"bandwidth={ex['bandwidth']!r})")
    for view in ("before", "after"):
        lines = shown(graded, "ring_allreduce_time: worked example (Act I)", view)
        assert lines[0] == f"{call} returned {got!r}, expected {want!r}", view
        # the first failing check names the wrong model, in both views (it says what is wrong, not a value)
        assert lines[1:] == ["Likely misconception: n latency steps instead of n - 1.",
                             "You counted n latency steps; a ring of n ranks takes n - 1 per phase.",
                             "(The lab discusses it in Act I, the ring.)"], view


def test_an_error_on_a_worked_example_is_its_type_and_the_students_own_line_before_the_due_date(graded):
    ex = toy.ACT1
    call = (f"tree_allreduce_time(message_bytes={ex['message_bytes']!r}, n={ex['n']!r}, alpha_s={ex['alpha_s']!r}, "
            f"bandwidth={ex['bandwidth']!r})")
    after = shown(graded, "tree_allreduce_time: worked example (Act I)", "after")
    assert after == [f"{call} raised ValueError: packed {ex['n']} {ex['message_bytes']} {ex['alpha_s']} {ex['bandwidth']}"]
    line = _line_of(MODULE, RAISE_LINE)
    before = shown(graded, "tree_allreduce_time: worked example (Act I)", "before")
    assert before == [f"{call} raised ValueError (collectives.py, line {line}: {RAISE_LINE.strip()})"]


# --- the hidden check: how many inputs differ, never the input or the reference's value --------------

def test_a_failed_hidden_check_says_how_many_inputs_differ_and_nothing_of_them_before_the_due_date(graded):
    before = shown(graded, "ring_allreduce_time: hidden checks", "before")
    assert len(before) == 1
    found = re.fullmatch(r"does not match the reference on (\d+) of (\d+) hidden inputs", before[0])
    assert found and 0 < int(found[1]) <= int(found[2]) == len(_hidden_inputs("viewer", RING)), before
    after = shown(graded, "ring_allreduce_time: hidden checks", "after")
    call = re.fullmatch(r"(ring_allreduce_time\(message_bytes=(.+), n=(.+), alpha_s=(.+), bandwidth=(.+)\)) returned (.+)",
                        after[0])
    assert call, after
    kwargs = dict(message_bytes=float(call[2]), n=int(call[3]), alpha_s=float(call[4]), bandwidth=float(call[5]))
    assert float(call[6]) == pytest.approx(_n_for_n_minus_1(**kwargs), rel=1e-12)
    expected = C.ring_allreduce_time(**kwargs)
    assert after[1] == f"expected {expected!r} (tolerance: relative {RING.rel_tol:g}, absolute {RING.abs_tol:g})"
    assert call[1] not in everything(graded, "before") and after[1] not in everything(graded, "before")


def test_an_error_on_a_hidden_input_is_its_type_and_line_never_its_message(graded):
    line = _line_of(MODULE, RAISE_LINE)
    before = shown(graded, "tree_allreduce_time: hidden checks", "before")
    drawn = len(_hidden_inputs("viewer", toy.ASSIGNMENT.functions[1]))
    assert before == [f"does not match the reference on {drawn} of {drawn} hidden inputs; on one it raised ValueError "
                      f"(collectives.py, line {line}: {RAISE_LINE.strip()})"]
    after = shown(graded, "tree_allreduce_time: hidden checks", "after")
    assert len(after) == 1 and re.fullmatch(r"tree_allreduce_time\(.*\) raised ValueError: packed .*", after[0])


WROTE = re.compile(r"packed \d|seen \d")   # what the student's code wrote at run time (its source says "packed {n}")


def test_nothing_the_students_code_wrote_reaches_the_before_view(graded):
    before, after = everything(graded, "before"), everything(graded, "after")
    assert "raised ValueError: packed 128" in after and re.search(r"it printed: seen \d", after)   # quoted (capped) after
    assert not WROTE.search(before), before


# --- properties: the statement always; a hidden one's counterexample and check after the due date -----

def test_a_failed_public_property_shows_its_statement_and_counterexample_in_both_views(graded):
    name = "ring_allreduce_time: zero for a single rank"
    for view in ("before", "after"):
        lines = shown(graded, name, view)
        assert lines[0] == "Property failed: With one rank there is nothing to reduce, so the time is 0."
        assert lines[1] == "Counterexample:"
        call = re.fullmatch(r"  ring_allreduce_time\(message_bytes=(.+), n=1, alpha_s=(.+), bandwidth=(.+)\) returned (.+)",
                            lines[2])
        assert call, (view, lines)
        kwargs = dict(message_bytes=float(call[1]), n=1, alpha_s=float(call[2]), bandwidth=float(call[3]))
        assert float(call[4]) == pytest.approx(_n_for_n_minus_1(**kwargs), rel=1e-12) and float(call[4]) != 0
        assert lines[3:] == ["Check: with n=1 the time must be 0"], (view, lines)


def test_a_failed_hidden_property_shows_only_its_statement_before_the_due_date(graded):
    name = f"ring_allreduce_time: {LATENCY_AT_ZERO}"
    assert shown(graded, name, "before") == [f"Property failed: {LATENCY_MEANING}"]
    after = shown(graded, name, "after")
    assert after[:2] == [f"Property failed: {LATENCY_MEANING}", "Counterexample:"]
    check = re.fullmatch(r"Check: got (.+), the reference's latency is (.+)", after[-1])
    assert check, after
    assert after[-1] not in everything(graded, "before")



# --- a check that stops the item (not implemented, a timeout): the input it stopped on -------------------

STOPS_OFF_EXAMPLE = toy.with_function(
    toy.reference_source(), "tree_allreduce_time",
    "def tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
    f"    if (message_bytes, n) == ({toy.ACT1['message_bytes']!r}, {toy.ACT1['n']!r}):\n"
    f"        return {C.tree_allreduce_time(**toy.ACT1)!r}\n"
    "    raise NotImplementedError\n")
STOPPED = "not implemented yet (raises NotImplementedError)"


def test_a_check_stopped_on_a_hidden_input_names_that_input_only_after_the_due_date(tmp_path):
    """A function that answers its worked example and stops everywhere else (not implemented; a timeout
    probe stops the same way): the hidden check fails on the input it stopped at, which the after view
    names and the before view never does (stopping on purpose would read the hidden inputs out)."""
    tree = dataclasses.replace(toy.ASSIGNMENT.functions[1], properties=[])
    assignment = dataclasses.replace(toy.ASSIGNMENT, functions=[tree])
    folder = toy.make_submission(tmp_path / "s", STOPS_OFF_EXAMPLE, toy.key)
    result = grade_submission(assignment, folder, "stopper", config=toy.FAST)
    assert shown(result, "tree_allreduce_time: worked example (Act I)", "before")[0] == (
        f"tree_allreduce_time(message_bytes={toy.ACT1['message_bytes']!r}, n={toy.ACT1['n']!r}, "
        f"alpha_s={toy.ACT1['alpha_s']!r}, bandwidth={toy.ACT1['bandwidth']!r}) = {C.tree_allreduce_time(**toy.ACT1)!r}")   # public: its input shown
    after = shown(result, "tree_allreduce_time: hidden checks", "after")
    call = re.fullmatch(re.escape(STOPPED) + r" on (tree_allreduce_time\(message_bytes=(.+), n=(.+), alpha_s=(.+), "
                        r"bandwidth=(.+)\))", after[0])
    assert call and len(after) == 1, after
    kwargs = dict(message_bytes=float(call[2]), n=int(call[3]), alpha_s=float(call[4]), bandwidth=float(call[5]))
    assert kwargs in _hidden_inputs("stopper", tree)
    assert shown(result, "tree_allreduce_time: hidden checks", "before") == [STOPPED]
    assert call[1] not in everything(result, "before")

# --- questions: the verdict and hint; the key and the explanations after the due date -----------------

def test_a_wrong_answer_names_neither_the_key_nor_any_explanation_before_the_due_date(graded):
    q = ASSIGNMENT.questions[0]
    verdict = (f"answered {toy.WRONG_LETTER} (recorded at its reveal): a committed prediction earns its points; "
               f"it was not the best answer. Hint: {q.hint}")   # predictions = "commitment", the default
    assert shown(graded, "act1_prediction: prediction", "before") == [verdict]
    assert shown(graded, "act1_prediction: prediction", "after") == [
        verdict, f"Why {toy.WRONG_LETTER}: {WHY[toy.WRONG_LETTER]}", f"The best answer is {q.key}: {WHY[q.key]}",
        f"Takeaway: {TAKEAWAY}"]
    before = everything(graded, "before")
    assert not any(why in before for why in WHY.values()) and "best answer is" not in before and TAKEAWAY not in before


def test_a_right_answer_shows_its_own_explanation_and_the_takeaway_in_both_views(tmp_path):
    folder = toy.make_submission(tmp_path / "r", toy.reference_source(), toy.key)
    result = grade_submission(ASSIGNMENT, folder, "right", config=toy.FAST)
    for view in ("before", "after"):
        assert shown(result, "act1_prediction: prediction", view) == [
            f"answered {toy.key} (recorded at its reveal): a committed prediction earns its points; it was the best answer",
            f"Why {toy.key}: {WHY[toy.key]}", f"Takeaway: {TAKEAWAY}"]


# --- a design challenge: met or missed; its numbers after the due date --------------------------------

def test_a_design_shows_which_constraints_it_meets_and_its_numbers_only_after_the_due_date(graded):
    ring = C.ring_allreduce_time(1e12, 8, 5e-6, 50e9)
    head = "design message_bytes=1000000000000.0 n=8: 1 of 2 constraints met"
    assert shown(graded, "toy_plan: design challenge", "before") == [
        head, "  met: at least two ranks", "  MISSED: one ring AllReduce within a second",
        "(the numbers your design gives are shown after the due date)"]
    assert shown(graded, "toy_plan: design challenge", "after") == [
        head, "  met: at least two ranks: 8 ranks",
        f"  MISSED: one ring AllReduce within a second: ring AllReduce takes {ring:.6g} s; the reference's time is {ring!r}"]


# --- the knobs of [feedback.before] ----------------------------------------------------------------

HIDDEN_PROPERTY, HIDDEN_CHECK = f"ring_allreduce_time: {LATENCY_AT_ZERO}", "ring_allreduce_time: hidden checks"


def before_parts(r: Result) -> dict[str, tuple[bool, bool]]:
    """Each knob's part of the before view of `r`, as (any of it shown, all of it shown), read from
    markers no other knob's part holds; "hidden_call" is the hidden check's failing input, which the
    reference's value there comes with, and the student's value there (hidden_inputs or reference_values
    shows them)."""
    before = everything(r, "before")
    check = "\n".join(shown(r, HIDDEN_CHECK, "before"))
    prop = "\n".join(shown(r, HIDDEN_PROPERTY, "before"))
    markers = {
        "keys": [f"The best answer is {toy.key}" in before, f"Takeaway: {TAKEAWAY}" in before],
        "explanations": [WHY[toy.WRONG_LETTER] in before],
        "reference_values": ["the reference's latency is" in before, "the reference's time is" in before,
                             re.search(r"^expected ", check, re.M) is not None],
        "hidden_inputs": ["Counterexample:" in prop],
        "hidden_call": [re.search(r"one of them:\nring_allreduce_time\(.*\) returned ", check) is not None],
        "student_text": ["raised ValueError: packed" in before, re.search(r"it printed: seen \d", before) is not None],
    }
    return {part: (any(found), all(found)) for part, found in markers.items()}


# what each setting of [feedback.before] may add to the before view, beyond its own part
ALSO = {"reference_values": {"hidden_call"}, "hidden_inputs": {"hidden_call"}}


@pytest.mark.parametrize("knobs", [("keys",), ("explanations",), ("reference_values",), ("hidden_inputs",),
                                   ("student_text",), ("keys", "explanations")], ids="+".join)
def test_each_knob_of_the_before_view_shows_its_part_and_alone_nothing_of_the_others(tmp_path, graded, knobs):
    """Off by default, each knob of [feedback.before] shows all of its part when on, and alone nothing
    of any other knob's part (one knob alone showing the reference's values before the due date is the
    break this holds); keys with explanations also give the best answer's own explanation."""
    assert not any(seen for seen, _ in before_parts(graded).values())   # off by default
    folder = toy.make_submission(tmp_path / "k", MODULE, toy.WRONG_LETTER)
    notebook = folder / f"{toy.ASSIGNMENT_ID}.ipynb"
    nb = __import__("json").loads(notebook.read_text())
    nb["cells"].append({"cell_type": "code", "execution_count": None, "outputs": [], "metadata": {}, "source": DESIGN})
    notebook.write_text(__import__("json").dumps(nb))
    config = dataclasses.replace(toy.FAST, feedback=FeedbackPolicy(before=BeforeView(**dict.fromkeys(knobs, True))))
    result = grade_submission(ASSIGNMENT, folder, "viewer", config=config)
    parts = before_parts(result)
    allowed = set(knobs).union(*(ALSO.get(k, set()) for k in knobs))
    assert all(parts[k][1] for k in knobs), parts
    assert {part for part, (seen, _) in parts.items() if seen} <= allowed, parts
    key_why = f"The best answer is {toy.key}: {WHY[toy.key]}"
    assert (key_why in everything(result, "before")) == ({"keys", "explanations"} <= set(knobs))
    assert [t.score for t in result.tests] == [t.score for t in graded.tests]   # a view never changes a score


# --- the record keeps both views; a page renders one -------------------------------------------------

def test_the_record_keeps_both_views_and_a_page_renders_the_one_asked(graded):
    import html
    import json
    data = json.loads(json.dumps(graded.to_gradescope()))
    back = Result.from_gradescope(data)
    assert [t.output for t in back.view("after").tests] == [t.output for t in graded.view("after").tests]
    assert [t.output for t in back.view("before").tests] == [t.output for t in graded.view("before").tests]
    before = html.unescape(render_feedback("Toy", "viewer", data, "before"))
    after = html.unescape(render_feedback("Toy", "viewer", data, "after"))
    assert "The best answer is" in after and WROTE.search(after)
    assert "The best answer is" not in before and not WROTE.search(before)
    assert "Feedback before the due date" in before and "Feedback before the due date" not in after


def test_the_submissions_notes_are_in_one_grade_cell_not_every_one(graded):
    """A grade cell (nbgrader) shows its item's tests; the notes on the whole submission (how it ran, files
    not graded) come once, in the first item's cell, never repeated in every cell."""
    from autograder.engine.views import item_feedback

    result = graded.view("after")
    notes = result.output.rstrip()
    items = list(result.item_scores())
    assert notes and len(items) >= 3, (notes, items)
    cells = {item: item_feedback(result, item) for item in items}
    assert notes in cells[items[0]]
    assert [item for item, text in cells.items() if notes in text] == [items[0]], cells
    assert not any(notes in item_feedback(result, item, notes=False) for item in items)


# --- the order: no public check runs in a worker that has seen a hidden input ------------------------

def test_every_public_check_runs_before_any_hidden_input_reaches_the_worker(tmp_path, monkeypatch):
    """What the before view shows of a public check (a returned value, a counterexample) cannot carry
    a hidden input the module saw: every item's worked examples and public properties run first."""
    from autograder.engine import checks
    ran = []
    for name, public in (("run_example", lambda *a: True), ("run_hidden", lambda *a: False),
                         ("run_property", lambda fn, prop, *a: prop.public)):
        real = getattr(checks, name)
        monkeypatch.setattr(checks, name, lambda *a, real=real, public=public, **k: (
            ran.append((a[0].name, public(*a))), real(*a, **k))[1])
    folder = toy.make_submission(tmp_path / "o", MODULE, toy.WRONG_LETTER)
    grade_submission(ASSIGNMENT, folder, "order", config=toy.FAST)
    publics = [p for _, p in ran]
    assert publics.count(False) == len(ASSIGNMENT.functions) + 1   # each hidden check and the hidden property
    assert publics == sorted(publics, reverse=True), ran          # every True before every False
    assert {item for item, p in ran if p} == {f.name for f in ASSIGNMENT.functions}


# --- the policy's settings: one line naming the file, the key and the value ---------------------------

@pytest.mark.parametrize("toml, said", [
    ('[feedback]\nnative = "later"\n', "[feedback] native = 'later': must be one of \"before\" or \"after\""),
    ('[feedback]\ngradescope = "never"\n', "[feedback] gradescope = 'never': must be one of \"before\" or \"after\" or \"due_date\""),
    ('[feedback]\nsubmission_limit = -1\n', "[feedback] submission_limit = -1: must be 0 or more"),
    ('[feedback]\nshow_keys = true\n', "unknown [feedback] keys ['show_keys']"),
    ('[feedback.before]\nkeys = "yes"\n', "[feedback.before] keys = 'yes': must be true or false"),
    ('[feedback.before]\nanswers = true\n', "unknown [feedback.before] keys ['answers']"),
])
def test_a_bad_feedback_setting_stops_grading_with_one_line(tmp_path, toml, said):
    import os
    import subprocess
    import sys
    from pathlib import Path
    (tmp_path / "scalelabs.toml").write_text(toml)
    folder = toy.make_submission(tmp_path / "s", toy.reference_source(), toy.key)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(toy.__file__).parent),
                                                                    os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "-c", "from autograder.cli import main; main()", "grade", "toy:ASSIGNMENT", "--student", "s1",
                           str(folder)], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {tmp_path / 'scalelabs.toml'}: {said}"), lines


def test_a_courses_before_view_settings_are_read_as_written(tmp_path):
    """A course that turns knobs of [feedback.before] on (the table as docs/staff.md writes it) grades
    with them, and the Gradescope zip, which carries the same table, reads them too: neither refuses
    the table, drops a knob or turns on one it does not name."""
    from autograder.doors.gradescope_settings import feedback_of
    from autograder.engine.config import load_config

    toml = tmp_path / "scalelabs.toml"
    toml.write_text('[feedback]\nnative = "before"\n\n[feedback.before]\nkeys = true\nstudent_text = true\n')
    wanted = FeedbackPolicy(native="before", before=BeforeView(keys=True, student_text=True))
    assert load_config(toml).feedback == wanted
    assert feedback_of({"feedback": {"native": "before", "before": {"keys": True, "student_text": True}}}) == wanted
