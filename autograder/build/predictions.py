"""Honest predictions, notebook side: the source of a reveal cell and what it carries.

A *reveal* is a locked `Code` cell with `requires=(qid, ...)`. Its built source is the lab's code
inside the shipped `_reveal.reveal` (autograder/build/student/_reveal.py, imported by the setup):

    with reveal(globals(), ("act1_prediction",), "<data>") as ready:
        if ready:
            <the lab's code>

which shows nothing but a reminder until every required answer is given; records each required
**prediction** the first time it runs (the kernel, `RECORD_FILE`, and an output of `MIMETYPE` the
engine grades: autograder.engine.questions); runs the lab's code, stopping cleanly where a
student function is missing; and, at the last reveal of a prediction, once the student's functions
have computed the numbers, explains every option (`Question.why`, the recorded answer and the key
marked) and shows the lab's markdown attached to it (`Markdown(reveal=qid)`: "check your
derivation"). `<data>` is zlib+base64 JSON, so scrolling the notebook does not show it (decoding
it is possible: nothing inside a notebook can stop it; docs/ARCHITECTURE.md, "Honest predictions").
So it carries a key only where the key earns nothing: under `[grading] predictions = "commitment"`
(any recorded option earns the points) a prediction's key and explanations; under "correctness"
neither, nor the markdown shown at the reveal (it derives the answer): the reveal records the
prediction and shows the measurement, and says the best answer comes with the feedback
(`LATER`). A reflection's key and explanations never ship (the leak scan decodes and checks).

Reflections are only locked: nothing records or explains them in the notebook (their answer cell is
graded as it stands; their explanations and takeaway appear with the grade).
"""
from __future__ import annotations

import textwrap
from typing import Sequence

from autograder.build.dollars import for_jupyterlab
from autograder.build.student import _reveal as kernel
from autograder.engine.config import PREDICTION_MODES
from autograder.engine.spec import Answer, Assignment, Code, Markdown
from autograder.engine.submission import RECORD_FILE as ENGINE_RECORD_FILE, RECORD_MIMETYPE

RECORD_FILE: str = kernel.RECORD_FILE   # in the notebook's folder, written by the kernel
MIMETYPE: str = kernel.MIMETYPE         # the record's output type, read by the engine
if (MIMETYPE, RECORD_FILE) != (RECORD_MIMETYPE, ENGINE_RECORD_FILE):  # what the kernel writes is what the engine reads
    raise RuntimeError(f"the reveal records {MIMETYPE} in {RECORD_FILE}, the engine reads "
                       f"{RECORD_MIMETYPE} in {ENGINE_RECORD_FILE}")
SETUP_LINE = "from _reveal import reveal   # records your predictions at their reveals (_reveal.py)"

encode, decode = kernel.encode, kernel.decode


def _predictions(assignment: Assignment, qids: Sequence[str]) -> list:
    return [q for q in (assignment.question(qid) for qid in qids) if q.kind == "prediction"]


def with_reveals(assignment: Assignment, cells: Sequence) -> list:
    """`cells` with a reveal after the answer of every prediction that no Code cell requires (it
    records the prediction and explains it): every prediction has a record to grade."""
    required = {qid for c in cells if isinstance(c, Code) for qid in c.requires}
    out = []
    for cell in cells:
        out.append(cell)
        if isinstance(cell, Answer) and cell.question_id not in required \
                and assignment.question(cell.question_id).kind == "prediction":
            out.append(Code("", requires=(cell.question_id,), hidden=True))
    return out


def revealed(assignment: Assignment, cells: Sequence | None = None) -> bool:
    """Whether the notebook has a reveal (then the setup imports `reveal`)."""
    cells = with_reveals(assignment, assignment.notebook if cells is None else cells)
    return any(isinstance(c, Code) and c.requires for c in cells)


def setup_prelude(assignment: Assignment) -> str:
    """What the setup cell adds for the reveals: the import of `reveal`, or nothing."""
    return f"\n{SETUP_LINE}" if revealed(assignment) else ""


