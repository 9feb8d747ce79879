"""The give-away guard reads the notebook's text, so lint runs its figures drawn but not encoded
(autograder.author.kernel.figures_drawn_not_encoded): a figure that cannot draw still fails its cell,
as it would in the student's notebook, and every other savefig is the real one."""
from __future__ import annotations

import io

import pytest
from matplotlib.figure import Figure

from autograder.author.kernel import figures_drawn_not_encoded


def figure(title: str) -> Figure:
    fig = Figure(figsize=(4, 3), dpi=72, layout="constrained")
    fig.add_subplot().set_title(title)
    return fig


def test_a_figure_that_cannot_draw_still_fails_while_the_guard_reads():
    with figures_drawn_not_encoded():
        with pytest.raises(ValueError):          # matplotlib's mathtext parser refuses the title when drawn
            figure(r"$\frac{1}{$").savefig(io.BytesIO(), format="png")
        drawn = io.BytesIO()
        figure("bus bandwidth").savefig(drawn, format="png")
        assert drawn.getvalue() == b""           # drawn, not encoded: no picture for a reader of text


def test_every_other_savefig_is_the_real_one():
    with figures_drawn_not_encoded():
        pass
    real = io.BytesIO()
    figure("bus bandwidth").savefig(real, format="png")
    assert real.getvalue().startswith(b"\x89PNG")
