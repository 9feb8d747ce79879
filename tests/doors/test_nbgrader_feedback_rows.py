"""nbgrader's feedback page names each row of its contents by the item (issue 41: Lab 06's page listed
19 rows "Test cell (Score: x / y)"). The course's nbgrader_config.py sets the exporter and template of
`nbgrader generate_feedback` (the whole door, generate_feedback on a collected class, runs in
tests/test_persona_pages.py); here the page is rendered from the released notebook with scores."""
from __future__ import annotations

import re

import nbformat
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from autograder.doors import nbgrader_feedback
from repo_copy import REPO

LAB = "lab06_collectives"


def test_the_courses_config_makes_generate_feedback_use_the_item_rows():
    config = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    assert config.GenerateFeedback.exporter_class is nbgrader_feedback.FeedbackExporter
    assert config.FeedbackExporter.template_name == nbgrader_feedback.TEMPLATE_NAME


def test_each_row_is_named_by_its_item_with_its_score():
    nb = nbformat.read(REPO / "release" / LAB / f"{LAB}.ipynb", as_version=4)
    items = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            meta["score"] = float(meta["points"]) / 2
            items.append(meta["grade_id"])
    config = Config()
    config.HTMLExporter.template_name = "feedback"      # what nbgrader sets (and formgrader's button forces)
    nbgrader_feedback.configure(config)
    config.HTMLExporter.extra_template_paths = [str(nbgrader_feedback.nbgrader_templates().parent / "static" /
                                                    "node_modules" / "bootstrap" / "dist" / "css")]
    html, _ = nbgrader_feedback.FeedbackExporter(config=config).from_notebook_node(
        nb, resources={"nbgrader": {"notebook": LAB, "score": 15, "max_score": 30, "late_penalty": 0}})
    toc = html[html.index('<div id="toc">'):html.index("</ol>")]
    rows = re.findall(r'<li><a href="#([^"]+)"><code>([^<]+)</code></a> \(Score: ([\d.]+) / ([\d.]+)\)</li>', toc)
    assert [r[0] for r in rows] == items and all(r[0] == r[1] for r in rows), toc
    assert len(items) == 19 and "Test cell" not in toc
    assert 'id="notebook-container"' in html and "ring_allreduce_time" in html.split("</ol>", 1)[1]   # the notebook below
