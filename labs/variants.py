"""Per-student variants of a lab (issue 45): the lab's story numbers and option order differ per student.

A lab declares, in `labs/<lab>/variants.py`, which inputs of its scenario vary and over what:

    VARY = {
        "N_GPUS": (64, 128, 256),                 # a top-level name assigned once in scenario.py
        "ACT2.n_gpus": (512, 1024, 2048),         # a key of a top-level dict(...) or {...} there
        ("C_S", "M_S"): ((240, 28800), (120, 14400)),   # inputs that vary together: a tuple per version
    }
    COUNT = 8                                     # versions, at least MIN_VARIANTS

Version 0 is the lab as written. Versions 1 .. COUNT-1 are drawn deterministically (no course secret)
from the combinations of the declared values, the written one excepted: each next the one whose values
the versions so far use least (every value comes up about equally often), ties in the order of
SHA-256 of the lab and the combination. A version is computed by running the lab's scenario.py with those inputs
(its text is not changed: the assignments named are given the version's values) and then its
questions.py and challenges.py against that scenario, so every number of every version, in the story,
an option, a key or a design target, is computed from reference/ exactly as the lab's own. The
lab's asserts (its story's claims) hold at every version or the version does not compute (lint's
variants rule names it). Each question's options are then laid out in the version's order
(`option_order`: every option identity at every letter equally often over each run of versions),
keeping each option's identity (its letter in the lab as written) for the class report.

The student's version is chosen from the assignment id and the student id
(autograder.engine.variants); the released notebook carries every version
(autograder.build.notebook).
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib
import itertools
import random
import sys
import threading
import types
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from autograder.engine.spec import Assignment, Question

DECLARATION = "variants.py"
MIN_VARIANTS = 8
PARTS = ("scenario", "questions", "challenges")   # run again per version, in this order
_LOCK = threading.RLock()   # a version is computed with the lab's modules swapped in sys.modules


@functools.lru_cache(maxsize=4096)
def _bases(assignment_id: str, qid: str, n: int, groups: int) -> tuple[tuple[int, ...], ...]:
    """Each run of n versions' base layout (option -> position): the written order first, then shuffles
    (seeded by the lab, the question and the run) in which no option stands where an earlier run's base
    puts it (rows of a Latin square, while n allows), so two versions of different runs never show an
    option at the same letter at the same shift."""
    bases = [tuple(range(n))]
    for group in range(1, groups):
        seed = hashlib.sha256(f"{assignment_id}\n{qid}\n{group}".encode()).digest()
        rng = random.Random(int.from_bytes(seed[:8], "big"))
        base = list(range(n))
        for _ in range(1000):
            rng.shuffle(base)
            if len(bases) >= n or all(base[i] != b[i] for b in bases for i in range(n)):
                break
        bases.append(tuple(base))
    return tuple(bases)


def option_order(assignment_id: str, qid: str, n: int, index: int) -> list[int]:
    """Version `index`'s layout of a question's n options: shown position -> the option's position in
    the lab as written. Version 0 keeps the written order; versions k*n .. k*n+n-1 rotate one base
    layout (`_bases`) through every position, so over each run of n versions every option stands at
    every letter once, the key included, and versions of different runs put it elsewhere: a letter
    copied from a classmate of another version is the key about 1 time in n."""
    group, shift = divmod(index, n)
    base = _bases(assignment_id, qid, n, group + 1)[group]
    shown = [0] * n
    for written, position in enumerate(base):
        shown[(position + shift) % n] = written
    return shown


def laid_out(question: Question, order: Sequence[int]) -> Question:
    """The question with its options in `order` (shown position -> written position): letters A, B, ...
    in that order, the key and explanations following their options, each option's identity kept."""
    written = list(question.options)
    letters = [chr(ord("A") + i) for i in range(len(written))]
    source = {shown: written[order[i]] for i, shown in enumerate(letters)}
    return replace(question, options={s: question.options[w] for s, w in source.items()},
                   key=next(s for s, w in source.items() if w == question.key),
                   why={s: question.why[w] for s, w in source.items() if w in question.why},
                   identity={s: question.option_identity(w) for s, w in source.items()})


def rekey_letters(module: types.ModuleType, questions: Mapping[str, Question]) -> None:
    """A version's questions module with each dict it names in `LETTER_KEYED` (name -> question id: a
    dict keyed by that question's option letters, e.g. what a readout prints per option) keyed by the
    letters the version shows; the notebook's setup reads it from there."""
    for name, qid in getattr(module, "LETTER_KEYED", {}).items():
        written = getattr(module, name)
        q = questions[qid]
        setattr(module, name, {shown: written[q.option_identity(shown)] for shown in q.options})


# --- running the scenario at other inputs ----------------------------------------------------------

