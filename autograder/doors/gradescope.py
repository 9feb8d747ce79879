"""What a student sees on Gradescope: the results.json of an engine result under the course's feedback
policy (`[feedback] gradescope`, autograder.engine.views), and the submission limit.

One test per graded item, always `visible`, with its score: the per-item scores and, in the
top-level output, the total are shown at once. The item's text is the before view (mode "due_date"
or "before") or everything ("after"). Where the before view leaves something out, a second test per
item, `<item> (in full)`, carries everything with Gradescope's own `visibility`: "after_due_date"
(Gradescope knows the due date, and waits for the late due date where there is one) or, in mode
"before", "hidden" (staff only). It has no score, so it never changes the total. (Gradescope hides
the total score from students while a test is not yet visible; the top-level output states it.)

Every text is markdown (`output_format: "md"`, Gradescope's "Output String Formatting"): each check's
name and score in bold, computed values in a fenced code block (a fence longer than any backtick run in
them), sentences with markdown's characters escaped, so nothing a student's code prints or a file's name
becomes a link, an image or HTML; every test has Gradescope's `status` ("Test case status"): passed with
every point of the item, else failed (an item's "(in full)" test the same; the late penalty failed when
it takes points).

What the grader prints (otter's summary) stays staff's: `stdout_visibility` is "hidden" in every
mode. Every test keeps its checks in `extra_data.scalelabs` ({"item", "view", "checks": [{check, kind,
score, max_score, output, answer, misconception}]}, the output in that test's view), and the top
level the submission's record ({"assignment", "student", "max_score", "sandbox", "view", "output":
the engine's notes, "summary": the top-level output}), so `Result.from_gradescope` rebuilds the engine's record, both views, from a Gradescope
export (class reports). Gradescope stores `extra_data` and does not show it; nothing withheld from a
visible test is in its `extra_data`.

Submission limit (`submission_limit`, `submission_window_hours`): from Gradescope's
submission_metadata.json, the submissions before this one (in the window, counted from this one's
`created_at`); at the limit the submission is not graded, and its results are those of the latest
earlier submission with a line saying so: the student keeps that score (otter's RateLimiting
plugin instead hides the new results and lets them count, unseen).
"""
from __future__ import annotations

import copy
import re
from datetime import datetime, timedelta

from autograder.engine.config import FeedbackPolicy
from autograder.engine.results import Result

IN_FULL = " (in full)"   # the name of an item's detail test: "<item> (in full)"
DETAIL_VISIBILITY = {"due_date": "after_due_date", "before": "hidden"}
VIEW_LINE = {
    "due_date": ("Before the due date this page shows what failed, the worked examples and the public checks' "
                 "counterexamples; the best answers, the explanations, the reference's values at hidden inputs and "
                 "your code's own messages appear after the due date, in the tests marked \"{in_full}\"."),
    "before": ("This page shows what failed, the worked examples and the public checks' counterexamples; the "
               "course staff release the rest."),
    "after": "",
}


PROSE_KINDS = ("prediction", "reflection", "challenge")   # checks whose output is sentences, not computed values


def md_text(text: str) -> str:
    """Plain text as markdown that shows it as it is: the characters markdown would read as markup
    escaped (emphasis, code, links, HTML, a list or heading at a line's start), each line kept."""
    lines = []
    for line in str(text).rstrip().split("\n"):
        line = re.sub(r"([\\`*\[\]<>|~])", r"\\\1", line.rstrip())
        line = re.sub(r"^(\s*)([#+=-]|\d+[.)])", r"\1\\\2", line)
        lines.append(line)
    return "  \n".join(lines)   # two spaces: markdown's line break


def md_code(text: str) -> str:
    """Text as a fenced block, shown verbatim: the fence is longer than any run of backticks in it."""
    runs = re.findall(r"`+", str(text))
    fence = "`" * max(3, 1 + max((len(r) for r in runs), default=0))
    return f"{fence}text\n{str(text).rstrip()}\n{fence}"


def item_markdown(result: Result, item: str) -> str:
    """The item's checks as Gradescope renders `output_format: "md"`: each check's name and score in
    bold, then its output, computed values verbatim in a code block, sentences as text."""
    parts = []
    for t in result.tests:
        if t.item != item:
            continue
        parts.append(f"**{md_text(t.check)}**: {t.score:g} / {t.max_score:g}")
        if str(t.output).strip():
            parts.append(md_text(t.output) if t.kind in PROSE_KINDS else md_code(t.output))
    return "\n\n".join(parts) + "\n"


