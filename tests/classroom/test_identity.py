"""Who a submission is (autograder.classroom.identity): the safe alphabet at its documented bounds, and a
Gradescope submitter's id (sid first, then email) in both of Gradescope's spellings. No grading here (the
doors: tests/doors/test_gradescope_identity.py)."""
from __future__ import annotations

import pytest

from autograder.classroom.identity import gradescope_ids, group_id, id_problem, read_export, submitter_id


@pytest.mark.parametrize("student", ["a", "A" * 128, "ada.lovelace+cs249@uni.example", "s_1-2", "7"])
def test_ids_in_the_safe_alphabet_up_to_128_characters(student):
    assert id_problem(student) is None


@pytest.mark.parametrize("student", ["A" * 129, "", ".hidden", "-1", "@me", "_x", "a/b", "../a", "a b", "é", "=1+1",
                                     "a\n", None, 12])
def test_anything_else_is_refused_in_one_line(student):
    problem = id_problem(student, "folder")
    assert problem.startswith("folder ") and "is not a safe student id" in problem and "\n" not in problem


def test_a_submitter_is_their_sid_else_their_email_in_either_spelling():
    assert submitter_id({"sid": "3101", "email": "ada@uni.example"}) == "3101"
    assert submitter_id({":sid": 3101, ":email": "ada@uni.example"}) == "3101"     # the export's YAML: a number
    assert submitter_id({"sid": None, "email": " cy@uni.example "}) == "cy@uni.example"
    assert submitter_id({":sid": "", ":email": "cy@uni.example"}) == "cy@uni.example"
    assert submitter_id({"name": "nobody"}) == "" and submitter_id("3101") == ""


def test_a_groups_ids_are_sorted_and_unique_and_it_is_graded_under_the_smallest():
    users = [{"sid": "3120"}, {"sid": "3105"}, {"sid": "3120"}, {"email": ""}]
    assert gradescope_ids({"users": users}) == ["3105", "3120"]
    assert gradescope_ids({":submitters": [{":sid": "9"}, {":sid": "10"}]}) == ["10", "9"]   # text order, as ids
    assert group_id(gradescope_ids({"users": list(reversed(users))})) == "3105"
    assert gradescope_ids(None) == [] and gradescope_ids({"users": "3105"}) == []


def test_an_export_reads_its_submitters_score_time_and_results(tmp_path):
    (tmp_path / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :sid: '3101'\n    :email: a@x\n  :score: 7.5\n"
        "  :created_at: 2026-11-20 10:00:00.000000000 -08:00\n  :results:\n    score: 7.5\n"
        "submission_2:\n  :submitters: []\n")
    export = read_export(tmp_path)
    assert export["submission_1"].students == ["3101"] and export["submission_1"].score == 7.5
    assert export["submission_1"].created_at is not None and export["submission_1"].results == {"score": 7.5}
    assert export["submission_2"].students == [] and export["submission_2"].score is None
    assert read_export(tmp_path / "nowhere") is None