class VariantError(ValueError):
    """A variants declaration that cannot be applied: the message names the file, the name and the fix."""


def _setter(tree: ast.Module, name: str, path: Path):
    """A function giving the expression `name` ("N" or "N.key") designates in scenario.py's top level a
    new node: a name assigned once, or an entry of the dict(...) or {...} literal a name is assigned."""
    top, _, key = name.partition(".")
    found = [node for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
             and [t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                  if isinstance(t, ast.Name)] == [top]]
    if len(found) != 1:
        raise VariantError(f"{path}: {top} must be assigned exactly once at the top level of scenario.py to vary "
                           f"({len(found)} assignments found)")
    node = found[0]
    if not key:
        return lambda literal: setattr(node, "value", literal)
    value = node.value
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "dict":
        hits = [kw for kw in value.keywords if kw.arg == key]
        if len(hits) == 1:
            return lambda literal: setattr(hits[0], "value", literal)
    elif isinstance(value, ast.Dict):
        hits = [i for i, k in enumerate(value.keys) if isinstance(k, ast.Constant) and k.value == key]
        if len(hits) == 1:
            return lambda literal: value.values.__setitem__(hits[0], literal)
    raise VariantError(f"{path}: {top} is not a dict(...) or {{...}} literal with one entry {key!r}, so {name} "
                       "cannot vary")


def _with_inputs(tree: ast.Module, values: Mapping[str, Any], path: Path) -> ast.Module:
    """scenario.py's tree with the named inputs given these values."""
    for name, value in values.items():
        _setter(tree, name, path)(ast.parse(repr(value), mode="eval").body)
    return ast.fix_missing_locations(tree)


def run_with_inputs(package: str, values: Mapping[str, Any], parts: Sequence[str] = PARTS) -> dict[str, types.ModuleType]:
    """The lab's scenario, questions and challenges modules (`parts` of them, in that order) run again
    with scenario.py's named inputs given `values` (each module sees the others of this run under their
    own names), as new module objects; the lab's own modules are untouched."""
    pkg = importlib.import_module(package)
    folder = Path(pkg.__file__).parent
    parts = [p for p in PARTS if p in parts and (folder / f"{p}.py").is_file()]
    names = [f"{package}.{p}" for p in parts]
    with _LOCK:
        for name in names:
            importlib.import_module(name)    # the lab's own first: their imports are done
        saved = {name: sys.modules[name] for name in names}
        made: dict[str, types.ModuleType] = {}
        try:
            for part, name in zip(parts, names):
                path = folder / f"{part}.py"
                module = types.ModuleType(name)
                module.__file__, module.__package__ = str(path), package
                sys.modules[name] = module
                setattr(pkg, part, module)
                tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
                if part == "scenario":
                    tree = _with_inputs(tree, values, path)
                exec(compile(tree, str(path), "exec"), module.__dict__)
                made[part] = module
        finally:
            for name, module in saved.items():
                sys.modules[name] = module
                setattr(pkg, name.rpartition(".")[2], module)
    return made


def _current(package: str, name: str) -> Any:
    """The written value of an input ("N" or "N.key") in the lab's own scenario."""
    scenario = importlib.import_module(f"{package}.scenario")
    top, _, key = name.partition(".")
    if not hasattr(scenario, top) or key and not (isinstance(getattr(scenario, top), dict) and key in getattr(scenario, top)):
        raise VariantError(f"{scenario.__file__}: {name} is not an input of scenario.py (a name it assigns once at its "
                           "top level, or a key of a dict it assigns), so it cannot vary")
    value = getattr(scenario, top)
    return value[key] if key else value


def _spread(written: dict, others: list[dict], count: int) -> list[dict]:
    """`count` versions, the written one first: each next the combination (in `others`' order) whose values
    the versions so far use least, so every declared value of every input comes up about equally often."""
    used: dict[tuple[str, str], int] = {}
    chosen, pool = [written], list(others)
    for combo in chosen:
        for name, value in combo.items():
            used[name, repr(value)] = used.get((name, repr(value)), 0) + 1
    while len(chosen) < count:
        best = min(range(len(pool)), key=lambda i: (sum(used.get((k, repr(v)), 0) for k, v in pool[i].items()), i))
        combo = pool.pop(best)
        chosen.append(combo)
        for name, value in combo.items():
            used[name, repr(value)] = used.get((name, repr(value)), 0) + 1
    return chosen


