"""The class report for course staff: what a class got right and what it misunderstood.

    build_report(assignment, grades_dir) -> ClassReport     from every door's record: grade-batch's
        grades_dir/results/*.json, a Gradescope export (grades_dir/submission_metadata.yml: the
        results.json Gradescope kept of each submission), and the course gradebook (nbgrader's grades,
        a manual override and `nbgrader autograde`'s students included, with their lateness)
    write_report(assignment, grades_dir) -> {"html", "csv", "json": Path}

Everything comes from the typed records of the results files (autograder.engine.results): item
scores, each check's kind and score, the graded option of each question (`TestResult.option`, its
identity: the letter the lab as written gives it, whatever letter the student's version showed; else
`TestResult.answer`) and
the misconception the engine named (`TestResult.misconception`); the declaration adds only what a
results file does not hold (question keys, which prediction each reflection follows, points). The item
analysis (autograder.classroom.itemstats: difficulty, item-rest r, upper/lower 27 % D, Cronbach's alpha,
options by group, flags) reads the grade of record with each prediction scored on its key
(`analysed_scores`). The
page is one self-contained HTML file (plots as PNG data URIs, matplotlib's Agg backend, no script),
readable from disk without a server, with its data beside it as CSV and JSON. Staff only: it shows
the keys.
"""
from __future__ import annotations

import base64
import io
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder.classroom.batch import load_result
from autograder.classroom.csvcells import csv_text
from autograder.classroom.feedback import page_templates, write_atomic
from autograder.classroom.gradebook import GradebookUnavailable, read_book
from autograder.classroom.deadlines import course_deadlines, known_labs
from autograder.classroom.itemstats import SMALL_CLASS, Distractors, analyse
from autograder.classroom.record import read_pointer, record_rows
from autograder.engine.checks import PROPERTY_FAILED
from autograder.engine.questions import UNRECORDED
from autograder.engine.results import Result
from autograder.engine.spec import Assignment

FULL = 1e-9   # a score within this of the points is full marks (scores are rounded to micro-points)


@dataclass
class ItemRate:
    item: str
    kind: str            # function | prediction | reflection | challenge
    points: float
    full_marks: int      # students with every point of the item (as graded)
    mean_score: float    # as graded
    # the item analysis (autograder.classroom.itemstats; None where not defined), on the scores it reads
    # (analysed_scores: a prediction on whether it matched the key, whatever the grading mode)
    difficulty: float | None = None         # mean score / points
    item_rest: float | None = None          # Pearson r with the total of the other items
    # mean of the upper 27 % of the class by total less that of the lower 27 % (Kelley's groups), over
    # the points: near 0 or below, the item does not tell strong work from weak
    discrimination: float | None = None
    alpha_if_deleted: float | None = None   # Cronbach's alpha of the lab without this item
    flags: list[str] = field(default_factory=list)   # one line each: what to look at, and why


@dataclass
class Found:
    item: str
    misconception: str
    students: list[str]


@dataclass
class Answers:
    question: str
    kind: str
    key: str
    counts: dict[str, int]   # letter -> students who gave it ("" = no readable answer)
    # predictions: students with no record of it (reveal never ran, outputs cleared), counted in "" too
    unrecorded: list[str] = field(default_factory=list)


@dataclass
class PredictionVsReflection:
    prediction: str
    reflection: str
    # "right/right", "wrong/right", "right/wrong", "wrong/wrong" (prediction/reflection) -> students
    counts: dict[str, int]


@dataclass
class PropertyFailures:
    item: str
    property: str
    students: list[str]


