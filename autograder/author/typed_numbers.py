"""Lint's `typed-numbers` rule: a quantity typed into the text a student reads, instead of computed.

Every number of a lab's story, questions and options comes from reference/ (a jinja2 placeholder over
the scenario's names in questions.md and notebook.py's markdown, an f-string of them in questions.py):
a typed "50 GB/s" silently disagrees with the model the day a constant changes, and no test notices.
This rule reads, as written by the author:

  the story      notebook.py's markdown cells, placeholders removed;
  the questions  questions.md's sections (prompt, hint, takeaway), placeholders removed;
  the options    each Option's text in questions.py (the literal parts of its f-string),

and names every number written with a unit of the physics (bytes, bits and their rates, seconds to
days, FLOP and FLOP/s, watts, percent, dollars, GPUs and nodes), e.g. `450 GB/s`, `47%`, `\\$2.10`,
`16,384 GPUs`. Not flagged: a number inside a placeholder; a model's name (`175B`, `GPT-3`, `H100`);
one or two GPUs or nodes (`1 node`, `k ≥ 2 nodes`: words, not data).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterable

PLACEHOLDER = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
_UNITS = (r"[KMGTPE]i?B(?:/s)?|[kKMGTP]b(?:it)?/s|[KMGT]bps|bytes?(?:/s)?|bits?/s|B/s|B(?![\w])"
          r"|s(?![\w])|ms|[µu]s(?![\w])|ns(?![\w])|min(?:utes?)?(?![\w])|seconds?|h(?![\w])|hours?|days?|weeks?|years?"
          r"|%|percent|[kMGTPE]?FLOP(?:/s|s)?|[TPG]FLOPS|[kMG]?W(?![\w])|watts?|kWh|USD"
          r"|GPUs?|nodes?|H100s|A100s")
_COUNT_UNITS = re.compile(r"^(GPUs?|nodes?|H100s|A100s)$")
NUMBER = re.compile(r"(?<![\w.\-/^])(?P<dollar>\\{0,2}\$\s?)?(?P<number>\d[\d,]*(?:\.\d+)?)"
                    r"(?:(?P<space>[ \u00a0\u2009\u202f]?)(?-i:-)?(?P<unit>" + _UNITS + r"))?")
RULE = "typed-numbers"
FIX = ("compute it: a placeholder of a scenario or reference value in the text ({{ NAME | fmt(...) }}), an f-string "
       "of one in questions.py")


def typed_numbers(text: str) -> list[str]:
    """The typed quantities of `text` (placeholders removed), as written."""
    found = []
    for match in NUMBER.finditer(PLACEHOLDER.sub(" ", text)):
        unit, dollar, number = match.group("unit"), match.group("dollar"), match.group("number")
        if not unit and not dollar:
            continue
        if unit == "B" and not match.group("space"):
            continue      # a model's size in its name: GPT-3 175B, Llama 3 70B
        if unit and _COUNT_UNITS.match(unit) and not dollar and number in ("1", "2"):
            continue      # "1 node", "k ≥ 2 nodes": words of the story, not data
        found.append(match.group(0).strip())
    return found


def _markdown_cells(path: Path) -> Iterable[tuple[int, str]]:
    """(line, text) of each line of notebook.py's markdown cells, the `# ` prefix removed."""
    markdown = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("# %%"):
            markdown = "[markdown]" in line
            continue
        if markdown:
            yield number, line[2:] if line.startswith("# ") else line.lstrip("#")


def _questions_md(path: Path) -> Iterable[tuple[int, str, str]]:
    """(line, where, text) of each line of questions.md's sections (the authors' introduction left out)."""
    where = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("## "):
            where = line[3:].strip()
            continue
        if line.startswith("### ") and where:
            where = f"{where.split(',')[0]}, its {line[4:].strip()}"
            continue
        if where is not None:
            yield number, where, line


def _option_texts(path: Path) -> Iterable[tuple[int, str]]:
    """(line, literal text) of each Option's text in questions.py: its first argument's string parts."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Option" \
                and node.args:
            first = node.args[0]
            parts = first.values if isinstance(first, ast.JoinedStr) else [first]
            for part in parts:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    yield part.lineno, part.value
            for part in ast.walk(first):      # "a" "b" concatenations and their f-strings
                if isinstance(part, ast.BinOp):
                    for side in (part.left, part.right):
                        if isinstance(side, ast.Constant) and isinstance(side.value, str):
                            yield side.lineno, side.value


def problems(folder: Path):
    """(path, line, message) of every typed quantity in the lab folder's story, questions and options."""
    notebook, questions_md, questions_py = folder / "notebook.py", folder / "questions.md", folder / "questions.py"
    if notebook.is_file():
        for line, text in _markdown_cells(notebook):
            for typed in typed_numbers(text):
                yield notebook, line, f"{typed!r} is typed in the story (a markdown cell)"
    if questions_md.is_file():
        for line, where, text in _questions_md(questions_md):
            for typed in typed_numbers(text):
                yield questions_md, line, f"{typed!r} is typed in {where}"
    if questions_py.is_file():
        for line, text in _option_texts(questions_py):
            for typed in typed_numbers(text):
                yield questions_py, line, f"{typed!r} is typed in an option's text"
