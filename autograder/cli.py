"""`scalelabs`: the command line (typer + rich).

    scalelabs grade ASSIGNMENT SUBMISSION_DIR [--student ID] [--json] [--allow-unsandboxed]
    scalelabs grade-batch ASSIGNMENT SUBMISSIONS_ROOT --jobs N [--out DIR] [--db URL] [--student ID ...] [--force]
                          [--shard K/N|auto/N]
    scalelabs merge ASSIGNMENT SHARD_DIR... [--out DIR] [--db URL]
    scalelabs prairielearn ASSIGNMENT [--out DIR]
    scalelabs forget ASSIGNMENT STUDENT ... [--out DIR] [--db URL]
    scalelabs report ASSIGNMENT [GRADES_DIR]
    scalelabs export LAB[=GRADES_DIR] ... --canvas [--out CSV] [--canvas-id login|sis] [--db URL]
    scalelabs feedback ASSIGNMENT [GRADES_DIR] --view before|after
    scalelabs release [ASSIGNMENT ...] | otter ASSIGNMENT [--out ZIP] | demo | check | secret [--create]
    scalelabs otter-try ZIP UPLOAD ... [--submitted-at TIME] [--due TIME] [--late-due TIME]
    scalelabs variant ASSIGNMENT --student ID [--keys]   (a student's version of a lab, as JSON)
    scalelabs lint [LAB ...] | new-lab LAB_ID --module NAME | docs [--check]   (lab authors)

ASSIGNMENT is a lab id (labs/) or `package.module:NAME` of an Assignment. Bad arguments
print one line naming what is wrong and exit 2, without a traceback; so does grading where no sandbox
can run (unless --allow-unsandboxed or scalelabs.toml opts in).

The course (release/, samples/, dist/, grades/, scalelabs.toml, the gradebook) is the folder holding
nbgrader_config.py at or above the current directory; `--course DIR` runs a command as if started
in DIR (like `git -C`), after path arguments are resolved where the command was typed.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import List, Optional

import typer
from typer.core import TyperGroup


def plain_help(command) -> None:
    """Escape the rich markup of `command`'s help texts, its parameters' and its subcommands' (once)."""
    from rich.markup import escape

    if getattr(command, "_scalelabs_plain_help", False):
        return
    command._scalelabs_plain_help = True
    for holder in (command, *getattr(command, "params", ())):
        for attribute in ("help", "short_help", "epilog"):
            text = getattr(holder, attribute, None)
            if isinstance(text, str):
                setattr(holder, attribute, escape(text))
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


class PlainHelpGroup(TyperGroup):
    """Every help text printed as written. Typer renders help as rich markup, where the `[otter]` of
    `pip install 'scalelabs[otter]'`, `[deadlines]` or `[feedback] native` is a style tag and vanishes;
    here every command's and option's text is escaped once, whoever declares it
    (tests/test_help_texts.py holds every bracketed word of every source to its --help)."""

    def __init__(self, **attrs) -> None:
        super().__init__(**attrs)
        from typer.core import HAS_RICH

        if HAS_RICH and self.rich_markup_mode == "rich":   # plain click prints text as it is
            plain_help(self)


app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, cls=PlainHelpGroup,
                  help="Autograded ML-systems-at-scale labs: release, grade, grade a class.")


