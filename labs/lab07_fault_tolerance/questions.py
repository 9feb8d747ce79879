"""Lab 07 questions: options (each with why it is right or wrong) formatted from scenario values,
and computed keys; each question's prompt and hint are in questions.md beside this file.

Offsets are chosen so the keys differ and none is "A". Options are of comparable length: the key must
not stand out as the long, careful one (the give-away guard, `scalelabs lint`).
"""
from __future__ import annotations

from labs.authoring import Option, fmt_seconds, letters, questions, range_key
from labs.lab07_fault_tolerance import scenario
from labs.lab07_fault_tolerance.scenario import ACT1_RANGES, ACT1_TIME_S

_WHY = f"the message takes {fmt_seconds(ACT1_TIME_S)}: its bytes divided by the port's bytes per second"
_act1 = letters([
    Option(f"under {ACT1_RANGES[0][1]} s — a port moves many gigabytes in a blink",
           f"Too fast: {_WHY}."),
    Option(f"between {ACT1_RANGES[1][0]} s and {ACT1_RANGES[1][1]} s — bytes over bytes per second",
           f"Right: {_WHY}."),
    Option(f"between {ACT1_RANGES[2][0]} s and {ACT1_RANGES[2][1]} s — the rate is in bits per second",
           f"Eight times too slow: the port's rate is already in bytes per second; {_WHY}."),
    Option(f"between {ACT1_RANGES[3][0]} s and {ACT1_RANGES[3][1]} s — big messages crawl over a network",
           f"Far too slow: {_WHY}."),
], range_key(ACT1_TIME_S, ACT1_RANGES), offset=0)   # ranges stay in ascending order

_act1_refl = letters([
    Option("Latency: every message waits for the network before it moves",
           "This model leaves latency out; only the rate limits the transfer."),
    Option("Compression: a faster link sends fewer bytes on the wire",
           "The link sends the same bytes; it sends each of them sooner."),
    Option("The rate: twice the bytes per second moves the bytes in half the time",
           "Right: the time is the bytes over the rate, so it halves when the rate doubles."),
    Option("Nothing: the time is set by the message size alone, not by the link",
           "The same message takes longer over a slower link: the rate divides the bytes."),
], 2, offset=3)   # conceptual: index 2 (the rate divides the bytes)

QUESTIONS = questions(__file__, vars(scenario) | vars(), {   # id: (kind, points, letters(...)) in order
    "act1_prediction": ("prediction", 2, _act1), "act1_reflection": ("reflection", 1, _act1_refl)})
ACT1_PREDICTION, ACT1_REFLECTION = QUESTIONS
# what the readout echoes: the student's own choice, never the key
ACT1_OPTIONS = dict(ACT1_PREDICTION.options)
# Texts that state a question's keyed figure or conclusion: none may be readable before the question.
KEYED_FIGURES = {"act1_prediction": (fmt_seconds(ACT1_TIME_S),)}
