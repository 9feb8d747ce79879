"""Leak scan: nothing secret may reach a student (release/ and generated feedback).

`scan(paths)` reads every file under `paths` (a notebook in every part: cell sources, every output
(stream, display, result, error and its traceback, colour codes removed, HTML as rendered),
attachments, cell and notebook metadata; HTML with tags stripped) and reports, as
"path: kind: detail" strings:

* `marker`      an nbgrader solution or hidden-test marker;
* `solution`    a line of a reference solution region (whitespace-insensitive; lines that also
                occur outside the regions, or shorter than MIN_CHARS, are not secret);
* `key`         an answer-key assignment `<qid> = "<key>"`, or a design challenge's reference design
                `<cid> = dict(...)` (off for feedback: a student's own correct answer is not a leak);
                decoded, any `key` entry of a question whose key can still earn points (`Secrets.earning`:
                a reflection's always, a prediction's under `predictions = "correctness"`);
* `explanation` an option's explanation (`Question.why`) in plain text, or, decoded, one of a question
                whose key can still earn points (an explanation names the right option): a released
                notebook ships a prediction's only encoded, for its reveal, and only under commitment
                (off for feedback, which shows them with a grade);

What a student could decode is scanned as well (`decoded`): every run of base64 (standard or
URL-safe) or hex in a file, zlib-decompressed where it is compressed, as text, and again inside what
it decodes to (nested, DECODE_DEPTH levels, at most DECODE_BUDGET characters in all per file).

A feedback page quotes the student's own code (a traceback, an echoed cell): pass that student's
submission as `own` and the solution lines it contains are not counted, since the student wrote them.
* `declaration` a code line of a lab declaration (hidden domains, hidden properties, keys) or of its
                design challenges' staff-side checks (`labs/<id>/challenges.py`);
* `import`      an import of `reference` or `autograder` in a shipped file;
* `course secret` the course secret (autograder.engine.secret), in hex, anywhere.
"""
from __future__ import annotations

import base64
import html
import importlib
import io
import json
import re
import tokenize
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable


from autograder.engine.challenges import design_source
from autograder.engine.spec import Assignment

MIN_CHARS = 16
MARKERS = re.compile(r"(BEGIN|END) (SOLUTION|HIDDEN TESTS)")
IMPORTS = re.compile(r"(^|[\s;])(import|from)\s+(reference|autograder)\b|"
                     r"(import_module|__import__)\(\s*['\"](reference|autograder)\b", re.M)
_COMMENT = re.compile(r"\s+#.*$")
_WS = re.compile(r"\s+")
_NAME_ONLY = re.compile(r"^[\w.]+[,()\[\]{}:]*$")  # `name,` / `spec.Cell(),`: a bare name, not code


def normalise(line: str) -> str:
    return _WS.sub("", _COMMENT.sub("", line))


@dataclass
class Secrets:
    solution_lines: set[str] = field(default_factory=set)
    declaration_lines: set[str] = field(default_factory=set)
    keys: dict[str, set[str]] = field(default_factory=dict)  # qid -> its key letter (in every variant)
    explanations: set[str] = field(default_factory=set)     # normalised Question.why texts
    earning: set[str] = field(default_factory=set)          # question ids whose key can still earn points
    earning_explanations: set[str] = field(default_factory=set)   # their Question.why texts, normalised
    designs: dict[str, str] = field(default_factory=dict)   # "<challenge id>@<version>" -> its reference design's source, normalised
    course_secret: str = ""                                 # its hex digits (lower case), when the course has one


def solution_lines(reference_text: str) -> set[str]:
    """Normalised, non-trivial lines inside solution regions that occur nowhere else in the file."""
    inside, secret, public = False, [], []
    for line in reference_text.splitlines():
        if "BEGIN SOLUTION" in line:
            inside = True
        elif "END SOLUTION" in line:
            inside = False
        else:
            (secret if inside else public).append(normalise(line))
    public_text = "".join(public)
    return {s for s in secret if len(s) >= MIN_CHARS and s not in public_text}