class _Console:
    """rich's Console, made when the command first prints through it: `scalelabs grade --json` prints
    none, and rich's import is a tenth of its start-up."""

    def __init__(self, **options):
        self._options, self._console = options, None

    def made(self):
        """The Console itself, made now if it was not: what to hand to rich (a Progress, a Live), which
        enters it as a context manager, and Python looks such methods up on the class, not through
        __getattr__."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str):
        return getattr(self.made(), name)

    def __enter__(self):
        return self.made().__enter__()

    def __exit__(self, *exc):
        return self.made().__exit__(*exc)


err = _Console(stderr=True)
out = _Console()


VIEW_HELP = ("the feedback shown: before (the due date: no keys, explanations, reference values at hidden "
             "inputs or student text) or after (everything); default: [feedback] native in scalelabs.toml")


def _view(view: Optional[str], default: str) -> str:
    from autograder.engine.config import VIEWS

    if view is None:
        return default
    if view not in VIEWS:
        fail(f"--view {view}: must be one of {', '.join(VIEWS)}")
    return view


UNSANDBOXED_HELP = ("grade even where no sandbox can run (bubblewrap or a separate user): student code then "
                    "runs unguarded, and every result says so")


def _error_line(message: str) -> None:
    from rich.markup import escape

    err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)   # "[grading]" is text


def fail(message: str, code: int = 2) -> None:
    _error_line(message)
    raise typer.Exit(code)


def _assignment(name: str):
    from labs import load

    # `package.module:NAME` is found from the folder the command was typed in (where --course moved it from)
    typed_in = _TYPED_IN.get("cwd", os.getcwd())
    if ":" in name and typed_in not in sys.path:
        sys.path.insert(0, typed_in)
    try:
        return load(name)
    except ValueError as exc:
        fail(str(exc))


COURSE_HELP = "the course folder (holds nbgrader_config.py); default: the current directory or above"


def _course(course: Optional[Path], required: bool = True) -> Optional[Path]:
    """The course root (autograder/course.py). An explicit --course becomes the working directory,
    so everything resolved from there (scalelabs.toml in grading workers, nbgrader) sees the course."""
    from autograder.course import CourseConfigError, CourseNotFound, course_root, course_settings, find_course

    try:
        root = find_course() if course is None and not required else course_root(course)
        if root is not None:
            course_settings(root)    # who the course is ([course]): a bad table is one line, before any work
    except (CourseNotFound, CourseConfigError) as exc:
        fail(str(exc))
    if course is not None:
        _TYPED_IN.setdefault("cwd", os.getcwd())
        os.chdir(root)
    return root


_TYPED_IN: dict[str, str] = {}   # {"cwd": the folder a command was typed in} once --course moved it


def _course_secret():
    """The course secret the graders load (autograder.engine.secret); without one, a warning line:
    hidden inputs then come from public values."""
    from autograder.engine.secret import load_secret, secret_path

    secret = load_secret()
    if secret is None:
        where = secret_path()
        err.print(f"[yellow]warning:[/] no course secret{f' at {where}' if where else ''}: hidden inputs are drawn "
                  "from public values, so a student can compute them from the released files. `scalelabs release` "
                  "creates one; a second grading machine copies the first one's (docs/tas.md)", highlight=False)
    return secret


def _folder(path: Path, what: str) -> Path:
    if not path.exists():
        fail(f"{what} {path} does not exist")
    if not path.is_dir():
        import zipfile
        unzip = f": unzip it first (`unzip {path} -d DIR`) and pass DIR" if zipfile.is_zipfile(path) else ""
        fail(f"{what} {path} is not a folder{unzip}")
    return path


STUDENT_HELP = ("student id: seeds the hidden inputs, so it must be the id every door gives this student "
                "(nbgrader id, folder name, Gradescope sid or email; docs/tas.md)")


@app.command()
def grade(assignment: str = typer.Argument(..., help="lab id, e.g. lab06_collectives"),
          submission_dir: Path = typer.Argument(..., help="a folder shaped like release/ASSIGNMENT/"),
          student: Optional[str] = typer.Option(None, "--student", help=STUDENT_HELP + "; read from nbgrader's "
                                                "submitted/ID/ or a Gradescope export when not given"),
          as_json: bool = typer.Option(False, "--json", help="print the record (results.json, both views)"),
          view: Optional[str] = typer.Option(None, "--view", help=VIEW_HELP),
          allow_unsandboxed: bool = typer.Option(False, "--allow-unsandboxed", help=UNSANDBOXED_HELP),
          course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Grade one submission (the course's scalelabs.toml applies when there is a course)."""
    from dataclasses import replace

    from autograder.engine.config import load_config
    from autograder.engine.sandbox import SandboxUnavailable, check_jail_soon, jail_beside_the_check
    from autograder.engine.secret import secret_path

    given = _folder(submission_dir, "submission folder").resolve()
    _course(course, required=False)
    config = load_config()
    config = replace(config, allow_unsandboxed=allow_unsandboxed or config.allow_unsandboxed)
    where = secret_path()
    # the sandbox's start check runs while the lab loads (its processes wait, this one imports: the
    # imports below load hypothesis, so they come after it starts)
    check_jail_soon(config, [given, *([where] if where is not None and where.is_file() else [])])
    from autograder.classroom.identity import id_problem, layout_student
    from autograder.classroom.roster import submission_folder
    from autograder.engine.grade import grade_submission

    spec = _assignment(assignment)
    # nbgrader's submitted/<student>/ holds the lab one folder down: grade it, not an empty top folder
    submission_dir = submission_folder(given, spec)
    from_layout = layout_student(submission_dir, spec.id)
    if student is None and from_layout is None:
        fail(f"which student is {given}? pass --student ID: the id seeds the hidden inputs, so it must be the one "
             "every door gives this student (nbgrader id, folder name, Gradescope sid or email)")
    if student is not None and from_layout is not None and student != from_layout:
        fail(f"--student {student}, but {given} is {from_layout}'s submission by its layout: drop --student, or pass "
             f"--student {from_layout}")
    student = student or from_layout
    if why := id_problem(student, "--student"):
        fail(why)
    secret = _course_secret()
    shown = _view(view, config.feedback.native)
    try:
        result = grade_submission(spec, submission_dir, student, config=config, secret=secret,
                                  ahead=jail_beside_the_check(spec.module, config))
    except SandboxUnavailable as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(result.to_gradescope(), indent=1))
        return
    from rich.markup import escape      # not for --json: rich's markup is a tenth of a grade's start-up
    from rich.table import Table

    result = result.view(shown)
    table = Table(title=f"{spec.title} — {student}")
    for col, justify in (("check", "left"), ("score", "right"), ("feedback", "left")):
        table.add_column(col, justify=justify, overflow="fold")
    for t in result.tests:
        style = "green" if t.score >= t.max_score - 1e-9 else ("yellow" if t.score > 0 else "red")
        table.add_row(t.name, f"[{style}]{t.score:.2f}/{t.max_score:.2f}[/]", t.output)
    out.print(table)
    out.print(f"[bold]total {result.score:.2f} / {result.max_score:.2f}[/]  ({result.output})", highlight=False)
    for line in result.attention:
        err.print(f"[yellow]needs attention:[/] {escape(line)}", highlight=False, soft_wrap=True)


SHARD_HELP = ("grade only shard K of N of the class (0 <= K < N; students go to shards by a hash of their id), "
              "into a folder of its own (default grades/ASSIGNMENT/shards/K-of-N); auto/N reads K from "
              "JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or SLURM_ARRAY_TASK_ID (Slurm array). "
              "Join the shards with `scalelabs merge`")


