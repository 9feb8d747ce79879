"""Per-student HTML feedback pages (jinja2, autoescaped), rendered from the results.json dict.

Only what results.json already shows a student goes in, in one view of the course's feedback policy
(`[feedback] native`, autograder.engine.views): item scores and each check's output as that view
shows it, and the lateness recorded beside the score (a late penalty is a line of its own, the engine's
score unchanged): the raw score (before late work) and the final score (after it) are named as such.
Nothing from reference/ or the declaration's keys or hidden domains is passed to the
template.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from autograder.classroom.deadlines import final_score
from autograder.engine.results import Result

TEMPLATES = Path(__file__).with_name("templates")


@lru_cache(maxsize=None)
def page_templates():
    """The jinja2 environment of the staff and student pages (feedback, class report), built on first use
    (a single `scalelabs grade` renders no page)."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"]),
                       keep_trailing_newline=True)


def _status(score: float, max_score: float) -> str:
    if max_score and score >= max_score - 1e-9:
        return "full"
    return "partial" if score > 0 else "zero"


# what a page of each view says about itself
VIEW_NOTES = {"before": "Feedback before the due date: what failed, the worked examples and the public checks' "
                        "counterexamples. The best answers, the explanations, the reference's values at hidden "
                        "inputs and your code's own messages are shown after the due date.",
              "after": ""}


def render_feedback(title: str, student_id: str, results: dict, view: str = "after") -> str:
    """The HTML page for one student's Gradescope-shaped results dict, in `view` ("before" or "after")."""
    record = Result.from_gradescope(results).view(view)
    items = [{"name": item, "score": score, "max_score": max_score, "status": _status(score, max_score)}
             for item, (score, max_score) in record.item_scores().items()]
    tests = [{"name": t.name, "score": t.score, "max_score": t.max_score, "output": t.output,
              "status": _status(t.score, t.max_score)} for t in record.tests]
    max_score = record.max_score
    late = lateness(results)
    final = None if late is None else final_score(record.score, late.penalty_points(record.score)
                                                   if late.status == "late" else 0.0)
    return page_templates().get_template("feedback.html.j2").render(
        title=title, student=student_id, score=record.score, max_score=max_score, final=final,
        note=record.output, view_note=VIEW_NOTES[view], late=late_line(results, record.score, max_score),
        items=items, tests=tests)


def lateness(results: dict):
    """The Lateness a results dict records (None when its lab has no due date)."""
    from autograder.classroom.deadlines import Lateness

    meta = results.get("scalelabs") if isinstance(results.get("scalelabs"), dict) else {}
    return Lateness.from_json(meta.get("late"))


def late_line(results: dict, score: float, max_score: float) -> str:
    """The lateness paragraph of a results dict ("" when its lab has no due date)."""
    late = lateness(results)
    return late.line(score, max_score) if late else ""


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and os.replace, so a kill never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_feedback(path: Path, title: str, student_id: str, results: dict, view: str = "after") -> None:
    write_atomic(Path(path), render_feedback(title, student_id, results, view))


def rewrite_feedback(title: str, grades_dir: Path, view: str) -> list[Path]:
    """Render every student's page of a graded class again, in `view`, from its results/<student>.json
    (the record keeps both views: staff release the after view without regrading). The result then
    records the page's view and hash (grade-batch keeps a page whole in the view its result names).
    ValueError names a results file that cannot be read."""
    import hashlib
    import json

    grades_dir = Path(grades_dir)
    written = []
    for path in sorted((grades_dir / "results").glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            page = render_feedback(title, path.stem, data, view)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path} cannot be read as a scalelabs result: {exc}") from None
        target = grades_dir / "feedback" / f"{path.stem}.html"
        write_atomic(target, page)
        if isinstance(data.get("scalelabs"), dict):
            data["scalelabs"].update(view=view, feedback=hashlib.sha256(page.encode()).hexdigest())
            write_atomic(path, json.dumps(data, indent=1, sort_keys=True))
        written.append(target)
    return written
