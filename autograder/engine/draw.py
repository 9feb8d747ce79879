"""Run a check's body over sampled inputs without hypothesis' engine; shrink only a failure found.

hypothesis' engine costs about 3 ms per example (generation heuristics, mutation, the example
tree) and even driving its strategies by hand costs about 0.3 ms per input; the student's functions
take microseconds. So a check here (`run_drawn`):

1. samples its inputs from the declared strategy's own structure (fixed_dictionaries, floats,
   integers, one_of, map, filter, flatmap, composite, builds, lists, ...) with `random.Random(seed)`, the
   seed from `checks.seed_for`: the strategy's simplest input first (what hypothesis tries first),
   then, for the hidden check (`edges=True`), one input per edge of each random choice the strategy
   makes, the others drawn at random: each integer at its lower bound, the two counts above it
   (n = 1, 2, 3) and its upper bound, each float at both bounds, each branch of a one_of, every
   element of a sampled_from of up to 8 (of a longer one the first three and the last); then `max_examples`
   inputs, a share of them at the bounds and near the lower bound of integers. So a function wrong
   only at n = 2 or at a bound of its domain fails the hidden check under every seed, not only
   under the seeds whose random draws happen to land there. A strategy kind not listed is drawn by
   hypothesis itself, from the same Random;
2. lets the caller prefetch every student call those inputs need, in one round trip;
3. runs the body on each input in order. At the first failure hypothesis takes over: the sampler
   also wrote down the choice sequence hypothesis would replay to that input (checked by replaying
   it), and hypothesis' shrinker (an in-memory example database, phases reuse + shrink) starts
   there, so the failure the student sees is the one found, shrunk to a small counterexample and
   raised as `@given` would raise it (without the deletion passes, which cannot shrink an input of
   fixed structure: `without_deletions`). Where hypothesis would not replay the input (a list: it draws a
   list's length as it goes) it draws its own inputs with the same seed (`draw_inputs`,
   `ConjectureData` driven without the engine) and shrinks the first of those that fails. If that
   finds none, or the simplest input failed (it cannot shrink), the failure is raised as found.

Nothing here depends on time, and hypothesis' draws and shrinks ignore the "local constants" it
harvests from the source of whatever non-library modules happen to be imported (and caches under
`<cwd>/.hypothesis/`): the inputs and the shrunk failure depend on the seed alone, not on the door,
the install, the process or the machine's load, and grading writes no file.
"""
from __future__ import annotations

import math
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from itertools import count
from random import Random
from typing import Any, Callable, Sequence

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis.control import BuildContext
from hypothesis.database import InMemoryExampleDatabase, choices_to_bytes
from hypothesis.errors import HypothesisException, StopTest, Unsatisfiable, UnsatisfiedAssumption
from hypothesis.internal.conjecture.choice import ChoiceTemplate
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.conjecture.engine import ConjectureRunner
from hypothesis.internal.conjecture import providers
from hypothesis.internal.conjecture.providers import Constants
from hypothesis.strategies._internal.lazy import unwrap_strategies

SHRINK_KEY = b"scalelabs-failure"
DRAW_ATTEMPTS_PER_EXAMPLE = 10   # a filtered strategy may reject draws; give up after this many per input


@contextmanager
def seed_only():
    """hypothesis without its local constants: its random draws (the shrinker's too) sometimes pick a
    constant harvested from every imported non-library module, a set that differs by door, install and
    process, and it caches the harvest under <cwd>/.hypothesis/. Inside, the harvest is empty, and the
    cache of allowed constants is cleared on the way in and out, so no entry crosses the boundary."""
    harvest = providers._get_local_constants
    providers._get_local_constants = Constants
    providers.CONSTANTS_CACHE.cache.clear()
    try:
        yield
    finally:
        providers._get_local_constants = harvest
        providers.CONSTANTS_CACHE.cache.clear()


@dataclass(frozen=True)
class Drawn:
    value: Any
    choices: tuple      # hypothesis' choice sequence for `value`: where shrinking starts


