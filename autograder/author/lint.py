"""`scalelabs lint [LAB ...]`: a lab's own rules, checked in seconds, each broken rule one line naming
the file, the line and the fix (`path:line: rule: what is wrong (fix: what to do)`).

These are the rules the lab tests used to find only after minutes (grading every lab through the
engine, running every notebook); tests/labs/test_labs.py now runs each rule on every lab, and
tests/author/test_lint.py breaks each on purpose. The rules, in the order they run:

  import        the lab package imports (questions.md's sections match questions.py's questions)
  contract      labs/<lab>/physics.md lists exactly the graded functions in order; the generated pages are
                current; every reference function rejects a non-quantity naming the parameter
  items         points, worked examples (valid calls returning a JSON scalar), two public properties
  sampler       hidden domains and property strategies: drawn by the grader's own sampler (not hypothesis
                per input), valid JSON calls of the reference, each input replays in hypothesis; no hidden
                domain is a strategy students have (properties.py)
  keys          keys computed, spread over the letters, never named in a prompt or hint; a prediction's
                key index is not typed
  properties    the public properties module is standalone and every check in it is declared or used
  notebook      notebook.py compiles, every name it reads is defined before, the setup imports no staff
                package, a cell reading an answer waits for it
  misconceptions  every numeric wrong function of tests/labs/<lab>/impls/wrong_a.py and wrong_b.py
                computes a declared wrong model; each model short and pointing at a section of the story
  measurements  three published measurements, the notebook's element and its reflection, each row quoting its
                figure and agreeing within the band or naming the effect the lab teaches
  derive        at most a third of the stub docstrings state their closed form, only the items.DEFINITIONS;
                every other function's formula in the reference's Formula: paragraph, a Derive: one in the stub
  giveaways     nothing readable before a question states its key (nor any sentence of the built notebook,
                read as a student scrolls it); options comparable and explained
  leaks         the built notebook (every version, decoded, as built for either predictions mode) holds no
                staff-only code line, key that can earn points there, or reference design
  typed-numbers no quantity typed into the story, questions.md or an option's text: each is computed
                (autograder/author/typed_numbers.py)
  variants      every version a lab declares (variants.py) computes, keeps its options apart and its keys
                unique and robust, and keeps the give-away guard's rules
  samples       samples.toml parses, each sample module differs from the reference where declared
  import-time   importing the lab costs every grading process under IMPORT_BUDGET_S of CPU
"""
from __future__ import annotations

import ast
import importlib
import inspect
import json
import math
import re
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import labs
from autograder.author.docs import REPO, Problem as _DocProblem

IMPORT_BUDGET_S = 0.2       # CPU seconds a lab's own import (package + reference module) may cost
EDGE_SEEDS = 4     # seeds whose hidden-domain draws (edges included) must all be valid calls
SAMPLED = 15                # inputs the sampler draws per strategy, beyond the simplest
STAFF_PACKAGES = ("labs", "reference", "autograder")


@dataclass(frozen=True)
class Problem:
    rule: str
    path: Path
    line: int
    message: str
    fix: str

    def __str__(self) -> str:
        return f"{_rel(self.path)}:{self.line}: {self.rule}: {self.message} (fix: {self.fix})"


def _rel(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def line_of(path: Path, pattern: str, default: int = 1) -> int:
    """The first line of `path` matching the regex `pattern` (default when none or no file)."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError:
        return default
    regex = re.compile(pattern)
    return next((n for n, text in enumerate(lines, 1) if regex.search(text)), default)


@dataclass
class Lab:
    """One lab's places: its package folder, its test folder, its reference module, its declaration."""
    id: str
    assignment: object = None

    @property
    def folder(self) -> Path:
        return REPO / "labs" / self.id

    @property
    def tests(self) -> Path:
        return REPO / "tests" / "labs" / self.id

    def file(self, name: str) -> Path:
        return self.folder / name

    @property
    def reference_path(self) -> Path:
        return Path(self.assignment.reference.__file__)

    def item_line(self, name: str) -> int:
        return line_of(self.file("items.py"), rf"FunctionItem\(\s*[\"']{re.escape(name)}[\"']")

    def function_line(self, name: str) -> int:
        try:
            return inspect.getsourcelines(getattr(self.assignment.reference, name))[1]
        except (OSError, TypeError, AttributeError):
            return 1


def _from_doc(rule: str, problem: _DocProblem) -> Problem:
    return Problem(rule, problem.path, problem.line, problem.message, problem.fix)


# --- import ---------------------------------------------------------------------------------------

_WHERE = re.compile(r"^(/[^:]+|[\w./-]+\.\w+):(\d+): (.*)$", re.S)


def import_problem(lab_id: str, exc: BaseException) -> Problem:
    """The error as one line, where it is: a message that starts with `path:line:` (questions.md and
    questions.py mistakes), a SyntaxError's own place, else the innermost frame in a lab's files (its
    folder, a reference module, its tests' impls)."""
    message = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    match = _WHERE.match(str(exc))
    if match:
        return Problem("import", REPO / match.group(1), int(match.group(2)), match.group(3).replace("\n", " "),
                       "correct it there; a lab that does not import is not graded at all")
    if isinstance(exc, SyntaxError) and exc.filename:
        return Problem("import", Path(exc.filename), exc.lineno or 1, message, "correct the syntax")
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if any(Path(f.filename).resolve().is_relative_to(REPO / place) for place in ("labs", "reference", "tests"))]
    where = frames[-1] if frames else None
    return Problem("import", Path(where.filename) if where else REPO / "labs" / lab_id / "__init__.py",
                   where.lineno if where else 1, message, "correct it there; a lab that does not import is not graded")


