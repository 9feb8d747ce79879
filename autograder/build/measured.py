"""The model against the published record: every lab's `Measurement`s (labs/<lab>/measurements.py)
as the notebook's model-vs-measurement element and as docs/measurements.md.

* `element_cells`: where notebook.py has a `# %% measurements=true` cell, a markdown cell (each
  setup with its source and the quoted figure) and a locked code cell that calls the student's own
  functions at those setups through `_measured.compare` (shipped beside `_instruments.py`). Why the
  model and the measurement differ is not printed there: that is the question that follows.
* `page`: docs/measurements.md, one table per lab, every model value computed from reference/ at
  the declared inputs. `python -m autograder.build.measured` writes it; `--check` exits 1 when the
  committed page is stale (tests/test_measurements.py runs the same comparison).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Iterable, Sequence

from autograder.engine.spec import Assignment, Measurement

PAGE = Path(__file__).resolve().parents[2] / "docs" / "measurements.md"
BAND = (0.67, 1.5)           # the project's target for model / published
HEADING = "## Model vs measurement"


def reference_value(measurement: Measurement) -> Any:
    """The model's value at the measurement's inputs, from reference/."""
    return measurement.reference_value()


def shown(value: Any, unit: tuple[float, str]) -> str:
    if isinstance(value, str):
        return value
    scale, name = unit
    return f"{value / scale:.3g} {name}".strip()


def published_text(m: Measurement) -> str:
    """The published figure as declared (up to 6 digits, so 30.84 stays 30.84), in the row's unit."""
    if isinstance(m.published, str):
        return m.published
    low, *high = figures(m)
    return f"{low}{'-' + high[0] if high else ''} {m.unit[1]}".strip()


def figures(m: Measurement) -> list[str]:
    """The published numbers as they must appear in the quote (in the declared unit)."""
    if isinstance(m.published, str):
        return []
    values = m.published if isinstance(m.published, tuple) else (m.published,)
    return [f"{v / m.unit[0]:.6g}" for v in values]


def in_band(ratio: float) -> bool:
    return BAND[0] <= ratio <= BAND[1]


def agree(m: Measurement, value: Any) -> bool:
    """A number within the band, or the same text (case aside)."""
    ratio = m.ratio(value)
    return str(value).lower() == str(m.published).lower() if ratio is None else in_band(ratio)


def problems(m: Measurement, lab_text: str = "") -> list[str]:
    """What is wrong with one declared row: a published figure its quote does not contain, a ratio
    outside the band with no named effect, or an effect the lab's notebook never names."""
    found = []
    quote = m.quote.replace(",", "")
    for figure in figures(m):
        if figure not in quote:
            found.append(f"{m.id}: the quote does not contain the published figure {figure}: {m.quote!r}")
    if isinstance(m.published, str):
        # a text result: each of its numbers in the quote (a layout), else the word itself (an algorithm)
        numbers = re.findall(r"\d+(?:\.\d+)?", m.published)
        missing = [x for x in numbers if not re.search(rf"(?<![\d.]){re.escape(x)}(?![\d.])", quote)]
        if missing or (not numbers and m.published.lower() not in m.quote.lower()):
            found.append(f"{m.id}: the quote does not contain {missing or m.published!r}: {m.quote!r}")
    value = reference_value(m)
    ratio = m.ratio(value)
    agrees = agree(m, value)
    if not agrees and not m.effect:
        found.append(f"{m.id}: model {shown(value, m.unit)} against {published_text(m)} is outside "
                     f"{BAND[0]}-{BAND[1]} and names no effect the lab teaches")
    if m.effect and lab_text and m.effect.lower() not in lab_text.lower():
        found.append(f"{m.id}: its effect {m.effect!r} is not named in the lab's notebook")
    return found


# --- the notebook element ----------------------------------------------------------------------------

def notebook_rows(assignment: Assignment) -> list[Measurement]:
    rows = [m for m in assignment.measurements if m.notebook]
    for m in rows:
        foreign = m.model.modules() - {assignment.module}
        if foreign:
            raise ValueError(f"{assignment.id}: measurement {m.id} is shown in the notebook but calls "
                             f"{sorted(foreign)}, which the student's folder does not have")
    if not rows:
        raise ValueError(f"{assignment.id}: notebook.py places the model-vs-measurement element, but "
                         "measurements.py marks no row notebook=True")
    return rows


