"""The give-away guard (issue 14, honest predictions): a question must not be answerable by reading.

No text a student can read before a question (the stub, the markdown above it, every other question's
prompt and options, code, and what earlier cells print once answered) states its keyed figure (the
lab's `questions.KEYED_FIGURES`) or a run of RUN_WORDS words of its keyed option that no other option
shares; its own prompt neither. Options of one question are of comparable length (the key is not the
conspicuously careful one) and each says why it is right or wrong. `scalelabs lint` and the lab tests
run it.

A second reader takes the notebook as a student scrolls it (issue 29): every markdown cell and every
code cell's comments and strings (scrolling past a question is reading; the reveals' encoded data
excepted) and, for a question asked after a prediction, what that prediction's reveals show once run
(its options' explanations and the markdown attached to it). A sentence *states the key* when it
holds at least STATED_SHARE of the key option's content words (at least STATED_MIN_WORDS of them,
stop words dropped, plurals folded) and more of them than of any other option's: it points at the
key, not at the options' shared vocabulary. The question's own prompt and options are not counted
(they hold the key among its distractors). A lab may name, per question, background words its story
must use (`questions.STORY_WORDS`): they are not counted as the key's.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import json
import re
import tokenize
from pathlib import Path

from autograder.author.kernel import figures_drawn_not_encoded, mock_display, student_kernel
from autograder.build import predictions
from autograder.build.notebook import build_notebook, prompt_markdown
from autograder.build.release import write_stub

LONGEST_OVER_SHORTEST = 1.6    # option lengths of one question
CLOSE = 1.25                   # below this ratio the key may be the longest option
RUN_WORDS = 6                  # a run of this many words of the key's own text, quoted, gives it away
STATED_SHARE = 0.6             # a sentence holding this share of the key's content words states it ...
STATED_MIN_WORDS = 3           # ... and at least this many of them
STOP = set("""a an the of to in on at by for and or but is are be it its this that these those with as from than
then so not no each every whatever while when which what who whose into over per one all only more most
less much many same other any just also can does do did has have had was were will would should must
there their them they you your we our us if about""".split())
_BLOB = re.compile(r"'[A-Za-z0-9+/=]{60,}'")


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
    with student_kernel(tmp, a), contextlib.chdir(tmp), figures_drawn_not_encoded():
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
                try:
                    exec(compile(source, grade_id, "exec"), namespace)
                except Exception as error:
                    if not cell.metadata["nbgrader"].get("grade"):
                        raise
                    # a function's grade cell runs its public checks: one failing is the items rule's
                    # finding, and the student reads its message here as they would in the notebook
                    print(f"{type(error).__name__}: {error}")
            texts.append((grade_id, cell.source + "\n" + out.getvalue()))
    # every prompt stands in the notebook from the start: a later one is read while answering this one;
    # the stub's docstrings are read while implementing, before any question
    stub = write_stub(a, tmp / "stub")
    always = [(f"{stub.name} (the stub)", stub.read_text(encoding="utf-8"))]
    return {qid: always + readable + [(f"{q.id}-prompt", prompt_markdown(q)) for q in a.questions if q.id != qid]
            for qid, readable in before.items()}


def _questions_module(a):
    """The lab's questions module, as `a`'s version computed it (labs/variants.py)."""
    if a.variant and a.variants is not None:
        return a.variants.modules(a.variant)["questions"]
    return importlib.import_module(f"labs.{a.id}.questions")


def readable_before_static(a, cells) -> dict[str, list[tuple[str, str]]]:
    """`readable_before` without running anything: the built notebook's cells above each question
    (markdown, code as written), its own prompt, every other question's prompt with options. What a
    version of the lab is checked against (its code prints what the lab's own does, at other numbers)."""
    texts, before = [], {}
    qids = {q.id for q in a.questions}
    for cell in cells:
        grade_id = cell.metadata["nbgrader"]["grade_id"]
        qid = grade_id.removesuffix("-prompt")
        if qid != grade_id and qid in qids:
            before[qid] = texts + [(grade_id, a.question(qid).prompt)]
        texts.append((grade_id, cell.source))
    return {qid: readable + [(f"{q.id}-prompt", prompt_markdown(q)) for q in a.questions if q.id != qid]
            for qid, readable in before.items()}


def keyed_figures(a) -> dict[str, tuple[str, ...]]:
    """The lab's questions.KEYED_FIGURES: question id -> texts stating its keyed figure or conclusion."""
    return getattr(_questions_module(a), "KEYED_FIGURES", {})


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


def _released(notebook: Path | dict) -> dict:
    return notebook if isinstance(notebook, dict) else json.loads(Path(notebook).read_text(encoding="utf-8"))


def released_versions(notebook: Path | dict) -> int:
    """How many versions of its lab a released notebook carries (autograder.build.versions)."""
    return int(_released(notebook).get("metadata", {}).get("scalelabs", {}).get("variants", 1))


def readable_released(notebook: Path | dict, qid: str, version: int = 0) -> list[tuple[str, str]]:
    """(where, text) a student of `version` can read before answering `qid` in this released notebook (a
    path, or the notebook as JSON): a cell showing the student's version of a text shows that version's."""
    from autograder.build.versions import shown_texts

    nb = _released(notebook)
    out, shown_before = [], True
    for cell in nb["cells"]:
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        cell_id = cell.get("id", "")
        if cell_id in (f"{qid}-prompt", f"{qid}-answer"):
            shown_before = False
            continue
        text = _BLOB.sub("''", source)
        out.append((cell_id, prose_of_code(text) if cell["cell_type"] == "code" else text))
        texts = shown_texts(source) if cell["cell_type"] == "code" else None
        if texts:
            out.append((f"{cell_id} (shown)", texts[version]))
        if shown_before and "with reveal(globals()" in source:
            blob = re.search(r"'([A-Za-z0-9+/=]{20,})'", source)
            data = predictions.decode(blob.group(1)) if blob else {}
            if "variants" in data:
                data = data["variants"][version]
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
    """Where a sentence of `texts` states the question's key (the module docstring's second reader)."""
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
            if len(hit) >= max(STATED_MIN_WORDS, STATED_SHARE * len(key)) and all(len(hit) > len(o & said) for o in others):
                found.append(f"{question.id}: {where} states its key ({sorted(hit)}): {sentence.strip()[:160]!r}")
    return found


def story_words(a) -> dict[str, tuple[str, ...]]:
    """The lab's questions.STORY_WORDS: question id -> words its story uses for every option alike."""
    return getattr(_questions_module(a), "STORY_WORDS", {})


def stated_in_notebook(a, notebook: Path | dict) -> list[str]:
    """Every sentence of this notebook of lab `a` that states a question's key, read as a student scrolls it
    (a notebook carrying every version of the lab: as each version's student reads it, in that version)."""
    story = story_words(a)
    nb = _released(notebook)
    versions = released_versions(nb)
    found = []
    for index in range(versions):
        version = a.variants.assignment(index) if versions > 1 else a
        prefix = f"version {index + 1}: " if versions > 1 else ""
        found += [prefix + said for q in version.questions
                  for said in stated(q, readable_released(nb, q.id, index), story.get(q.id, ()))
                  if prefix + said not in found]
    return found