# --- contract ------------------------------------------------------------------------------------

# Every parameter of the labs is a finite, non-negative number (bytes, seconds, counts, fractions, USD) or
# a dict of them, so each of these lies outside every domain.
OUTSIDE_EVERY_DOMAIN = (float("nan"), float("inf"), -1.0, True, "1")


def rule_contract(lab: Lab) -> Iterable[Problem]:
    from autograder.author import docs

    a = lab.assignment
    rows = [_from_doc("contract", p) for p in docs.contract_problems(a)]
    yield from rows
    try:
        for page in docs.lab_stale(a) if not rows else ():
            yield Problem("contract", page, line_of(page, re.escape(docs.BEGIN)),
                          f"what this page says about {a.id} is not what its own files say",
                          "run `scalelabs docs` and commit the page")
    except docs.DocsError as exc:
        problem = import_problem(lab.id, exc)
        yield Problem("contract", problem.path, problem.line, problem.message, "correct the lab's documentation file")
    for item in a.functions:
        function = getattr(a.reference, item.name, None)
        if function is None:
            yield Problem("contract", lab.reference_path, 1, f"the reference has no function {item.name}",
                          f"define {item.name} in {lab.reference_path.name}")
            continue
        if not (function.__doc__ or "").strip():
            yield Problem("contract", lab.reference_path, lab.function_line(item.name),
                          f"{item.name} has no docstring", "say what it computes, its units and its source")
        if not item.examples:
            continue
        wrong = []
        for param in inspect.signature(function).parameters:
            for value in OUTSIDE_EVERY_DOMAIN:
                try:
                    function(**{**item.examples[0].kwargs, param: value})
                except ValueError as error:
                    if not re.search(rf"\b{param}\b", str(error)):
                        wrong.append(f"{param}={value!r} raises without naming {param}")
                except Exception as error:
                    wrong.append(f"{param}={value!r} raises {type(error).__name__}, not ValueError")
                else:
                    wrong.append(f"{param}={value!r} is accepted")
        if wrong:
            yield Problem("contract", lab.reference_path, lab.function_line(item.name),
                          f"{item.name}: {'; '.join(wrong[:3])}{' ...' if len(wrong) > 3 else ''}",
                          "check every parameter with reference/_domain.py's checks before the solution region")


# --- items ---------------------------------------------------------------------------------------

def _scalar(value) -> bool:
    return isinstance(value, (int, float, str, bool)) and not (isinstance(value, float) and math.isnan(value))


def rule_items(lab: Lab) -> Iterable[Problem]:
    a = lab.assignment
    for item in a.functions:
        where = (lab.file("items.py"), lab.item_line(item.name))
        if not item.points > 0:
            yield Problem("items", *where, f"{item.name} has no points", "give it points > 0")
        if not item.examples:
            yield Problem("items", *where, f"{item.name} has no worked example", "add examples((label, kwargs), ...)")
        if sum(p.public for p in item.properties) < 2:
            yield Problem("items", *where, f"{item.name} has fewer than two public properties",
                          f"declare two in properties.py with @public_property({item.name!r}, ...)")
        for example in item.examples:
            try:
                value = getattr(a.reference, item.name)(**example.kwargs)
            except Exception as exc:
                yield Problem("items", *where, f"{item.name}'s example {example.label!r} is not a valid call: "
                              f"{type(exc).__name__}: {exc}", "give inputs inside the function's domain")
                continue
            if not _scalar(value):
                yield Problem("items", *where, f"{item.name}'s example {example.label!r} returns {type(value).__name__}",
                              "a graded function returns one number, string or bool")


# --- sampler -------------------------------------------------------------------------------------

def _strategies(lab: Lab):
    """(item, what, strategy, file, line) of every hidden domain and property strategy of the lab."""
    for item in lab.assignment.functions:
        yield item, "hidden domain", item.domain, lab.file("items.py"), lab.item_line(item.name)
        for p in item.properties:
            path = lab.file("properties.py") if p.public else lab.file("items.py")
            line = line_of(path, re.escape(repr(p.name)[1:-1]), lab.item_line(item.name))
            yield item, f"property {p.name!r}", p.strategy, path, line


def _released_strategies(lab: Lab) -> list:
    """Every strategy a student has: the public properties' and the properties module's own."""
    from hypothesis.strategies import SearchStrategy
    module = importlib.import_module(f"labs.{lab.id}.properties")
    found = [p.strategy for item in lab.assignment.functions for p in item.properties if p.public]
    return found + [value for value in vars(module).values() if isinstance(value, SearchStrategy)]