def _draw_one(strategy, data: ConjectureData) -> Drawn | None:
    start = len(data.nodes)
    try:
        with BuildContext(data, wrapped_test=draw_inputs):
            value = data.draw(strategy)
    except (StopTest, UnsatisfiedAssumption):   # a filter gave up, or the buffer ran out
        return None
    return Drawn(value, tuple(node.value for node in data.nodes[start:]))


def draw_inputs(strategy, seed: int, max_examples: int) -> list[Drawn]:
    """The simplest input, then up to `max_examples` random ones: the same seed, the same list (call it
    inside `seed_only`)."""
    drawn = [d for d in [_draw_one(strategy, ConjectureData.for_choices((ChoiceTemplate("simplest", count=None),)))]
             if d is not None]
    random = Random(seed)
    data = ConjectureData(random=random)
    for _ in range(max_examples * DRAW_ATTEMPTS_PER_EXAMPLE):
        if len(drawn) > max_examples:
            break
        one = _draw_one(strategy, data)
        if one is None:
            data = ConjectureData(random=random)   # a dead draw ends this data
        else:
            drawn.append(one)
    return drawn


@contextmanager
def without_deletions():
    """hypothesis' shrinker without its deletion passes (`node_program_X`..`XXXXX`, which delete one
    to five consecutive choices). An input the sampler recorded has one choice per number, index and
    key of a fixed structure (no list to shorten): deleting a choice shifts every later one onto a
    choice of another kind, so each such candidate misaligns before the check runs, still costs
    hypothesis a replay (about a third of a shrink's attempts), and none shrinks; every other pass
    runs as before."""
    new_shrinker = ConjectureRunner.new_shrinker

    def fixed_shape_shrinker(runner, *args, **kwargs):
        shrinker = new_shrinker(runner, *args, **kwargs)
        shrinker.shrink_passes = [p for p in shrinker.shrink_passes if not p.name.startswith("node_program_")]
        return shrinker

    ConjectureRunner.new_shrinker = fixed_shape_shrinker
    try:
        yield
    finally:
        ConjectureRunner.new_shrinker = new_shrinker


def shrink(body: Callable[[Any], None], strategy, seed: int, choices: tuple, max_examples: int) -> None:
    """Let hypothesis shrink a known failure of body, starting from its choice sequence; raises the
    shrunk failure (as @given does). Returns normally if the failure did not reproduce."""
    database = InMemoryExampleDatabase()
    # the secondary corpus: hypothesis treats primary entries as already shrunk and replays them only
    database.save(SHRINK_KEY + b".secondary", choices_to_bytes(choices))
    test = given(strategy)(body)
    test = settings(database=database, deadline=None, derandomize=False, max_examples=max_examples,
                    suppress_health_check=list(HealthCheck), report_multiple_bugs=False, print_blob=False,
                    verbosity=Verbosity.quiet, phases=(Phase.reuse, Phase.shrink))(test)
    # @seed would switch the database off; the attributes it sets are what hypothesis reads
    test._hypothesis_internal_use_seed = seed
    test._hypothesis_internal_database_key = SHRINK_KEY
    test()


def run_drawn(body: Callable[[Any], None], strategy, seed: int, max_examples: int,
              prefetch: Callable[[list], None] | None = None, edges: bool = False) -> None:
    """Like a @given(strategy) test of body with this seed: returns if body holds on every sampled
    input, raises hypothesis' shrunk failure otherwise (the failure as found if hypothesis' own
    draws do not hit it), Unsatisfiable if every input was rejected.

    `prefetch(values)` is called with the inputs before body runs on them (the caller fetches the
    student calls they need in one round trip). `edges`: the inputs include every edge (`_sample`)."""
    with seed_only():
        _run_drawn(body, strategy, seed, max_examples, prefetch, edges)


