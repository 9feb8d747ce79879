"""No number a student is to compute is shown before they compute it (issue 41).

Lab 06 asked its model-vs-measurement question under "Your ring gives a bus bandwidth of 450 GB/s":
fixed text, the reference's value, printed before the student had written `bus_bandwidth`; every lab's
measurement question did the same. The element above the question prints the student's own values;
no sentence of a question's prompt or options (what a student reads before answering) that speaks of
the student's own ("your functions give ...") states a value the element computes with the student's
functions: each of its numbers is held against every notebook row's model value, at the precision the
number is printed with. A number that is also the row's published figure at that precision (a model
that agrees with its measurement) is the measurement's, not the student's; a sentence about the setup
("one NDR port (50 GB/s per direction)") states an input, which a model value may equal."""
from __future__ import annotations

import re

import pytest

from labs import all_assignments

LABS = all_assignments()
NUMBER = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)(\s?%)?")
SENTENCE = re.compile(r"(?<=[.?!;:])\s+(?=[A-Z*`])")
YOURS = re.compile(r"\byours?\b", re.I)
SCALES = (1.0, 1e-2, 1e3, 1e6, 1e9, 1e12)      # a value as printed: itself, in percent, thousands ... T


def printed_numbers(text: str):
    """(value, half of its last digit) of each number of `text` with two significant digits or more."""
    for match in NUMBER.finditer(text):
        digits = match.group(1).replace(",", "")
        if len(digits.replace(".", "").lstrip("0")) < 2:
            continue
        decimals = len(digits.partition(".")[2])
        value, half = float(digits), 0.5 * 10 ** -decimals
        if match.group(2):
            value, half = value / 100, half / 100
        yield match.group(0).strip(), value, half


def shows(value: float, number: float, half: float) -> bool:
    return any(abs(value / scale - number) <= half * 1.0001 for scale in SCALES if value)


def numbers_of(value) -> list[float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [float(value)]
    if isinstance(value, tuple):
        return [float(v) for v in value if isinstance(v, (int, float))]
    return []


@pytest.mark.parametrize("lab", sorted(LABS))
def test_no_question_states_a_value_the_measurement_element_computes(lab):
    a = LABS[lab]
    rows = [m for m in a.measurements if m.notebook]
    found = []
    for q in a.questions:
        for where, text in (("prompt", q.prompt), *((f"option {k}", v) for k, v in q.options.items())):
            yours = " ".join(s for s in SENTENCE.split(" ".join(text.split())) if YOURS.search(s))
            for shown_text, number, half in printed_numbers(yours):
                for m in rows:
                    model = numbers_of(m.reference_value())
                    published = numbers_of(m.published)
                    if any(shows(v, number, half) for v in model) and not any(shows(p, number, half) for p in published):
                        found.append(f"{q.id} {where}: {shown_text!r} is {m.id}'s model value, which the element "
                                     "computes with the student's functions")
    assert not found, "\n".join(found)


def test_the_check_sees_the_issues_sentence():
    """Lab 06's old prompt, rendered: its 450 GB/s is the ring's bus bandwidth on one node."""
    a = LABS["lab06_collectives"]
    row = next(m for m in a.measurements if m.notebook and not isinstance(m.published, str))
    value = numbers_of(row.reference_value())[0]
    old = f"Your ring gives a bus bandwidth of {value / 1e9:.0f} GB/s on one DGX H100 node."
    assert any(shows(value, n, h) for _, n, h in printed_numbers(old))
    assert not any(shows(value, n, h) for _, n, h in printed_numbers("nccl-tests measure 365-370 GB/s there"))