@dataclass
class ClassReport:
    assignment: str
    title: str
    max_score: float
    scores: dict[str, float] = field(default_factory=dict)      # student -> total
    items: list[ItemRate] = field(default_factory=list)
    misconceptions: list[Found] = field(default_factory=list)   # most frequent first
    questions: list[Answers] = field(default_factory=list)
    predictions: list[PredictionVsReflection] = field(default_factory=list)
    # properties that did not hold (not those never run because the item aborted), most failed first
    properties: list[PropertyFailures] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)         # results files that are not ours
    # the grade of record (autograder.classroom.record): `scores` are the gradebook's grades, a manual
    # override included; the engine's beside them; what needs a person; where the record is
    engine_scores: dict[str, float] = field(default_factory=dict)
    overridden: dict[str, list[str]] = field(default_factory=dict)   # student -> items scored by hand
    attention: dict[str, list[str]] = field(default_factory=dict)
    gradebook: str = ""                                              # "" when only results were read
    record_problem: str = ""                                         # why the gradebook could not be read
    # student -> (hours late, penalty points, final score): late submissions (autograder.classroom.deadlines);
    # `scores` are raw (before late work), the final score is after it
    late: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    final_scores: dict[str, float] = field(default_factory=dict)
    source: str = "results"                                          # results | Gradescope export
    versions: int = 1          # the lab's versions (issue 45): answers are counted by option identity
    # the item analysis of the lab (autograder.classroom.itemstats): Cronbach's alpha over the items (None
    # and why where not defined), the size of the upper and lower groups, the small-class warning, and
    # each question's options chosen by the upper group, the lower group and everyone
    alpha: float | None = None
    alpha_note: str = ""
    group_size: int = 0
    small_class: str = ""
    distractors: list[Distractors] = field(default_factory=list)


PAIRS = ("right/right", "wrong/right", "right/wrong", "wrong/wrong")


def read_results(grades_dir: Path, assignment_id: str) -> tuple[dict[str, dict], list[str]]:
    """student -> results dict, from grades_dir/results/<student>.json; and the files that could not be read.
    ValueError when a result is another assignment's (a report of one lab from another's scores)."""
    records, unreadable = {}, []
    for path in sorted((Path(grades_dir) / "results").glob("*.json")):
        data = load_result(path)
        if data is None:
            unreadable.append(path.name)
        elif (other := data["scalelabs"].get("assignment")) != assignment_id:
            raise ValueError(f"{path} holds a result of {other}, not {assignment_id}: pass the folder grade-batch "
                             f"wrote for {assignment_id} (default grades/{assignment_id}), or the lab {other}")
        else:
            records[path.stem] = data
    return records, unreadable


def read_export_results(grades_dir: Path, assignment_id: str) -> tuple[dict[str, dict], list[str]] | None:
    """student -> results dict (the engine's record, grade-batch's shape) from a Gradescope export in
    grades_dir (submission_metadata.yml; each submission's `:results`, the Gradescope door's
    results.json with its checks in extra_data), every member of a group; None when it is not an
    export. A submission without results the door wrote is listed as unreadable."""
    from autograder.classroom.identity import read_export
    from autograder.doors.gradescope import recorded_members

    export = read_export(grades_dir)
    if export is None:
        return None
    records, unreadable = {}, []
    for entry in export.values():
        try:
            record = Result.from_gradescope(entry.results or {})
        except ValueError:
            unreadable.append(entry.folder)
            continue
        meta = (entry.results.get("extra_data") or {}).get("scalelabs") or {}
        if meta.get("assignment") not in (assignment_id, None):
            raise ValueError(f"{grades_dir}/{entry.folder} holds a result of {meta.get('assignment')}, not {assignment_id}")
        members = recorded_members(entry.results) or {}
        for student in entry.students:
            data = record.to_gradescope()
            own = members[student].to_json() if members.get(student) is not None else meta.get("late")
            data["scalelabs"] = {"assignment": assignment_id, "student": student, "attention": [],
                                 "max_score": meta.get("max_score"), "late": own}
            records[student] = data
    return records, unreadable


@dataclass
class ClassRecord:
    """A lab's record as every door left it: the results read (student -> results dict), those that could
    not be, every student's row of the grade of record (autograder.classroom.record), and where it is."""
    results: dict[str, dict]
    unreadable: list[str]
    rows: list
    source: str          # results | Gradescope export
    gradebook: str       # the gradebook read ("" when none was)
    problem: str         # why the gradebook could not be read ("" when it was, or none was named)


def class_record(assignment: Assignment, grades_dir: Path, db_url: str | None = None) -> ClassRecord:
    """The record of `grades_dir` (grade-batch's results or a Gradescope export) and the gradebook at
    db_url (default: the one grade-batch wrote, record.json); a gradebook that cannot be read leaves the
    engine's scores and the reason in `problem`."""
    exported = read_export_results(grades_dir, assignment.id)
    raw, unreadable = exported or read_results(grades_dir, assignment.id)
    db_url = db_url or read_pointer(grades_dir)
    problem = ""
    try:
        book, late = read_book(db_url, assignment.id) if db_url else (None, None)
    except GradebookUnavailable as exc:   # the report still shows the engine's scores, and says why
        book, late, problem = None, None, str(exc)
    deadlines = course_deadlines(labs=known_labs(assignment.id))   # the penalty, a rule: today's due dates
    return ClassRecord(raw, unreadable, record_rows(assignment, raw, book, late, deadlines=deadlines),
                       "Gradescope export" if exported else "results", db_url if book is not None else "", problem)


