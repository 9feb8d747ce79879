"""Answers are read from the notebook with ast, never run; the key is never shown."""
import pytest

import toy
from autograder.engine.questions import answer_cell, grade_question, parse_answer

Q = toy.ASSIGNMENT.question("act1_prediction")


@pytest.mark.parametrize("source, letter", [
    ('act1_prediction = "B"', "B"),
    ('act1_prediction = "C"  # my answer', "C"),
    ("# think first\nact1_prediction = 'a'\n", "A"),
])
def test_literal_answers(source, letter):
    assert parse_answer(source, "act1_prediction") == (letter, "")


@pytest.mark.parametrize("source, reason", [
    ("act1_prediction = None", "not answered"),
    ('act1_prediction = "A" if True else "B"', "not a literal"),
    ('act1_prediction = f"{chr(65)}"', "not a literal"),
    ("act1_prediction = chr(66)", "not a literal"),
    ("act1_prediction = MY_ANSWER", "not a literal"),
    ('act1_prediction = "A" + ""', "not a literal"),
    ("act1_prediction = 66", "not a literal"),
    ('x = 1\nact1_prediction = "A"', "something else"),
    ('act1_prediction = "A"\nprint(1)', "something else"),
    ('act1_prediction = ', "not short, valid Python"),
])
def test_non_literal_answers_score_zero_with_a_reason(source, reason):
    letter, why = parse_answer(source, "act1_prediction")
    assert letter is None and reason in why


def test_the_cell_with_the_grade_id_wins_over_other_assignments():
    cells = [
        {"cell_type": "code", "metadata": {}, "source": 'act1_prediction = "Z"'},
        {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "act1_prediction"}}, "source": 'act1_prediction = "B"'},
        {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "act1_prediction_test"}},
         "source": "assert act1_prediction in 'ABC'"},
    ]
    assert answer_cell(cells, "act1_prediction") == 'act1_prediction = "B"'


def test_found_by_pattern_without_metadata():
    cells = [{"cell_type": "code", "metadata": {}, "source": ["act1_prediction = ", '"C"']}]
    assert answer_cell(cells, "act1_prediction") == 'act1_prediction = "C"'


def test_right_wrong_missing(tmp_path):
    right = toy.make_submission(tmp_path / "r", None, toy.key)
    wrong = toy.make_submission(tmp_path / "w", None, toy.WRONG_LETTER)
    assert grade_question(Q, right, toy.ASSIGNMENT_ID, "correctness")[:3] == \
        (1.0, f"answered {toy.key} (recorded at its reveal): correct", toy.key)
    score, text, *_ = grade_question(Q, wrong, toy.ASSIGNMENT_ID, "correctness")
    assert score == 0 and Q.hint in text and f'"{toy.key}"' not in text and f" {toy.key} " not in text
    (wrong / f"{toy.ASSIGNMENT_ID}.ipynb").unlink()
    (wrong / "other.ipynb").write_text("{}")
    assert grade_question(Q, wrong, toy.ASSIGNMENT_ID, "correctness")[0] == 0  # the folder's only notebook, no answer cell
    (wrong / "other.ipynb").unlink()
    score, text, *_ = grade_question(Q, wrong, toy.ASSIGNMENT_ID, "correctness")
    assert score == 0 and "not in the submission" in text


def test_two_notebooks_of_other_names_are_named_not_called_missing(tmp_path):
    """A student who saved a copy ("-Copy1") and renamed the original was told the notebook is not in
    the submission; the feedback now names both and says what to submit."""
    sub = toy.make_submission(tmp_path / "s", None, toy.key)
    (sub / f"{toy.ASSIGNMENT_ID}.ipynb").rename(sub / f"{toy.ASSIGNMENT_ID}-Copy1.ipynb")
    (sub / "Untitled.ipynb").write_text("{}")
    score, text, *_ = grade_question(Q, sub, toy.ASSIGNMENT_ID)
    assert score == 0 and "not in the submission" in text
    assert f"cannot tell which of Untitled.ipynb, {toy.ASSIGNMENT_ID}-Copy1.ipynb it is" in text, text
    assert f"submit one, named {toy.ASSIGNMENT_ID}.ipynb" in text


def test_letter_outside_the_options(tmp_path):
    sub = toy.make_submission(tmp_path / "s", None, "Q")
    score, text, *_ = grade_question(Q, sub, toy.ASSIGNMENT_ID)
    assert score == 0 and "not one of the options" in text
