"""A lab's Canvas column is matched by its title; Canvas's importer reads a header ending in " (digits)" as
"title (assignment id)" (canvas-lms Assignment.title_and_id, /\\A(.*)\\s\\((\\d+)\\)\\z/): such a title
would land in another assignment's column, or create one without the number (issue 42's review)."""
from __future__ import annotations

import re
from dataclasses import replace

import pytest

from autograder.classroom.canvas import column_name
from labs import load

LAB = load("lab06_collectives")
CANVAS_TITLE_AND_ID = re.compile(r"\A(.*)\s\((\d+)\)\Z")     # Assignment.title_and_id, as Canvas reads a header


@pytest.mark.parametrize("title", ["Roofline (2024)", "Lab 6 (3)", "Collectives  (12)"])
def test_a_title_canvas_reads_as_an_assignment_id_is_refused_by_name(title):
    assert CANVAS_TITLE_AND_ID.match(title)
    with pytest.raises(ValueError, match=re.escape(f"Canvas would read {title!r} as") + ".*assignment id"):
        column_name(replace(LAB, title=title))


@pytest.mark.parametrize("title", ["Lab 09: Amdahl at scale (2x)", "Lab (12) again", "Lab 06 (v2)"])
def test_a_title_with_parentheses_canvas_does_not_read_as_an_id_is_kept(title):
    assert not CANVAS_TITLE_AND_ID.match(title)
    assert column_name(replace(LAB, title=title)) == title


def test_every_lab_title_is_a_column_canvas_matches_by_title():
    from labs import all_assignments
    for lab in all_assignments().values():
        assert not CANVAS_TITLE_AND_ID.match(column_name(lab)), lab.id
