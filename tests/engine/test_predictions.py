"""Honest predictions, engine side: the first answer recorded at a prediction's reveal is graded,
a later change is reported and does not count; a prediction without a record is unrecorded (0, said
so, never graded from its answer cell); commitment mode is the default; hostile records never crash
grading or score above the question's points; explanations and the takeaway follow the grade."""
from __future__ import annotations

import dataclasses
import json

import pytest

import toy
from autograder.engine.config import GradingConfig, config_from_table, load_config
from autograder.engine.questions import UNRECORDED, grade_question, grade_questions
from autograder.engine.submission import RECORD_FILE, RECORD_MIMETYPE, read_submission
from autograder.engine.spec import Option, Question, letters

Q = toy.ASSIGNMENT.question("act1_prediction")
KEY, WRONG = toy.key, toy.WRONG_LETTER
OTHER = next(letter for letter in Q.options if letter not in (KEY, WRONG))
WHY = {letter: f"option {letter} explained in words a student reads" for letter in Q.options}
Q_WHY = dataclasses.replace(Q, why=WHY)


def record_output(qid: str = "act1_prediction", answer="B") -> dict:
    return {"output_type": "display_data", "metadata": {},
            "data": {RECORD_MIMETYPE: {"question": qid, "answer": answer},
                     "text/plain": f"Your prediction for {qid} is recorded as {answer}"}}


def reveal_cell(*outputs) -> dict:
    return {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": "reveal()",
            "outputs": list(outputs)}


def submission(tmp_path, answer: str | None, *reveals: dict, name: str = "s"):
    """A toy submission whose notebook holds the answer cell then the given reveal cells."""
    folder = toy.make_submission(tmp_path / name, None, answer, recorded=False)
    path = folder / f"{toy.ASSIGNMENT_ID}.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"].extend(reveals)
    path.write_text(json.dumps(nb))
    return folder


def grade(folder, question=Q, mode="correctness"):
    return grade_question(question, folder, toy.ASSIGNMENT_ID, mode)


def test_a_change_after_the_reveal_does_not_count(tmp_path):
    early = submission(tmp_path, WRONG, reveal_cell(record_output(answer=KEY)), name="early")
    score, text, letter, _brief = grade(early)
    assert (score, letter) == (Q.points, KEY)
    assert f"you changed act1_prediction from {KEY} to {WRONG} after its reveal; your first answer {KEY} counts" in text
    late = submission(tmp_path, KEY, reveal_cell(record_output(answer=WRONG)), name="late")
    score, text, letter, _brief = grade(late)
    assert (score, letter) == (0, WRONG)
    assert f"from {WRONG} to {KEY} after its reveal" in text and Q.hint in text


def test_an_unchanged_answer_is_graded_without_a_change_note(tmp_path):
    folder = submission(tmp_path, KEY, reveal_cell(record_output(answer=KEY)))
    score, text, _, _brief = grade(folder)
    assert score == Q.points and "changed" not in text and "recorded at its reveal" in text


def unrecorded(graded, cell=None) -> bool:
    """The grade of a prediction without a record: nothing earned, no letter graded, said so."""
    said = f"(your answer cell says {cell})" if cell else "(your answer cell: "
    return (graded.score, graded.answer) == (0, "") and graded.feedback.startswith(UNRECORDED) and said in graded.feedback


@pytest.mark.parametrize("mode", ["correctness", "commitment"])
def test_no_record_is_unrecorded_never_graded_from_the_answer_cell(tmp_path, mode):
    """The reveal never ran, or the outputs were cleared and the file is gone: the key in the answer
    cell earns nothing (it could have been written after seeing the reveal), in either mode."""
    for answer in (KEY, WRONG):
        graded = grade(submission(tmp_path, answer, name=answer), mode=mode)
        assert unrecorded(graded, answer), graded
        assert "Run the notebook from the top and submit it with its outputs" in graded.feedback
    assert unrecorded(grade(toy.make_submission(tmp_path / "none", None, None, recorded=False), mode=mode))


def test_the_first_record_in_notebook_order_counts(tmp_path):
    folder = submission(tmp_path, OTHER, reveal_cell(record_output(answer=WRONG)),
                        reveal_cell(record_output(answer=KEY), record_output(answer=KEY)))
    assert grade(folder)[:1] == (0,) and grade(folder).answer == WRONG


