"""`scalelabs demo`: the main job on the shipped sample class.

It rebuilds source/ and release/ from reference/ (the course-staff step), materialises every sample
student of every lab as a submission shaped like release/<lab>/ (the students' step), grades each lab's
class in parallel into one nbgrader SQLite gradebook with a feedback page per student (the TAs' step),
and prints the grade table.

    demo-out/submissions/<lab>/<student>/     what each sample student handed in
    demo-out/grades/<lab>/results/<student>.json, feedback/<student>.html, grades.csv
    demo-out/grades/<lab>/report.html, report.csv, report.json   the class report for course staff
    demo-out/gradebook.db                     the nbgrader gradebook, every lab

All of it in the course (the current directory's, or `--course DIR`: autograder/course.py).
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from autograder.course import course_root
from autograder.classroom.gradebook import sqlite_url
from labs import all_assignments
from autograder.classroom.progress import grade_batch_with_progress
from autograder.classroom.report import write_report
from autograder.classroom.samples import materialise, students


@dataclass
class DemoRun:
    out_dir: Path
    db_url: str
    scores: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)  # lab -> student -> (score, max)
    failed: dict[str, str] = field(default_factory=dict)                          # "lab/student" -> grader error
    seconds: dict[str, float] = field(default_factory=dict)                       # step -> wall time


def materialise_class(assignment_id: str, root: Path, course: Path | None = None) -> list[str]:
    """Every sample student of one lab (the course's samples/) as a fresh submission folder under root."""
    if root.exists():
        shutil.rmtree(root)
    course = course_root(course)
    samples_dir = course / "samples" / assignment_id
    names = students(assignment_id, samples_dir)
    for student in names:
        materialise(assignment_id, student, root / student, release_dir=course / "release" / assignment_id,
                    samples_dir=samples_dir)
    return names


def run(out_dir: Path | None = None, jobs: int = 2, rebuild: bool = True, console: Console | None = None,
        course: Path | None = None) -> DemoRun:
    console = console or Console()
    course = course_root(course)
    out_dir = Path(out_dir or course / "demo-out")
    out_dir.mkdir(parents=True, exist_ok=True)
    demo = DemoRun(out_dir, sqlite_url(out_dir / "gradebook.db"))
    labs = all_assignments()

    if rebuild:
        from autograder.build.release import release

        started = time.perf_counter()
        with console.status("course staff: regenerating stubs, source/ and release/ from reference/"):
            release(list(labs), root=course)
        demo.seconds["release"] = time.perf_counter() - started
        console.print(f"released {len(labs)} labs into {course / 'release'} "
                      f"({demo.seconds['release']:.1f} s)", highlight=False)

    for lab_id in labs:
        started = time.perf_counter()
        root = out_dir / "submissions" / lab_id
        materialise_class(lab_id, root, course)
        # A fresh grades folder: the sample class is rebuilt each run, so nothing is resumed from
        # an older build of the release.
        grades = out_dir / "grades" / lab_id
        shutil.rmtree(grades, ignore_errors=True)
        summary = grade_batch_with_progress(lab_id, root, grades, jobs, db_url=demo.db_url,
                                            console=console, label=f"TA grading {lab_id}")
        demo.seconds[lab_id] = time.perf_counter() - started
        demo.failed.update({f"{lab_id}/{s}": why for s, why in summary.failed.items()})
        from autograder.classroom.batch import load_result

        write_report(labs[lab_id], grades)
        demo.scores[lab_id] = {}
        for student in students(lab_id, course / "samples" / lab_id):
            data = load_result(grades / "results" / f"{student}.json")
            if data:
                demo.scores[lab_id][student] = (float(data["score"]), float(data["scalelabs"]["max_score"]))

    console.print(grade_table(demo))
    for where, why in demo.failed.items():
        console.print(f"[red]grader error[/] {where}: {why}", highlight=False)
    console.print(f"gradebook: {demo.db_url}\nfeedback pages: {out_dir / 'grades'}/<lab>/feedback/<student>.html\n"
                  f"class CSVs: {out_dir / 'grades'}/<lab>/grades.csv\n"
                  f"class reports: {out_dir / 'grades'}/<lab>/report.html", highlight=False)
    return demo


def grade_table(demo: DemoRun) -> Table:
    """The demo's table, readable in an 80-column terminal: one row per sample student, one column per
    lab headed by its number and points (the caption names the labs), each cell the score alone."""
    table = Table(title="scalelabs demo: the sample class, graded", title_justify="left",
                  caption="Sample students are synthetic: each lab's labs/<lab>/samples.toml makes them from the "
                          "reference (correct, some functions wrong, a syntax error, the untouched stub, wrong "
                          "predictions). A cell is the score out of the points under the lab's number; — : the lab has "
                          "no such sample student.\nLabs: " + ", ".join(demo.scores), caption_justify="left")
    table.add_column("student", no_wrap=True)
    for lab_id, per_lab in demo.scores.items():
        top = max((t for _, t in per_lab.values()), default=0.0)
        table.add_column(f"{lab_id.split('_')[0]}\n/{top:g}", justify="right", no_wrap=True)
    everyone = sorted({s for per_lab in demo.scores.values() for s in per_lab})
    for student in everyone:
        cells = []
        for per_lab in demo.scores.values():
            if student not in per_lab:
                cells.append("—")
                continue
            score, top = per_lab[student]
            style = "green" if score >= top - 1e-9 else ("yellow" if score > 0 else "red")
            cells.append(f"[{style}]{score:.3g}[/]")
        table.add_row(student, *cells)
    return table