def analysed_scores(assignment: Assignment, rows, records: dict, answers: dict[str, dict[str, str]]
                    ) -> dict[str, dict[str, float]]:
    """student -> item -> the score the item analysis reads: the grade of record, except that a prediction
    scores its points when the answer recorded at its reveal is the key and 0 otherwise, whatever
    `[grading] predictions` says (under "commitment" every recorded answer scores full, which tells
    nothing apart). A student whose results the report does not hold (only the gradebook has them) keeps
    the grade of record for predictions too."""
    predictions = {q.id: q for q in assignment.questions if q.kind == "prediction"}

    def score(row, item: str) -> float:
        if item in predictions and row.student in records:
            q = predictions[item]
            return float(q.points) if answers[item].get(row.student) == q.key else 0.0
        return row.grades[item]

    return {r.student: {item: score(r, item) for item in assignment.item_ids} for r in rows}


def _pairs(assignment: Assignment) -> list[tuple[str, str]]:
    """(prediction, the first reflection declared after it, before the next prediction)."""
    pairs, open_prediction = [], None
    for q in assignment.questions:
        if q.kind == "prediction":
            open_prediction = q.id
        elif open_prediction is not None:
            pairs.append((open_prediction, q.id))
            open_prediction = None
    return pairs


def build_report(assignment: Assignment, grades_dir: Path, db_url: str | None = None) -> ClassReport:
    """The report of the lab's record (questions counted by option identity, in the lab as written:
    `assignment`'s version 0): scores and item rates from the gradebook at db_url (default: the
    one grade-batch wrote, record.json), a manual override included, every student of the lab there;
    what students answered and misunderstood from their results files."""
    from autograder.engine.variants import base_of
    assignment = base_of(assignment)
    record = class_record(assignment, grades_dir, db_url)
    raw, rows = record.results, record.rows
    records = {s: Result.from_gradescope(data, student_id=s) for s, data in raw.items()}
    report = ClassReport(assignment.id, assignment.title, assignment.total_points, unreadable=record.unreadable,
                         source=record.source, gradebook=record.gradebook, record_problem=record.problem,
                         versions=assignment.variant_count)
    report.late = {r.student: (float(r.late_by_hours), r.late_penalty, r.final_score) for r in rows
                   if r.late_penalty or (r.late_by_hours not in ("", 0, 0.0))}
    report.scores = {r.student: r.score for r in rows}
    report.final_scores = {r.student: r.final_score for r in rows}
    report.engine_scores = {r.student: r.engine_score for r in rows}
    report.overridden = {r.student: r.overridden for r in rows if r.overridden}
    report.attention = {r.student: r.attention for r in rows if r.attention}
    kinds = ({f.name: "function" for f in assignment.functions} | {q.id: q.kind for q in assignment.questions}
             | {c.id: "challenge" for c in assignment.challenges})
    found: dict[tuple[str, str], list[str]] = {}
    failed: dict[tuple[str, str], list[str]] = {}
    answers: dict[str, dict[str, str]] = {q.id: {} for q in assignment.questions}
    unrecorded: dict[str, list[str]] = {q.id: [] for q in assignment.questions}
    for student, record in records.items():
        for t in record.tests:
            if t.misconception and student not in found.setdefault((t.item, t.misconception), []):
                found[t.item, t.misconception].append(student)
            if t.kind == "property" and t.output.startswith(PROPERTY_FAILED):
                failed.setdefault((t.item, t.check), []).append(student)
            if t.item in answers and t.kind in ("prediction", "reflection"):
                # by option identity: students of other versions saw the same option under another letter
                answers[t.item][student] = t.option or t.answer
                if t.output.startswith(UNRECORDED):
                    unrecorded[t.item].append(student)
    points = assignment.item_points
    analysis = analyse(analysed_scores(assignment, rows, records, answers), points, answers,
                       {q.id: (dict(q.options), q.key) for q in assignment.questions})
    stats = {a.item: a for a in analysis.items_stats}
    for item in assignment.item_ids:
        got = [r.grades[item] for r in rows]
        a = stats[item]
        report.items.append(ItemRate(item, kinds[item], float(points[item]),
                                     sum(g >= points[item] - FULL for g in got), sum(got) / len(got) if got else 0.0,
                                     a.difficulty, a.item_rest, a.discrimination, a.alpha_if_deleted, a.flags))
    report.alpha, report.alpha_note, report.group_size = analysis.alpha, analysis.alpha_note, analysis.group_size
    report.small_class, report.distractors = analysis.warning, analysis.distractors
    report.misconceptions = [Found(i, m, s) for (i, m), s in sorted(found.items(), key=lambda kv: -len(kv[1]))]
    report.properties = [PropertyFailures(i, p, s) for (i, p), s in sorted(failed.items(), key=lambda kv: -len(kv[1]))]

    for q in assignment.questions:
        counts = Counter(answers[q.id].values())
        report.questions.append(Answers(q.id, q.kind, q.key, {letter: counts.get(letter, 0)
                                                              for letter in [*q.options, ""]}, unrecorded[q.id]))
    for pid, rid in _pairs(assignment):
        keys = assignment.question(pid).key, assignment.question(rid).key
        both = [(answers[pid][s], answers[rid][s]) for s in records
                if answers[pid].get(s) and answers[rid].get(s)]
        if both:   # only where the records hold both graded answers
            pairs = Counter(f"{'right' if p == keys[0] else 'wrong'}/{'right' if r == keys[1] else 'wrong'}"
                            for p, r in both)
            report.predictions.append(PredictionVsReflection(pid, rid, {k: pairs.get(k, 0) for k in PAIRS}))
    return report