def rule_sampler(lab: Lab) -> Iterable[Problem]:
    from autograder.engine import draw

    a = lab.assignment
    released = _released_strategies(lab)
    shipped = {id(s) for s in released} | {repr(s) for s in released}
    for item in a.functions:   # a student computes every hidden input from a released strategy
        if id(item.domain) in shipped or repr(item.domain) in shipped:
            yield Problem("sampler", lab.file("items.py"), lab.item_line(item.name),
                          f"{item.name}'s hidden domain is a strategy of properties.py, which students have: "
                          "without a course secret every hidden input is computed from the released files",
                          "give it a domain of the lab's own in items.py, wider and drawn differently "
                          "(docs/adding-a-lab.md, hidden domains)")
    for item, what, strategy, path, line in _strategies(lab):
        with draw.seed_only(), draw.recording_fallbacks() as fallbacks:
            try:
                # a hidden domain as the hidden check draws it: its edges and anchors too
                values, _, choices = draw._sample(strategy, 7, SAMPLED, edges=what == "hidden domain")
            except Exception as exc:
                yield Problem("sampler", path, line, f"{item.name}'s {what} cannot be sampled: {type(exc).__name__}: "
                              f"{exc}", "build it from hypothesis strategies the grader samples (docs/adding-a-lab.md)")
                continue
            if fallbacks:
                yield Problem("sampler", path, line, f"{item.name}'s {what} uses {sorted(set(fallbacks))}, which the "
                              "grader's sampler hands to hypothesis for every input (~0.3 ms each, not microseconds)",
                              "build it from integers/floats with bounds, sampled_from, just, one_of, "
                              "fixed_dictionaries, tuples, builds, lists, map, filter, flatmap or composite")
            if not values:
                yield Problem("sampler", path, line, f"{item.name}'s {what} yields no input (every draw rejected)",
                              "loosen its filter")
                continue
            bad_replay = next((v for c, v in zip(choices, values)
                               if not any(x is draw.UNRECORDED for x in c) and not draw._replays_to(strategy, c, v)),
                              None)
        if bad_replay is not None:
            yield Problem("sampler", path, line, f"{item.name}'s {what}: the input {bad_replay!r} does not replay in "
                          "hypothesis, so a failure on it would not shrink",
                          "draw it from the strategy (no randomness or state outside hypothesis)")
        if what != "hidden domain":
            continue
        with draw.seed_only():      # more students' draws: an edge combined with other random choices
            values += [v for seed in range(EDGE_SEEDS) for v in draw._sample(strategy, seed, SAMPLED, edges=True)[0]]
        for kwargs in values:
            try:
                json.dumps(kwargs)
                getattr(a.reference, item.name)(**kwargs)
            except Exception as exc:
                yield Problem("sampler", path, line, f"{item.name}'s hidden domain draws {kwargs!r}, which is not a "
                              f"valid JSON call of the reference: {type(exc).__name__}: {exc}",
                              "draw only inputs inside the function's domain, as JSON values")
                break


# --- keys ----------------------------------------------------------------------------------------

def _declared_questions(path: Path) -> dict[str, tuple[str, str | None, int]]:
    """question id -> (kind, the name of its letters(...) result, line) from questions.py's QUESTIONS."""
    found = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Tuple)
                        and len(value.elts) == 3 and isinstance(value.elts[0], ast.Constant)):
                    name = value.elts[2].id if isinstance(value.elts[2], ast.Name) else None
                    found[key.value] = (value.elts[0].value, name, key.lineno)
    return found


def rule_keys(lab: Lab) -> Iterable[Problem]:
    a = lab.assignment
    path = lab.file("questions.py")
    keys = [q.key for q in a.questions]
    if len(set(keys)) < 2 and len(keys) > 1:
        yield Problem("keys", path, line_of(path, r"^QUESTIONS"), f"every key is {keys[0]!r}",
                      "choose letters(..., offset=) per question so the keys differ and none is 'A'")
    for q in a.questions:
        if q.key not in q.options or not q.hint:
            yield Problem("keys", path, line_of(path, f'"{q.id}"'), f"{q.id}: its key is no option or it has no hint",
                          "lay the options out with letters() and write a ### hint in questions.md")
        for part, text in (("prompt", q.prompt), ("hint", q.hint)):
            if re.search(rf'\b(option|answer|choice) {q.key}\b|"{q.key}"', text):
                yield Problem("keys", lab.file("questions.md"), line_of(lab.file("questions.md"), rf"^## {q.id}$"),
                              f"{q.id}: its {part} names the key {q.key!r}", "never name a letter in a prompt or hint")
    if not path.is_file():
        return
    declared = _declared_questions(path)
    by_name = {name: (qid, kind) for qid, (kind, name, _) in declared.items() if name}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and getattr(node.value.func, "id", None) == "letters" and len(node.value.args) >= 2):
            continue
        target = node.targets[0].id if isinstance(node.targets[0], ast.Name) else None
        index = node.value.args[1]
        qid, kind = by_name.get(target, (target, None))
        if isinstance(index, ast.Constant) and isinstance(index.value, str):
            yield Problem("keys", path, index.lineno, f"{qid}: the key is a typed letter {index.value!r}",
                          "pass the key's index in the options list, computed from the scenario")
        elif isinstance(index, ast.Constant) and kind == "prediction":
            yield Problem("keys", path, index.lineno, f"{qid} is a prediction whose key index {index.value!r} is typed",
                          "compute it from the scenario: range_key(value, RANGES) or choices.index(computed), so "
                          "the key follows the physics when an input changes")


