"""Honest predictions, notebook side: the prediction lock, the record its reveal makes, and the
explanations the reveal shows.

A *reveal* is a locked `Code` cell with `requires=(qid, ...)`. Built by `locked_source`, it shows
nothing but a reminder until every required answer is given; then, for each required
**prediction**, it calls `_scalelabs_reveal` (defined by the setup cell, `setup_prelude`), which

* records the first answer the kernel holds when the reveal runs, in `RECORD_FILE` in the
  notebook's folder (the memory across kernel restarts) -- later runs keep the first answer;
* emits every recorded answer as an output of the cell: a display_data carrying `MIMETYPE`
  `{"question": qid, "answer": "B"}` and a line the student reads. The saved notebook carries the
  record to every door; the engine grades it (autograder.engine.questions.recorded_answers), and
  the record file where the outputs were cleared;
* prints why each option is right or wrong (`Question.why`), at the last reveal of the prediction.
  They ship zlib+base64-encoded in the reveal's source, so scrolling the notebook does not show
  them before the reveal (decoding them is possible; nothing in a notebook can stop it, see
  docs/ARCHITECTURE.md, "Honest predictions").

Reflections are only locked: nothing records or explains them in the notebook (their answer cell is
graded as it stands, and their explanations appear with the grade).
"""
from __future__ import annotations

import base64
import inspect
import json
import textwrap
import zlib
from typing import Sequence

from autograder.engine.submission import RECORD_FILE as ENGINE_RECORD_FILE, RECORD_MIMETYPE
from autograder.engine.spec import Assignment, Code


def _scalelabs_reveal(namespace, options, why="", record_file=".scalelabs_predictions.json",
                      mimetype="application/vnd.scalelabs.prediction+json"):
    """Record each prediction's first answer at its reveal and show it; True when the reveal may run.

    options: prediction id -> its option letters ("ABCD"); why: the encoded explanations of the
    predictions explained here. Your first answer is what counts: changing it later changes nothing.
    """
    import base64, json, os, zlib  # noqa: E401  (this function runs in the student's kernel)
    memory = namespace.setdefault("_scalelabs_recorded", {})
    try:
        with open(record_file, encoding="utf-8") as f:
            stored = json.load(f)
    except (OSError, ValueError):
        stored = {}
    recorded = dict(memory)
    if isinstance(stored, dict):
        recorded.update({q: a for q, a in stored.items() if isinstance(a, str)})
    new = {}
    for qid, letters in options.items():
        if recorded.get(qid) in tuple(letters):
            continue
        value = namespace.get(qid)
        answer = value.strip().upper() if isinstance(value, str) else ""
        if len(answer) != 1 or answer not in letters:
            print(f"{qid} = {value!r} is not one of the options {', '.join(letters)}: write one letter in "
                  f"quotes in its answer cell and run it; nothing is recorded yet")
            return False
        new[qid] = answer
    if new:
        recorded.update(new)
        memory.update(recorded)
        try:
            with open(record_file + ".tmp", "w", encoding="utf-8") as f:
                json.dump(recorded, f, indent=1, sort_keys=True)
            os.replace(record_file + ".tmp", record_file)
        except OSError as exc:
            print(f"(could not save {record_file}: {exc}; your predictions are kept until the kernel restarts)")
    try:
        from IPython.display import display
    except ImportError:
        display = None
    explained = json.loads(zlib.decompress(base64.b64decode(why))) if why else {}
    for qid in options:
        text = (f"Your prediction for {qid} is recorded as {recorded[qid]} "
                f"(changing it now does not change your grade)")
        now = namespace.get(qid)
        if isinstance(now, str) and now.strip().upper() != recorded[qid]:
            text += f"; {qid} is now {now!r}"
        if display is None:
            print(text)
        else:
            display({mimetype: {"question": qid, "answer": recorded[qid]}, "text/plain": text}, raw=True)
        if qid in explained:
            print(f"Why each option of {qid} is right or wrong:")
            for letter, reason in explained[qid]["why"].items():
                best = " (the best answer)" if letter == explained[qid]["key"] else ""
                print(f"  {letter}{best}: {reason}")
    return True


_DEFAULTS = inspect.signature(_scalelabs_reveal).parameters
RECORD_FILE: str = _DEFAULTS["record_file"].default   # in the notebook's folder, written by the kernel
MIMETYPE: str = _DEFAULTS["mimetype"].default          # the record's output type, read by the engine
if (MIMETYPE, RECORD_FILE) != (RECORD_MIMETYPE, ENGINE_RECORD_FILE):  # the kernel's literals: what the engine reads
    raise RuntimeError(f"the reveal records {MIMETYPE} in {RECORD_FILE}, the engine reads "
                       f"{RECORD_MIMETYPE} in {ENGINE_RECORD_FILE}")


def encode_why(explanations: dict) -> str:
    """`{qid: {"key": letter, "why": {letter: text}}}` as base64 of zlib'd JSON (one line)."""
    raw = json.dumps(explanations, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def decode_why(blob: str) -> dict:
    return json.loads(zlib.decompress(base64.b64decode(blob)))


def _predictions(assignment: Assignment, qids: Sequence[str]) -> list:
    return [q for q in (assignment.question(qid) for qid in qids) if q.kind == "prediction"]


def revealed(assignment: Assignment) -> bool:
    """Whether any reveal of the notebook records a prediction (then the setup defines the recorder)."""
    return any(isinstance(c, Code) and _predictions(assignment, c.requires) for c in assignment.notebook)


def setup_prelude(assignment: Assignment) -> str:
    """What the setup cell adds for the reveals: the recorder's definition, or nothing."""
    if not revealed(assignment):
        return ""
    return ("\n\n# Your predictions are recorded when their reveal first runs (generated).\n"
            + inspect.getsource(_scalelabs_reveal).rstrip("\n"))


def explained_here(cells: Sequence, index: int) -> tuple[str, ...]:
    """The questions `cells[index]` (a Code cell) requires that no later Code cell requires: their
    explanations print there, once the whole reveal has been seen."""
    later = {qid for c in cells[index + 1:] if isinstance(c, Code) for qid in c.requires}
    return tuple(qid for qid in cells[index].requires if qid not in later)


def locked_source(source: str, requires: Sequence[str], assignment: Assignment | None = None,
                  explain: Sequence[str] = ()) -> str:
    """`source` behind the prediction lock: nothing but a reminder until every answer is given;
    then the required predictions of `assignment` are recorded (and those in `explain` explained)
    before `source` runs. Without `assignment`, only the lock."""
    if not requires:
        return source
    lines = []
    for i, qid in enumerate(requires):
        lines.append(f'{"if" if i == 0 else "elif"} globals().get("{qid}") is None:')
        lines.append(f'    print("answer {qid} above first")')
    predictions = _predictions(assignment, requires) if assignment is not None else []
    if predictions:
        options = {q.id: "".join(q.options) for q in predictions}
        why = {q.id: {"key": q.key, "why": dict(q.why)} for q in predictions if q.why and q.id in explain}
        blob = f", {encode_why(why)!r}" if why else ""
        lines.append(f"elif _scalelabs_reveal(globals(), {options!r}{blob}):")
    else:
        lines.append("else:")
    lines.append(textwrap.indent(source.rstrip("\n"), "    ", lambda line: True))
    return "\n".join(lines)
