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
plugin instead hides the new results and lets them count, unseen). The kept results say so
(`extra_data.scalelabs.kept_from`: the time of the submission whose results they are), so that
grade-batch of Gradescope's export, whose folder holds the files of the upload that was not graded,
records the kept results instead of grading those files (`kept_from`).

Time, as Gradescope gives it (`platform_dates`). Gradescope's autograder documentation
(gradescope-autograders.readthedocs.io, "Submission Metadata") documents submission_metadata.json's
`created_at` (the upload's time, Gradescope's clock), `assignment.due_date` and
`assignment.late_due_date` (the class's; the late due date null where none is set), `users` (every
member of a group) and `previous_submissions` (`submission_time`, `score`, `results`). Each user of
the metadata Gradescope writes also carries `assignment` with that user's own `release_date`,
`due_date` and `late_due_date`: the class's, or the ones an extension set in Gradescope's interface
gives them (undocumented on that page; read wherever it is there, and the class's dates where it is
not). `[deadlines]` (the zip's copy) is the policy, and the due date where Gradescope gives none.
Every member of a group is assessed on their own due date and extension; Gradescope keeps one score
per submission, so its total takes the largest penalty among them (nobody gains by grouping with a
classmate who has more time) and the output gives each member's own final score and why they differ
(`extra_data.scalelabs.members` keeps each member's lateness, for grade-batch of the export).
"""
from __future__ import annotations

import copy
import re
from datetime import datetime, timedelta

from autograder.classroom.deadlines import Lateness, PlatformDates, final_score, parse_moment
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
             "answer": t.answer, "misconception": t.misconception} | ({"option": t.option} if t.option else {})
            for t in result.tests if t.item == item]


def results_json(assignment, result: Result | None, policy: FeedbackPolicy, student: str = "",
                 error: str = "", late=None, members: dict | None = None) -> dict:
    """The Gradescope results.json of `result` (None: the engine failed, every item 0 with `error`);
    `late`: the submission's Lateness (autograder.classroom.deadlines), None when the lab has no due date;
    `members`: each submitter's own Lateness (id -> Lateness or None), a group's several."""
    members = dict(members) if members else ({student or (result.student_id if result else ""): late} if late else {})
    late = applied(members, result.score if result else 0.0)
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
    # one vocabulary (docs/staff.md): the raw score is before late work, the final score after it
    headline = f"{'Raw score (before late work)' if late is not None else 'Score'}: {total:g} / {possible:g}"
    # the top-level output in markdown too: the notes name a student's files, never read as markup
    paragraphs = [md_text(record.output)] if record.output.strip() else []
    paragraphs.append("  \n".join([headline] + [
        f"{md_text(item)}: {scores.get(item, (0.0, 0.0))[0]:g} / {assignment.item_points[item]:g}"
        for item in assignment.item_ids]))
    if details and VIEW_LINE[mode]:
        paragraphs.append(md_text(VIEW_LINE[mode].format(in_full=IN_FULL.strip(" ()"))))
    penalty = late_test(late, total, possible, members)
    if penalty:
        paragraphs.append(md_text(penalty["output"]))
        paragraphs.append(f"Final score (after late work): {final_score(total, -penalty['score']):g} / {possible:g}")
        penalty["status"] = status(penalty["score"], 0.0)   # "failed": points were taken
        penalty["output_format"] = "md"
        penalty["output"] = md_text(penalty["output"])
    summary = "\n\n".join(paragraphs)
    meta = {"assignment": assignment.id, "student": student or record.student_id, "max_score": possible,
            "sandbox": record.sandbox_mode, "view": mode, "output": record.output, "summary": summary,
            "members": {m: v.to_json() if v is not None else None for m, v in sorted(members.items())}}
    if late is not None:
        meta["late"] = late.to_json()
    # the grader's stdout is staff's (Gradescope's default, stated: otter sets it only when all is hidden)
    return {"score": round(total + (penalty["score"] if penalty else 0.0), 6), "output": summary, "output_format": "md",
            "stdout_visibility": "hidden", "tests": tests + details + ([penalty] if penalty else []),
            "extra_data": {"scalelabs": meta}}


LATE_TEST = "Late submission penalty"


def _points(late: Lateness | None, score: float) -> float:
    return late.penalty_points(score) if late is not None and late.status == "late" else 0.0


def applied(members: dict, score: float) -> Lateness | None:
    """The lateness Gradescope's one score per submission takes: its only submitter's, or of a group's
    members the one with the largest penalty (module docstring); None when the lab has no due date."""
    found = [(m, v) for m, v in sorted(members.items()) if v is not None]
    return max(found, key=lambda mv: _points(mv[1], score))[1] if found else None


def late_test(late, score: float, max_score: float, members: dict | None = None) -> dict | None:
    """The lateness as a test of its own beside the items' (the engine's score in them unchanged): its
    score is minus the policy's penalty in points, so Gradescope's total is the final score, as nbgrader's
    export subtracts `late_submission_penalty`; None when the lab has no due date. For a group whose
    members' penalties differ (`members`), the largest, and each member's own final score with why."""
    if late is None:
        return None
    points = _points(late, score)
    output = late.line(score, max_score)
    members = {m: v for m, v in (members or {}).items() if v is not None}
    finals = {m: final_score(score, _points(v, score)) for m, v in sorted(members.items())}
    if len(set(finals.values())) > 1:
        output = "\n".join(["This group's members have their own due dates: each is assessed on their own."]
                           + [f"{m}: {v.line(score, max_score)}" for m, v in sorted(members.items())]
                           + [f"Gradescope keeps one score for a group's submission: it shows the lowest of the "
                              f"members' final scores ({min(finals.values()):g} / {max_score:g}); each member's own is "
                              "above (" + ", ".join(f"{m} {f:g}" for m, f in finals.items()) + "). Course staff "
                              "record the others (grade-batch of the Gradescope export records each member's own)."])
    return {"name": LATE_TEST, "score": -points, "max_score": 0.0, "output": output,
            "visibility": "visible", "extra_data": {"scalelabs": {"late": late.to_json()}}}


def platform_dates(metadata: dict | None) -> PlatformDates | None:
    """Gradescope's due dates of this submission (module docstring, "Time"): `assignment.due_date` and
    `late_due_date`, and each user's own `assignment.due_date` / `late_due_date`; a date that is not a
    time is left out and named (`problems`). None when it gives no date at all."""
    from autograder.classroom.identity import submitter_id

    metadata = metadata if isinstance(metadata, dict) else {}
    problems: list[str] = []

    def moment(table, key: str, whose: str):
        value = table.get(key) if isinstance(table, dict) else None
        if value in (None, ""):
            return None
        try:
            return parse_moment(value)
        except ValueError:
            problems.append(f"Gradescope's {key} of {whose} is {str(value)[:40]!r}, not a time: not used")
            return None

    assignment = metadata.get("assignment")
    lab_due, lab_late_due = moment(assignment, "due_date", "the assignment"), moment(assignment, "late_due_date", "the assignment")
    due, late_due = {}, {}
    for user in metadata.get("users") or [] if isinstance(metadata.get("users"), list) else []:
        who = submitter_id(user)
        own = user.get("assignment") if isinstance(user, dict) else None
        if who and isinstance(own, dict):
            if (found := moment(own, "due_date", who)) is not None:
                due[who] = found
            if (found := moment(own, "late_due_date", who)) is not None:
                late_due[who] = found
    if lab_due is None and lab_late_due is None and not due and not problems:
        return None
    return PlatformDates("Gradescope", lab_due, lab_late_due, due, late_due, tuple(problems))


# --- what the door recorded, read back from a Gradescope export's results ---

def recorded(results) -> dict:
    """The door's record at the top of a results.json (`extra_data.scalelabs`), {} when it is not ours."""
    extra = results.get("extra_data") if isinstance(results, dict) else None
    meta = extra.get("scalelabs") if isinstance(extra, dict) else None
    return meta if isinstance(meta, dict) else {}


def recorded_members(results) -> dict[str, Lateness | None] | None:
    """Whom the door graded a submission for, each with the lateness it recorded (None: the lab had no
    due date); None when the results do not say (not ours, or from an older zip)."""
    members = recorded(results).get("members")
    if not isinstance(members, dict):
        return None
    return {str(m): Lateness.from_json(v) for m, v in members.items()}


def kept_from(results) -> str | None:
    """The time of the submission whose results these are, when the door kept them over the submission
    limit (the upload they stand for was not graded); None otherwise."""
    kept = recorded(results).get("kept_from")
    return str(kept) if kept else None


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


def kept_submission(metadata: dict, policy: FeedbackPolicy) -> dict | None:
    """None when this submission may be graded; else the earlier submission whose results stand (the
    latest with results, from `previous_submissions`)."""
    if not policy.submission_limit:
        return None
    previous = earlier_submissions(metadata, policy.submission_window_hours)
    if len(previous) < policy.submission_limit:
        return None
    # None: Gradescope gave no earlier results to keep, and grading is the lesser harm
    return next((p for p in reversed(previous) if isinstance(p.get("results"), dict)
                 and isinstance(p["results"].get("tests"), list)
                 and isinstance(p["results"].get("extra_data", {}), dict)
                 and isinstance(p["results"].get("extra_data", {}).get("scalelabs", {}), dict)), None)


def kept_time(kept: dict) -> str:
    """The time of the submission that was graded, of a kept previous submission (the first one kept)."""
    return str(recorded(kept["results"]).get("kept_from") or kept.get("submission_time") or "an earlier submission")


def limit_reached(results: dict, kept: dict, policy: FeedbackPolicy) -> dict:
    """`results` (the kept submission's) as the results of an upload over the limit: with the line saying
    so, and `kept_from`."""
    results = copy.deepcopy(results)
    meta = results.setdefault("extra_data", {}).setdefault("scalelabs", {})
    per = (f" every {policy.submission_window_hours:g} hours" if policy.submission_window_hours else "")
    meta["kept_from"] = when = kept_time(kept)
    results["stdout_visibility"] = "hidden"
    plural = "" if policy.submission_limit == 1 else "s"
    results["output"] = (f"Submission limit reached: {policy.submission_limit} graded submission{plural}{per}. This upload "
                         f"was not graded; your score is that of your submission of {when}.\n\n"
                         + str(meta.get("summary") or ""))
    return results


def over_limit(metadata: dict, policy: FeedbackPolicy) -> dict | None:
    """None when this submission may be graded; else the results.json to show instead: the latest
    earlier submission's, with a line saying the limit was reached (its score stands)."""
    kept = kept_submission(metadata, policy)
    return limit_reached(kept["results"], kept, policy) if kept is not None else None


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
        "  3. Set the due date (and a late due date if you take late work); move it and grant extensions there too: "
        "the autograder takes each student's due date from Gradescope, and the late policy from [deadlines].",
        f"  4. Students upload {files} from their {assignment.id} folder (the two files, or the folder zipped).",
        f"  5. Test Autograder with a student's files; locally: otter run -a {zip_path} SUBMISSION.zip",
        f"Feedback ([feedback] gradescope = \"{policy.gradescope}\"): {shown}.",
        f"Submission limit ([feedback] submission_limit): {limit}.",
    ])