# --- properties ----------------------------------------------------------------------------------

def _top_level_imports(source: str) -> set[str]:
    tree = ast.parse(source)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return imported | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                       and node.module and node.level == 0}


def rule_properties(lab: Lab) -> Iterable[Problem]:
    from collections import Counter

    from autograder.build.publictests import KIT, properties_path

    path = properties_path(lab.assignment)
    source = path.read_text(encoding="utf-8")
    standalone = set(sys.stdlib_module_names) | {"hypothesis"}
    for node in ast.walk(ast.parse(source)):
        modules = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                   [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else [])
        for module in modules:
            if module != "labs.property_kit" and module.split(".")[0] not in standalone:
                yield Problem("properties", path, node.lineno, f"imports {module}, which students do not have",
                              "import only the stdlib, hypothesis and labs.property_kit (it ships to students)")
    for module in _top_level_imports(KIT.read_text(encoding="utf-8")):
        if module.split(".")[0] not in standalone:
            yield Problem("properties", KIT, 1, f"the shared kit imports {module}", "keep the kit stdlib + hypothesis")
    names = Counter(re.findall(r"\b\w+\b", source))
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and not node.decorator_list and names[node.name] <= 1:
            yield Problem("properties", path, node.lineno, f"{node.name} is neither declared a property nor used",
                          "declare it with @public_property(item, strategy, name=...) or delete it")


# --- notebook ------------------------------------------------------------------------------------

def rule_notebook(lab: Lab) -> Iterable[Problem]:
    import jupytext

    from autograder.build.notebook import build_notebook
    from autograder.engine.spec import Code
    from labs.authoring import names_used_before_defined

    path = lab.file("notebook.py")
    if not path.is_file():
        yield Problem("notebook", path, 1, "the lab has no notebook.py", "scalelabs new-lab writes one to start from")
        return
    text = path.read_text(encoding="utf-8")
    for cell in jupytext.reads(text, fmt="py:percent").cells:
        if cell.cell_type == "code":
            try:
                compile(cell.source, str(path), "exec")
            except SyntaxError as exc:
                first = cell.source.splitlines()[0] if cell.source.strip() else ""
                yield Problem("notebook", path, line_of(path, re.escape(first)) if first else 1,
                              f"a code cell does not compile: {exc.msg}", "correct the cell")
                return
    for missing in names_used_before_defined(path):
        name = missing.split()[0]
        yield Problem("notebook", path, line_of(path, rf"\b{re.escape(name)}\b"),
                      f"{missing} is read before anything defines it",
                      "import it in the setup cell (from labs.<lab>.scenario import ...) or define it in an earlier cell")
    a = lab.assignment
    setup = next(c.source for c in build_notebook(a).cells if c.id == "setup")
    tree = ast.parse(setup)
    imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {x.name for n in ast.walk(tree) if isinstance(n, ast.Import) for x in n.names}
    for module in sorted(m for m in imported if m.split(".")[0] in STAFF_PACKAGES):
        yield Problem("notebook", path, line_of(path, re.escape(module)), f"the released setup imports {module}",
                      "import only scenario values (they become literals) and the student's own modules")
    yield from _notebook_conventions(a, path, text)
    qids = {q.id for q in a.questions}
    for cell in a.notebook:
        if isinstance(cell, Code):
            read = {n.id for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Name)} & qids
            if not read <= set(cell.requires):
                first = cell.source.strip().splitlines()[0]
                yield Problem("notebook", path, line_of(path, re.escape(first)),
                              f"a cell reads {sorted(read - set(cell.requires))} without waiting for the answer",
                              f"head it # %% requires={sorted(read)}")


def _notebook_conventions(a, path: Path, text: str) -> Iterable[Problem]:
    """Issue 29's notebook: no takeaway in it (it states a reflection's answer: questions.md's
    ### takeaway, shown with the grade), no math peek a student reads before the functions ran (a
    reveal's 'Check your derivation'), no readout of the options (the reveal speaks of the recorded
    answer, with the current one if it differs)."""
    from autograder.engine.spec import Markdown

    for cell in a.notebook:
        if not isinstance(cell, Markdown) or cell.reveal:
            continue
        for tell, fix in (("**Takeaway", "move it to the reflection's ### takeaway in questions.md (shown with its grade)"),
                          ("Math peek", "make it the prediction's reveal: # %% [markdown] reveal=\"<prediction id>\", "
                                        "summary 'Check your derivation: ...'")):
            if tell in cell.text:
                first = next((line for line in cell.text.splitlines() if tell in line), tell)[:20]
                yield Problem("notebook", path, line_of(path, re.escape(first), line_of(path, re.escape(tell))),
                              f"a markdown cell holds a {tell.strip('*')}", fix)
    for name in sorted(set(re.findall(r"import ([A-Z0-9_]*OPTIONS)\b", text))):
        yield Problem("notebook", path, line_of(path, re.escape(name)), f"the notebook imports the options ({name})",
                      "drop it and the readout's 'You predicted ...' line: the reveal shows the recorded answer")


# --- misconceptions ------------------------------------------------------------------------------