@app.command("grade-batch")
def grade_batch(assignment: str = typer.Argument(..., help="lab id, e.g. lab06_collectives"),
                submissions_root: Path = typer.Argument(..., help="one subfolder per student, each shaped like "
                                                        "release/ASSIGNMENT/ (nbgrader's submitted/ and a Gradescope "
                                                        "export work as they are)"),
                jobs: int = typer.Option(2, "--jobs", "-j", min=1, help="grading processes (1: grade in this process)"),
                out_dir: Optional[Path] = typer.Option(None, "--out", help="default: grades/ASSIGNMENT"),
                db: Optional[str] = typer.Option(None, "--db", help="gradebook URL, e.g. sqlite:///gradebook.db "
                                                     "(default: the course's gradebook.db when grading into the "
                                                     "course's grades/, else OUT/gradebook.db)"),
                only: Optional[List[str]] = typer.Option(None, "--student", help="grade only this student "
                                                         "(repeat for more)"),
                force: bool = typer.Option(False, "--force", help="regrade every student, even unchanged ones"),
                timestamps: Optional[Path] = typer.Option(None, "--timestamps", help="when each student submitted, "
                                                          "for a lab with a due date ([deadlines]): a CSV with columns "
                                                          "student,submitted_at (e.g. from a platform's download); "
                                                          "nbgrader's submitted/ and a Gradescope export say it themselves"),
                allow_unsandboxed: bool = typer.Option(False, "--allow-unsandboxed", help=UNSANDBOXED_HELP),
                shard: Optional[str] = typer.Option(None, "--shard", help=SHARD_HELP),
                course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP + "; else the nearest "
                                                      "folder above SUBMISSIONS_ROOT holding it"),
                no_course: bool = typer.Option(False, "--no-course", help="where no course is found, grade without one: no due dates "
                                               "or late penalties, no course secret, a gradebook of its own")) -> None:
    """Grade a class in parallel; writes results, feedback pages, the gradebook (the grade of record)
    and grades.csv (default: grades/ASSIGNMENT in the course, or here with --no-course).
    Resumable: after Ctrl-C or a crash run the same command again (graded students are skipped, those
    whose files or grader changed regraded, those whose due date, extension or late policy changed
    have their lateness recorded again). Exit status 1 when a student needs a person. With --shard,
    one part of the class into its own folder; `scalelabs merge` joins the parts."""
    from autograder.classroom.batch import OutputFolderError, class_lateness
    from autograder.classroom.submitted_at import NoSubmissionTimes
    from autograder.classroom.gradebook import GradebookUnavailable
    from autograder.classroom.progress import grade_batch_with_progress
    from autograder.classroom.record import default_gradebook
    from autograder.classroom.roster import NotAClass, class_roster
    from autograder.engine.sandbox import SandboxUnavailable

    spec = _assignment(assignment)
    part = _shard(shard, only)
    if db is not None and "://" not in db:   # else found only after the class is graded
        fail(f"--db {db} is not a database URL: for a file write sqlite:///{db} (relative) or "
             "sqlite:////absolute/path/gradebook.db")
    submissions_root = _folder(submissions_root, "submissions root").resolve()
    out_dir = out_dir.resolve() if out_dir else None
    timestamps = timestamps.resolve() if timestamps else None
    db = _absolute_sqlite(db)
    root = _course(course, required=False) or (None if no_course else _course_of_class(submissions_root))
    try:   # asked here too, so that a wrong folder or missing times are one line before the progress bar shows
        class_lateness(spec, submissions_root, class_roster(submissions_root, spec, tuple(only or ())), timestamps)
    except (NotAClass, NoSubmissionTimes) as exc:
        fail(str(exc))
    target = out_dir or (_shard_dir(root, spec.id, part) if part else _grades_dir(root, spec.id))
    _course_secret()    # the grading processes load it the same way
    # the course's record unless told otherwise (--db, or an --out of its own); a shard's is its own
    db = db or (default_gradebook(root, target) if target == _grades_dir(root, spec.id) else None)
    try:
        summary = grade_batch_with_progress(assignment, submissions_root, target, jobs, db_url=db, console=err.made(),
                                            allow_unsandboxed=allow_unsandboxed, only=tuple(only or ()), force=force,
                                            timestamps=timestamps, shard=part)
    except (SandboxUnavailable, OutputFolderError, NotAClass, NoSubmissionTimes) as exc:
        fail(str(exc))
    except GradebookUnavailable as exc:
        fail(f"{exc}. Every student's results and the class CSV are in {target}: rerun with a working --db "
             "(graded students are skipped)")
    except KeyboardInterrupt:
        fail(f"interrupted: every student graded so far is kept in {target / 'results'}; run the same command "
             "again to grade the rest (graded students are skipped; the CSV and the gradebook are written when "
             "a run finishes)", code=130)
    from rich.markup import escape   # reasons quote student text (an exception's message)

    done = len(summary.graded) + len(summary.regraded)
    out.print(f"graded {done}, skipped {len(summary.skipped)} already graded, failed {len(summary.failed)}",
              highlight=False, soft_wrap=True)
    for why, who in summary.regrade_reasons().items():
        shown = f" ({', '.join(who)})" if len(who) <= 5 else ""
        out.print(f"regraded {len(who)}: {escape(why)}{shown}", highlight=False, soft_wrap=True)
    if summary.late:
        out.print(late_summary(summary.late), highlight=False, soft_wrap=True)
    for said, who in disagreements(summary.late).items():
        out.print(f"due dates disagree: {escape(said)} ({', '.join(who[:5])}{', ...' if len(who) > 5 else ''})",
                  highlight=False, soft_wrap=True)
    for student, own in summary.renamed.items():   # an id no file name or CSV cell can hold (identity.safe_id)
        out.print(f"{escape(ascii(own))} is graded as {student}: Gradescope's id cannot be a file name or a safe CSV cell",
                  highlight=False, soft_wrap=True)
    if summary.rewritten:
        out.print(f"feedback pages made whole again from their results: {', '.join(summary.rewritten)}", highlight=False, soft_wrap=True)
    if summary.kept:
        out.print(f"over Gradescope's submission limit, not graded: {', '.join(sorted(summary.kept))} (the results "
                  "Gradescope kept are recorded, with the time of the submission they are from)",
                  highlight=False, soft_wrap=True)
    for student, why in summary.failed.items():
        err.print(f"[red]{student}[/]: grader error {escape(why)}", highlight=False, soft_wrap=True)
    _print_record(summary, summary.needs_attention)