def element_markdown(assignment: Assignment) -> str:
    lines = [HEADING, "",
             "How close is the model you implemented to machines people measured? The cell below runs "
             "**your** functions at published setups and prints the published figure beside your value "
             "(ratio = your model / published). The setups and where each figure comes from:", ""]
    quoted = set()
    for m in notebook_rows(assignment):
        cited = f"[{m.source}]({m.url})"
        # a source quoted once is named, not quoted again, for the next figure it holds
        cited += " (quoted above)" if (m.url, m.quote) in quoted else f": \"{m.quote}\""
        quoted.add((m.url, m.quote))
        lines.append(f"- **{m.quantity}.** {m.setup} Published: {published_text(m)}, {cited}")
    return "\n".join(lines)


def element_source(assignment: Assignment) -> str:
    rows = []
    for m in notebook_rows(assignment):
        published = m.published_value
        rows.append(f"    Row({m.quantity!r},\n"
                    f"        lambda: {m.model.source()},\n"
                    f"        published={published!r}, published_text={published_text(m)!r},\n"
                    f"        scale={m.unit[0]!r}, unit={m.unit[1]!r}, source={m.source!r}),")
    return ("# Model vs measurement (generated): your functions at the published setups above.\n"
            "from _measured import Row, compare\n\n"
            "compare(\n" + "\n".join(rows) + "\n)")


# --- docs/measurements.md ----------------------------------------------------------------------------

def _cell(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).replace("|", "\\|").strip()


def _call(m: Measurement) -> str:
    return f"`{m.model.source()}`"


def lab_table(assignment: Assignment) -> list[str]:
    lines = [f"## {assignment.title}", "",
             f"Declared in `labs/{assignment.id}/measurements.py`"
             + (" (rows marked ● are in the notebook's model-vs-measurement element)." if any(
                 m.notebook for m in assignment.measurements) else "."), "",
             "| quantity and setup | published | source, quoted | model (call) | model / published | why they differ |",
             "|---|---|---|---|---|---|"]
    for m in assignment.measurements:
        value = reference_value(m)
        ratio = m.ratio(value)
        ratio_text = (("same" if agree(m, value) else "differs") if ratio is None
                      else f"{ratio:.2f}" + ("" if in_band(ratio) else " (outside the band: " + m.effect + ")"))
        mark = "● " if m.notebook else ""
        lines.append("| " + " | ".join(_cell(x) for x in (
            f"{mark}**{m.quantity}.** {m.setup}", published_text(m), f"[{m.source}]({m.url}): \"{m.quote}\"",
            f"**{shown(value, m.unit)}**: {_call(m)}", ratio_text, m.why)) + " |")
    return lines


INTRO = f"""# The model against the published record

Generated by `python -m autograder.build.measured` from each lab's `labs/<lab>/measurements.py`;
`tests/test_measurements.py` recomputes every model value from `reference/` and fails when this page
is stale. Do not edit it by hand: change the declaration and regenerate.

Each row holds one published measurement against the model at the same inputs: the published value
and its source with the figure exactly as the source writes it, the model's value with the call that
computes it, their ratio (model / published) and why they differ. The project's target is a ratio in
{BAND[0]}-{BAND[1]}; a row outside it names the effect the lab teaches that explains the gap. The
model uses line rates (NVLink 450 GB/s, NDR 50 GB/s per port) where machines deliver 80-95% of them,
so bandwidth rows sit slightly above 1 by design. Multi-node rows use the cluster's ring link
(`reference/cluster.py`: per-node NICs and NVLink, docs/physics.md).
"""


def page(assignments: Iterable[Assignment]) -> str:
    lines = [INTRO.rstrip("\n")]
    for a in assignments:
        if a.measurements:
            lines += ["", *lab_table(a)]
    return "\n".join(lines) + "\n"


def _assignments() -> list[Assignment]:
    from labs import all_assignments
    return list(all_assignments().values())


def main(argv: Sequence[str]) -> int:
    text = page(_assignments())
    if "--check" in argv:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is stale: run python -m autograder.build.measured", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