def rule_misconceptions(lab: Lab) -> Iterable[Problem]:
    from autograder.author.coupling import expected_names, impl_module
    from autograder.engine.spec import Markdown

    a = lab.assignment
    path = lab.file("misconceptions.py")
    if not a.misconceptions:
        yield Problem("misconceptions", path, 1, "the lab declares no misconception",
                      "declare MISCONCEPTIONS in misconceptions.py: the wrong models a student's function may compute")
    story = "\n".join(cell.text for cell in a.notebook if isinstance(cell, Markdown))
    for function, declared in a.misconceptions.items():
        names = [m.name for m in declared]
        for m in declared:
            line = line_of(path, re.escape(m.name[:40]), line_of(path, f'"{function}"'))
            if names.count(m.name) > 1:
                yield Problem("misconceptions", path, line, f"{function}: {m.name!r} is declared twice", "rename one")
            if not m.name or len(m.name) > 60:
                yield Problem("misconceptions", path, line, f"{function}: the name {m.name!r} is not 1-60 characters",
                              "name the mistake in a few words")
            if not 1 <= len(m.explanation.splitlines()) <= 2:
                yield Problem("misconceptions", path, line, f"{function}: {m.name!r}'s explanation is not 1-2 lines",
                              "explain what is wrong and why in two lines")
            if m.where.removeprefix("the ") not in story:
                yield Problem("misconceptions", path, line, f"{function}: {m.name!r} points at {m.where!r}, which no "
                              "markdown cell of the notebook contains", "use an act's heading, as the feedback names it")
    for impl in ("wrong_a", "wrong_b"):
        impl_path = lab.tests / "impls" / f"{impl}.py"
        if not impl_path.is_file():
            yield Problem("misconceptions", impl_path, 1, f"the lab tests have no {impl}.py",
                          "write every function wrong, each as a student plausibly would (scalelabs new-lab starts one)")
            continue
        try:
            module = impl_module(impl_path, f"_lint_{lab.id}_{impl}")
            names = expected_names(a, module)
        except Exception as exc:
            yield import_problem(lab.id, exc)
            continue
        for function, model in names.items():
            if model is None:
                yield Problem("misconceptions", impl_path, line_of(impl_path, rf"^def {function}\("),
                              f"{impl}'s {function} computes none of the lab's declared wrong models, so its feedback "
                              "names no misconception", f"declare its mistake for {function} in misconceptions.py "
                              "(a model built from the reference with labs.slips), or make it one of those declared")


# --- measurements --------------------------------------------------------------------------------

def rule_measurements(lab: Lab) -> Iterable[Problem]:
    """The model against the record (autograder/build/measured.py): at least three rows, the notebook's
    element and its reflection, every row quoting its figure and agreeing or naming its effect."""
    from autograder.build import measured

    a, path = lab.assignment, lab.file("measurements.py")
    if len(a.measurements) < 3:
        yield Problem("measurements", path, 1, f"{len(a.measurements)} published measurement(s), not three",
                      "declare MEASUREMENTS: published figures at setups the lab's functions can compute")
    try:
        measured.notebook_rows(a)
    except ValueError as exc:
        yield Problem("measurements", path, 1, str(exc), "mark the rows the notebook shows notebook=True")
    if a.measurements and "measurement_reflection" not in {q.id for q in a.questions}:
        yield Problem("measurements", lab.file("questions.py"), line_of(lab.file("questions.py"), r"^QUESTIONS"),
                      "no measurement_reflection question", "ask why model and measurement differ, after the element")
    text = lab.file("notebook.py").read_text(encoding="utf-8") if lab.file("notebook.py").is_file() else ""
    for m in a.measurements:
        for problem in measured.problems(m, text):
            yield Problem("measurements", path, line_of(path, rf"id=[\"']{re.escape(m.id)}[\"']"), problem,
                          "quote the figure exactly as the source writes it; name the effect that explains a gap")


# --- derive, then check -------------------------------------------------------------------------

def _docstrings(source: str, names) -> dict[str, tuple[str, list[str], int]]:
    """function name -> (docstring, parameters, line) of the module's top-level functions in `names`."""
    return {node.name: (ast.get_docstring(node) or "", [x.arg for x in node.args.args + node.args.kwonlyargs], node.lineno)
            for node in ast.parse(source).body if isinstance(node, ast.FunctionDef) and node.name in names}


def stub_formulas(a) -> dict[str, str | None]:
    """Each graded function's closed form as its stub docstring states it (None: it states none)."""
    from autograder.author import closedforms
    from autograder.build import stubgen

    names = {f.name for f in a.functions}
    return closedforms.stub_closed_forms(stubgen.generate_stub(Path(a.reference.__file__)), names)


def definitions(a) -> tuple[str, ...]:
    """labs/<lab>/items.py's DEFINITIONS: the graded functions whose stub may state its closed form."""
    return tuple(getattr(importlib.import_module(f"labs.{a.id}.items"), "DEFINITIONS", ()))


