"""A class batch with a rich progress bar: shared by `scalelabs grade-batch` and `scalelabs demo`."""
from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from autograder.classroom.batch import BatchSummary, grade_batch


def grade_batch_with_progress(assignment: str, root: Path, out_dir: Path, jobs: int, *,
                              db_url: str | None, console: Console, label: str = "grading",
                              allow_unsandboxed: bool = False, only: tuple[str, ...] = (),
                              force: bool = False, timestamps: Path | None = None, shard=None) -> BatchSummary:
    """grade_batch with a bar that starts at the students already graded by an earlier run."""
    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=console, transient=False) as progress:
        task = progress.add_task("", total=None)

        def on_start(total: int, todo: int) -> None:
            progress.update(task, total=total, completed=total - todo,
                            description=f"({total - todo} already graded)" if todo < total else "")

        return grade_batch(assignment, root, out_dir, jobs, db_url=db_url, allow_unsandboxed=allow_unsandboxed,
                           only=only, force=force, on_start=on_start, on_done=lambda _student: progress.advance(task),
                           timestamps=timestamps, shard=shard)
