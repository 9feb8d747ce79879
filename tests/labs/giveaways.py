"""What a released notebook lets a student read before answering a question, and whether any of it
states the question's key in the key's own words (tests/labs/test_labs.py runs it on every lab).

Readable before answering: every markdown cell and every code cell's comments and strings of the
released notebook (scrolling past a question is reading; the reveals' encoded data excepted) and, for a question asked
after a prediction, what that prediction's reveals show once run (its options' explanations and the
markdown attached to it). A sentence *states the key* when it holds at least SHARE of the key
option's content words (at least MIN_WORDS of them, stop words dropped, plurals folded) and more of
them than of any other option's: it points at the key, not at the options' shared vocabulary. The
question's own prompt and options are not counted (they hold the key among its distractors).
A lab may name, per question, background words its story must use (`questions.STORY_WORDS`): they
are not counted as the key's.
"""
from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

from autograder.build import predictions

SHARE = 0.6
MIN_WORDS = 3
STOP = set("""a an the of to in on at by for and or but is are be it its this that these those with as from than
then so not no each every whatever while when which what who whose into over per one all only more most
less much many same other any just also can does do did has have had was were will would should must
there their them they you your we our us if about""".split())
_BLOB = re.compile(r"'[A-Za-z0-9+/=]{60,}'")


def words(text: str) -> set[str]:
    """Content words, lower case, plurals folded, Greek and dashes spelled out."""
    text = (text.lower().replace("α", " alpha ").replace("β", " beta ").replace("×", "x").replace("−", "-")
            .replace("–", " ").replace("-", " ").replace("·", " "))
    out = set()
    for w in re.findall(r"[a-z][a-z0-9]*|\d+(?:\.\d+)?", text):
        if w in STOP or len(w) < 2:   # a lone symbol (n, M) or digit tells nothing
            continue
        out.add(w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?;])\s+|\n\s*\n|\n(?=\s*[-*|#>])", text) if s.strip()]


def prose_of_code(source: str) -> str:
    """What a person reads in a code cell: its comments and string literals, one per line."""
    import io
    import tokenize
    parts = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                parts.append(tok.string.lstrip("#").strip())
            elif tok.type == tokenize.STRING or tok.type == getattr(tokenize, "FSTRING_MIDDLE", -1):
                parts.append(re.sub(r"\{[^{}]*\}", " ", tok.string))   # an f-string's fields are code
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return source
    return "\n\n".join(parts)


def readable(notebook: Path, qid: str) -> list[tuple[str, str]]:
    """(where, text) a student can read before answering `qid` in this released notebook."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    out, shown_before = [], True
    for cell in nb["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        cell_id = cell.get("id", "")
        if cell_id in (f"{qid}-prompt", f"{qid}-answer"):
            shown_before = False
            continue
        text = _BLOB.sub("''", source)
        out.append((cell_id, prose_of_code(text) if cell["cell_type"] == "code" else text))
        if shown_before and "with reveal(globals()" in source:
            blob = re.search(r"'([A-Za-z0-9+/=]{20,})'", source)
            data = predictions.decode(blob.group(1)) if blob else {}
            for other, entry in data.get("questions", {}).items():
                if other != qid:
                    out += [(f"{cell_id} (reveal of {other})", why) for why in entry.get("why", {}).values()]
            if data.get("peek") and qid not in data.get("questions", {}):
                out.append((f"{cell_id} (reveal)", data["peek"]))
    return out


def _without(text: str, options: list[str]) -> str:
    """`text` without the question's options where all of them stand in it (a list of the options,
    as an echo or a dict of them, tells nothing)."""
    if all(option in text for option in options):
        for option in options:
            text = text.replace(option, " ")
    return text


def stated(question, texts, story_words=()) -> list[str]:
    """Where a sentence of `texts` states the question's key (see the module docstring)."""
    background = set().union(*(words(w) for w in story_words)) if story_words else set()
    options = list(question.options.values())
    texts = [(where, _without(text, options)) for where, text in texts]
    key = words(question.options[question.key]) - background
    others = [words(t) - background for letter, t in question.options.items() if letter != question.key]
    found = []
    for where, text in texts:
        for sentence in sentences(text):
            said = words(sentence)
            hit = key & said
            if len(hit) >= max(MIN_WORDS, SHARE * len(key)) and all(len(hit) > len(o & said) for o in others):
                found.append(f"{question.id}: {where} states its key ({sorted(hit)}): {sentence.strip()[:160]!r}")
    return found
