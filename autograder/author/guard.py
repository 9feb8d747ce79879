"""The give-away guard (issue 14, honest predictions): a question must not be answerable by reading.

No text a student can read before a question (the stub, the markdown above it, every other question's
prompt and options, code, and what earlier cells print once answered) states its keyed figure (the
lab's `questions.KEYED_FIGURES`) or a run of RUN_WORDS words of its keyed option that no other option
shares; its own prompt neither. Options of one question are of comparable length (the key is not the
conspicuously careful one) and each says why it is right or wrong. `scalelabs lint` and the lab tests
run it.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import re
from pathlib import Path

from autograder.author.kernel import mock_display, student_kernel
from autograder.build.notebook import build_notebook, prompt_markdown
from autograder.build.release import write_stub

LONGEST_OVER_SHORTEST = 1.6    # option lengths of one question
CLOSE = 1.25                   # below this ratio the key may be the longest option
RUN_WORDS = 6                  # a run of this many words of the key's own text, quoted, gives it away


def normal(text: str) -> str:
    return " ".join(text.lower().replace("×", "x").replace("−", "-").replace("–", "-").split())


def own_runs(q) -> set[str]:
    """Runs of RUN_WORDS words of the keyed option that no other option of the question shares."""
    def runs(text):
        words = re.findall(r"[\w.·/()-]+", normal(text))
        return {" ".join(words[i:i + RUN_WORDS]) for i in range(len(words) - RUN_WORDS + 1)}
    others = set().union(*(runs(t) for letter, t in q.options.items() if letter != q.key))
    return runs(q.options[q.key]) - others


def readable_before(a, tmp: Path) -> dict[str, list[tuple[str, str]]]:
    """question id -> (cell id, text) a student can read before answering it: the built notebook's
    cells above its prompt (markdown, code, and the output of code run with every earlier question
    answered with its key), its own prompt without the options, every other question's prompt and
    options (they are in the notebook from the start, a reflection's below its prediction too) and
    the stub's docstrings."""
    texts, before, namespace = [], {}, {}
    with student_kernel(tmp), contextlib.chdir(tmp):
        for cell in build_notebook(a).cells:
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            qid = grade_id.removesuffix("-prompt")
            if qid != grade_id and qid in {q.id for q in a.questions}:
                before[qid] = texts + [(grade_id, a.question(qid).prompt)]
            if cell.cell_type == "markdown":
                texts.append((grade_id, cell.source))
                continue
            answered = grade_id.removesuffix("-answer")
            source = (f"{answered} = {a.question(answered).key!r}"
                      if answered != grade_id and answered in {q.id for q in a.questions} else cell.source)
            out = io.StringIO()
            with contextlib.redirect_stdout(out), mock_display():
                exec(compile(source, grade_id, "exec"), namespace)
            texts.append((grade_id, cell.source + "\n" + out.getvalue()))
    # every prompt stands in the notebook from the start: a later one is read while answering this one;
    # the stub's docstrings are read while implementing, before any question
    stub = write_stub(a, tmp / "stub")
    always = [(f"{stub.name} (the stub)", stub.read_text(encoding="utf-8"))]
    return {qid: always + readable + [(f"{q.id}-prompt", prompt_markdown(q)) for q in a.questions if q.id != qid]
            for qid, readable in before.items()}


def keyed_figures(a) -> dict[str, tuple[str, ...]]:
    """The lab's questions.KEYED_FIGURES: question id -> texts stating its keyed figure or conclusion."""
    return getattr(importlib.import_module(f"labs.{a.id}.questions"), "KEYED_FIGURES", {})


def giveaways(a, before: dict) -> list[tuple[str, str, str]]:
    """Every place a question's keyed figure or keyed option is readable before it is asked:
    (question id, the tell, the cell or text it is read in)."""
    figures = keyed_figures(a)
    found = []
    for q in a.questions:
        tells = [(f"keyed figure {f!r}", normal(f)) for f in figures.get(q.id, ())]
        tells += [(f"the keyed option's words {run!r}", run) for run in sorted(own_runs(q))]
        for cell_id, text in before[q.id]:
            readable = normal(re.sub(r"[*`_]", "", text))
            options = [normal(option) for option in q.options.values()]
            if all(option in readable for option in options):   # all of them side by side (an echo) tell nothing
                for option in options:
                    readable = readable.replace(option, " ")
            for what, tell in tells:
                if re.search(rf"(?<![\w.]){re.escape(tell)}(?![\w])", readable):
                    found.append((q.id, what, cell_id))
    return found


def option_problems(q) -> list[str]:
    """Options of comparable length, the key not the long one, every option explained."""
    problems = []
    lengths = {letter: len(text) for letter, text in q.options.items()}
    spread = max(lengths.values()) / min(lengths.values())
    if spread > LONGEST_OVER_SHORTEST:
        problems.append(f"{q.id}: its longest option is {spread:.2f}x its shortest ({lengths}); keep it "
                        f"under {LONGEST_OVER_SHORTEST}x")
    longest = max(lengths.values())
    if lengths[q.key] == longest and sum(v == longest for v in lengths.values()) == 1 and spread > CLOSE:
        problems.append(f"{q.id}: the key is the longest option by far ({lengths}); a student can guess it")
    missing = [letter for letter in q.options if not str(q.why.get(letter, "")).strip()]
    if missing:
        problems.append(f"{q.id}: no explanation (why) for option(s) {missing}; build the options with "
                        "spec.Option(text, why)")
    return problems