def test_a_record_survives_a_cleared_answer_cell(tmp_path):
    folder = submission(tmp_path, None, reveal_cell(record_output(answer=KEY)))
    score, text, _, _brief = grade(folder)
    assert score == Q.points and "no longer gives a letter" in text


def test_the_record_file_counts_where_the_outputs_were_cleared(tmp_path):
    """Clearing the outputs after the reveal does not undo the record: the file the reveal wrote
    beside the notebook holds it. A record in the notebook comes first."""
    cleared = submission(tmp_path, WRONG, reveal_cell(), name="cleared")
    (cleared / RECORD_FILE).write_text(json.dumps({"act1_prediction": KEY.lower(), "act9_prediction": "A"}))
    graded = grade(cleared)
    assert (graded.score, graded.answer) == (Q.points, KEY) and f"from {KEY} to {WRONG}" in graded.feedback
    both = submission(tmp_path, KEY, reveal_cell(record_output(answer=WRONG)), name="both")
    (both / RECORD_FILE).write_text(json.dumps({"act1_prediction": KEY}))
    assert grade(both).answer == WRONG


@pytest.mark.parametrize("content", ["[1]", "{", '{"act1_prediction": 3}', '{"act1_prediction": "Z"}',
                                     '{"act1_prediction": "' + "C" * 100 + '"}', "[" * 100_000 + "]" * 100_000,
                                     '{"act1_prediction": "C", "x": "' + "y" * 70_000 + '"}', "link", "dir"])
def test_a_malformed_record_file_is_ignored(tmp_path, content):
    folder = submission(tmp_path, WRONG)
    if content == "link":  # a record file linked elsewhere is not read
        (tmp_path / "elsewhere.json").write_text(json.dumps({"act1_prediction": KEY}))
        (folder / RECORD_FILE).symlink_to(tmp_path / "elsewhere.json")
    elif content == "dir":
        (folder / RECORD_FILE).mkdir()
    else:
        (folder / RECORD_FILE).write_text(content.replace('"C"', f'"{KEY}"'))
    assert unrecorded(grade(folder), WRONG)


@pytest.mark.parametrize("output", [
    {"output_type": "display_data", "data": {RECORD_MIMETYPE: "act1_prediction=B"}},       # not an object
    {"output_type": "display_data", "data": {RECORD_MIMETYPE: {"question": "act1_prediction"}}},
    {"output_type": "display_data", "data": {RECORD_MIMETYPE: {"question": "act1_prediction", "answer": 1}}},
    {"output_type": "display_data", "data": {RECORD_MIMETYPE: {"question": "act1_prediction", "answer": "Z"}}},
    {"output_type": "display_data", "data": {RECORD_MIMETYPE: {"question": "act1_prediction", "answer": "AB"}}},
    {"output_type": "display_data", "data": {RECORD_MIMETYPE: {"question": "act1_prediction",
                                                               "answer": "B" * 100_000}}},
    {"output_type": "display_data", "data": {RECORD_MIMETYPE: {"question": ["act1_prediction"], "answer": "B"}}},
    {"output_type": "stream", "name": "stdout", "data": {RECORD_MIMETYPE: {"question": "act1_prediction",
                                                                           "answer": "B"}}},
    {"output_type": "display_data", "data": [RECORD_MIMETYPE]},
    {"output_type": "display_data"},
    "not an output",
    None,
])
def test_malformed_records_are_ignored(tmp_path, output):
    """A malformed record is no record: the prediction is unrecorded, nothing crashes."""
    if isinstance(output, dict) and isinstance(output.get("data"), dict) and isinstance(
            output["data"].get(RECORD_MIMETYPE), dict) and output["data"][RECORD_MIMETYPE].get("answer") == "B":
        output["data"][RECORD_MIMETYPE]["answer"] = KEY  # the forms that would count if well-formed
    folder = submission(tmp_path, WRONG, reveal_cell(output))
    grade_ = grade(folder, mode="commitment")
    assert unrecorded(grade_, WRONG) and "changed" not in grade_.feedback


@pytest.mark.parametrize("outputs", ["not a list", {"0": {}}, 42])
def test_outputs_of_the_wrong_shape_are_ignored(tmp_path, outputs):
    cell = reveal_cell()
    cell["outputs"] = outputs
    assert unrecorded(grade(submission(tmp_path, KEY, cell)), KEY)


