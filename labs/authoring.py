"""Helpers every lab declaration shares: unit formatters, option ranges, examples, public properties,
the reader of a lab's `questions.md` (its questions' prompts and hints) and of its `notebook.py`
(jupytext percent format) into notebook cells.

One module so that no lab copies another's helper under a new name. docs/adding-a-lab.md shows how
a lab folder uses them.
"""
from __future__ import annotations

import ast
import functools
import importlib
import math
import re
from collections.abc import Sequence
from dataclasses import fields
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterable, Mapping, NamedTuple

import jinja2

from autograder.engine.spec import (Answer, Assignment, Challenge, Code, Example, FunctionGrades, FunctionItem,
                                    Markdown, Measurements, Property, Question)
# re-exported: a lab's questions.py takes every helper it uses from this module
from autograder.engine.spec import Option, letters  # noqa: F401
from labs.property_kit import number


# --- hidden domains: wider than the released strategies, drawn differently, anchors at the edges ----
# A lab's hidden domains (items.py) are its own, never the strategies properties.py ships: a student
# who reads those cannot reproduce the grader's draws even where a course has no secret. The grader
# draws every edge of a domain for every student (autograder.engine.draw): each integer's bounds and
# the two counts above its lower bound, each float's bounds, each one_of branch and each of the
# first three and the last anchors of a sampled_from.

def decades(low_exp: float, high_exp: float):
    """Floats spread evenly over decades, 10**low_exp .. 10**high_exp (1 KB and 1 TB both realistic)."""
    from hypothesis import strategies as st
    return st.floats(low_exp, high_exp).map(lambda e: 10.0 ** e)


ANCHOR_WEIGHT = 9      # the domain's weight against the anchors' in random draws: 1 in 10 is an anchor


def anchored(domain, *anchors: Mapping[str, Any]):
    """`domain`, plus these exact inputs (a decision's boundary: a budget met exactly, a tie), each
    drawn for every student (at most 8: every element of the sampled_from holding them is an edge)
    and 1 in ANCHOR_WEIGHT + 1 of the random draws an anchor."""
    from hypothesis import strategies as st

    from autograder.engine.draw import weighted
    if not 0 < len(anchors) <= 8:
        raise ValueError(f"anchored(): 1 to 8 anchors, not {len(anchors)}")
    from hypothesis.strategies._internal.lazy import unwrap_strategies

    # the anchors in a sampled_from, which hypothesis does not flatten into the one_of (a one_of would
    # be); the domain may be flattened into several branches, which share its weight
    both = st.one_of(domain, st.sampled_from([dict(a) for a in anchors]))
    parts = len(unwrap_strategies(both).element_strategies) - 1
    return weighted(both, [ANCHOR_WEIGHT / parts] * parts + [1])


# --- unit formatters (also the jinja2 filters of notebook markdown) -----------------------------------