def _run_drawn(body, strategy, seed: int, max_examples: int, prefetch, edges: bool = False) -> None:
    values, simplest_first, choices = _sample(strategy, seed, max_examples, edges)
    found = _first_failure(body, values, prefetch)
    if found is None:
        return
    if isinstance(found, Unsatisfiable):
        raise found
    # a failure (unless it is the simplest input, which comes first and cannot shrink): hypothesis'
    # shrinker starts from its choice sequence, or, where hypothesis would not replay it to the same
    # input, from the first failing one of hypothesis' own draws with the same seed
    start, fixed_shape = None, False
    if found or not simplest_first:
        if _replays_to(strategy, choices[found], values[found]):
            start, fixed_shape = choices[found], True
        else:
            drawn = draw_inputs(strategy, seed, max_examples)
            index = _first_failure(body, [d.value for d in drawn], prefetch) if drawn else None
            start = drawn[index].choices if isinstance(index, int) else None
    if start is not None:
        try:
            with without_deletions() if fixed_shape else nullcontext():
                shrink(body, strategy, seed, start, max_examples)
        except HypothesisException:
            pass    # the failure did not replay the same way (a flaky function): report it as found
    with BuildContext(ConjectureData.for_choices(()), wrapped_test=body):
        body(values[found])     # raises the failure as found (and body records it last)
    raise AssertionError("the check failed once and then passed on the same input")


def _first_failure(body: Callable[[Any], None], values: list, prefetch) -> int | Unsatisfiable | None:
    """Index of the first value body fails on; Unsatisfiable if body rejected them all; None."""
    if prefetch is not None and values:
        prefetch(values)
    valid = 0
    context = ConjectureData.for_choices(())
    for index, value in enumerate(values):
        try:
            with BuildContext(context, wrapped_test=body):
                body(value)
        except UnsatisfiedAssumption:
            continue
        except Exception:
            return index
        valid += 1
    return None if valid else Unsatisfiable(f"no valid input among {len(values)} drawn")


# --- fast sampling: the declared strategies' structure, drawn with a seeded Random ---------------

class _Rejected(Exception):
    """A filter refused the sampled value: sample again."""


UNRECORDED = object()   # in a sampled input's choices: a choice hypothesis makes that the sampler cannot tell


SIMPLE_SHARE = 0.25     # of random integer draws near the lower bound (n = 1, 2, 3: edge cases)
BOUNDARY_SHARE = 0.1    # of random number draws exactly at a bound


# --- edges: one input per edge of each choice, the rest of it random ----------------------------

SMALL_CHOICE = 8    # a sampled_from of at most this many elements: every element is an edge


def edge_indices(count: int, every_up_to: int = 0) -> list[int]:
    """Which of `count` ordered options are edges: all of them when there are at most `every_up_to`,
    else the first three and the last (of an integer range: its lower bound, the two counts above it,
    its upper bound)."""
    if count <= every_up_to:
        return list(range(count))
    return sorted({i for i in (0, 1, 2, count - 1) if 0 <= i < count})


class _EdgePlan:
    """While one input is drawn for the edges: each random choice is named by its place in the
    strategy (the path of dict keys, tuple and list positions, one_of branches, flatmap stages and
    composite draws leading to it), so the same choice has the same name in every draw whatever the
    other choices were. Every choice met is recorded with its number of edges. With a `target`, the
    choice of that name takes its edge number `option`, each one_of above it the branch leading to
    it, and every other choice is random."""

    def __init__(self, target: tuple | None = None, option: int = 0):
        self.target, self.option = target, option
        self.path: list = []
        self.found: dict[tuple, int] = {}       # choice name -> its number of edges, in the order met
        self.reached = False

    def pick(self, options: int) -> int | None:
        name = tuple(self.path)
        self.found.setdefault(name, options)
        target = self.target
        if target is None:
            return None
        if name == target:
            self.reached = True
            return self.option if self.option < options else None
        below = len(name)
        if len(target) > below and target[:below] == name and isinstance(target[below], tuple) \
                and target[below][0] == "|":
            return target[below][1]         # a one_of above the target: the branch that leads to it
        return None


_PLAN: ContextVar[_EdgePlan | None] = ContextVar("scalelabs_edge_plan", default=None)


def _forced(options: int) -> int | None:
    """The edge this choice (of `options` edges) must take in the input being drawn, else None."""
    plan = _PLAN.get()
    return None if plan is None else plan.pick(options)


def _within(part, draw: Callable[[], Any]) -> Any:
    """draw(), its choices named inside `part` of the strategy (edges only: nothing otherwise)."""
    plan = _PLAN.get()
    if plan is None:
        return draw()
    plan.path.append(part)
    try:
        return draw()
    finally:
        plan.path.pop()