class LabVariants:
    """A lab's versions (`Assignment.variants`): `count`, `values(index)`, `assignment(index)`."""

    def __init__(self, package: str, vary: Mapping[Any, Sequence[Any]], count: int) -> None:
        # a key is one input, or a tuple of inputs that vary together (each value then a tuple of theirs)
        self.package, self.vary, self.count = package, {k: tuple(v) for k, v in vary.items()}, int(count)
        self.base: Assignment | None = None     # the lab as written, set by labs.authoring.assemble
        self._built: dict[int, Assignment] = {}
        self._modules: dict[int, dict[str, types.ModuleType]] = {}
        self._drawn: list[dict[str, Any]] | None = None

    @property
    def declaration(self) -> Path:
        return Path(importlib.import_module(self.package).__file__).parent / DECLARATION

    @property
    def names(self) -> list[str]:
        """Every varied input, those varying together one by one."""
        return [name for key in self.vary for name in (key if isinstance(key, tuple) else (key,))]

    def written(self) -> dict[str, Any]:
        """The inputs as the lab writes them (version 0)."""
        return {name: _current(self.package, name) for name in self.names}

    def _inputs(self, combination: Sequence[Any]) -> dict[str, Any]:
        """One value per VARY key -> one value per input."""
        inputs = {}
        for key, value in zip(self.vary, combination):
            if isinstance(key, tuple):
                if not isinstance(value, (tuple, list)) or len(value) != len(key):
                    raise VariantError(f"{self.declaration}: each value of {key} is a tuple of {len(key)} values, not "
                                       f"{value!r}")
                inputs.update(zip(key, value))
            else:
                inputs[key] = value
        return inputs

    def drawn(self) -> list[dict[str, Any]]:
        """Every version's inputs: the written ones, then COUNT-1 other combinations of the declared
        values, in the order of SHA-256 of the lab and the combination (no secret)."""
        if self._drawn is None:
            if self.count < 1 or not self.vary or any(not v for v in self.vary.values()):
                raise VariantError(f"{self.declaration}: VARY names at least one input with its values, and COUNT >= 1")
            written = self.written()
            combos = [self._inputs(c) for c in itertools.product(*self.vary.values())]
            others = sorted((c for c in combos if c != written),
                            key=lambda c: hashlib.sha256(f"{self.package}\n{sorted(c.items())!r}".encode()).hexdigest())
            if len(others) < self.count - 1:
                raise VariantError(f"{self.declaration}: {len(others)} combinations of the declared values besides the "
                                   f"lab's own, fewer than the {self.count - 1} other versions COUNT asks for")
            self._drawn = _spread(written, others, self.count)
        return self._drawn

    def values(self, index: int) -> dict[str, Any]:
        return dict(self.drawn()[self._checked(index)])

    def _checked(self, index: int) -> int:
        if not 0 <= index < self.count:
            raise IndexError(f"{self.package}: version {index} of {self.count}")
        return index

    def modules(self, index: int) -> dict[str, types.ModuleType]:
        """Version `index`'s scenario, questions and challenges modules."""
        with _LOCK:
            if index not in self._modules:
                if self._checked(index) == 0:
                    self._modules[0] = {p: importlib.import_module(f"{self.package}.{p}") for p in PARTS
                                        if (self.declaration.parent / f"{p}.py").is_file()}
                else:
                    self._modules[index] = run_with_inputs(self.package, self.values(index))
            return self._modules[index]

    def assignment(self, index: int) -> Assignment:
        """Version `index` of the lab: its questions (options in the version's order), its challenges
        and its notebook at the version's scenario; the functions are the lab's own."""
        with _LOCK:
            if index in self._built:
                return self._built[index]
            base = self.base
            if self._checked(index) == 0:
                built = base
            else:
                from labs.authoring import NotebookFile, scenario_namespace
                made = self.modules(index)
                questions = tuple(laid_out(q, option_order(base.id, q.id, len(q.options), index))
                                  for q in made["questions"].QUESTIONS)
                rekey_letters(made["questions"], {q.id: q for q in questions})
                challenges = made["challenges"].CHALLENGES if "challenges" in made else ()
                notebook = NotebookFile(base.notebook.path, scenario_namespace(made["scenario"], made["questions"]),
                                        self.package, modules={f"{self.package}.{p}": m for p, m in made.items()})
                built = replace(base, questions=questions, challenges=tuple(challenges), notebook=notebook, variant=index)
            self._built[index] = built
            return built

    def numbers(self, index: int) -> dict[str, Any]:
        """The varied inputs of version `index` (every declared name, the written value where it is one)."""
        return self.values(index)


def declared(package: str) -> LabVariants | None:
    """The lab's variants from its variants.py, or None where it declares none."""
    try:
        module = importlib.import_module(f"{package}.variants")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.variants":
            raise
        return None
    vary, count = getattr(module, "VARY", None), getattr(module, "COUNT", MIN_VARIANTS)
    if not isinstance(vary, dict):
        raise VariantError(f"{module.__file__}: VARY must be a dict of input name -> values")
    return LabVariants(package, vary, count)