def test_a_flood_of_records_is_bounded_and_scores_at_most_the_points(tmp_path):
    """50,000 invalid records then a valid one in one cell, and 3,000 cells: only the first outputs
    of each cell are looked at (the valid record after the flood is not), the grade is in [0, points]."""
    flood = reveal_cell(*[record_output(answer="Z")] * 50_000, record_output(answer=WRONG))
    many = [reveal_cell(record_output(answer=KEY)) for _ in range(3000)]
    folder = submission(tmp_path, WRONG, flood, *many)
    assert (folder / f"{toy.ASSIGNMENT_ID}.ipynb").stat().st_size > 5_000_000
    graded = grade(folder)
    assert 0 <= graded.score <= Q.points
    assert graded.answer == KEY  # the first valid record looked at: in the first cell of the 3,000
    several = grade_questions([Q, Q], read_submission(folder, toy.ASSIGNMENT_ID), "commitment")
    assert all(0 <= g.score <= Q.points for g in several)


def test_records_of_other_questions_and_of_reflections_do_not_count(tmp_path):
    reflection = dataclasses.replace(Q, kind="reflection")
    folder = submission(tmp_path, WRONG, reveal_cell(record_output("act2_prediction", KEY)),
                        reveal_cell(record_output("act1_prediction", KEY)))
    assert grade(folder, reflection)[0] == 0  # reflections: the answer cell, as today
    assert grade(folder)[0] == Q.points


def test_commitment_mode_credits_any_recorded_option(tmp_path):
    """A prediction recorded as wrong earns its points in commitment mode, whatever the answer cell
    says later; the feedback still says whether it was the best answer."""
    recorded_wrong = submission(tmp_path, KEY, reveal_cell(record_output(answer=WRONG)), name="rw")
    score, text, letter, _brief = grade(recorded_wrong, mode="commitment")
    assert (score, letter) == (Q.points, WRONG)
    assert "it was not the best answer" in text and f"from {WRONG} to {KEY}" in text
    recorded_key = submission(tmp_path, WRONG, reveal_cell(record_output(answer=KEY)), name="rk")
    assert "it was the best answer" in grade(recorded_key, mode="commitment").feedback
    answered_wrong = submission(tmp_path, WRONG, name="aw")   # no reveal cell: never recorded
    assert unrecorded(grade(answered_wrong, mode="commitment"), WRONG)   # answered, never recorded
    for source in ("act1_prediction = None", 'act1_prediction = "Z"', 'act1_prediction = "A" + ""'):
        folder = toy.make_submission(tmp_path / f"bad{len(source)}", None, answer_source=source)
        assert grade(folder, mode="commitment")[0] == 0, source
    reflection = dataclasses.replace(Q, kind="reflection")
    assert grade(answered_wrong, reflection, mode="commitment")[0] == 0  # reflections: correctness
    assert grade(submission(tmp_path, KEY, name="rkey"), reflection, mode="commitment")[0] == Q.points


def test_explanations_of_the_pick_and_the_key_follow_the_grade(tmp_path):
    wrong = grade(submission(tmp_path, KEY, reveal_cell(record_output(answer=WRONG)), name="w"), Q_WHY).feedback
    assert f"Why {WRONG}: {WHY[WRONG]}" in wrong and f"The best answer is {KEY}: {WHY[KEY]}" in wrong
    assert WHY[OTHER] not in wrong
    right = grade(submission(tmp_path, KEY, reveal_cell(record_output(answer=KEY)), name="r"), Q_WHY).feedback
    assert f"Why {KEY}: {WHY[KEY]}" in right and "The best answer" not in right
    unanswered = grade(toy.make_submission(tmp_path / "u", None, None), Q_WHY).feedback
    assert not any(text in unanswered for text in WHY.values())


def test_an_unrecorded_predictions_before_view_keeps_the_key(tmp_path):
    """An unrecorded wrong answer, before the due date (where the student may still run the reveal and
    resubmit): the feedback a student reads says it is unrecorded and never names the best answer, its
    explanation or the takeaway; after the due date it does."""
    question = dataclasses.replace(Q_WHY, takeaway="ring keeps every link busy at once")
    graded = grade(submission(tmp_path, WRONG), question)
    assert unrecorded(graded, WRONG) and f"The best answer is {KEY}: {WHY[KEY]}" in graded.feedback
    before = graded.brief if graded.brief is not None else graded.feedback
    assert before.startswith(UNRECORDED) and "Run the notebook from the top" in before
    assert f"The best answer is {KEY}" not in before and WHY[KEY] not in before, before
    assert question.takeaway not in before, before