def first_here(cells: Sequence, index: int) -> tuple[str, ...]:
    """The questions `cells[index]` (a Code cell) requires that no earlier Code cell requires."""
    earlier = {qid for c in cells[:index] if isinstance(c, Code) for qid in c.requires}
    return tuple(qid for qid in cells[index].requires if qid not in earlier)


def explained_here(cells: Sequence, index: int) -> tuple[str, ...]:
    """The questions `cells[index]` (a Code cell) requires that no later Code cell requires: their
    explanations show there, once the whole reveal has been seen."""
    later = {qid for c in cells[index + 1:] if isinstance(c, Code) for qid in c.requires}
    return tuple(qid for qid in cells[index].requires if qid not in later)


def peeks(assignment: Assignment, cells: Sequence) -> dict[str, str]:
    """prediction id -> the markdown its last reveal shows after the student's functions ran (the
    lab's `Markdown(reveal=qid)` cells, in order)."""
    found: dict[str, list[str]] = {}
    for cell in cells:
        if isinstance(cell, Markdown) and cell.reveal:
            q = assignment.question(cell.reveal)
            if q.kind != "prediction":
                raise ValueError(f"{assignment.id}: a markdown cell shows at the reveal of {q.id}, a {q.kind}; "
                                 "only a prediction has a reveal (put a reflection's takeaway in questions.md)")
            found.setdefault(q.id, []).append(cell.text)
    return {qid: for_jupyterlab("\n\n".join(texts), f"the reveal of {qid}") for qid, texts in found.items()}


def keys_ship(predictions: str) -> bool:
    """Whether a reveal may carry its predictions' keys: only where a key earns nothing (commitment)."""
    if predictions not in PREDICTION_MODES:
        raise ValueError(f"predictions must be one of {', '.join(PREDICTION_MODES)}, not {predictions!r}")
    return predictions == "commitment"


def reveal_data(assignment: Assignment, requires: Sequence[str], explain: Sequence[str] = (),
                peek: str = "", first: Sequence[str] = (), predictions: str = "commitment") -> dict:
    """What a reveal carries: per required question its kind and options; the key and explanations
    of the predictions it explains and the markdown it shows once the functions ran, where keys ship
    (`keys_ship`; else `later`: the reveal says the best answer comes with the feedback); the
    predictions whose first reveal it is (it shows their record in full, later ones in a line)."""
    ship = keys_ship(predictions)
    questions = {}
    for qid in requires:
        q = assignment.question(qid)
        entry = {"kind": q.kind, "options": dict(q.options)}
        if q.kind == "prediction" and qid in explain and ship:
            entry |= {"key": q.key, "why": dict(q.why)}
        questions[qid] = entry
    explained = [q for q in explain if questions[q]["kind"] == "prediction"]
    data = {"assignment": assignment.id, "questions": questions, "first": list(first)}
    if not ship:
        return data | {"explain": [], "later": explained}
    return data | {"explain": explained} | ({"peek": peek} if peek else {})


def locked_source(source: str, requires: Sequence[str], assignment: Assignment | None = None,
                  explain: Sequence[str] = (), peek: str = "", first: Sequence[str] | None = None,
                  predictions: str = "commitment") -> str:
    """`source` inside its reveal (see the module docstring); a cell that requires nothing is
    returned as it is. Without `assignment`, the lock alone (no record, no explanation)."""
    if not requires:
        return source
    first = requires if first is None else first
    data = encode(reveal_data(assignment, requires, explain, peek, first, predictions)) \
        if assignment is not None else ""
    asked = ", ".join(repr(q) for q in requires) + ("," if len(requires) == 1 else "")
    body = textwrap.indent(source.rstrip("\n") or "pass", "        ", lambda line: True)
    return (f"# Reveal: {', '.join(requires)} (_reveal.py)\n"
            f"with reveal(globals(), ({asked}), {data!r}) as ready:\n"
            f"    if ready:\n{body}")