def status(score: float, max_score: float) -> str:
    """Gradescope's test status: "passed" with every point, else "failed"."""
    return "passed" if score >= max_score - 1e-9 else "failed"


def check_records(result: Result, item: str) -> list[dict]:
    """The item's checks as a test's extra_data keeps them (outputs as `result` shows them)."""
    return [{"check": t.check, "kind": t.kind, "score": t.score, "max_score": t.max_score, "output": t.output,
             "answer": t.answer, "misconception": t.misconception} for t in result.tests if t.item == item]


def results_json(assignment, result: Result | None, policy: FeedbackPolicy, student: str = "",
                 error: str = "", late=None) -> dict:
    """The Gradescope results.json of `result` (None: the engine failed, every item 0 with `error`);
    `late`: the submission's Lateness (autograder.classroom.deadlines), None when the lab has no due date."""
    mode = policy.gradescope
    shown = "after" if mode == "after" else "before"
    record = result or Result(assignment.id, student, output=error)
    view, full = record.view(shown), record.view("after")
    scores = record.item_scores()
    tests, details = [], []
    for number, item in enumerate(assignment.item_ids, 1):
        score, max_score = scores.get(item, (0.0, float(assignment.item_points[item])))
        has_checks = any(t.item == item for t in record.tests)
        text = item_markdown(view, item) if has_checks else \
            md_text(f"{item}: {error or 'the engine reported no result for this item'}") + "\n"
        tests.append({"name": item, "number": str(number), "score": score, "max_score": max_score,
                      "status": status(score, max_score), "output": text, "output_format": "md",
                      "visibility": "visible",
                      "extra_data": {"scalelabs": {"item": item, "view": shown, "checks": check_records(view, item)}}})
        if shown == "before" and any(t.item == item and t.brief is not None for t in record.tests):
            details.append({"name": f"{item}{IN_FULL}", "number": f"{number}.1", "status": status(score, max_score),
                            "output": item_markdown(full, item), "output_format": "md",
                            "visibility": DETAIL_VISIBILITY[mode],
                            "extra_data": {"scalelabs": {"item": item, "view": "after",
                                                         "checks": check_records(full, item)}}})
    total, possible = record.score, float(assignment.total_points)
    # the top-level output in markdown too: the notes name a student's files, never read as markup
    paragraphs = [md_text(record.output)] if record.output.strip() else []
    paragraphs.append("  \n".join([f"Score: {total:g} / {possible:g}"] + [
        f"{md_text(item)}: {scores.get(item, (0.0, 0.0))[0]:g} / {assignment.item_points[item]:g}"
        for item in assignment.item_ids]))
    if details and VIEW_LINE[mode]:
        paragraphs.append(md_text(VIEW_LINE[mode].format(in_full=IN_FULL.strip(" ()"))))
    penalty = late_test(late, total, possible)
    if penalty:
        paragraphs.append(md_text(penalty["output"]))
        penalty["status"] = status(penalty["score"], 0.0)   # "failed": points were taken
        penalty["output_format"] = "md"
        penalty["output"] = md_text(penalty["output"])
    summary = "\n\n".join(paragraphs)
    meta = {"assignment": assignment.id, "student": student or record.student_id, "max_score": possible,
            "sandbox": record.sandbox_mode, "view": mode, "output": record.output, "summary": summary}
    if late is not None:
        meta["late"] = late.to_json()
    # the grader's stdout is staff's (Gradescope's default, stated: otter sets it only when all is hidden)
    return {"score": round(total + (penalty["score"] if penalty else 0.0), 6), "output": summary, "output_format": "md",
            "stdout_visibility": "hidden", "tests": tests + details + ([penalty] if penalty else []),
            "extra_data": {"scalelabs": meta}}


LATE_TEST = "Late submission penalty"


