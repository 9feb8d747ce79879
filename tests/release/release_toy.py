"""A minimal test-only assignment built from reference.collectives (independent of the Lab 06
declaration being written concurrently), so the release pipeline and doors can be tested alone."""
from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

import reference.collectives as ref
from autograder.engine import spec

import release_toy_properties as toy_properties

PROPERTIES_PATH = Path(toy_properties.__file__)
ALPHA, BW = 5e-6, 50e9
TOY_ID = "toy06_collectives"

_link = st.fixed_dictionaries({"message_bytes": st.floats(0, 1e11), "n": st.integers(1, 4096),
                               "alpha_s": st.floats(0, 1e-4), "bandwidth": st.floats(1e6, 1e12)})

_ring = ref.ring_allreduce_time(1.4e11, 128, ALPHA, BW)
_tree = ref.tree_allreduce_time(1.4e11, 128, ALPHA, BW)
_options, _key, _why = spec.letters([
    spec.Option(f"ring, {_ring:.3g} s", f"A ring sends each byte about twice whatever the rank count: {_ring:.3g} s here."),
    spec.Option(f"tree, {_tree:.3g} s", f"A tree sends the whole message once per level, so it pays {_tree:.3g} s for big messages."),
    spec.Option("the same", "Their bandwidth terms differ by the tree's depth, so they are not the same."),
    spec.Option("neither", "One of the two is faster: compare the bandwidth terms of both.")],
    key_index=0 if _ring <= _tree else 1, offset=1)


def _props():
    return [spec.Property(**{k: v for k, v in d.items() if k != "item"})
            for d in toy_properties.PROPERTIES if d["item"] == "ring_allreduce_time"]


def make(assignment_id: str = TOY_ID) -> spec.Assignment:
    return spec.Assignment(
        id=assignment_id, title="Toy collectives", module="collectives", reference=ref,
        functions=[
            spec.FunctionItem("ring_allreduce_time", 4,
                              [spec.Example("140 GB over 128 GPUs", dict(message_bytes=1.4e11, n=128, alpha_s=ALPHA, bandwidth=BW))],
                              domain=_link, properties=_props()),
            spec.FunctionItem("tree_allreduce_time", 3,
                              [spec.Example("1 MB over 8 GPUs", dict(message_bytes=1e6, n=8, alpha_s=ALPHA, bandwidth=BW))],
                              domain=_link),
            spec.FunctionItem("best_allreduce_algorithm", 2,
                              [spec.Example("sub-MB over 1024 GPUs", dict(message_bytes=1e5, n=1024, alpha_s=ALPHA, bandwidth=BW))],
                              domain=_link),
        ],
        questions=[spec.Question("act1_prediction", "prediction",
                                 "Which AllReduce is faster for 140 GB over 128 GPUs?", _options, _key, 1.0,
                                 hint="Compare the bandwidth terms.", why=_why)],
        notebook=[
            spec.Markdown(f"# Toy\n\nA link of {BW:.3g} bytes/s."),
            spec.Answer("act1_prediction"),
            spec.Code('t = collectives.ring_allreduce_time(1.4e11, 128, 5e-6, 50e9)\nprint(f"ring: {t:.3g} s")',
                      requires=("act1_prediction",)),
            spec.FunctionGrades(),
        ],
    )


ASSIGNMENT = make()   # what a door names as "release_toy:ASSIGNMENT"