def fmt_bytes(x: float) -> str:
    """Decimal units, as the labs and the datasheets use them: 140 GB, 500 KB."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if x >= size:
            return f"{x / size:.3g} {unit}"
    return f"{x:.3g} B"


def fmt_seconds(t: float) -> str:
    """Seconds in the largest unit below the value: 1.2 s, 35 ms, 5 µs."""
    if t >= 1:
        return f"{t:.3g} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} µs"


def fmt_percent(x: float) -> str:
    """A fraction as a whole percent: 0.456 -> 46%."""
    return f"{x:.0%}"


def fmt(value: Any, spec: str, unit: float = 1) -> str:
    """Python's format mini-language as a filter, in `unit`s: `{{ x | fmt(",.0f") }}`,
    `{{ params | fmt("g", 1e9) }}B`."""
    return format(value / unit if unit != 1 else value, spec)


FILTERS = {"bytes": fmt_bytes, "seconds": fmt_seconds, "percent": fmt_percent, "fmt": fmt}


# --- questions and items ----------------------------------------------------------------------------

def range_key(value: float, ranges: Sequence[tuple[float, float]]) -> int:
    """The index of the one [low, high) range holding `value`: a range question's computed key. Ranges
    that overlap are options that collide (two options claim the same values): an error."""
    for i, (low, high) in enumerate(ranges):   # an empty range is an option no value keys (a distractor)
        clash = [j for j, (lo, hi) in enumerate(ranges) if j != i and lo < hi and lo < high and low < hi]
        if low < high and clash:
            raise ValueError(f"option ranges {list(ranges)}: {(low, high)} overlaps {[ranges[j] for j in clash]}: "
                             "two options collide, fix the options")
    holding = [i for i, (low, high) in enumerate(ranges) if low <= value < high]
    if len(holding) != 1:
        raise ValueError(f"{value} must fall in exactly one option range of {list(ranges)}: the scenario "
                         "changed, fix the options")
    return holding[0]


def examples(*rows: tuple[str, Mapping[str, Any]]) -> list[Example]:
    """Worked examples from (label, kwargs) rows."""
    return [Example(label, kwargs) for label, kwargs in rows]


def public_properties(declared: Iterable[Mapping[str, Any]], item: str) -> list[Property]:
    """The public properties of `item` among a properties module's `PROPERTIES` (dicts with an "item"
    key, so the module stays importable without autograder when shipped to students)."""
    return [Property(**{k: v for k, v in d.items() if k != "item"}) for d in declared if d["item"] == item]


# a graded function's default tolerance, as FunctionItem declares it
DEFAULT_TOLERANCE = {f.name: f.default for f in fields(FunctionItem) if f.name in ("rel_tol", "abs_tol")}


def close(got, want, what: str) -> None:
    """Assert a hidden property's number: a real number within the engine's default tolerance."""
    assert math.isclose(number(got), want, **DEFAULT_TOLERANCE), f"{what}: got {got!r}, expected {want!r}"


# --- design challenges -------------------------------------------------------------------------------

def first_valid(designs: Iterable[Any], meets: Callable[[Any], bool]) -> Any:
    """The first of `designs` (in the order given) that `meets` accepts: a challenge's reference
    answer, searched at import (staff only). None meeting it means the scenario changed."""
    for design in designs:
        if meets(design):
            return design
    raise AssertionError("no design meets the constraints: the scenario changed, revisit the challenge")


# --- the notebook file ------------------------------------------------------------------------------

def _defined(unit_filter: Callable[..., str]) -> Callable[..., str]:
    """`unit_filter` refusing an undefined value with jinja2's own error ("'NAME' is undefined"): a
    filter that formats it would fail with a TypeError that names nothing."""
    @functools.wraps(unit_filter)
    def checked(value: Any, *args: Any) -> str:
        if isinstance(value, jinja2.Undefined):
            value._fail_with_undefined_error()
        return unit_filter(value, *args)
    return checked


_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False, autoescape=False)
_JINJA.filters.update({name: _defined(unit_filter) for name, unit_filter in FILTERS.items()})


def render(template: str, **values: Any) -> str:
    """A jinja2 template (the project's one templating library) with the unit filters, strictly:
    a name missing from `values` is an error, not an empty string."""
    return _JINJA.from_string(template).render(**values)


# --- the questions file ------------------------------------------------------------------------------

HINT_HEADING = "### hint"
TAKEAWAY_HEADING = "### takeaway"   # optional: shown with the question's grade, never in the notebook
PART_HEADINGS = {HINT_HEADING: "hint", TAKEAWAY_HEADING: "takeaway"}


class Prose(NamedTuple):
    """One question's text as questions.md gives it, rendered."""
    prompt: str
    hint: str
    takeaway: str = ""


def _paragraphs(lines: Sequence[str]) -> str:
    """Markdown lines as one string: a paragraph's lines joined by a space, paragraphs by a blank line
    (so a prompt wraps freely in the file and reaches the notebook as the one line it was)."""
    text = "\n".join(line.strip() for line in lines).strip()
    return "\n\n".join(" ".join(p.split("\n")) for p in re.split(r"\n{2,}", text))


def read_prose(path: Path) -> dict[str, tuple[int, dict[str, str]]]:
    """question id -> (line number, {"prompt", "hint"[, "takeaway"]: template}) of a questions.md: a
    section `## <id>` holds the prompt, then `### hint` the hint and, optionally, `### takeaway` what
    the question teaches (shown with its grade: a takeaway states the answer, so it is never in the
    notebook); anything above the first section is the file's own introduction (not shown).
    Structural mistakes raise ValueError naming file and line."""
    sections: dict[str, tuple[int, dict[str, list[str]]]] = {}
    current, part = None, "prompt"
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        where = f"{path}:{number}"
        if line.startswith("## "):
            qid = line[3:].strip()
            if not qid.isidentifier():
                raise ValueError(f"{where}: a section is named by its question id (a Python name), not {qid!r}")
            if qid in sections:
                raise ValueError(f"{where}: question {qid} has a second section (the first is at line "
                                 f"{sections[qid][0]})")
            current = sections[qid] = (number, {"prompt": []})
            part = "prompt"
        elif current is None:
            continue
        elif line.strip() in PART_HEADINGS:
            part = PART_HEADINGS[line.strip()]
            if part in current[1]:
                raise ValueError(f"{where}: question {qid} has a second {line.strip()!r}")
            current[1][part] = []
        elif line.startswith("#"):
            raise ValueError(f"{where}: question {qid}: only {' or '.join(map(repr, PART_HEADINGS))} may head a "
                             f"part of a section, not {line.strip()!r}")
        else:
            current[1][part].append(line)
    prose = {}
    for qid, (number, parts) in sections.items():
        if not _paragraphs(parts["prompt"]):
            raise ValueError(f"{path}:{number}: question {qid} has no prompt")
        if not _paragraphs(parts.get("hint", [])):
            raise ValueError(f"{path}:{number}: question {qid} has no hint (a {HINT_HEADING!r} part)")
        prose[qid] = (number, {name: _paragraphs(lines) for name, lines in parts.items()})
    return prose


def question_prose(path: Path, namespace: Mapping[str, Any]) -> dict[str, Prose]:
    """question id -> its prompt, hint and takeaway from questions.md, rendered as jinja2 with
    `namespace` (the questions module's names) and FILTERS, strictly: a name `namespace` lacks is an
    error that names the question and the part."""
    rendered = {}
    for qid, (number, parts) in read_prose(path).items():
        done = {}
        for part, template in parts.items():
            try:
                done[part] = render(template, **namespace)
            except jinja2.TemplateError as exc:
                raise ValueError(f"{path}:{number}: question {qid}, its {part}: {exc}") from None
        rendered[qid] = Prose(**done)
    return rendered


def questions(source: str, namespace: Mapping[str, Any],
              declared: Mapping[str, tuple[str, float, tuple[Mapping[str, str], str, Mapping[str, str]]]]
              ) -> tuple[Question, ...]:
    """A lab's questions: `declared` maps each id, in the notebook's order, to (kind, points,
    letters(...)'s (options, key, why)); prompt and hint come from questions.md beside `source`
    (the questions module's __file__), rendered with `namespace`. An id declared here but without a
    section there, or the reverse, is an error naming both files."""
    path = Path(source).with_name("questions.md")
    prose = question_prose(path, namespace)
    if set(declared) != set(prose):
        # the first mistake where it is (a section's line, or the question's line in questions.py), then both lists
        if undeclared := sorted(set(prose) - set(declared)):
            where = f"{path}:{read_prose(path)[undeclared[0]][0]}: a section for {undeclared}, which questions.py does not declare"
        else:
            unwritten = sorted(set(declared) - set(prose))
            lines = Path(source).read_text(encoding="utf-8").splitlines() if Path(source).is_file() else []
            line = next((n for n, text in enumerate(lines, 1) if f'"{unwritten[0]}"' in text), 1)
            where = f"{source}:{line}: no section in questions.md for {unwritten}"
        raise ValueError(f"{where} ({Path(source).name} declares {sorted(declared)}, questions.md writes "
                         f"{sorted(prose)})")
    return tuple(Question(id=qid, kind=kind, points=points, prompt=prose[qid].prompt, options=options, key=key,
                          why=why, hint=prose[qid].hint, takeaway=prose[qid].takeaway)
                 for qid, (kind, points, (options, key, why)) in declared.items())


_LITERAL_TYPES = (int, float, str, bool, type(None))


def _literal(value: Any, where: str) -> Any:
    """`value` if it is a literal-reprable value (numbers, strings, tuples/lists/dicts of them)."""
    if isinstance(value, _LITERAL_TYPES):
        return value
    if isinstance(value, (tuple, list)):
        return type(value)(_literal(v, where) for v in value)
    if isinstance(value, dict):
        return {_literal(k, where): _literal(v, where) for k, v in value.items()}
    raise TypeError(f"{where}: only numbers, strings and tuples/lists/dicts of them may be imported into "
                    f"the notebook's setup cell, not {type(value).__name__}")


def scenario_namespace(*modules: ModuleType) -> dict[str, Any]:
    """The upper-case names of a lab's scenario/questions modules: what notebook markdown may use."""
    return {name: value for module in modules for name, value in vars(module).items() if name.isupper()}


def literal_setup(source: str, package: str, modules: Mapping[str, ModuleType] | None = None) -> str:
    """The setup cell with every `from <package>... import NAME as name` replaced by `name = <literal>`,
    so the released notebook never imports the (staff-only) lab package. `modules`: module name ->
    the module to read instead of the lab's own (a variant's scenario, labs/variants.py)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    for node in reversed(tree.body):
        if not (isinstance(node, ast.ImportFrom) and node.module and
                (node.module == package or node.module.startswith(package + "."))):
            continue
        module = (modules or {}).get(node.module) or importlib.import_module(node.module)
        comment = lines[node.end_lineno - 1].partition("#")[2].strip() if node.lineno == node.end_lineno else ""
        assigned = []
        for alias in node.names:
            where = f"{node.module}.{alias.name}"
            value = _literal(getattr(module, alias.name), where)
            assigned.append(f"{alias.asname or alias.name} = {value!r}" + (f"   # {comment}" if comment and
                                                                          len(node.names) == 1 else ""))
        lines[node.lineno - 1:node.end_lineno] = assigned
    return "\n".join(lines)


def _percent(path: Path):
    """notebook.py (jupytext percent format) as a notebook, parsed once per content (every variant of a
    lab reads the same file). jupytext is imported here, not at the top: it imports nbformat (and
    jsonschema's format checkers), about 2 s that grading never needs."""
    return _parsed(Path(path).read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=32)
def _parsed(text: str):
    import jupytext

    return jupytext.reads(text, fmt="py:percent")


class NotebookFile(Sequence):
    """A lab's notebook.py as `Assignment.notebook`: its cells, and its setup source as `.setup`,
    read on first use (building the notebook), so loading a lab to grade it never reads it."""

    def __init__(self, path: Path, namespace: Mapping[str, Any], package: str,
                 modules: Mapping[str, ModuleType] | None = None) -> None:
        self.path, self.namespace, self.package, self.modules = Path(path), namespace, package, modules

    @cached_property
    def _read(self) -> tuple[str, list]:
        return read_notebook(self.path, self.namespace, self.package, self.modules)

    @property
    def setup(self) -> str:
        return self._read[0]

    def __getitem__(self, index):
        return self._read[1][index]

    def __len__(self) -> int:
        return len(self._read[1])

    def __repr__(self) -> str:
        return f"NotebookFile({str(self.path)!r})"


def read_notebook(path: Path, namespace: Mapping[str, Any], package: str,
                  modules: Mapping[str, ModuleType] | None = None) -> tuple[str, list]:
    """(setup source, cells) of a lab's notebook.py in jupytext percent format.

    * `# %% [markdown]` cells are jinja2 templates rendered with `namespace` and FILTERS; one with
      `reveal="<qid>"` is shown by that prediction's last reveal once the student's functions ran;
    * the first code cell is the setup (its imports of `package` become literal assignments);
    * a code cell with `answer="<qid>"` is where that question is asked (its source is ignored and
      must be empty); `challenge="<cid>"` (empty) likewise places a design challenge; `grades=true` is where the function grade cells go;
      `measurements=true` (empty) is where the model-vs-measurement element goes; any other code cell is
      provided code, behind the prediction lock of `requires=[...]`, its source collapsed when it
      `requires` answers or is tagged `instrument`.
    """
    notebook = _percent(path)
    setup, cells = None, []
    for index, cell in enumerate(notebook.cells):
        meta = dict(cell.metadata)
        where = f"{path}: cell {index}"
        if cell.cell_type == "markdown":
            cells.append(Markdown(render(cell.source, **namespace), reveal=meta.get("reveal", "")))
        elif setup is None:
            setup = literal_setup(cell.source, package, modules)
        elif "answer" in meta:
            if cell.source.strip():
                raise ValueError(f"{where}: an answer cell is generated from the question; leave it empty")
            cells.append(Answer(meta["answer"]))
        elif "challenge" in meta:
            if cell.source.strip():
                raise ValueError(f"{where}: a challenge's cells are generated from its declaration; leave it empty")
            cells.append(Challenge(meta["challenge"]))
        elif meta.get("grades"):
            cells.append(FunctionGrades(tuple(meta.get("names", ()))))
        elif meta.get("measurements"):
            if cell.source.strip():
                raise ValueError(f"{where}: the model-vs-measurement element is generated from measurements.py; "
                                 "leave its cell empty")
            cells.append(Measurements())
        else:
            requires = tuple(meta.get("requires", ()))
            hidden = bool(requires) or "instrument" in meta.get("tags", ())
            cells.append(Code(cell.source, requires=requires, hidden=hidden))
    if setup is None:
        raise ValueError(f"{path}: no setup code cell")
    return setup, cells


def names_used_before_defined(path: Path, predefined: Iterable[str] = ()) -> list[str]:
    """Names a code cell of notebook.py loads that neither the setup, an earlier cell, the answer
    cells nor builtins define (the lint the lab tests run)."""
    import builtins

    notebook = _percent(path)
    defined = set(dir(builtins)) | set(predefined)
    missing = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        if "answer" in cell.metadata:
            defined.add(cell.metadata["answer"])
            continue
        tree = ast.parse(cell.source)
        bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        bound |= {a.asname or a.name.split(".")[0] for n in ast.walk(tree)
                  if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}
        # a cell's own functions (an instrument's draw function) and classes
        bound |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        bound |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
                  for a in (*n.args, *n.kwonlyargs)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) \
                    and node.id not in defined and node.id not in bound:
                missing.append(f"{node.id} (line {node.lineno} of cell {cell.source.splitlines()[0]!r})")
        defined |= bound
    return missing


def assemble(package: str, *, title: str, reference: ModuleType, source_lab: str, summary: str,
             notebook_modules: Sequence[str] = ()) -> Assignment:
    """A lab folder's ASSIGNMENT from its parts: scenario.py and questions.py (the notebook's namespace),
    items.py (FUNCTIONS), notebook.py, and, where the lab has them, misconceptions.py (MISCONCEPTIONS),
    challenges.py (CHALLENGES), measurements.py (MEASUREMENTS) and variants.py (its per-student
    versions: labs/variants.py). The id is the package's name, the
    student's module the reference's; `summary` (what students build, one line) is the lab's row of the
    README's table; `notebook_modules` names reference modules the notebook imports (`cluster`, for a
    cluster's ring link), shipped beside the stub but never needed to grade."""
    def part(name: str):
        try:
            return importlib.import_module(f"{package}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.{name}":
                raise
            return None

    scenario, questions, items = part("scenario"), part("questions"), part("items")
    misconceptions, challenges, measurements = part("misconceptions"), part("challenges"), part("measurements")
    folder = Path(importlib.import_module(package).__file__).parent
    notebook = NotebookFile(folder / "notebook.py", scenario_namespace(scenario, questions), package)
    from labs.variants import declared
    variants = declared(package)    # labs/<lab>/variants.py: computed on first use, never at import
    assignment = Assignment(
        id=package.rpartition(".")[2], title=title, module=reference.__name__.rpartition(".")[2],
        reference=reference, functions=items.FUNCTIONS, questions=questions.QUESTIONS, notebook=notebook,
        source_lab=source_lab, summary=summary,
        misconceptions=misconceptions.MISCONCEPTIONS if misconceptions else {},
        challenges=challenges.CHALLENGES if challenges else (),
        measurements=measurements.MEASUREMENTS if measurements else (),
        notebook_modules=tuple(notebook_modules), variants=variants)
    if variants is not None:
        variants.base = assignment
    return assignment