def _string_lines(text: str) -> set[int]:
    """Line numbers covered by string tokens (story text is shipped, formatted, so not secret)."""
    covered = set()
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING or tok.type in getattr(tokenize, "FSTRING_MIDDLE", ()):
            covered.update(range(tok.start[0], tok.end[0] + 1))
    return covered


def declaration_lines(declaration_text: str, public_text: str = "") -> set[str]:
    """Normalised code lines of a declaration, except strings, imports and public-property code."""
    strings = _string_lines(declaration_text)
    public = normalise(public_text.replace("\n", " \n"))
    found = set()
    for number, line in enumerate(declaration_text.splitlines(), 1):
        stripped = line.strip()
        if number in strings or stripped.startswith(("import ", "from ", "#")):
            continue
        norm = normalise(line)
        if len(norm) >= MIN_CHARS and not _NAME_ONLY.match(norm) and norm not in public:
            found.add(norm)
    return found


# Files of a lab folder that ship (properties.py as _properties.py; notebook.py's code is the notebook)
# or are sample students: not secret declaration code.
SHIPPED_LAB_FILES = ("properties.py", "notebook.py", "variants.py")   # variants.py: its numbers ship in every notebook


def declaration_paths(assignment: Assignment) -> list[Path]:
    """The staff-only declaration files of an assignment: its module, and in a lab folder every
    other module beside it (scenario, questions, items) except the shipped ones."""
    try:
        module = importlib.import_module(f"labs.{assignment.id}")
    except ImportError:
        return []
    path = Path(module.__file__)
    if path.name != "__init__.py":
        return [path]
    return [path] + sorted(p for p in path.parent.glob("*.py")
                           if p.name not in SHIPPED_LAB_FILES and p.name != "__init__.py")


def earns(question, predictions: str) -> bool:
    """Whether the question's key can still earn points: a reflection's always, a prediction's only
    where predictions are graded for correctness (under commitment any recorded option earns them)."""
    return question.kind != "prediction" or predictions == "correctness"


def secrets_for(assignments: Iterable[Assignment], declarations: dict[str, Path] | None = None,
                predictions: str = "commitment", versions: bool = True) -> Secrets:
    """What must never ship, for these assignments (declaration files found by id unless given), in a
    course grading predictions by `predictions` (`[grading] predictions`); every version's keys and
    designs unless `versions` is False (the lab as written alone: what a notebook built without them holds)."""
    from autograder.build.publictests import properties_path
    secrets = Secrets()
    for a in assignments:
        secrets.solution_lines |= solution_lines(Path(a.reference.__file__).read_text(encoding="utf-8"))
        given = (declarations or {}).get(a.id)
        props = properties_path(a)
        public = props.read_text(encoding="utf-8") if props else ""
        for path in [given] if given else declaration_paths(a):
            secrets.declaration_lines |= declaration_lines(path.read_text(encoding="utf-8"), public)
            challenges = path.parent / "challenges.py"
            if challenges.is_file():
                secrets.declaration_lines |= declaration_lines(challenges.read_text(encoding="utf-8"))
        shipped = [a.variants.assignment(i) for i in range(a.variant_count)] if versions and a.variant_count > 1 else [a]
        for q in (q for version in shipped for q in version.questions):   # every version's keys and explanations
            secrets.keys.setdefault(q.id, set()).add(q.key)
            whys = {n for text in q.why.values() if len(n := _WS.sub("", text)) >= MIN_CHARS}
            secrets.explanations |= whys
            if earns(q, predictions):
                secrets.earning.add(q.id)
                secrets.earning_explanations |= whys
        secrets.designs.update({f"{c.id}@{version.variant}": normalise(design_source(c, c.reference_answer))
                                for version in shipped for c in version.challenges})
    from autograder.engine.secret import load_secret
    course_secret = load_secret()
    secrets.course_secret = course_secret.key.hex() if course_secret else ""
    return secrets