def rule_derive(lab: Lab) -> Iterable[Problem]:
    from autograder.author import closedforms
    from autograder.build import stubgen

    a = lab.assignment
    items, path = lab.file("items.py"), lab.reference_path
    names = {f.name for f in a.functions}
    allowed = set(definitions(a))
    if not allowed <= names or 3 * len(allowed) > len(names):
        yield Problem("derive", items, line_of(items, r"^DEFINITIONS"), f"DEFINITIONS lists {sorted(allowed)}: "
                      f"at most a third of the {len(names)} graded functions, each one of them",
                      "list only definitions (a ratio, a share, MFU) whose stub may state the formula")
    stated = stub_formulas(a)
    reference = _docstrings(path.read_text(encoding="utf-8"), names)
    stub = _docstrings(stubgen.generate_stub(path), names)
    for name in sorted(names):
        doc, params, line = reference[name]
        if stated[name] and name not in allowed:
            yield Problem("derive", path, line, f"{name}'s stub docstring states its closed form "
                          f"({stated[name][:60]!r}): the student transcribes instead of deriving",
                          "move the formula and its source into a 'Formula:' paragraph (the stub leaves it out) and "
                          "describe the mechanism, units, edge cases in a 'Derive:' paragraph")
        if stub[name][0] == doc:
            continue   # nothing to derive (a predicate, a selector) or a listed definition
        formula = doc.split("Formula:")[1].split("Derive:")[0] if "Formula:" in doc else ""
        if not (formula.strip() and ("=" in formula or closedforms.expressions(formula, set(params)))):
            yield Problem("derive", path, line, f"{name}: the docstring has no Formula: paragraph with its closed form",
                          "staff read the closed form and its source in a 'Formula:' paragraph")
        if "Derive:" not in stub[name][0] or len(stub[name][0].split("Derive:")[1].split()) < 12:
            yield Problem("derive", path, line, f"{name}: the stub has no Derive: paragraph (12 words or more)",
                          "say what moves where, in how many steps, the units, the edge cases, the source lab's error")


# --- giveaways -----------------------------------------------------------------------------------

def rule_giveaways(lab: Lab) -> Iterable[Problem]:
    import nbformat

    from autograder.author import guard
    from autograder.build.notebook import build_notebook

    a = lab.assignment
    questions_py, notebook = lab.file("questions.py"), lab.file("notebook.py")
    for q in a.questions:
        for problem in guard.option_problems(q):
            yield Problem("giveaways", questions_py, line_of(questions_py, f'"{q.id}"'), problem,
                          "rewrite the options so they are of comparable length, each with Option(text, why)")
    with tempfile.TemporaryDirectory() as tmp:
        before = guard.readable_before(a, Path(tmp))
    for qid, what, cell in guard.giveaways(a, before):
        yield Problem("giveaways", notebook, line_of(notebook, rf'answer="{qid}"'),
                      f"{qid}: {what} is readable before the question, in {cell}",
                      "move that text after the question's reveal (or reword it); KEYED_FIGURES in questions.py lists "
                      "the figures that give a key away")
    built = json.loads(nbformat.writes(build_notebook(a)))   # the whole notebook, as a student scrolls it
    for found in guard.stated_in_notebook(a, built):
        qid = found.split(":")[0]
        yield Problem("giveaways", notebook, line_of(notebook, rf'answer="{qid}"'), found,
                      "move that sentence into the question's takeaway in questions.md (shown with its grade), or "
                      "declare the story's own words in questions.STORY_WORDS")


# --- typed numbers -------------------------------------------------------------------------------

def rule_typed_numbers(lab: Lab) -> Iterable[Problem]:
    from autograder.author import typed_numbers

    for path, line, message in typed_numbers.problems(lab.folder):
        yield Problem(typed_numbers.RULE, path, line, message, typed_numbers.FIX)


# --- leaks ---------------------------------------------------------------------------------------

def rule_leaks(lab: Lab) -> Iterable[Problem]:
    """The notebook as built for a course of each predictions mode, decoded where encoded, holds no staff
    code line and no key that can still earn points there."""
    from autograder.build.leakscan import scan_shipped, secrets_for
    from autograder.build.notebook import build_notebook
    from autograder.engine.config import PREDICTION_MODES

    a = lab.assignment
    seen = set()
    for mode in PREDICTION_MODES:   # as released: every version of a lab with variants
        try:
            built, every_version = build_notebook(a, predictions=mode, variants=True), True
        except Exception:   # noqa: BLE001 -- a version that does not compute: the variants rule says so
            built, every_version = build_notebook(a, predictions=mode), False   # the lab as written
        text = "\n".join(cell.source for cell in built.cells)
        for finding in scan_shipped(f"{a.id}.ipynb", text, secrets_for([a], predictions=mode, versions=every_version)):
            if finding in seen:
                continue
            seen.add(finding)
            yield Problem("leaks", lab.file("notebook.py"), 1, f"the built notebook leaks (predictions = {mode!r}): "
                          f"{finding}", "keep staff code (items.py, scenario.py, challenges.py, the reference) and "
                          "keys that can earn points out of the notebook")


# --- variants ------------------------------------------------------------------------------------