WEIGHTS = "scalelabs_weights"


def weighted(strategy, weights: Sequence[float]):
    """`strategy` (a one_of) whose branches the grader's random draws take in proportion to `weights`
    (hypothesis' own draws, when it shrinks, take them evenly); each branch is still an edge."""
    one_of = unwrap_strategies(strategy)
    if type(one_of).__name__ != "OneOfStrategy":
        raise TypeError(f"weighted() takes a one_of, not {type(one_of).__name__}")
    setattr(one_of, WEIGHTS, tuple(weights))
    return strategy


EDGE_CAP = 48       # edge inputs at most per check (a strategy of many choices: the first ones' edges)
EDGE_ATTEMPTS = 4   # draws per edge before it is given up (a filter refused each)


def _number_sampler(low, high, integer: bool):
    simplest = min(max(0, low), high) if integer else (0.0 if low <= 0.0 <= high else (low if low > 0 else high))
    uniform = (lambda r: r.randint(low, high)) if integer else (lambda r: r.uniform(low, high))
    edges = [low + i for i in edge_indices(high - low + 1)] if integer else sorted({low, high})

    def draw(r: Random | None):
        if r is None:
            return simplest
        forced = _forced(len(edges))
        if forced is not None:
            return edges[forced]
        roll = r.random()
        if roll < BOUNDARY_SHARE:
            return low if roll < BOUNDARY_SHARE / 2 else high
        if integer and roll < BOUNDARY_SHARE + SIMPLE_SHARE:
            return r.randint(low, min(high, low + 8))
        return min(max(uniform(r), low), high)

    def sample(r: Random | None, choices: list):
        value = draw(r)
        choices.append(value)     # hypothesis draws an integer or a float as itself
        return value
    return sample


