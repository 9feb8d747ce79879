"""A test-only assignment built from reference.collectives, and helpers that write submissions.

It exercises the engine's mechanics without depending on labs/ declarations.
Submissions are folders shaped like release/<id>/: collectives.py, _domain.py, constants.py and
toy_collectives.ipynb.
"""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from hypothesis import strategies as st

import reference
from autograder.engine.config import GradingConfig
from autograder.engine.submission import RECORD_MIMETYPE
from autograder.build.stubgen import flat_imports, generate_stub
from autograder.engine.spec import Answer, Assignment, Example, FunctionItem, Property, Question, letters
from reference import collectives as C

REFERENCE_DIR = Path(reference.__file__).parent
ASSIGNMENT_ID = "toy_collectives"

LINK = dict(
    message_bytes=st.floats(0, 1e12, allow_nan=False),
    n=st.integers(1, 4096),
    alpha_s=st.floats(0, 1e-3, allow_nan=False),
    bandwidth=st.floats(1e6, 1e12, allow_nan=False),
)
link = st.fixed_dictionaries(LINK)
ACT1 = dict(message_bytes=140e9, n=128, alpha_s=5e-6, bandwidth=50e9)
SMALL = dict(message_bytes=1e3, n=1024, alpha_s=5e-6, bandwidth=50e9)


def _zero_single_rank(f, d):
    assert f(**{**d, "n": 1}) == 0, "with n=1 the time must be 0"


def _monotone_message(f, d):
    assert f(**d) <= f(**{**d, "message_bytes": 2 * d["message_bytes"]}) * (1 + 1e-12), \
        "doubling the message must not make the AllReduce faster"


def _monotone_ranks(f, d):
    assert f(**d) <= f(**{**d, "n": 2 * d["n"]}) * (1 + 1e-12), "more ranks must not make the tree faster"


def _fraction_bounds(f, d):
    v = f(**d)
    assert 0 <= v <= 1, f"a fraction lies in [0, 1], got {v!r}"


SECONDS = st.floats(0, 1e4, allow_nan=False)
FRACTION_DOMAIN = st.fixed_dictionaries({"comm_s": SECONDS, "compute_s": SECONDS})

options, key = letters([
    f"about {C.ring_allreduce_time(**ACT1):.2f} s (ring)",
    f"about {C.naive_allreduce_time(**ACT1):.0f} s (naive)",
    f"about {C.tree_allreduce_time(**ACT1):.0f} s (tree)",
], key_index=0, offset=1)

ASSIGNMENT = Assignment(
    id=ASSIGNMENT_ID,
    title="Toy collectives (engine tests)",
    module="collectives",
    reference=C,
    functions=[
        FunctionItem("ring_allreduce_time", 4, [Example("Act I", ACT1), Example("small message", SMALL)], link,
                     [Property("zero for a single rank", "With one rank there is nothing to reduce, so the time is 0.",
                               link, _zero_single_rank),
                      Property("monotone in message size", "A bigger message never takes less time.",
                               link, _monotone_message)]),
        FunctionItem("tree_allreduce_time", 3, [Example("Act I", ACT1)], link,
                     [Property("monotone in ranks", "A deeper tree never takes less time.", link, _monotone_ranks)]),
        FunctionItem("best_allreduce_algorithm", 2, [Example("big message", ACT1), Example("small message", SMALL)],
                     link),
        FunctionItem("comm_fraction", 2, [Example("half", dict(comm_s=1.0, compute_s=1.0))], FRACTION_DOMAIN,
                     [Property("a fraction", "A share of the step lies between 0 and 1.",
                               FRACTION_DOMAIN.filter(lambda d: d["comm_s"] + d["compute_s"] > 0), _fraction_bounds)]),
    ],
    questions=[Question("act1_prediction", "prediction", "How long does Act I's ring AllReduce take?",
                        options, key, 1, hint="Count the bytes each rank sends in a ring.")],
    notebook=[Answer("act1_prediction")],
)
WRONG_LETTER = next(letter for letter in options if letter != key)
# The same with explained options (Question.why): a wrong answer's full feedback names the key.
EXPLAINED = dataclasses.replace(ASSIGNMENT, questions=[dataclasses.replace(
    ASSIGNMENT.questions[0], why={letter: f"option {letter} reasons {'rightly' if letter == key else 'wrongly'}"
                                  for letter in options})])


# Short timeouts keep the infinite-loop cases quick; examples as in the course defaults. Kept here,
# not in conftest.py: `from conftest import` resolves to whichever tests/*/conftest.py came first.
FAST = GradingConfig(call_timeout_s=1.0, import_timeout_s=2.0, budget_s=40.0)


def reference_source() -> str:
    return flat_imports((REFERENCE_DIR / "collectives.py").read_text())


def stub_source() -> str:
    """The untouched stub, as `scalelabs release` generates it."""
    return generate_stub(REFERENCE_DIR / "collectives.py")


def notebook(answer_source: str | None, record: str | None = None) -> dict:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# Toy"]}]
    if answer_source is not None:
        cells.append({"cell_type": "code", "execution_count": None, "outputs": [],
                      "metadata": {"nbgrader": {"grade_id": "act1_prediction", "solution": True, "grade": False}},
                      "source": answer_source})
    if record is not None:
        cells.append({"cell_type": "code", "execution_count": 2, "metadata": {}, "source": "# Reveal",
                      "outputs": [{"output_type": "display_data", "metadata": {},
                                   "data": {RECORD_MIMETYPE: {"question": "act1_prediction", "answer": record},
                                            "text/plain": f"Your prediction for act1_prediction: {record}"}}]})
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def make_submission(dest: Path, module_source: str | None = None, answer: str | None = None,
                    answer_source: str | None = None, recorded: bool = True) -> Path:
    """Write a submission. module_source None: no collectives.py. answer: a letter, or use answer_source.
    `recorded`: the student ran the prediction's reveal after answering `answer` (its record follows
    the answer cell, as autograder/build/student/_reveal.py leaves it)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("_domain.py", "constants.py"):
        (dest / name).write_text((REFERENCE_DIR / name).read_text())
    if module_source is not None:
        (dest / "collectives.py").write_text(module_source)
    record = answer if recorded and answer_source is None else None
    if answer_source is None:
        answer_source = f'act1_prediction = "{answer}"  # your answer' if answer else "act1_prediction = None"
    (dest / f"{ASSIGNMENT_ID}.ipynb").write_text(json.dumps(notebook(answer_source, record)))
    return dest


def with_function(source: str, name: str, new_body: str) -> str:
    """Replace one function of the module by `new_body` (a full `def`), keeping the others."""
    pattern = re.compile(rf"^def {name}\(.*?(?=^def |\Z)", re.S | re.M)
    assert pattern.search(source), name
    return pattern.sub(lambda m: new_body.strip() + "\n\n\n", source, count=1)
