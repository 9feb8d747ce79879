"""`scalelabs demo`, the README's main job, on the shipped sample class of every lab (release/ as
committed; its staleness is tested in tests/release)."""
from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from autograder.classroom.demo import run
from autograder.classroom.gradebook import read_gradebook
from labs import all_assignments


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    console = Console(file=io.StringIO(), width=80)
    return run(out_dir=out, rebuild=False, console=console), console.file.getvalue()


def test_every_lab_and_student_is_graded_without_grader_errors(demo):
    result, _ = demo
    assert not result.failed
    assert set(result.scores) == set(all_assignments())
    for lab_id, per_student in result.scores.items():
        assert {"correct", "partly_wrong", "broken", "untouched", "wrong_predictions"} <= set(per_student), lab_id


def test_scores_are_what_the_sample_names_say(demo):
    result, _ = demo
    for lab_id, s in result.scores.items():
        top = all_assignments()[lab_id].total_points
        assert s["correct"] == (top, top), lab_id
        assert s["untouched"] == (0.0, top), lab_id
        assert 0 < s["partly_wrong"][0] < top and s["wrong_predictions"][0] < top, lab_id
        assert s["broken"][0] < s["partly_wrong"][0], lab_id


def test_gradebook_holds_each_students_item_scores_and_pages_exist(demo, gradebook_matches_results):
    result, printed = demo
    assert "correct" in printed and "feedback pages" in printed
    for lab_id, per_student in result.scores.items():
        gradebook_matches_results(result.db_url, all_assignments()[lab_id],
                                  result.out_dir / "grades" / lab_id / "results")
        book = read_gradebook(result.db_url, lab_id)
        for student, (score, _top) in per_student.items():
            assert sum(book[student].values()) == pytest.approx(score), (lab_id, student)
            assert (result.out_dir / "grades" / lab_id / "feedback" / f"{student}.html").is_file()
        report = json.loads((result.out_dir / "grades" / lab_id / "report.json").read_text())
        assert report["scores"] == pytest.approx({s: score for s, (score, _) in per_student.items()}), lab_id


def test_the_table_reads_whole_in_80_columns_and_says_what_it_shows(demo):
    """The issue's table was cut at 80 columns (`lab…`, `26/…`), a "—" unexplained, and nothing said the
    students were made up: every cell whole, every student and score readable, the caption saying so."""
    result, printed = demo
    table = printed[:printed.index("gradebook:")]
    assert "…" not in table, table
    assert max(len(line) for line in table.splitlines()) <= 80, table
    for lab_id, per_student in result.scores.items():
        assert lab_id.split("_")[0] in table and f"/{all_assignments()[lab_id].total_points:g}" in table, lab_id
        for student, (score, _) in per_student.items():
            row = next(line for line in table.splitlines() if line.startswith(f"│ {student} "))
            assert f"{score:.3g}" in row, (student, row)
    words = " ".join(table.split())
    assert "synthetic" in words and "— : the lab has no such sample student" in words, words