def _shard(text: Optional[str], only) -> "Optional[object]":
    """The --shard of grade-batch (autograder.classroom.shards), or None; one line when it cannot be used."""
    if text is None:
        return None
    from autograder.classroom.shards import Shard, ShardError

    if only:
        fail("--shard grades one part of the whole class and --student picks students: pass one of them")
    try:
        return Shard.parse(text)
    except ShardError as exc:
        fail(str(exc))


def _shard_dir(root: Optional[Path], assignment_id: str, shard) -> Path:
    """Where a shard writes by default: grades/ASSIGNMENT/shards/K-of-N."""
    return _grades_dir(root, assignment_id) / "shards" / f"{shard.k}-of-{shard.n}"


def _print_record(summary, needs: list[str]) -> None:
    """The end of a grade-batch or merge: what needs a person (a line each), where the record is, and
    exit status 1 when someone needs a person."""
    from rich.markup import escape   # reasons quote student text (an exception's message)

    for student, lines in summary.attention.items():
        for line in lines:
            out.print(f"[yellow]{student}[/]: {escape(line)}", highlight=False, soft_wrap=True)
    out.print(f"results and feedback: {summary.out_dir}\nclass CSV: {summary.csv_path} (the lab's record: "
              f"{summary.record} students)\ngradebook (the grade of record): {summary.db_url}", highlight=False, soft_wrap=True)
    out.print(f"needs attention: {len(needs)}" + (f" ({', '.join(needs[:10])}{', ...' if len(needs) > 10 else ''})"
                                                   if needs else ""), highlight=False, soft_wrap=True)
    if needs:
        raise typer.Exit(1)


def _absolute_sqlite(db: Optional[str]) -> Optional[str]:
    """A relative SQLite URL made absolute where it was typed (grade-batch may work from the course)."""
    prefix = "sqlite:///"
    if db and db.startswith(prefix) and not db[len(prefix):].startswith("/"):
        return prefix + str(Path(db[len(prefix):]).resolve())
    return db


def _course_of_class(submissions_root: Path) -> Path:
    """The course a class folder belongs to when grade-batch is not run in one: the nearest folder at or
    above the class holding nbgrader_config.py (as --course DIR, it becomes the working directory), or,
    with a scalelabs.toml here, none (its settings apply); else a refusal in one line: grading with no
    course would apply no due date, no course secret and no course gradebook, and say nothing."""
    from autograder.course import MARKER, SETTINGS, find_course

    found = find_course(submissions_root)
    if found is not None:
        err.print(f"course: {found} (found above {submissions_root}; its scalelabs.toml, course secret and gradebook "
                  "apply)", highlight=False, soft_wrap=True)
        return _course(found)
    if (Path.cwd() / SETTINGS).is_file():
        return None
    fail(f"no course found: no {MARKER} in {Path.cwd()}, {submissions_root} or any folder above them, so no due date, "
         "late penalty or course secret would apply; run in the course folder, pass --course DIR, or pass --no-course "
         "to grade without a course")


def disagreements(late: dict) -> dict[str, list[str]]:
    """Where the platform's due dates and the course's differ (autograder.classroom.deadlines): what is said
    -> the students it is said of."""
    found: dict[str, list[str]] = {}
    for student, lateness in sorted(late.items()):
        if lateness is not None and lateness.disagreement:
            found.setdefault(lateness.disagreement, []).append(student)
    return found


def late_summary(late: dict) -> str:
    """One line of a class's lateness: how many on time, late (with who), extended, of unknown time."""
    by = {status: sorted(s for s, v in late.items() if v.status == status) for status in ("on_time", "late", "unknown")}
    extended = sum(v.extended for v in late.values())
    shown = f" ({', '.join(by['late'][:5])}{', ...' if len(by['late']) > 5 else ''})" if by["late"] else ""
    return (f"late work: {len(by['on_time'])} on time, {len(by['late'])} late{shown}, {extended} with an extension, "
            f"{len(by['unknown'])} with no usable submission time")


