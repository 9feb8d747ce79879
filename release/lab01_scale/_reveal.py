"""Reveals: the notebook cells that show what your functions measure once you have answered a
prediction (shipped with every lab; you do not need to edit it).

A reveal cell reads

    with reveal(globals(), ("act1_prediction",), "...") as ready:
        if ready:
            ...   # the instrument or readout, computed by YOUR functions

* Until its question is answered it only says so.
* The first time it runs with an answer it **records** your prediction: the answer graded is the one
  recorded, whatever the answer cell says later. The record is kept in this kernel, in
  `.scalelabs_predictions.json` beside the notebook and in the notebook's saved outputs, so a
  restart, a re-run or a deleted record file does not change it. Submit the notebook with its
  outputs (do not clear them): a prediction without a record earns no points.
* Then the cell runs. If one of your functions is not written yet it says which one to implement
  and stops (Run All goes on); once your functions have computed the numbers, the last reveal of a
  prediction explains every option, yours marked, and what to check your derivation against (where
  your course grades predictions for correctness, that comes with your feedback after the due date).
"""
from __future__ import annotations

import base64
import html
import json
import os
import zlib
from pathlib import Path
from typing import Any, Sequence

RECORD_FILE = ".scalelabs_predictions.json"              # beside the notebook (the kernel's cwd)
MIMETYPE = "application/vnd.scalelabs.prediction+json"   # a record, as the grader reads it
MEMORY = "_scalelabs_recorded"                           # the kernel's copy (a global of the notebook)
NOTEBOOK_CAP_BYTES = 20 << 20                            # a saved notebook larger than this is not read
# CSS classes the browser tests look for
CARD_CLASS = "scalelabs-reveal"
OPTION_CLASS = "scalelabs-option"
PROBLEM_CLASS = "scalelabs-reveal-problem"

__all__ = ["reveal", "Reveal", "decode", "encode"]


