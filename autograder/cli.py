"""`scalelabs`: the command line (argparse; rich only where a table or a progress bar is printed).

    scalelabs grade ASSIGNMENT SUBMISSION_DIR [--student ID] [--json]
    scalelabs grade-batch ASSIGNMENT SUBMISSIONS_ROOT --jobs N [--out DIR] [--db URL]
    scalelabs release [ASSIGNMENT ...] | otter ASSIGNMENT | demo | check

ASSIGNMENT is a lab id (autograder/labs/) or `package.module:NAME` of an Assignment. Bad arguments
print one line naming what is wrong and exit 2, without a traceback.

Each command imports what it uses when it runs: `scalelabs grade --json` (what Gradescope runs per
submission) loads neither rich, nor nbgrader, nor otter, nor any lab but the one graded.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


class Exit(Exception):
    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


def fail(message: str, code: int = 2) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise Exit(code)


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr)


def _assignment(name: str):
    from .batch import resolve_assignment

    if ":" in name and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return resolve_assignment(name)
    except ValueError as exc:
        fail(str(exc))


def _folder(path: Path, what: str) -> Path:
    if not path.exists():
        fail(f"{what} {path} does not exist")
    if not path.is_dir():
        fail(f"{what} {path} is not a folder")
    return path


def grade(args: argparse.Namespace) -> None:
    """Grade one submission."""
    from .grade import grade_submission

    spec = _assignment(args.assignment)
    _folder(args.submission_dir, "submission folder")
    result = grade_submission(spec, args.submission_dir, args.student)
    if args.as_json:
        print(json.dumps(result.to_gradescope(), indent=1))
        return
    from rich.table import Table

    table = Table(title=f"{spec.title} — {args.student}")
    for col, justify in (("check", "left"), ("score", "right"), ("feedback", "left")):
        table.add_column(col, justify=justify, overflow="fold")
    for t in result.tests:
        style = "green" if t.score >= t.max_score - 1e-9 else ("yellow" if t.score > 0 else "red")
        table.add_row(t.name, f"[{style}]{t.score:.2f}/{t.max_score:.2f}[/]", t.output)
    out = _console()
    out.print(table)
    out.print(f"[bold]total {result.score:.2f} / {result.max_score:.2f}[/]  ({result.output})", highlight=False)


def grade_batch(args: argparse.Namespace) -> None:
    """Grade a class in parallel; resumable; writes results, feedback pages, a CSV and the gradebook."""
    from .batch import students
    from .progress import grade_batch_with_progress

    spec = _assignment(args.assignment)
    _folder(args.submissions_root, "submissions root")
    if not students(args.submissions_root):
        fail(f"submissions root {args.submissions_root} has no student subfolders")
    target = args.out_dir or Path("grades") / spec.id
    err = _console(stderr=True)
    summary = grade_batch_with_progress(args.assignment, args.submissions_root, target, args.jobs,
                                        db_url=args.db, console=err)
    out = _console()
    out.print(f"graded {len(summary.graded)}, skipped {len(summary.skipped)} already graded, "
              f"failed {len(summary.failed)}", highlight=False)
    for student, why in summary.failed.items():
        err.print(f"[red]{student}[/]: grader error {why}", highlight=False)
    out.print(f"results and feedback: {summary.out_dir}\nclass CSV: {summary.csv_path}\ngradebook: {summary.db_url}",
              highlight=False)
    if summary.failed:
        raise Exit(1)


def release(args: argparse.Namespace) -> None:
    """Regenerate stubs, source/ and release/."""
    from .release import release as run_release

    run_release(args.assignments or None)


def otter(args: argparse.Namespace) -> None:
    """Build the Gradescope autograder zip with otter-grader."""
    from .doors.otter import build_zip

    print(build_zip(args.assignment))


def demo(args: argparse.Namespace) -> None:
    """Build everything, grade the sample class into a SQLite gradebook, print the grade table."""
    from .demo import run

    run()


def check(args: argparse.Namespace) -> None:
    """Run the public tests of a released assignment folder (offline, no reference needed)."""
    import pytest

    _folder(args.folder, "assignment folder")
    raise Exit(int(pytest.main(["-q", "-p", "no:cacheprovider", str(args.folder)])))


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:    # one line, exit 2 (argparse would add the usage)
        fail(f"{message} (scalelabs {self.prog.split(' ', 1)[-1]} --help)" if " " in self.prog else message)


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="scalelabs",
                  description="Autograded ML-systems-at-scale labs: release, grade, grade a class.")
    commands = top.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, run) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=run.__doc__, description=run.__doc__)
        sub.set_defaults(run=run)
        return sub

    sub = command("grade", grade)
    sub.add_argument("assignment", help="lab id, e.g. lab06_collectives")
    sub.add_argument("submission_dir", type=Path, help="a folder shaped like release/ASSIGNMENT/")
    sub.add_argument("--student", default="anonymous", help="student id (seeds the hidden inputs)")
    sub.add_argument("--json", dest="as_json", action="store_true", help="print Gradescope results.json")
    sub = command("grade-batch", grade_batch)
    sub.add_argument("assignment")
    sub.add_argument("submissions_root", type=Path, help="one subfolder per student")
    sub.add_argument("--jobs", "-j", type=_jobs, default=2, help="grading processes")
    sub.add_argument("--out", dest="out_dir", type=Path, default=None, help="default: grades/ASSIGNMENT")
    sub.add_argument("--db", default=None, help="gradebook URL (default: OUT/gradebook.db)")
    command("release", release).add_argument("assignments", nargs="*", help="default: every lab")
    command("otter", otter).add_argument("assignment")
    command("demo", demo)
    command("check", check).add_argument("folder", nargs="?", type=Path, default=Path("."),
                                         help="a released assignment folder")
    return top


def main(argv: list[str] | None = None) -> None:
    top = parser()
    try:
        args = top.parse_args(argv)
        if not getattr(args, "run", None):
            top.print_help()
            raise Exit(2)
        args.run(args)
    except Exit as done:
        sys.exit(done.code)


if __name__ == "__main__":
    main()
