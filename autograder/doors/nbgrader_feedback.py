"""nbgrader's feedback page with its rows named by item.

nbgrader's own template lists every grade cell as "Test cell (Score: x / y)": nineteen identical
rows for Lab 06. The course's nbgrader_config.py makes `nbgrader generate_feedback` (and formgrader's
button) export with `FeedbackExporter` and this package's template (templates/scalelabs_feedback/):
nbgrader's page, extended, its table of contents naming each row by the item's id, as the notebook,
scalelabs' own feedback and Gradescope name it.
"""
from __future__ import annotations

from pathlib import Path

from jinja2 import FileSystemLoader, PrefixLoader
from nbconvert.exporters import HTMLExporter

TEMPLATE_NAME = "scalelabs_feedback"
TEMPLATES = Path(__file__).resolve().parent / "templates"


def nbgrader_templates() -> Path:
    import nbgrader

    return Path(nbgrader.__file__).resolve().parent / "server_extensions" / "formgrader" / "templates"


class FeedbackExporter(HTMLExporter):
    """nbgrader's HTML exporter, able to extend nbgrader's own feedback page by the name
    `nbgrader/feedback/index.html.j2` (which the course's template, found first, shadows as
    `index.html.j2`)."""

    def _extra_loaders_default(self):
        return [PrefixLoader({"nbgrader": FileSystemLoader(str(nbgrader_templates()))})]


def configure(c) -> None:
    """nbgrader_config.py's lines: the exporter and template of `nbgrader generate_feedback`. Set on
    FeedbackExporter, so they win over the HTMLExporter settings nbgrader and formgrader make."""
    c.GenerateFeedback.exporter_class = FeedbackExporter
    c.FeedbackExporter.template_name = TEMPLATE_NAME
    c.FeedbackExporter.extra_template_basedirs = [str(TEMPLATES), str(nbgrader_templates())]