# --- the data as CSV and JSON ----------------------------------------------------------------------

def report_rows(report: ClassReport) -> list[list]:
    """section, item, what, count, of: every number the page shows, one per row."""
    n = len(report.scores)
    rows = [["score", s, "raw score", score, report.max_score] for s, score in sorted(report.scores.items())]
    rows += [["final_score", s, "final score (after late work)", final, report.max_score]
             for s, final in sorted(report.final_scores.items()) if final != report.scores[s]]
    rows += [["engine_score", s, "overridden: " + " ".join(items), report.engine_scores[s], report.max_score]
             for s, items in sorted(report.overridden.items())]
    rows += [["needs_attention", s, line, 1, 1] for s, lines in sorted(report.attention.items()) for line in lines]
    rows += [["late", s, f"{hours:g} h late, penalty {penalty:g}", final, report.max_score]
             for s, (hours, penalty, final) in sorted(report.late.items())]
    rows += [["item_full_marks", r.item, r.kind, r.full_marks, n] for r in report.items]
    rows += item_analysis_rows(report)
    rows += [["misconception", f.item, f.misconception, len(f.students), n] for f in report.misconceptions]
    rows += [["answer", a.question, letter or "(none)", count, n] for a in report.questions
             for letter, count in a.counts.items()]
    rows += [["unrecorded", a.question, "no record", len(a.unrecorded), n] for a in report.questions
             if a.kind == "prediction"]
    rows += [["prediction_vs_reflection", f"{p.prediction}/{p.reflection}", pair, count, sum(p.counts.values())]
             for p in report.predictions for pair, count in p.counts.items()]
    rows += [["property_failed", f.item, f.property, len(f.students), n] for f in report.properties]
    return rows


# report.csv's rows of the item analysis: (section, what, the ItemRate field), undefined values left out
ITEM_STATS = (("item_difficulty", "mean score / points (predictions: on the key)", "difficulty"),
              ("item_rest_correlation", "Pearson r with the total of the other items", "item_rest"),
              ("item_discrimination", "upper 27 % mean less lower 27 % mean, over the points", "discrimination"),
              ("alpha_if_deleted", "Cronbach's alpha without this item", "alpha_if_deleted"))