@app.command()
def merge(assignment: str = typer.Argument(..., help="lab id, e.g. lab06_collectives"),
          shards: List[Path] = typer.Argument(..., help="the --out folder of every shard run (grade-batch --shard K/N)"),
          out_dir: Optional[Path] = typer.Option(None, "--out", help="default: grades/ASSIGNMENT"),
          db: Optional[str] = typer.Option(None, "--db", help="gradebook URL (default: the course's gradebook.db when "
                                           "merging into the course's grades/, else OUT/gradebook.db)"),
          course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Join the shards of a class (grade-batch --shard) into one results folder, feedback pages, gradebook
    and grades.csv, as one grade-batch run writes them. Refuses, in one line, a shard graded by another
    grader or course secret, a student in two shards, a missing or unfinished shard. Run it in the course
    (or --course DIR): lateness is the course's now (an extension granted after the shards ran applies),
    as grade-batch's rerun records it. Resumable: run it again after a shard is regraded. Exit status 1
    when a student needs a person."""
    from autograder.classroom.gradebook import GradebookUnavailable
    from autograder.classroom.merge import MergeRefused, merge as merge_shards
    from autograder.classroom.record import default_gradebook

    spec = _assignment(assignment)
    if db is not None and "://" not in db:
        fail(f"--db {db} is not a database URL: for a file write sqlite:///{db} (relative) or "
             "sqlite:////absolute/path/gradebook.db")
    folders = [_folder(p, "shard folder").resolve() for p in shards]
    out_dir = out_dir.resolve() if out_dir else None
    root = _course(course, required=False)
    target = out_dir or _grades_dir(root, spec.id)
    db = db or (default_gradebook(root, target) if target == _grades_dir(root, spec.id) else None)
    try:
        summary = merge_shards(spec, folders, target, db)
    except MergeRefused as exc:
        fail(str(exc))
    except GradebookUnavailable as exc:
        fail(f"{exc}. Every student's results and the class CSV are in {target}: rerun with a working --db")
    out.print(f"merged {summary.shards} shards: {len(summary.written)} results written, {len(summary.unchanged)} "
              f"already there, {summary.pages} feedback pages written", highlight=False, soft_wrap=True)
    reasons: dict[str, list[str]] = {}
    for student, why in sorted(summary.reassessed.items()):   # the course's deadlines now, as grade-batch's rerun
        reasons.setdefault(why, []).append(student)
    for why, who in reasons.items():
        out.print(f"lateness recorded again under the course's deadlines now, {why}: {', '.join(who[:5])}"
                  f"{', ...' if len(who) > 5 else ''}", highlight=False, soft_wrap=True)
    _print_record(summary, sorted(summary.attention))


@app.command()
def forget(assignment: str = typer.Argument(..., help="lab id, e.g. lab06_collectives"),
           students: List[str] = typer.Argument(..., help="student ids to remove from the lab's record"),
           grades_dir: Optional[Path] = typer.Option(None, "--out", help="what grade-batch wrote (default: grades/ASSIGNMENT)"),
           db: Optional[str] = typer.Option(None, "--db", help="the gradebook (default: the one grade-batch wrote)"),
           course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Remove students from a lab's record: their results, feedback pages and gradebook rows (a student
    graded by mistake, e.g. a folder that was not a student); grades.csv is rebuilt."""
    from autograder.classroom.batch import all_results
    from autograder.classroom.feedback import write_atomic
    from autograder.classroom.gradebook import GradebookUnavailable, read_book
    from autograder.classroom.record import default_gradebook, forget as forget_student, grades_csv, read_pointer, record_rows

    spec = _assignment(assignment)
    grades_dir = grades_dir.resolve() if grades_dir else None
    root = _course(course, required=False)
    target = grades_dir or _grades_dir(root, spec.id)
    db = db or read_pointer(target) or default_gradebook(root if target == _grades_dir(root, spec.id) else None, target)
    if db.startswith("sqlite:///") and not Path(db[len("sqlite:///"):]).is_file():
        db = None   # no gradebook was ever written there: nothing of theirs in one
    try:
        for student in students:
            removed = forget_student(spec, student, target, db)
            if removed:
                out.print(f"forgot {student}: removed " + "; ".join(removed), highlight=False, soft_wrap=True)
            else:
                err.print(f"{student}: nothing of theirs in {target} or the gradebook", highlight=False, soft_wrap=True)
        results = all_results(target, spec.id)
        book, late = read_book(db, spec.id) if db else (None, None)
    except GradebookUnavailable as exc:
        fail(str(exc))
    if (target / "grades.csv").exists() or results:
        from autograder.classroom.deadlines import course_deadlines, known_labs
        deadlines = course_deadlines(labs=known_labs(spec.id))
        write_atomic(target / "grades.csv", grades_csv(spec, record_rows(spec, results, book, late, deadlines=deadlines)))
        out.print(f"class CSV rebuilt: {target / 'grades.csv'}", highlight=False, soft_wrap=True)


def _grades_dir(root: Optional[Path], assignment_id: str) -> Path:
    """Where grade-batch writes a class's grades by default: grades/ASSIGNMENT in the course (or here)."""
    return (root or Path.cwd()) / "grades" / assignment_id


@app.command()
def report(assignment: str = typer.Argument(..., help="lab id, e.g. lab06_collectives"),
           grades_dir: Optional[Path] = typer.Argument(None, help="what grade-batch wrote, or a Gradescope export "
                                                       "(default: grades/ASSIGNMENT)"),
           db: Optional[str] = typer.Option(None, "--db", help="the course gradebook, e.g. sqlite:///gradebook.db "
                                            "(default: the one grade-batch wrote)"),
           course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """The class report for course staff: GRADES_DIR/report.html (self-contained), report.csv, report.json;
    from grade-batch's results, a Gradescope export (its submission_metadata.yml) or the gradebook (--db)."""
    from autograder.classroom.report import write_report

    spec = _assignment(assignment)
    grades_dir = grades_dir.resolve() if grades_dir else None
    target = grades_dir or _grades_dir(_course(course, required=False), spec.id)
    _folder(target, "grades folder")
    try:
        paths = write_report(spec, target, db)
    except ValueError as exc:
        fail(str(exc))
    out.print("\n".join(f"{kind}: {path}" for kind, path in paths.items()), highlight=False)


@app.command()
def export(labs: List[str] = typer.Argument(..., help="lab ids, one column each; LAB=DIR reads that lab's grades "
                                            "from DIR (default: grades/LAB)"),
           canvas: bool = typer.Option(False, "--canvas", help="write the CSV Canvas's gradebook import accepts"),
           out_file: Optional[Path] = typer.Option(None, "--out", help="the CSV to write (default: grades/canvas.csv)"),
           id_column: str = typer.Option("login", "--canvas-id", help="the Canvas column the student id goes in: "
                                         "login (SIS Login ID) or sis (SIS User ID)"),
           db: Optional[str] = typer.Option(None, "--db", help="the course gradebook, e.g. sqlite:///gradebook.db "
                                            "(default: each lab's, the one grade-batch wrote)"),
           course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Grades for a learning platform: with --canvas, a CSV for Canvas's gradebook import (Grades >
    Import): one column per lab, each student's final score (the grade of record less any late penalty)."""
    from autograder.classroom.canvas import ID_COLUMNS, canvas_csv
    from autograder.classroom.feedback import write_atomic

    if not canvas:
        fail("say which platform: --canvas (Canvas's gradebook import CSV); nbgrader's CSV is `nbgrader export`")
    if id_column not in ID_COLUMNS:
        fail(f"--canvas-id {id_column}: must be one of {', '.join(ID_COLUMNS)}")
    named = [(lab.split("=", 1)[0], Path(lab.split("=", 1)[1]).resolve() if "=" in lab else None) for lab in labs]
    out_file = out_file.resolve() if out_file else None
    root = _course(course, required=False)
    chosen = []
    for lab, folder in named:
        spec = _assignment(lab)
        chosen.append((spec, _folder(folder or _grades_dir(root, spec.id), f"{spec.id}'s grades folder"), db))
    if len({spec.id for spec, _, _ in chosen}) < len(chosen):
        fail("a lab is named twice")
    try:
        roster = None
        if root is not None:
            from autograder.classroom.names import read_roster
            from autograder.course import course_settings
            where = course_settings(root).roster
            roster = read_roster(where) if where else None
        text, missing = canvas_csv(chosen, id_column, roster)
    except ValueError as exc:   # RosterError too
        fail(str(exc))
    target = out_file or (root or Path.cwd()) / "grades" / "canvas.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(target, text)
    students = len(text.splitlines()) - 2
    out.print(f"canvas: {target} ({students} students, {len(chosen)} lab{'s' if len(chosen) != 1 else ''}; "
              f"the id in {ID_COLUMNS[id_column]})", highlight=False, soft_wrap=True)
    for lab, who in missing.items():
        if who:
            out.print(f"  {lab}: no record of {len(who)} ({', '.join(who[:5])}{', ...' if len(who) > 5 else ''}): "
                      "their cells are blank, Canvas keeps what it has", highlight=False, soft_wrap=True)
    out.print("In Canvas: Grades > Import > choose the file; Canvas lists students or columns it cannot match "
              "before anything changes.", highlight=False, soft_wrap=True)


@app.command()
def feedback(assignment: str = typer.Argument(..., help="lab id, e.g. lab06_collectives"),
             grades_dir: Optional[Path] = typer.Argument(None, help="what grade-batch wrote (default: grades/ASSIGNMENT)"),
             view: Optional[str] = typer.Option(None, "--view", help=VIEW_HELP),
             course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Write a graded class's feedback pages again in one view, from its results (no regrading): e.g.
    after the due date, `--view after` releases everything to students graded with the before view."""
    from autograder.classroom.feedback import rewrite_feedback
    from autograder.engine.config import load_config

    spec = _assignment(assignment)
    grades_dir = grades_dir.resolve() if grades_dir else None
    target = grades_dir or _grades_dir(_course(course, required=False), spec.id)
    _folder(target, "grades folder")
    chosen = _view(view, load_config().feedback.native)
    try:
        pages = rewrite_feedback(spec.title, target, chosen)
    except ValueError as exc:
        fail(str(exc))
    out.print(f"{len(pages)} feedback pages ({chosen} the due date) in {target / 'feedback'}", highlight=False)


@app.command()
def release(assignments: Optional[List[str]] = typer.Argument(None, help="default: every lab"),
            course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Regenerate the course's stubs, source/ and release/, and register every released assignment in
    the course gradebook (gradebook.db), so `nbgrader autograde` works next."""
    from autograder.build.release import release as run_release
    from autograder.classroom.names import RosterError
    from autograder.course import CourseConfigError
    from autograder.engine.secret import create_secret

    root = _course(course)
    ids = [_assignment(a).id for a in assignments or []]
    secret, created = create_secret(root)
    try:
        released = run_release(ids or None, root=root)
    except (CourseConfigError, RosterError) as exc:
        fail(str(exc))
    for path in released:
        out.print(f"released {path}", highlight=False)
    from autograder.classroom.private_files import ignore_private_files
    for line in ignore_private_files(root):     # roster, extensions, nbgrader export's grades: never in git
        out.print(line, highlight=False, soft_wrap=True)
    if created:
        out.print(f"created the course secret {secret.path} (fingerprint {secret.fingerprint}): it keys every "
                  "student's hidden inputs. Keep it out of git and copy it to every machine that grades this "
                  "course (docs/tas.md)", highlight=False)


@app.command()
def otter(assignment: str = typer.Argument(..., help="lab id, e.g. lab06_collectives"),
          out_zip: Optional[Path] = typer.Option(None, "--out", help="default: dist/ASSIGNMENT-autograder.zip in the course"),
          course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Build the Gradescope autograder zip with otter-grader (`pip install 'scalelabs[otter]'`); print
    its path, the assignment's total points and the upload steps."""
    from autograder.doors.gradescope import upload_steps
    from autograder.engine.config import load_config
    try:
        from autograder.doors.otter import build_zip
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "otter":
            raise
        fail("scalelabs otter builds the zip with otter-grader, which the grader's install leaves out: "
             "pip install 'scalelabs[otter]' (in a clone: pip install -e '.[otter]'), then rerun")

    out_zip = out_zip.resolve() if out_zip else None
    root = _course(course)
    spec = _assignment(assignment)
    release_dir = root / "release" / spec.id
    if not release_dir.is_dir():
        fail(f"{release_dir} does not exist: run `scalelabs release {spec.id}` first")
    from autograder.engine.secret import create_secret
    secret, created = create_secret(root)      # the zip carries it: Gradescope draws hidden inputs under it
    if created:
        err.print(f"created the course secret {secret.path} (fingerprint {secret.fingerprint}): copy it to every "
                  "machine that grades this course (docs/tas.md)", highlight=False)
    zip_path = build_zip(spec.id, out_zip, assignment=spec, course=root)   # with the course's [grading], [feedback]
    print(zip_path)
    print(upload_steps(spec, zip_path, load_config(root / "scalelabs.toml").feedback))
    _zip_settings(zip_path)


def _zip_settings(zip_path: Path) -> None:
    """What the built zip carries about time and feedback, beside the Gradescope settings that must match,
    and how to try it on an upload (autograder/doors/gradescope_settings.py)."""
    from autograder.doors.gradescope_settings import carried, settings_text

    print(settings_text(carried(zip_path)))
    print(f"Try it on an upload before students do: scalelabs otter-try {zip_path} UPLOAD [--submitted-at TIME] "
          "[--due TIME] (the student's and the staff's view)")


@app.command("otter-try")
def otter_try(zip_path: Path = typer.Argument(..., help="the autograder zip `scalelabs otter` built"),
              uploads: List[Path] = typer.Argument(..., help="what a student uploads: the notebook and module, their "
                                                   "folder, or the folder zipped"),
              submitted_at: Optional[str] = typer.Option(None, "--submitted-at", help="when the upload is made, e.g. "
                                                         "2026-12-05T09:30 (the zip's [deadlines] timezone unless it "
                                                         "has an offset); default: now"),
              due: Optional[str] = typer.Option(None, "--due", help="Gradescope's due date, if not the zip's own"),
              late_due: Optional[str] = typer.Option(None, "--late-due", help="Gradescope's late due date, if set"),
              student: str = typer.Option("try_student", "--student", help="the submitter's Gradescope sid (their "
                                          "version of the lab, their hidden inputs)")) -> None:
    """Run a Gradescope autograder zip on an upload as Gradescope does (its /autograder layout in a
    temporary folder, the upload's time and the due dates in submission_metadata.json, otter's
    run_autograder), then print what the student sees at the upload, what is added after the due date,
    and what only the staff see. Needs otter-grader (`pip install 'scalelabs[otter]'`); writes nothing."""
    try:
        import otter  # noqa: F401
    except ModuleNotFoundError:
        fail("scalelabs otter-try runs the zip with otter-grader, which the grader's install leaves out: "
             "pip install 'scalelabs[otter]' (in a clone: pip install -e '.[otter]'), then rerun")
    from autograder.doors.gradescope_settings import carried, settings_text
    from autograder.doors.otter_try import TryError, try_zip, views
    from autograder.engine.sandbox import SandboxUnavailable

    if not zip_path.is_file():
        fail(f"autograder zip {zip_path} does not exist: `scalelabs otter LAB` builds it (dist/LAB-autograder.zip)")
    try:
        print(settings_text(carried(zip_path)))
        tried = try_zip(zip_path.resolve(), [u.resolve() for u in uploads], submitted_at, due, late_due, student)
    except (TryError, ValueError, SandboxUnavailable) as exc:
        fail(str(exc))
    print()
    print(views(tried))


@app.command()
def prairielearn(assignment: str = typer.Argument(..., help="lab id, e.g. lab06_collectives"),
                 out_dir: Optional[Path] = typer.Option(None, "--out", help="default: dist/prairielearn in the course"),
                 image: Optional[str] = typer.Option(None, "--image", help="the grader image PrairieLearn pulls "
                                                     "(built from the Containerfile; default scalelabs-grader)"),
                 course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Write the lab's PrairieLearn question (externally graded by the scalelabs engine) and the course
    files its grader needs, laid out as a PrairieLearn course; print where they go and the total."""
    from autograder.doors.prairielearn import DEFAULT_IMAGE, build_question, steps
    from autograder.engine.config import load_config

    out_dir = out_dir.resolve() if out_dir else None
    root = _course(course)
    spec = _assignment(assignment)
    target = out_dir or root / "dist" / "prairielearn"
    try:
        question = build_question(spec, target, root, image or DEFAULT_IMAGE)
    except FileNotFoundError as exc:
        fail(str(exc))
    print(question)
    print(steps(spec, target, image or DEFAULT_IMAGE, load_config(root / "scalelabs.toml").feedback.prairielearn))


@app.command()
def secret(create: bool = typer.Option(False, "--create", help="make one if the course has none (release does)"),
           course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Where the course secret is and its fingerprint (compare it on every machine that grades)."""
    from autograder.engine.secret import create_secret, load_secret, secret_path

    root = _course(course)
    if create:
        found, created = create_secret(root)
        out.print(f"{'created' if created else 'kept'} {found.path}, fingerprint {found.fingerprint}", highlight=False)
        return
    found = load_secret(root)
    if found is None:
        fail(f"no course secret at {secret_path(root)}: `scalelabs release` (or `scalelabs secret --create`) makes "
             "one on the machine that releases; every other grading machine copies that file (docs/tas.md)", code=1)
    out.print(f"{found.path}, fingerprint {found.fingerprint}", highlight=False)


@app.command()
def demo(course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Build everything, grade the sample class into a SQLite gradebook, print the grade table."""
    from autograder.classroom.demo import run

    run(course=_course(course))


@app.command()
def check(folder: Path = typer.Argument(Path("."), help="a released assignment folder")) -> None:
    """Run the public tests of a released assignment folder (offline, no reference needed)."""
    _folder(folder, "assignment folder")
    if not (folder / "_properties.py").is_file() or not any(folder.glob("test_*.py")):
        # pytest would collect whatever lies below: in the course folder, the project's whole test suite
        fail(f"{folder} is not a released assignment folder (no public tests test_*.py with _properties.py): "
             "run scalelabs check in your assignment folder, e.g. release/lab06_collectives/")
    import pytest

    # the folder's pytest.ini sets -q and no cache, as a student's own `pytest` there runs
    raise typer.Exit(pytest.main(["-p", "no:cacheprovider", str(folder)]))


@app.command()
def lint(labs: Optional[List[str]] = typer.Argument(None, help="lab ids; default: every lab"),
         rule: Optional[List[str]] = typer.Option(None, "--rule", help="only these rules (repeatable)")) -> None:
    """Check a lab's own rules in seconds (the contract, computed keys, questions, misconceptions,
    give-aways, leaks, the sample class, import time): one line per problem, naming file, line and fix.
    A lab that linted clean is not linted again until a file lint reads changes (autograder/author/lint_cache.py)."""
    import time

    from autograder.author import lint_cache

    ids = labs or sorted(p.parent.name for p in (lint_cache.checkout() / "labs").glob("*/__init__.py")
                         if not p.parent.name.startswith("_"))     # lint.lab_ids(), before the labs are imported
    keys = {lab_id: lint_cache.key(lab_id, rule) for lab_id in ids}
    linting = None
    if rule or not all(lint_cache.clean_before(k) for k in keys.values()):
        from autograder.author import lint as linting

        unknown = sorted(set(rule or ()) - set(linting.RULES))
        if unknown:
            fail(f"unknown rule {', '.join(unknown)}; rules: {', '.join(linting.RULES)}")
    found = 0
    for lab_id in ids:
        start = time.perf_counter()
        if lint_cache.clean_before(keys[lab_id]):
            out.print(f"{lab_id}: 0 problem(s), unchanged since it linted clean", highlight=False)
            continue
        problems, _ = linting.lint(lab_id, rule)
        for problem in problems:
            out.print(str(problem), highlight=False, soft_wrap=True)
        found += len(problems)
        if not problems:
            lint_cache.remember_clean(keys[lab_id])
        out.print(f"{lab_id}: {len(problems)} problem(s), {time.perf_counter() - start:.1f} s", highlight=False)
    if found:
        raise typer.Exit(1)


@app.command()
def variant(assignment: str = typer.Argument(..., help="lab id, e.g. lab06_collectives"),
            student: str = typer.Option(..., "--student", help=STUDENT_HELP),
            keys: bool = typer.Option(False, "--keys", help="add each key and reference design (staff only: never "
                                                            "give this to a student)"),
            course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Print a student's version of a lab as JSON: which version, its story numbers, and per question the
    option texts in the order the student sees them (--keys: the staff view, with the keys)."""
    from autograder.engine.config import load_config
    from autograder.engine.variants import describe

    spec = _assignment(assignment)
    _course(course, required=False)
    if not student.strip():
        fail("--student needs the id the student is graded under")
    print(json.dumps(describe(spec, student.strip(), load_config(), keys=keys), indent=1, ensure_ascii=False))


@app.command("new-lab")
def new_lab(lab_id: str = typer.Argument(..., help="lab<NN>_<topic>, e.g. lab07_fault_tolerance"),
            module: str = typer.Option(..., "--module", help="the module students edit, e.g. fault_tolerance"),
            title: Optional[str] = typer.Option(None, "--title", help="the lab's title (default: from the id)"),
            source_lab: Optional[str] = typer.Option(None, "--source-lab",
                                                     help="'Vol II Lab NN, Title: where it is published'"),
            summary: Optional[str] = typer.Option(None, "--summary", help="what students build, one line"),
            course: Optional[Path] = typer.Option(None, "--course", help=COURSE_HELP)) -> None:
    """Write a new lab's skeleton (reference module, lab folder, its tests) into the course that
    releases, grades its sample class and passes lint as generated, and add it to the generated docs."""
    from autograder.author.docs import REPO
    from autograder.author.scaffold import ScaffoldError, imports_from, new_lab as scaffold

    root = _course(course)
    try:
        written = scaffold(lab_id, module, root=root, title=title, source_lab=source_lab, summary=summary)
    except ScaffoldError as exc:
        fail(str(exc))
    for path in written:
        out.print(f"wrote {path.relative_to(root)}", highlight=False)
    if not imports_from(root):
        err.print(f"[yellow]warning:[/] this scalelabs grades the labs of {REPO}, not of the course {root}: install "
                  f"the course editable (pip install -e {root}) so that lint, release and grading see {lab_id}, "
                  "then run scalelabs docs", highlight=False, soft_wrap=True)
    out.print(f"next: scalelabs lint {lab_id}; pytest tests/labs/{lab_id}; scalelabs release {lab_id}; "
              f"pytest tests/labs -k {lab_id} (docs/adding-a-lab.md walks every file)", highlight=False)


@app.command()
def docs(check_only: bool = typer.Option(False, "--check", help="only say which pages are stale (exit 1 if any)")) -> None:
    """Regenerate what README.md, docs/physics.md, docs/errata/README.md, docs/instruments.md and
    docs/measurements.md say about each lab, from the labs' own files (run it after adding or changing a lab)."""
    from autograder.author import docs as generated

    try:
        pages = generated.stale() if check_only else generated.write()
    except generated.DocsError as exc:
        fail(str(exc))
    for page in pages:
        out.print(f"{'stale' if check_only else 'wrote'} {page.relative_to(generated.REPO)}", highlight=False)
    if check_only and pages:
        raise typer.Exit(1)


def main() -> None:
    from autograder.engine.config import ConfigError
    from autograder.lean import skip_unused

    skip_unused()    # jsonschema's optional IRI grammars: seconds of CPU in every command that reads a notebook
    # hypothesis looks for plugins in every installed distribution's entry points at import (a tenth of its
    # import); the grader's strategies are the labs' own, so none is loaded (its subprocesses inherit this)
    os.environ.setdefault("HYPOTHESIS_NO_PLUGINS", "1")
    from autograder.engine.secret import SecretError

    try:
        app()
    except (ConfigError, SecretError) as exc:   # a bad scalelabs.toml or course secret: one line, exit 2
        _error_line(str(exc))
        raise SystemExit(2) from None


if __name__ == "__main__":
    main()