def test_a_takeaway_follows_the_grade_never_the_notebook(tmp_path):
    """A reflection's takeaway states its answer: it is shown with the grade (right or wrong), and
    the built notebook does not carry it. Before the due date (the brief view, where a student may
    resubmit) a wrong answer's grade leaves it out: it would hand over the key."""
    takeaway = "ring keeps every link busy at once, which is why it reaches the bound"
    reflection = dataclasses.replace(Q, kind="reflection", takeaway=takeaway)
    for answer in (KEY, WRONG):
        graded = grade(submission(tmp_path, answer, name=answer), reflection)
        assert f"Takeaway: {takeaway}" in graded.feedback
        before = graded.brief if graded.brief is not None else graded.feedback
        assert (takeaway in before) == (answer == KEY), (answer, before)
    from autograder.build.notebook import build_notebook
    a = dataclasses.replace(toy.ASSIGNMENT, questions=[reflection])
    assert takeaway not in json.dumps(build_notebook(a))


def test_the_native_grade_reads_the_mode_from_the_config(tmp_path):
    folder = submission(tmp_path, KEY, reveal_cell(record_output(answer=WRONG)))
    questions_only = dataclasses.replace(toy.ASSIGNMENT, functions=[])
    from autograder.engine.grade import grade_submission
    scores = {mode: grade_submission(questions_only, folder, "s", config=dataclasses.replace(
        toy.FAST, predictions=mode), sandbox="unsandboxed").item_scores()["act1_prediction"][0]
        for mode in ("correctness", "commitment")}
    assert scores == {"correctness": 0, "commitment": Q.points}


def test_the_predictions_setting_is_validated(tmp_path, monkeypatch):
    assert GradingConfig().predictions == "commitment"   # the default: nothing to gain from a forged record
    toml = tmp_path / "scalelabs.toml"
    toml.write_text('[grading]\npredictions = "correctness"\n')
    assert load_config(toml).predictions == "correctness"
    toml.write_text('[grading]\npredictions = "effort"\n')
    with pytest.raises(ValueError, match=r"scalelabs.toml.*predictions = 'effort'.*\"correctness\" or \"commitment\""):
        load_config(toml)
    with pytest.raises(ValueError, match="predictions"):
        config_from_table({"predictions": 1}, "here")
    with pytest.raises(ValueError, match="predictions must be one of"):
        grade_questions([Q], read_submission(tmp_path, toy.ASSIGNMENT_ID), "effort")


def test_letters_lays_out_explanations_with_the_rotation():
    options, key, why = letters([Option("first", "why first"), Option("second", "why second"),
                                 Option("third", "why third")], key_index=1, offset=2)
    assert options == {"A": "third", "B": "first", "C": "second"} and key == "C"
    assert why == {"A": "why third", "B": "why first", "C": "why second"}
    assert letters(["first", "second"], 0, 1) == ({"A": "second", "B": "first"}, "B")
    with pytest.raises(ValueError, match="every option"):
        letters([Option("a", "why"), "b"], 0)
    with pytest.raises(ValueError, match="not options"):
        Question("q", "prediction", "?", {"A": "a"}, "A", 1, why={"E": "stray"})


def test_the_feedback_page_shows_the_explanations_of_the_pick_and_the_key(tmp_path):
    """The page a student reads after grading (what grade-batch writes) carries both explanations."""
    import html
    from autograder.classroom.feedback import render_feedback
    from autograder.engine.grade import grade_submission
    questions_only = dataclasses.replace(toy.ASSIGNMENT, functions=[], questions=[Q_WHY])
    result = grade_submission(questions_only, submission(tmp_path, WRONG), "s", config=toy.FAST,
                              sandbox="unsandboxed")
    page = html.unescape(render_feedback(toy.ASSIGNMENT.title, "s", result.to_gradescope()))
    assert f"Why {WRONG}: {WHY[WRONG]}" in page and f"The best answer is {KEY}: {WHY[KEY]}" in page
