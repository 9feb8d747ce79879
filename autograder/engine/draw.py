"""Run a check's body over sampled inputs without hypothesis' engine; shrink only a failure found.

hypothesis' engine costs about 3 ms per example (generation heuristics, mutation, the example
tree) and even driving its strategies by hand costs about 0.3 ms per input; the student's functions
take microseconds. So a check here (`run_drawn`):

1. samples its inputs from the declared strategy's own structure (fixed_dictionaries, floats,
   integers, one_of, map, filter, flatmap, composite, builds, lists, ...) with `random.Random(seed)`, the
   seed from `checks.seed_for`: the strategy's simplest input first (what hypothesis tries first),
   then `max_examples` inputs, a share of them at the bounds and near the lower bound of integers
   (n = 1, 2, 3). A strategy kind not listed is drawn by hypothesis itself, from the same Random;
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
from dataclasses import dataclass
from random import Random
from typing import Any, Callable

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
              prefetch: Callable[[list], None] | None = None) -> None:
    """Like a @given(strategy) test of body with this seed: returns if body holds on every sampled
    input, raises hypothesis' shrunk failure otherwise (the failure as found if hypothesis' own
    draws do not hit it), Unsatisfiable if every input was rejected.

    `prefetch(values)` is called with the inputs before body runs on them (the caller fetches the
    student calls they need in one round trip)."""
    with seed_only():
        _run_drawn(body, strategy, seed, max_examples, prefetch)


def _run_drawn(body, strategy, seed: int, max_examples: int, prefetch) -> None:
    values, simplest_first, choices = _sample(strategy, seed, max_examples)
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


def _number_sampler(low, high, integer: bool):
    simplest = min(max(0, low), high) if integer else (0.0 if low <= 0.0 <= high else (low if low > 0 else high))
    uniform = (lambda r: r.randint(low, high)) if integer else (lambda r: r.uniform(low, high))

    def draw(r: Random | None):
        if r is None:
            return simplest
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
            def sample(r, choices):
                value = elements[0] if r is None else r.choice(elements)
                if kind == "SampledFromStrategy":   # just() draws nothing
                    choices.append(elements.index(value) if len(elements) > 1 else UNRECORDED)
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
        branches = [_sampler(b) for b in s.original_strategies]

        def sample(r, choices):
            branch = branches[0] if r is None else r.choice(branches)
            if len(branches) > 1:
                choices.append(branches.index(branch))
            return branch(r, choices)
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
            value = {key: part(r, choices) for key, part in parts}
            choices.extend(keep_order)
            return value
        return sample
    elif kind == "TupleStrategy":
        parts = [_sampler(e) for e in s.element_strategies]
        return lambda r, choices: tuple(part(r, choices) for part in parts)
    elif kind == "CompositeStrategy":
        definition, args, kwargs = s.definition, s.args, s.kwargs
        return lambda r, choices: definition(lambda inner: _sampler(inner)(r, choices), *args, **kwargs)
    elif kind == "ListStrategy" and s.max_size != float("inf"):
        element, low, high = _sampler(s.element_strategy), s.min_size, s.max_size

        def sample(r, choices):
            choices.append(UNRECORDED)      # hypothesis' lists draw a "more?" choice per element
            return [element(r, choices) for _ in range(low if r is None else r.randint(low, high))]
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
        return lambda r, choices: _sampler(expand(base(r, choices)))(r, choices)
    elif kind == "BuildsStrategy":      # st.builds(target, *args, **kwargs): the args, then the kwargs, in order
        target = s.target
        args, kwargs = [_sampler(a) for a in s.args], [(k, _sampler(v)) for k, v in s.kwargs.items()]
        return lambda r, choices: target(*[a(r, choices) for a in args], **{k: v(r, choices) for k, v in kwargs})
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


def sample_inputs(strategy, seed: int, max_examples: int) -> list:
    """The simplest input, then up to `max_examples` sampled ones: the same seed, the same list."""
    with seed_only():
        return _sample(strategy, seed, max_examples)[0]


def _sample(strategy, seed: int, max_examples: int) -> tuple[list, bool, list[tuple]]:
    """(inputs, whether the first is the strategy's simplest: a filter may refuse that one, and each
    input's choice sequence as hypothesis would replay it, UNRECORDED inside where unknown)."""
    cached = _SAMPLERS.get(id(strategy))
    if cached is None or cached[0] is not strategy:
        cached = _SAMPLERS[id(strategy)] = (strategy, _sampler(strategy))
    sample = cached[1]
    values, choices = [], []
    simplest = True
    random = Random(seed)
    for r in [None] + [random] * (max_examples * DRAW_ATTEMPTS_PER_EXAMPLE):
        if len(values) > max_examples:
            break
        these: list = []
        try:
            values.append(sample(r, these))
        except _Rejected:
            simplest = simplest and r is not None
            continue
        choices.append(tuple(these))
    return values, simplest, choices


def _replays_to(strategy, choices: tuple, value) -> bool:
    """Whether hypothesis, replaying `choices`, draws `value` (the same repr) and uses every choice."""
    if any(c is UNRECORDED for c in choices):
        return False
    data = ConjectureData.for_choices(choices)
    drawn = _draw_one(strategy, data)
    return drawn is not None and drawn.choices == choices and repr(drawn.value) == repr(value)