def item_analysis_rows(report: ClassReport) -> list[list]:
    """The item analysis as report.csv rows: each item's statistics, the lab's alpha, every flag, and each
    option's students in the upper and lower groups (of the group's size)."""
    n, k = len(report.scores), len(report.items)
    rows = [[section, r.item, what, getattr(r, name), 1] for section, what, name in ITEM_STATS
            for r in report.items if getattr(r, name) is not None]
    rows.append(["alpha", report.assignment, f"Cronbach's alpha, {n} students, {k} items"
                 + (f": {report.alpha_note}" if report.alpha is None else ""),
                 "" if report.alpha is None else report.alpha, 1])
    if report.small_class:
        rows.append(["small_class", report.assignment, report.small_class, n, SMALL_CLASS])
    rows += [["flag", r.item, line, 1, 1] for r in report.items for line in r.flags]
    size = report.group_size
    rows += [[f"distractor_{group}", d.question, o.option or "(none)", round(getattr(o, group) * size), size]
             for d in report.distractors for group in ("upper", "lower") for o in d.options if size]
    return rows


def report_csv(report: ClassReport) -> str:
    return csv_text(["section", "item", "what", "count", "of"], report_rows(report))


# --- plots -----------------------------------------------------------------------------------------

def _png(fig) -> str:
    """The figure as a data: URI (PNG), then closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=96, bbox_inches="tight")
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _bars(labels: list[str], values: list[float], xlabel: str, colors=None, xmax: float | None = None,
          legend: dict[str, str] | None = None) -> str:
    import matplotlib.pyplot as plt

    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(7.5, 0.3 * len(labels) + 0.9))
    ax.barh(range(len(labels)), values, color=colors or "#4c72b0")
    if xmax is None:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    if legend:
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(color=c, label=k) for k, c in legend.items()], fontsize=8, loc="lower right")
    if xmax is not None:
        ax.set_xlim(0, xmax)
    return _png(fig)


def plots(report: ClassReport) -> dict[str, str]:
    """section -> a PNG data URI (a section with nothing to plot has none)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    out = {}
    n = len(report.scores)
    if n:
        fig, ax = plt.subplots(figsize=(7.5, 2.6))
        ax.hist(list(report.scores.values()), bins=min(20, max(5, n)), range=(0, report.max_score), color="#4c72b0",
                edgecolor="white")
        ax.set_xlabel(f"score (of {report.max_score:g})")
        ax.set_ylabel("students")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        out["scores"] = _png(fig)
        kind_color = {"function": "#4c72b0", "prediction": "#dd8452", "reflection": "#55a868", "challenge": "#8172b3"}
        out["items"] = _bars([r.item for r in report.items], [r.full_marks / n for r in report.items],
                             "share of students with full marks", [kind_color[r.kind] for r in report.items], 1,
                             legend=kind_color)
    if report.misconceptions:
        out["misconceptions"] = _bars([f"{f.item}: {f.misconception}" for f in report.misconceptions],
                                      [len(f.students) for f in report.misconceptions], "students")
    if report.questions and n:
        fig, axes = plt.subplots(1, len(report.questions), figsize=(2.1 * len(report.questions), 2.2), squeeze=False)
        for ax, a in zip(axes[0], report.questions):
            letters = [k for k in a.counts if k]
            ax.bar(letters + ["none"], [a.counts[k] for k in letters] + [a.counts[""]],
                   color=["#55a868" if k == a.key else "#bbbbbb" for k in letters] + ["#dddddd"])
            ax.set_title(a.question, fontsize=8)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.tick_params(labelsize=8)
        axes[0][0].set_ylabel("students")
        out["questions"] = _png(fig)
    return out


def render_report(report: ClassReport) -> str:
    return page_templates().get_template("report.html.j2").render(report=report, plots=plots(report), n=len(report.scores),
                                                        pairs=PAIRS)


def write_report(assignment: Assignment, grades_dir: Path, db_url: str | None = None) -> dict[str, Path]:
    """grades_dir/report.html, report.csv and report.json; ValueError when there are no results."""
    grades_dir = Path(grades_dir)
    report = build_report(assignment, grades_dir, db_url)
    if not report.scores:
        raise ValueError(f"no results of {assignment.id} in {grades_dir / 'results'} "
                         f"(grade the class first: scalelabs grade-batch {assignment.id} SUBMISSIONS)")
    paths = {ext: grades_dir / f"report.{ext}" for ext in ("html", "csv", "json")}
    write_atomic(paths["html"], render_report(report))
    write_atomic(paths["csv"], report_csv(report))
    write_atomic(paths["json"], json.dumps(asdict(report), indent=1))
    return paths