_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")   # colours of a traceback
_TAG = re.compile(r"<[^>]+>")
_BASE64 = re.compile(r"^[A-Za-z0-9+/\s]{24,}={0,2}\s*$")


def _variants(text: str) -> list[str]:
    """A string of a notebook as a person (or a program) may read it: as stored; without terminal
    colour codes (a traceback's code line is split by them); as HTML renders it (tags dropped,
    entities decoded); decoded when it is base64 of text (an attachment)."""
    out = [text]
    plain = _ANSI.sub("", text)
    if plain != text:
        out.append(plain)
    if "<" in plain or "&" in plain:
        out.append(html.unescape(_TAG.sub("", plain)))
    if _BASE64.match(text):
        try:
            out.append(base64.b64decode("".join(text.split()), validate=True).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            pass
    return out


def _strings(value) -> list[str]:
    """Every string of a JSON value (keys too), depth first, iteratively (no recursion limit)."""
    found, todo = [], [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            todo.extend(reversed([v for kv in item.items() for v in kv]))
        elif isinstance(item, list):
            todo.extend(reversed(item))
    return found


def notebook_text(raw: str) -> str:
    """Everything a notebook holds, as text: every string of its JSON (cell sources, every output's
    text and data (stream, display, result, error name, value and traceback), attachments, cell and
    notebook metadata), each in every form a reader may meet it (`_variants`). Not JSON: the raw text."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return raw
    return "\n".join(v for s in _strings(data) for v in _variants(s))


def readable_text(path: Path) -> str | None:
    """The text a student would read in `path`, or None for a binary file."""
    try:
        raw = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None
    if path.suffix == ".ipynb":
        return notebook_text(raw)
    if path.suffix in (".html", ".htm"):
        return html.unescape(_TAG.sub("", raw))
    return raw


def own_text(paths: Iterable[Path]) -> str:
    """The student's own writing under `paths`, flattened as scan_text compares it."""
    return "".join(_WS.sub("", t) for f in files_under(paths) if (t := readable_text(f)) is not None)


# --- what a student could decode --------------------------------------------------------------------

DECODE_DEPTH = 4              # levels of encoding inside encoding
DECODE_BUDGET = 20_000_000    # characters decoded per file, in all (a zlib bomb stops here)
_ENCODED = re.compile(r"[A-Za-z0-9+/_-]{24,}={0,2}")


def _decode_token(token: str) -> str | None:
    """The text a base64 or hex token holds (zlib-decompressed where compressed), or None."""
    candidates = []
    if len(token) % 2 == 0 and re.fullmatch(r"[0-9a-fA-F]+", token):
        candidates.append(bytes.fromhex(token))
    for alphabet in (None, b"-_"):
        try:
            padded = token.rstrip("=") + "=" * (-len(token.rstrip("=")) % 4)
            candidates.append(base64.b64decode(padded, altchars=alphabet, validate=True))
        except ValueError:
            pass
    for raw in candidates:
        if raw[:1] == b"\x78":   # a zlib stream's header
            try:
                inflate = zlib.decompressobj()
                raw = inflate.decompress(raw, DECODE_BUDGET) or raw
            except zlib.error:
                pass
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if text and sum(c.isprintable() or c.isspace() for c in text) >= 0.95 * len(text):
            return text
    return None


def decoded(text: str) -> list[str]:
    """Every text encoded in `text` (and in what that decodes to, DECODE_DEPTH levels down), as a student
    could decode it; a JSON document's strings one per line (keys too)."""
    found, todo, budget = [], [(text, 0)], DECODE_BUDGET
    while todo and budget > 0:
        current, depth = todo.pop()
        if depth >= DECODE_DEPTH:
            continue
        for match in _ENCODED.finditer(current):
            inner = _decode_token(match.group(0))
            if inner is None:
                continue
            budget -= len(inner)
            found.append(inner)
            todo.append((inner, depth + 1))
            if budget <= 0:
                break
    return found


def _paths(value, path=()):
    """(path, leaf) of every leaf of a JSON value, iteratively."""
    todo = [(value, path)]
    while todo:
        item, where = todo.pop()
        if isinstance(item, dict):
            todo.extend((v, where + (str(k),)) for k, v in item.items())
        elif isinstance(item, list):
            todo.extend((v, where + (str(i),)) for i, v in enumerate(item))
        else:
            yield where, item


def _scan_decoded(name: str, text: str, secrets: Secrets, keys: bool = True) -> list[str]:
    """What a decoded text gives away: a `key` entry of a question whose key can still earn points, its
    explanations, and every other secret `scan_text` looks for."""
    problems = []
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        document = None
    if document is not None:
        leaves = list(_paths(document))
        text = "\n".join([s for path, leaf in leaves for s in (*path, leaf) if isinstance(s, str)])
    if not keys:
        return [p + " (decoded)" for p in scan_text(name, text, secrets, keys=False)]
    if document is not None:
        flagged = sorted({qid for path, leaf in leaves for qid in secrets.earning
                          if qid in path and "key" in path and leaf in secrets.keys.get(qid, ())})
        problems += [f"{name}: key: {qid} (decoded)" for qid in flagged]
    flat = _WS.sub("", text)
    problems += [f"{name}: explanation: {s[:60]} (decoded)" for s in sorted(secrets.earning_explanations) if s in flat]
    problems += [p + " (decoded)" for p in scan_text(name, text, replace(secrets, explanations=set()))]
    return problems


def scan_text(name: str, text: str, secrets: Secrets, keys: bool = True, own: str = "") -> list[str]:
    problems = [f"{name}: marker: {m.group(0)}" for m in MARKERS.finditer(text)]
    problems += [f"{name}: import: {m.group(0).strip()}" for m in IMPORTS.finditer(text)]
    flat = _WS.sub("", text)
    problems += [f"{name}: solution: {s}" for s in sorted(secrets.solution_lines) if s in flat and s not in own]
    problems += [f"{name}: declaration: {s}" for s in sorted(secrets.declaration_lines) if s in flat]
    if secrets.course_secret and secrets.course_secret in flat.lower():
        problems.append(f"{name}: course secret: the course secret's hex digits")
    if keys:
        for qid, letters in secrets.keys.items():
            for key in sorted(letters):
                if re.search(rf"\b{re.escape(qid)}\s*=\s*['\"]{re.escape(key)}['\"]", text):
                    problems.append(f"{name}: key: {qid} = {key!r}")
        problems += [f"{name}: explanation: {s[:60]}" for s in sorted(secrets.explanations) if s in flat]
        problems += [f"{name}: key: the reference design of {cid}"
                     for cid in sorted({c.partition("@")[0] for c, design in secrets.designs.items() if design in flat})]
    return problems


def files_under(paths: Iterable[Path]) -> list[Path]:
    found = []
    for p in map(Path, paths):
        found.extend(sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p])
    return found


def scan(paths: Iterable[Path], assignments: Iterable[Assignment] | None = None, *,
         keys: bool = True, secrets: Secrets | None = None, own: Iterable[Path] = ()) -> list[str]:
    """Every leak in the files under `paths`; empty means clean. `own`: the student's submission."""
    if secrets is None:
        if assignments is None:
            from labs import all_assignments
            assignments = all_assignments().values()
        secrets = secrets_for(assignments)
    mine = own_text(own)
    problems = []
    for f in files_under(paths):
        text = readable_text(f)
        if text is not None:
            problems += scan_shipped(str(f), text, secrets, keys, mine)
    return problems


def scan_shipped(name: str, text: str, secrets: Secrets, keys: bool = True, own: str = "") -> list[str]:
    """`scan_text` of a shipped text and of everything encoded in it (`decoded`)."""
    problems = scan_text(name, text, secrets, keys, own)
    for inner in decoded(text):
        problems += [p for p in _scan_decoded(name, inner, secrets, keys) if p not in problems]
    return problems