def rule_variants(lab: Lab) -> Iterable[Problem]:
    """Every version of a lab that declares variants (labs/<lab>/variants.py) computes and is checked
    like the lab itself (autograder/author/versions.py), and the notebook that carries them all states
    no version's key."""
    import nbformat

    from autograder.author import guard, versions
    from autograder.build.notebook import build_notebook

    a = lab.assignment
    declaration = lab.file("variants.py")
    if a.variants is None:
        return
    found = False
    for index, message, fix in versions.problems(a):
        found = True
        yield Problem("variants", declaration, line_of(declaration, r"^COUNT") if index is None else
                      line_of(declaration, r"^VARY"), message if index is None else f"version {index + 1}: {message}", fix)
    if found:   # the notebook of versions that do not compute is no finding of its own
        return
    try:
        merged = json.loads(nbformat.writes(build_notebook(a, variants=True)))
    except Exception as exc:   # noqa: BLE001 -- a version whose notebook cannot be merged
        yield Problem("variants", lab.file("notebook.py"), 1, f"the versions' notebooks cannot be merged into one: "
                      f"{type(exc).__name__}: {exc}", "keep every difference between versions to text and scenario values")
        return
    for found in guard.stated_in_notebook(a, merged):
        qid = found.split(": ", 1)[1].split(":")[0] if found.startswith("version ") else found.split(":")[0]
        yield Problem("variants", lab.file("notebook.py"), line_of(lab.file("notebook.py"), rf'answer="{qid}"'), found,
                      "reword that sentence so it holds at every version, or move it into the question's takeaway")


# --- samples -------------------------------------------------------------------------------------

STUDENTS = ["broken", "correct", "partly_wrong", "untouched", "wrong_predictions"]


def _differing(a, module_text: str, tmp: Path) -> set[str]:
    """Function items whose worked examples disagree with the reference, for this module text."""
    from autograder.author.kernel import student_kernel

    with student_kernel(tmp):
        namespace: dict = {}
        exec(compile(module_text, f"{a.module}.py", "exec"), namespace)
    out = set()
    for item in a.functions:
        for example in item.examples:
            want = getattr(a.reference, item.name)(**example.kwargs)
            got = namespace[item.name](**example.kwargs)
            if isinstance(want, str) and got != want or not isinstance(want, str) and not math.isclose(
                    got, want, rel_tol=item.rel_tol, abs_tol=item.abs_tol):
                out.add(item.name)
    return out


def rule_samples(lab: Lab) -> Iterable[Problem]:
    from autograder.classroom import samples

    a = lab.assignment
    toml = lab.file("samples.toml")
    try:
        declared = samples.sample_class(a.id)
    except Exception as exc:
        yield Problem("samples", toml, 1, str(exc), "correct samples.toml (docs/adding-a-lab.md)")
        return
    if declared is None:
        yield Problem("samples", toml, 1, "the lab has no samples.toml (its demo class)", "scalelabs new-lab writes one")
        return
    if not set(STUDENTS) <= set(declared):
        yield Problem("samples", toml, 1, f"the demo class is {sorted(declared)}", f"declare at least {STUDENTS}")
    names = {f.name for f in a.functions}
    for student, entry in declared.items():
        line = line_of(toml, rf"^\[{student}\]")
        for qid in entry.get("answers", {}):
            if qid not in set(a.item_ids):
                yield Problem("samples", toml, line, f"{student} answers {qid}, which the lab does not ask",
                              "answer the lab's question and challenge ids")
        for cid in entry.get("constraints_met", {}):
            if cid not in {c.id for c in a.challenges}:
                yield Problem("samples", toml, line, f"{student}: constraints_met names {cid}, not a design challenge",
                              "name a challenge id of challenges.py")
        diff = lab.file("samples") / f"{student}.py"
        if diff.is_file() and entry.get("compiles", True):
            defined = {n.name for n in ast.parse(diff.read_text(encoding="utf-8")).body if isinstance(n, ast.FunctionDef)}
            if not defined or not defined <= names or not defined <= set(entry.get("wrong", ())):
                yield Problem("samples", diff, 1, f"defines {sorted(defined)}: only graded functions it declares wrong "
                              f"({sorted(entry.get('wrong', ()))})", "redefine only the functions listed in `wrong`")
                continue
        text = samples.sample_module(a, student)
        if entry.get("module") == "stub":
            continue
        if not entry.get("compiles", True):
            try:
                compile(text, f"{student}/{a.module}.py", "exec")
            except SyntaxError:
                continue
            yield Problem("samples", toml, line, f"{student} is declared compiles = false but its module compiles",
                          f"put the syntax error in samples/{student}.py")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            try:
                differ = _differing(a, text, Path(tmp))
            except Exception as exc:
                yield Problem("samples", diff if diff.is_file() else toml, 1, f"{student}'s module fails on a worked "
                              f"example: {type(exc).__name__}: {exc}", "a wrong function still returns a number")
                continue
        if differ != set(entry.get("wrong", ())):
            yield Problem("samples", toml, line, f"{student} differs from the reference on {sorted(differ)}, "
                          f"declares wrong = {sorted(entry.get('wrong', ()))}", "make `wrong` list exactly those")


# --- import time ---------------------------------------------------------------------------------

_TIMER = r"""
import sys, time
sys.path.insert(0, {repo!r})
import hypothesis, hypothesis.strategies, jinja2, autograder.engine.spec, autograder.engine.challenges, labs.authoring, labs.slips, reference.constants, reference._domain
start = time.process_time()
import labs.{lab}
print(time.process_time() - start)
"""

