"""What reading a notebook costs the grader, honest and hostile (issue 26, "every cost inside a budget").

    python bench/bench_notebook.py [ASSIGNMENT] [--runs 3]

Builds, beside the lab's reference submission (release/ + the reference module + the keys), notebooks
that cost the reader the most: 1,990 parseable 10,000-character code cells naming every question and
design challenge, the same cells just over the parse cap (read line by line), and one 19 MB markdown
cell. For each it prints the CPU seconds (median of --runs) of reading the submission once and grading
every question and challenge from it (read_submission, grade_questions, grade_challenges: no sandbox),
the characters parsed, and the honest notebook's figure beside them.
"""
from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograder.classroom.samples import reference_submission  # noqa: E402
from autograder.engine.challenges import grade_challenges  # noqa: E402
from autograder.engine.questions import grade_questions  # noqa: E402
from autograder.engine.submission import read_submission  # noqa: E402
from labs import load  # noqa: E402


def _cell(source: str, kind: str = "code") -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(outputs=[], execution_count=None)
    return cell


def hostile_cells(names: list[str], size: int, count: int) -> list[dict]:
    """`count` code cells of `size` characters, each assigning every name at top level."""
    head = "".join(f'{n} = "A"\n' for n in names)
    filler = "".join(f"x{i} = {i}  # {' '.join(names)}\n" for i in range(size))
    return [_cell((head + filler)[:size]) for _ in range(count)]


def notebooks(assignment, honest: dict) -> dict[str, dict]:
    names = [q.id for q in assignment.questions] + [c.id for c in assignment.challenges]
    built = {"honest": honest}
    for label, cells in (("1,990 parseable 10,000-character cells", hostile_cells(names, 10_000, 1990)),
                         ("1,990 cells of 10,001 characters (over the parse cap)", hostile_cells(names, 10_001, 1990)),
                         ("one 19 MB markdown cell", [_cell("x" * (19 << 20), "markdown")])):
        built[label] = dict(honest, cells=list(honest["cells"]) + cells)
    return built


def measure(assignment, folder: Path, runs: int) -> tuple[float, int, float]:
    """(median CPU s, characters ast.parse saw, score) of reading and grading the notebook part."""
    parsed = [0]
    real_parse = ast.parse

    def counting(source, *args, **kwargs):
        parsed[0] += len(source)
        return real_parse(source, *args, **kwargs)
    times = []
    ast.parse = counting
    try:
        for _ in range(runs):
            parsed[0] = 0
            start = time.process_time()
            names = [q.id for q in assignment.questions] + [c.id for c in assignment.challenges]
            submission = read_submission(folder, assignment.id, names)
            graded = grade_questions(assignment.questions, submission) + grade_challenges(assignment.challenges, submission)
            times.append(time.process_time() - start)
    finally:
        ast.parse = real_parse
    return statistics.median(times), parsed[0], sum(g.score for g in graded)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("assignment", nargs="?", default="lab06_collectives")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    assignment = load(args.assignment)
    with tempfile.TemporaryDirectory() as tmp:
        folder = reference_submission(assignment, Path(tmp) / "honest")
        notebook = folder / f"{assignment.id}.ipynb"
        honest = json.loads(notebook.read_text())
        print(f"{assignment.id}: reading the notebook and grading its questions and challenges, CPU s (median of {args.runs})")
        for label, nb in notebooks(assignment, honest).items():
            notebook.write_text(json.dumps(nb))
            cpu, parsed, score = measure(assignment, folder, args.runs)
            print(f"  {label:55s} {cpu:7.3f} s   {parsed:>11,} characters parsed   score {score:g}")


if __name__ == "__main__":
    main()
