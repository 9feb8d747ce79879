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


ODD_IDS = ["mary.o'brien@uni.example", "mary.o`brien@uni.example", "=HYPERLINK(\"x\")", "+1 555", "12 34/5",
           "josé@uni.example", "-5", "../../etc/passwd", "a" * 300, "名前", "a\nb"]


def test_an_id_no_file_name_or_csv_cell_can_hold_is_mapped_to_a_safe_one_and_a_safe_one_stays():
    """Issue 37: Gradescope's ids cannot be renamed, so each is graded under safe_id(id): safe, the same
    on every call, distinct for distinct ids, readable where it can be; a safe id is itself."""
    from autograder.classroom.identity import safe_id
    mapped = [safe_id(i) for i in ODD_IDS]
    assert all(id_problem(m) is None for m in mapped), mapped
    assert len(set(mapped)) == len(ODD_IDS) and mapped == [safe_id(i) for i in ODD_IDS]
    assert mapped[0].startswith("mary.o_brien@uni.example-") and mapped[5].startswith("jose@uni.example-")
    for safe in ("3101", "ada.lovelace+cs249@uni.example", "A" * 128):
        assert safe_id(safe) == safe
    users = [{"sid": None, "email": ODD_IDS[0]}, {"sid": "3101"}]
    assert gradescope_ids({"users": users}) == sorted(["3101", mapped[0]])
    from autograder.doors.otter import student_of       # the otter door on Gradescope: the same rule
    assert student_of({"users": users[:1]}) == mapped[0] and student_of({"users": [{"sid": ODD_IDS[2]}]}) == mapped[2]
    assert gradescope_ids({":submitters": [{":sid": None, ":email": ODD_IDS[0]}]}) == [mapped[0]]
