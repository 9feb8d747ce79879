"""Dollar amounts in every markdown cell the builder writes are in the form JupyterLab shows as money
(`\\$`, checked in headless Chromium by tests/browser/test_notebooks_in_browser.py
::test_dollar_amounts_in_markdown_render_as_money_not_maths); a bare `$2` is refused at build time."""
from __future__ import annotations

import re

import pytest

from autograder.build.dollars import for_jupyterlab
from autograder.build.notebook import build_notebook
from labs import all_assignments, load

SINGLE_ESCAPED = re.compile(r"(?<!\\)\\\$")   # `\$`: markdown's escape, which JupyterLab still pairs as maths
BARE_MONEY = re.compile(r"(?<!\\)\$\d")


@pytest.mark.parametrize("assignment_id", sorted(all_assignments()))
def test_every_markdown_dollar_is_written_as_jupyterlab_shows_money(assignment_id):
    cells = [c for c in build_notebook(load(assignment_id)).cells if c.cell_type == "markdown"]
    wrong = [(c.id, m.group(0), c.source[max(0, m.start() - 30):m.end() + 10])
             for c in cells for m in [*SINGLE_ESCAPED.finditer(c.source), *BARE_MONEY.finditer(c.source)]]
    assert wrong == [], f"{assignment_id}: dollars JupyterLab would typeset as maths: {wrong}"


def test_lab01_act2_story_reads_its_price_as_money():
    from labs.lab01_scale.scenario import USD_PER_GPU_HOUR
    sources = [c.source for c in build_notebook(load("lab01_scale")).cells if c.cell_type == "markdown"]
    story = [s for s in sources if "## Act II" in s]
    assert story and f"on-demand cloud at \\\\${USD_PER_GPU_HOUR:.2f} per GPU-hour" in story[0], story[:1]


def test_a_bare_dollar_amount_is_refused_naming_where_and_the_line():
    with pytest.raises(ValueError, match=r"markdown cell md-007: line 2 .*'\$40"):
        for_jupyterlab("A fleet\nat $40 and $50 a GPU", "markdown cell md-007")
    assert for_jupyterlab(r"at \$40 and \\$50; $x^2$", "here") == r"at \\$40 and \\$50; $x^2$"