_TRACER = r"""
import sys, time, json
sys.path.insert(0, {repo!r})
import hypothesis, hypothesis.strategies, jinja2, autograder.engine.spec, autograder.engine.challenges, labs.authoring, labs.slips, reference.constants, reference._domain
roots = ({folder!r}, {reference!r})
spent, stack, since = {{}}, [], [0.0]
def account(now):
    if stack and stack[-1] is not None:
        spent[stack[-1]] = spent.get(stack[-1], 0.0) + now - since[0]
    since[0] = now
def local(frame, event, arg):
    account(time.process_time())
    if event == "line":
        stack[-1] = (frame.f_code.co_filename, frame.f_lineno)
    elif event == "return":
        stack.pop()
    return local
def tracer(frame, event, arg):
    if frame.f_code.co_name == "<module>" and frame.f_code.co_filename.startswith(roots):
        account(time.process_time())
        stack.append(None)
        return local
    return None
sys.settrace(tracer)
import labs.{lab}
sys.settrace(None)
print(json.dumps(sorted(([f, l, s] for (f, l), s in spent.items()), key=lambda r: -r[2])[:3]))
"""


def rule_import_time(lab: Lab) -> Iterable[Problem]:
    """Every grading process imports the lab; its own import (the package, its reference module) must stay
    under IMPORT_BUDGET_S of CPU. Over it, the costliest module-level line is named."""
    reference = str(Path(lab.assignment.reference.__file__).resolve())
    run = lambda code: subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True,
                                      cwd=REPO, timeout=120)
    done = run(_TIMER.format(repo=str(REPO), lab=lab.id))
    if done.returncode != 0:
        yield Problem("import-time", lab.file("__init__.py"), 1, f"the lab does not import alone: "
                      f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}",
                      "import it in a fresh interpreter and correct the error")
        return
    spent = float(done.stdout.split()[-1])
    if spent <= IMPORT_BUDGET_S:
        return
    traced = run(_TRACER.format(repo=str(REPO), lab=lab.id, folder=str(lab.folder.resolve()), reference=reference))
    top = json.loads(traced.stdout.split("\n")[-2]) if traced.returncode == 0 and traced.stdout.strip() else []
    path, line, cost = top[0] if top else (str(lab.file("__init__.py")), 1, 0.0)
    yield Problem("import-time", Path(path), line,
                  f"importing {lab.id} costs {spent:.2f} s of CPU, over the {IMPORT_BUDGET_S} s budget"
                  + (f"; this line about {cost:.2f} s of it" if top else ""),
                  "every grading process pays it: compute it on first use (functools.cache) or in a test, not at "
                  "import (a challenge's reference design: a few candidates, not a grid search)")


# --- running -------------------------------------------------------------------------------------

RULES: dict[str, Callable[[Lab], Iterable[Problem]]] = {
    "contract": rule_contract, "items": rule_items, "sampler": rule_sampler, "keys": rule_keys,
    "properties": rule_properties, "notebook": rule_notebook, "misconceptions": rule_misconceptions,
    "measurements": rule_measurements, "derive": rule_derive,
    "giveaways": rule_giveaways, "leaks": rule_leaks, "typed-numbers": rule_typed_numbers,
    "variants": rule_variants, "samples": rule_samples,
    "import-time": rule_import_time,
}


def load_lab(lab_id: str) -> tuple[Lab, list[Problem]]:
    """The lab with its declaration imported, or the import's problem."""
    lab = Lab(lab_id)
    if not (lab.folder / "__init__.py").is_file():
        return lab, [Problem("import", lab.folder, 1, f"no lab {lab_id!r} (labs/{lab_id}/__init__.py)",
                             f"one of {', '.join(sorted(labs.all_assignments()))}, or scalelabs new-lab {lab_id}")]
    try:
        lab.assignment = importlib.import_module(f"labs.{lab_id}").ASSIGNMENT
    except Exception as exc:   # noqa: BLE001 -- any error of a lab's import is reported, never raised
        return lab, [import_problem(lab_id, exc)]
    return lab, []


def run_rule(lab: Lab, name: str) -> list[Problem]:
    """One rule's problems; a rule that itself fails reports where (never a traceback)."""
    try:
        return list(RULES[name](lab))
    except Exception as exc:   # noqa: BLE001
        problem = import_problem(lab.id, exc)
        return [Problem(name, problem.path, problem.line, f"the check failed: {problem.message}",
                        "correct the error there")]


def lint(lab_id: str, rules: Iterable[str] | None = None) -> tuple[list[Problem], dict[str, float]]:
    """(problems, seconds per rule) of one lab, every rule unless `rules` names some."""
    start = time.perf_counter()
    lab, problems = load_lab(lab_id)
    timings = {"import": time.perf_counter() - start}
    if problems:
        return problems, timings
    for name in rules or RULES:
        start = time.perf_counter()
        problems += run_rule(lab, name)
        timings[name] = time.perf_counter() - start
    return problems, timings


def lab_ids() -> list[str]:
    """Every lab folder (a package under labs/), imported or not: lint must see a lab that fails to import."""
    return sorted(p.parent.name for p in (REPO / "labs").glob("*/__init__.py") if not p.parent.name.startswith("_"))