def _sampler(strategy) -> Callable[[Random | None, list], Any]:
    """A function (r, choices) -> value drawing like `strategy` (r None: its simplest value) that
    appends to `choices` the choice sequence hypothesis would replay to the same value (UNRECORDED
    where it cannot tell). Strategy kinds not listed here are drawn by hypothesis itself (slower,
    same seed discipline)."""
    s = unwrap_strategies(strategy)
    kind = type(s).__name__
    if kind in ("JustStrategy", "SampledFromStrategy"):
        elements, steps = s.elements, s._transformations
        if all(step[0] in ("map", "filter") for step in steps):
            edges = edge_indices(len(elements), SMALL_CHOICE) if kind == "SampledFromStrategy" else []

            def sample(r, choices):
                forced = _forced(len(edges)) if r is not None and edges else None
                index = 0 if r is None else edges[forced] if forced is not None else r.randrange(len(elements))
                value = elements[index]     # by index: equal elements ({"a": 1, "b": 2} and {"b": 2, "a": 1}) stay apart
                if kind == "SampledFromStrategy":   # just() draws nothing
                    choices.append(index if len(elements) > 1 else UNRECORDED)
                for step in steps:
                    if step[0] == "map":
                        value = step[1](value)
                    elif not step[1](value):
                        raise _Rejected
                return value
            return sample
    elif kind == "IntegersStrategy" and s.start is not None and s.end is not None:
        return _number_sampler(s.start, s.end, integer=True)
    elif kind == "FloatStrategy" and math.isfinite(s.min_value) and math.isfinite(s.max_value):
        return _number_sampler(s.min_value, s.max_value, integer=False)
    elif kind == "OneOfStrategy":
        # hypothesis' own branches (nested one_ofs flattened, a strategy given twice kept once): a
        # branch's index is the choice hypothesis replays
        branches = [_sampler(b) for b in s.element_strategies]
        weights = getattr(s, WEIGHTS, None)
        if weights is not None and len(weights) != len(branches):
            raise ValueError(f"weighted(): {len(weights)} weights for {len(branches)} branches")

        def sample(r, choices):
            forced = _forced(len(branches)) if r is not None and len(branches) > 1 else None
            branch = (branches[0] if r is None else branches[forced] if forced is not None
                      else r.choices(branches, weights)[0] if weights else r.choice(branches))
            index = branches.index(branch)
            if len(branches) > 1:
                choices.append(index)
            return _within(("|", index), lambda: branch(r, choices))
        return sample
    elif kind == "MappedStrategy":
        inner, pack = _sampler(s.mapped_strategy), s.pack
        return lambda r, choices: pack(inner(r, choices))
    elif kind == "FilteredStrategy":
        inner, conditions = _sampler(s.filtered_strategy), s.flat_conditions

        def sample(r, choices):
            value = inner(r, choices)
            if not all(condition(value) for condition in conditions):
                raise _Rejected
            return value
        return sample
    elif kind == "FixedDictStrategy" and not s.optional:
        parts = [(key, _sampler(value)) for key, value in s.mapping.items()]
        keep_order = range(len(parts) - 1)      # hypothesis then shuffles the keys: j = i keeps each in place

        def sample(r, choices):
            value = {key: _within(key, partial(part, r, choices)) for key, part in parts}
            choices.extend(keep_order)
            return value
        return sample
    elif kind == "TupleStrategy":
        parts = [_sampler(e) for e in s.element_strategies]
        return lambda r, choices: tuple(_within(i, partial(part, r, choices)) for i, part in enumerate(parts))
    elif kind == "CompositeStrategy":
        definition, args, kwargs = s.definition, s.args, s.kwargs

        def sample(r, choices):
            calls = count()
            return definition(lambda inner: _within(("draw", next(calls)), partial(_sampler(inner), r, choices)),
                              *args, **kwargs)
        return sample
    elif kind == "ListStrategy" and s.max_size != float("inf"):
        element, low, high = _sampler(s.element_strategy), s.min_size, s.max_size

        def sample(r, choices):
            choices.append(UNRECORDED)      # hypothesis' lists draw a "more?" choice per element
            return [_within(i, partial(element, r, choices)) for i in range(low if r is None else r.randint(low, high))]
        return sample
    elif (kind == "UniqueSampledListStrategy" and type(s.element_strategy).__name__ == "SampledFromStrategy"
          and not s.element_strategy._transformations):
        elements, low = s.element_strategy.elements, s.min_size
        high = min(s.max_size, len(elements))
        suffix = _sampler(s.tuple_suffixes) if s.tuple_suffixes is not None else None  # dictionaries()

        def sample(r, choices):
            choices.append(UNRECORDED)
            keys = list(elements[:low]) if r is None else r.sample(elements, r.randint(low, high))
            return keys if suffix is None else [(key, *suffix(r, choices)) for key in keys]
        return sample
    elif kind == "UniqueListStrategy" and s.max_size != float("inf") and s.tuple_suffixes is None:
        element, low, high, keys = _sampler(s.element_strategy), s.min_size, s.max_size, s.keys

        def sample(r, choices):
            choices.append(UNRECORDED)
            size, out, seen = (low if r is None else r.randint(low, high)), [], [set() for _ in keys]
            for _ in range(DRAW_ATTEMPTS_PER_EXAMPLE * max(size, 1)):
                if len(out) >= size:
                    break
                value = element(r, choices)
                marks = [key(value) for key in keys]
                if not any(mark in seen_marks for mark, seen_marks in zip(marks, seen)):
                    out.append(value)
                    for mark, seen_marks in zip(marks, seen):
                        seen_marks.add(mark)
            if len(out) < low:
                raise _Rejected
            return out
        return sample
    elif kind == "FlatMapStrategy":
        base, expand = _sampler(s.base), s.expand

        def sample(r, choices):
            drawn = _within("base", partial(base, r, choices))
            return _within("then", partial(_sampler(expand(drawn)), r, choices))
        return sample
    elif kind == "BuildsStrategy":      # st.builds(target, *args, **kwargs): the args, then the kwargs, in order
        target = s.target
        args, kwargs = [_sampler(a) for a in s.args], [(k, _sampler(v)) for k, v in s.kwargs.items()]
        return lambda r, choices: target(*[_within(("arg", i), partial(a, r, choices)) for i, a in enumerate(args)],
                                         **{k: _within(k, partial(v, r, choices)) for k, v in kwargs})
    return lambda r, choices: _hypothesis_draw(strategy, r, choices)


