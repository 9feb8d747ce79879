"""Every version of a lab checked like the lab itself (issue 45; `scalelabs lint`'s variants rule).

For a lab that declares variants (labs/<lab>/variants.py, labs/variants.py), each version must:

* compute: its scenario, questions and challenges run at the version's inputs without error, so every
  option and key is computed from reference/ and the lab's asserts (its story's claims) hold there; a
  range question whose value falls in no range or in two has no unique key and does not compute;
* keep its options apart: no two options of a question read alike (the same text once formatted:
  one within rounding of another), none the key's text;
* keep its key robust: every float input (mappings such as a profile's shares excepted) nudged by
  ROBUST_NUDGE up and down together leaves every question's key on the same option;
* keep the give-away guard's rules (options of comparable length, each explained; no keyed figure
  or keyed option's own words readable before its question, in the version's own notebook).

The lab as written (version 0) is checked by the other rules as well; `problems` gives
(version or None, message, fix) for each finding. The versions share the work: each is computed once
(labs/variants.py caches it), the nudged runs compute questions only.
"""
from __future__ import annotations

import re
from typing import Any, Iterator

from autograder.author import guard

ROBUST_NUDGE = 0.05    # relative change of every float input that must leave each key where it is


def _nudged(value: Any, factor: float) -> Any:
    """`value` with every float in it (a number, or inside tuples, lists, dicts) multiplied by `factor`."""
    if isinstance(value, float):
        return value * factor
    if isinstance(value, (tuple, list)):
        return type(value)(_nudged(v, factor) for v in value)
    if isinstance(value, dict):
        return {k: _nudged(v, factor) for k, v in value.items()}
    return value


def _key_identities(questions) -> dict[str, str]:
    return {q.id: q.option_identity(q.key) for q in questions}


def _same(text: str) -> str:
    return " ".join(text.lower().split())


def _stem(text: str) -> str:
    """An option's claim before its gloss ("between 4x and 40x" of "between 4x and 40x — a real bottleneck")."""
    return _same(re.split(r" — | - |: | \(", text, maxsplit=1)[0])


def option_problems(question) -> list[tuple[str, str]]:
    """(message, fix) where two options of one question read alike: the same text once formatted, or the
    same numeric claim before their glosses (one within rounding of the other); "its key is not unique"
    where one of them is the key."""
    found = []
    texts = list(question.options.items())
    for i, (a, ta) in enumerate(texts):
        for b, tb in texts[i + 1:]:
            if _same(ta) == _same(tb) or re.search(r"\d", _stem(ta)) and _stem(ta) == _stem(tb):
                what = "its key is not unique: " if question.key in (a, b) else ""
                found.append((f"{question.id}: {what}options {a} and {b} read alike ({ta[:70]!r})",
                               "make the options differ at every version (different ranges, more digits, "
                               "other inputs in variants.py)"))
    return found


def problems(a) -> Iterator[tuple[int | None, str, str]]:
    """(version, message, fix) of every version of `a` that is not checked like the lab itself."""
    from labs.variants import MIN_VARIANTS, VariantError, run_with_inputs

    variants = a.variants
    if variants is None:
        return
    if variants.count < MIN_VARIANTS:
        yield None, f"COUNT = {variants.count}: fewer than {MIN_VARIANTS} versions", f"declare COUNT >= {MIN_VARIANTS}"
    try:
        variants.drawn()
    except VariantError as exc:
        yield None, str(exc), "declare more values (or fewer versions) in variants.py"
        return
    for index in range(variants.count):
        values = variants.values(index)
        at = ", ".join(f"{k}={v!r}" for k, v in values.items())
        try:
            version = variants.assignment(index)
        except VariantError as exc:
            yield None, str(exc), "vary only names scenario.py assigns once at its top level (or a key of a dict literal)"
            return
        except Exception as exc:   # noqa: BLE001 -- the version's own error, reported where it is
            unique = "exactly one" in str(exc)
            yield index, (f"does not compute at {at}: {'its key is not unique: ' if unique else ''}"
                          f"{type(exc).__name__}: {str(exc)[:200]}"), \
                "choose values in variants.py at which the lab's options and asserts hold (or widen its options)"
            continue
        for q in version.questions:
            for message, fix in option_problems(q):
                yield index, f"{message} at {at}", fix
            for message in guard.option_problems(q):
                yield index, f"{message} at {at}", "keep the options of comparable length at every version"
        # every float input but mappings (a profile's shares sum to 1: nudged, it is no profile)
        floats = {k: v for k, v in values.items() if not isinstance(v, dict) and _nudged(v, 2.0) != v}
        if index and floats:
            keys = _key_identities(version.questions)
            for factor in (1 - ROBUST_NUDGE, 1 + ROBUST_NUDGE):
                try:
                    made = run_with_inputs(a.variants.package, {**values, **{k: _nudged(v, factor) for k, v in floats.items()}},
                                           parts=("scenario", "questions"))   # the keys; designs have none
                    moved = {q.id for q in made["questions"].QUESTIONS if keys.get(q.id) != q.key}
                except Exception as exc:   # noqa: BLE001
                    moved = {f"(it does not compute: {type(exc).__name__}: {str(exc)[:100]})"}
                if moved:
                    yield index, (f"the key of {', '.join(sorted(moved))} is not robust at {at}: it moves when every "
                                  f"float input is {factor:.2f}x"), \
                        "keep each version's inputs away from the option boundaries (values in variants.py)"
                    break
        if index:
            from autograder.build.notebook import build_notebook
            cells = build_notebook(version, validate=False).cells
            before = guard.readable_before_static(version, cells)
            for qid, what, cell in guard.giveaways(version, before):
                yield index, f"{qid}: {what} is readable before the question at {at}, in {cell}", \
                    "reword the text or the question so no version states its key before it is asked"