def encode(data: dict) -> str:
    """A reveal's data as one line (base64 of zlib'd JSON): not readable by scrolling the notebook."""
    raw = json.dumps(data, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def decode(blob: str) -> dict:
    return json.loads(zlib.decompress(base64.b64decode(blob))) if blob else {}


def _letter(value) -> str:
    return value.strip().upper() if isinstance(value, str) else ""


# --- where a record is kept ------------------------------------------------------------------------

def _file_records(path: Path) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8") as f:
            stored = json.load(f)
    except (OSError, ValueError):
        return {}
    return {q: a for q, a in stored.items() if isinstance(q, str) and isinstance(a, str)} \
        if isinstance(stored, dict) else {}


def _notebook_records(path: Path | None) -> dict[str, str]:
    """The first record of each question among the saved notebook's outputs (what the last save holds)."""
    found: dict[str, str] = {}
    try:
        if path is None or not path.is_file() or path.stat().st_size > NOTEBOOK_CAP_BYTES:
            return found
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return found
    for cell in cells if isinstance(cells, list) else []:
        for output in (cell.get("outputs") or []) if isinstance(cell, dict) else []:
            record = output.get("data", {}).get(MIMETYPE) if isinstance(output, dict) else None
            if isinstance(record, dict) and isinstance(record.get("question"), str) \
                    and isinstance(record.get("answer"), str):
                found.setdefault(record["question"], record["answer"])
    return found


def notebook_path(namespace: dict, assignment: str) -> Path | None:
    """The notebook this kernel runs: Jupyter's session path where it tells (`__session__`), else
    `<assignment>.ipynb` in the current folder."""
    session = namespace.get("__session__") or os.environ.get("JPY_SESSION_NAME")
    if isinstance(session, str) and session.endswith(".ipynb"):
        path = Path(session)
        if path.is_file():
            return path
        if (Path.cwd() / path.name).is_file():
            return Path.cwd() / path.name
    return Path.cwd() / f"{assignment}.ipynb" if assignment else None


def known_records(namespace: dict, assignment: str = "") -> dict[str, str]:
    """question -> recorded answer: the kernel's memory first, then the record file, then the saved
    notebook's outputs (so a restart, a re-run and a deleted file all keep the first answer)."""
    recorded: dict[str, str] = {}
    for source in (lambda: namespace.get(MEMORY) or {}, lambda: _file_records(Path(RECORD_FILE)),
                   lambda: _notebook_records(notebook_path(namespace, assignment))):
        for qid, answer in source().items():
            recorded.setdefault(qid, answer)
    return recorded


def _save(recorded: dict[str, str]) -> str | None:
    """Write the record file (atomically); the problem, or None."""
    try:
        previous = _file_records(Path(RECORD_FILE))
        with open(RECORD_FILE + ".tmp", "w", encoding="utf-8") as f:
            json.dump({**previous, **recorded}, f, indent=1, sort_keys=True)
        os.replace(RECORD_FILE + ".tmp", RECORD_FILE)
    except OSError as exc:
        return f"could not save {RECORD_FILE}: {exc.strerror or exc}"
    return None


# --- what the student sees -------------------------------------------------------------------------

def _display(bundle: dict) -> None:
    try:
        from IPython.display import display
    except ImportError:   # plain Python: the text
        print(bundle.get("text/plain", ""))
        return
    display(bundle, raw=True)


_BOX = ("border: 1px solid #c9d4e2; border-radius: 6px; padding: 8px 12px; margin: 6px 0; "
        "background: #f6f8fb; white-space: normal; line-height: 1.45")


def _note(text: str, css_class: str = CARD_CLASS, colour: str = "#2f6fb0", background: str = "#f6f8fb") -> None:
    _display({"text/plain": text, "text/html": f'<div class="{css_class}" style="{_BOX}; background: {background}; '
                                                 f'border-left: 4px solid {colour}">{html.escape(text)}</div>'})


def _problem_note(text: str) -> None:
    _note(text, PROBLEM_CLASS, "#d9822b", "#fff6ec")


def _record_card(qid: str, question: dict, recorded: str, now: Any, warning: str | None, full: bool = True) -> None:
    """One card: the recorded answer and its text, the current answer where it differs (`full`), else
    one line; either way the record the grader reads."""
    text = question.get("options", {}).get(recorded, "")
    if not full:
        plain = f"(your recorded prediction for {qid}: {recorded})"
        _display({MIMETYPE: {"question": qid, "answer": recorded}, "text/plain": plain,
                  "text/html": f'<div class="{CARD_CLASS}" style="font-size: 90%; color: #555">Your recorded '
                               f"prediction for <code>{html.escape(qid)}</code>: {html.escape(recorded)}</div>"})
        return
    plain = f"Your prediction for {qid}: {recorded}" + (f" ({text})" if text else "") + \
        ", recorded: this is the answer graded."
    changed = _letter(now) and _letter(now) != recorded
    if changed:
        plain += f" Your answer cell now says {now!r}; the recorded {recorded} still counts."
    body = (f"<b>Your prediction for <code>{html.escape(qid)}</code>: {html.escape(recorded)}</b>"
            + (f" &mdash; {html.escape(text)}" if text else "")
            + '<div style="font-size: 90%; color: #444">Recorded the first time this reveal ran: '
              "this is the answer graded.</div>")
    if changed:
        body += (f'<div style="font-size: 90%; color: #8a4b00">Your answer cell now says '
                 f"{html.escape(repr(now))}; the recorded {html.escape(recorded)} still counts.</div>")
    if warning:
        plain += f" ({warning}; the record is kept in the notebook's outputs: save it)"
        body += f'<div style="font-size: 90%; color: #8a4b00">{html.escape(warning)}; the record is kept in ' \
                "the notebook's outputs: save it.</div>"
    _display({MIMETYPE: {"question": qid, "answer": recorded}, "text/plain": plain,
              "text/html": f'<div class="{CARD_CLASS}" style="{_BOX}; border-left: 4px solid #2f6fb0">{body}</div>'})


def _why_cards(qid: str, question: dict, recorded: str) -> None:
    """One card per option: its text and why it is right or wrong, the recorded answer and the best
    one marked."""
    key, why = question.get("key"), question.get("why", {})
    plain = [f"Why each option of {qid} is right or wrong:"]
    cards = []
    for letter, text in question.get("options", {}).items():
        marks = [m for m, on in (("your prediction", letter == recorded), ("best answer", letter == key)) if on]
        plain.append(f"  {letter}. {text}" + (f" [{', '.join(marks)}]" if marks else "")
                     + (f": {why[letter]}" if letter in why else ""))
        colour = "#2e7d32" if letter == key else ("#2f6fb0" if letter == recorded else "#b8c2cc")
        badges = "".join(f' <span style="font-size: 80%; border: 1px solid {colour}; border-radius: 8px; '
                         f'padding: 0 6px; color: {colour}">{m}</span>' for m in marks)
        cards.append(f'<div class="{OPTION_CLASS}" data-letter="{letter}" style="{_BOX}; border-left: 4px solid '
                     f'{colour}"><b>{letter}.</b> {html.escape(text)}{badges}'
                     + (f'<div style="margin-top: 4px">{html.escape(why[letter])}</div>' if letter in why else "")
                     + "</div>")
    _display({"text/plain": "\n".join(plain),
              "text/html": f'<div class="{CARD_CLASS}"><div style="font-weight: 600; margin-top: 6px">Why each '
                           f"option of <code>{html.escape(qid)}</code> is right or wrong</div>{''.join(cards)}</div>"})


def _markdown(text: str) -> None:
    _display({"text/plain": text, "text/markdown": text})


# --- the reveal ------------------------------------------------------------------------------------

class Reveal:
    """`with reveal(globals(), qids, data) as ready:` -- see the module docstring."""

    def __init__(self, namespace: dict, qids: Sequence[str], data: str = ""):
        self.namespace, self.qids = namespace, tuple(qids)
        self.data = decode(data)
        self.unknown_version = False
        if "variants" in self.data:   # every version of the lab: yours (_variant.py), once your id is known
            chosen = _chosen_version()
            versions = self.data["variants"]
            self.unknown_version = chosen is None or chosen >= len(versions)
            self.data = {} if self.unknown_version else versions[chosen]
        self.questions: dict = self.data.get("questions", {})
        self.recorded: dict[str, str] = {}
        self.ready = False
        self._instruments = 0

    def __enter__(self) -> bool:
        if self.unknown_version:
            _note("Your id is not known yet, so neither is your version of this lab: see the setup cell, then run the "
                  "notebook again from the top. Nothing is recorded until then.", colour="#8a96a3")
            return False
        for qid in self.qids:
            if self.namespace.get(qid) is None:
                _note(f"Answer {qid} above first, then run this cell: it records your answer and shows what "
                      "your functions measure.", colour="#8a96a3")
                return False
        predictions = [q for q in self.qids if self.questions.get(q, {}).get("kind") == "prediction"]
        known = known_records(self.namespace, self.data.get("assignment", ""))
        new = {}
        for qid in predictions:
            letters = list(self.questions[qid].get("options", {}))
            if known.get(qid) in letters:
                self.recorded[qid] = known[qid]
                continue
            value = self.namespace.get(qid)
            if _letter(value) not in letters:
                _note(f"{qid} = {value!r} is not one of the options {', '.join(letters)}: write one letter in "
                      "quotes in its answer cell and run it. Nothing is recorded yet.", colour="#c0392b",
                      background="#fdf1f0")
                return False
            new[qid] = self.recorded[qid] = _letter(value)
        # every record known is kept in the kernel and the file again (a deleted file comes back)
        memory = self.namespace.setdefault(MEMORY, {})
        memory.update(self.recorded)
        warning = _save(self.recorded) if new or any(_file_records(Path(RECORD_FILE)).get(q) != a
                                                      for q, a in self.recorded.items()) else None
        first = self.data.get("first", self.qids)
        for qid in predictions:
            _record_card(qid, self.questions[qid], self.recorded[qid], self.namespace.get(qid), warning,
                         full=qid in first or qid in new)
        self._instruments = _instruments_shown()
        self.ready = True
        return True

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is not None:
            if not isinstance(exc, Exception):
                return False   # KeyboardInterrupt, SystemExit: the student's to see
            _problem_note(_problem(exc))
            return True        # no traceback: Run All goes on
        if not self.ready:
            return False
        problem = _instrument_problem(self._instruments)
        explained = [q for q in self.data.get("explain", ()) if q in self.recorded or
                     self.questions.get(q, {}).get("kind") != "prediction"]
        if problem is not None:
            if explained or self.data.get("peek"):
                _problem_note(f"The explanations appear here once your functions draw the instrument above "
                              f"({problem})")
            return False
        for qid in explained:
            _why_cards(qid, self.questions[qid], self.recorded.get(qid, ""))
        if self.data.get("peek"):
            _markdown(self.data["peek"])
        later = [q for q in self.data.get("later", ()) if q in self.recorded]
        if later:
            _note(f"Your course grades predictions for correctness: the best answer to {', '.join(later)} and why "
                  "each option is right or wrong come with your feedback after the due date.")
        return False


def reveal(namespace: dict, qids: Sequence[str], data: str = "") -> Reveal:
    return Reveal(namespace, qids, data)


def _chosen_version() -> int | None:
    """The index of your version of the lab (_variant.py's choice), or None before your id is known."""
    try:
        from _variant import chosen
    except ImportError:
        return None
    found = chosen()
    return found["index"] if found else None


def _problem(exc: Exception) -> str:
    """What to tell the student when the reveal's code raised: the function to implement or fix (or,
    for a name a stopped cell above never computed, to implement what the cells above name)."""
    try:
        from _instruments import explain
    except ImportError:
        return f"This reveal could not run ({type(exc).__name__}: {str(exc)[:200]})."
    message, _ = explain(exc, "the scenario", lambda: [])
    message = message.replace("to see this instrument", "to see this reveal")
    for said in ("This instrument could not draw", "This instrument needs"):
        message = message.replace(said, said.replace("This instrument", "This reveal").replace("could not draw", "could not run"))
    return message


def _instruments_shown() -> int:
    try:
        import _instruments
    except ImportError:
        return 0
    return len(_instruments.shown_problems)


def _instrument_problem(since: int) -> str | None:
    """The problem of the first instrument shown since `since` that could not draw, or None."""
    try:
        import _instruments
    except ImportError:
        return None
    return next((p for p in _instruments.shown_problems[since:] if p is not None), None)