_FALLBACKS: list | None = None    # while `recording_fallbacks` runs: the kinds drawn by hypothesis itself


@contextmanager
def recording_fallbacks():
    """The strategy kinds sampled inside this block that the sampler does not draw itself (hypothesis
    draws them, about 0.3 ms per input instead of microseconds): `scalelabs lint` names them."""
    global _FALLBACKS
    _FALLBACKS = found = []
    try:
        yield found
    finally:
        _FALLBACKS = None


def _hypothesis_draw(strategy, r: Random | None, choices: list):
    if _FALLBACKS is not None:
        _FALLBACKS.append(type(unwrap_strategies(strategy)).__name__)
    data = (ConjectureData.for_choices((ChoiceTemplate("simplest", count=None),)) if r is None
            else ConjectureData(random=Random(r.getrandbits(64))))
    one = _draw_one(strategy, data)
    if one is None:
        raise _Rejected
    choices.extend(one.choices)
    return one.value


_SAMPLERS: dict[int, tuple[Any, Callable]] = {}


def sample_inputs(strategy, seed: int, max_examples: int, edges: bool = False) -> list:
    """The simplest input, then (edges) an input per edge, then up to `max_examples` sampled ones: the
    same seed, the same list. The hidden check draws `sample_inputs(item.domain, seed, n, edges=True)`."""
    with seed_only():
        return _sample(strategy, seed, max_examples, edges)[0]


def _sample(strategy, seed: int, max_examples: int, edges: bool = False) -> tuple[list, bool, list[tuple]]:
    """(inputs, whether the first is the strategy's simplest: a filter may refuse that one, and each
    input's choice sequence as hypothesis would replay it, UNRECORDED inside where unknown)."""
    cached = _SAMPLERS.get(id(strategy))
    if cached is None or cached[0] is not strategy:
        cached = _SAMPLERS[id(strategy)] = (strategy, _sampler(strategy))
    sample = cached[1]
    values, choices = [], []
    random = Random(seed)

    def one(r: Random | None, plan: _EdgePlan | None = None, keep=lambda: True) -> bool:
        """Draw an input (under `plan`); keep it if it was not refused and keep() says so."""
        these: list = []
        token = _PLAN.set(plan)
        try:
            value = sample(r, these)
        except _Rejected:
            return False
        finally:
            _PLAN.reset(token)
        if not keep():
            return False
        values.append(value)
        choices.append(tuple(these))
        return True

    simplest = one(None)
    if edges:
        _sample_edges(one, random)
    wanted = len(values) + max_examples + (0 if simplest else 1)
    for _ in range(max_examples * DRAW_ATTEMPTS_PER_EXAMPLE):
        if len(values) >= wanted:
            break
        one(random)
    return values, simplest, choices


def _sample_edges(one: Callable[..., bool], random: Random) -> None:
    """An input per edge of each random choice the strategy makes, in the order first met, up to
    EDGE_CAP of them: the choices of a first random draw (an input too), then those each edge draw
    meets (a one_of's branches hold choices of their own)."""
    plan = _EdgePlan()
    one(random, plan)
    found = dict(plan.found)
    names = list(found)
    edges = 0
    for name in names:      # grows while edges are drawn
        for option in range(found[name]):
            if edges >= EDGE_CAP:
                return
            for _ in range(EDGE_ATTEMPTS):      # a filter refused the draw, or a flatmap did not reach it
                plan = _EdgePlan(name, option)
                kept = one(random, plan, keep=lambda: plan.reached)
                for met, options in plan.found.items():
                    if met not in found:
                        found[met] = options
                        names.append(met)
                if kept:
                    edges += 1
                    break


def _replays_to(strategy, choices: tuple, value) -> bool:
    """Whether hypothesis, replaying `choices`, draws `value` (the same repr) and uses every choice."""
    if any(c is UNRECORDED for c in choices):
        return False
    data = ConjectureData.for_choices(choices)
    drawn = _draw_one(strategy, data)
    return drawn is not None and drawn.choices == choices and repr(drawn.value) == repr(value)