def late_test(late, score: float, max_score: float) -> dict | None:
    """The lateness as a test of its own beside the items' (the engine's score in them unchanged): its
    score is minus the policy's penalty in points, so Gradescope's total is the score after it, as
    nbgrader's export subtracts `late_submission_penalty`; None when the lab has no due date."""
    if late is None:
        return None
    points = late.penalty_points(score) if late.status == "late" else 0.0
    return {"name": LATE_TEST, "score": -points, "max_score": 0.0, "output": late.line(score, max_score),
            "visibility": "visible", "extra_data": {"scalelabs": {"late": late.to_json()}}}


# --- the submission limit ---

def _time(text) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text))
    except (TypeError, ValueError):
        return None


def earlier_submissions(metadata: dict, window_hours: float = 0.0) -> list[dict]:
    """Gradescope's previous submissions of this student (submission_metadata.json), those within
    `window_hours` before this one's created_at when a window is set (one whose time cannot be read
    counts), oldest first."""
    previous = [p for p in (metadata or {}).get("previous_submissions") or [] if isinstance(p, dict)]
    if window_hours:
        now = _time((metadata or {}).get("created_at"))
        if now is not None:
            window = timedelta(hours=window_hours)
            previous = [p for p in previous
                        if (t := _time(p.get("submission_time"))) is None or now - t <= window]
    return sorted(previous, key=lambda p: str(p.get("submission_time", "")))


def over_limit(metadata: dict, policy: FeedbackPolicy) -> dict | None:
    """None when this submission may be graded; else the results.json to show instead: the latest
    earlier submission's, with a line saying the limit was reached (its score stands)."""
    if not policy.submission_limit:
        return None
    previous = earlier_submissions(metadata, policy.submission_window_hours)
    if len(previous) < policy.submission_limit:
        return None
    last = next((p for p in reversed(previous) if isinstance(p.get("results"), dict)
                 and isinstance(p["results"].get("tests"), list)), None)
    if last is None:   # Gradescope gave no earlier results to keep: grading is the lesser harm
        return None
    results = copy.deepcopy(last["results"])
    meta = results.setdefault("extra_data", {}).setdefault("scalelabs", {})
    if not isinstance(meta, dict):
        return None
    per = (f" every {policy.submission_window_hours:g} hours" if policy.submission_window_hours else "")
    kept = meta.get("kept_from") or str(last.get("submission_time", "an earlier submission"))
    meta["kept_from"] = kept
    results["stdout_visibility"] = "hidden"
    plural = "" if policy.submission_limit == 1 else "s"
    results["output"] = (f"Submission limit reached: {policy.submission_limit} graded submission{plural}{per}. This upload "
                         f"was not graded; your score is that of your submission of {kept}.\n\n"
                         + str(meta.get("summary") or ""))
    return results


# --- what staff do with the zip ---

def upload_steps(assignment, zip_path, policy: FeedbackPolicy) -> str:
    """What `scalelabs otter` prints under the zip's path: the assignment's total and how to set it up
    on Gradescope, with what students upload and see."""
    files = f"{assignment.id}.ipynb and {assignment.module}.py"
    limit = (f"{policy.submission_limit} graded submission{'' if policy.submission_limit == 1 else 's'}"
             + (f" every {policy.submission_window_hours:g} hours" if policy.submission_window_hours else "")
             if policy.submission_limit else "none")
    shown = {"due_date": "scores at once; the rest of the feedback after the due date (Gradescope's "
                         "after_due_date: the late due date where there is one)",
             "before": "scores at once; the rest of the feedback to staff only (release it by regrading "
                       "with [feedback] gradescope = \"after\")",
             "after": "scores and all feedback at once"}[policy.gradescope]
    return "\n".join([
        f"total: {assignment.total_points:g} points",
        "On Gradescope:",
        f"  1. Create a Programming Assignment \"{assignment.title}\" worth {assignment.total_points:g} points.",
        f"  2. Configure Autograder: upload {zip_path} (Zip file upload), then Update Autograder and wait for "
        "the build to pass.",
        "  3. Set the due date (and a late due date if you take late work).",
        f"  4. Students upload {files} from their {assignment.id} folder (the two files, or the folder zipped).",
        f"  5. Test Autograder with a student's files; locally: otter run -a {zip_path} SUBMISSION.zip",
        f"Feedback ([feedback] gradescope = \"{policy.gradescope}\"): {shown}.",
        f"Submission limit ([feedback] submission_limit): {limit}.",
    ])
