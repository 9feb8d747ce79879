"""CSV that a spreadsheet opens as data: no cell is ever run as a formula.

Excel, LibreOffice and Google Sheets run a cell that starts with `=`, `+`, `-` or `@` (and, after
a tab or carriage return, those again) as a formula: `=HYPERLINK(...)` in a student id or a feedback
line would be live in grades.csv. Every text cell that could start one gets a leading apostrophe
(OWASP's "CSV injection" advice: the spreadsheet shows the text, and the apostrophe is not shown);
numbers are written as numbers (a negative score stays a number).
"""
from __future__ import annotations

import csv
import io
from typing import Iterable

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value) -> object:
    """`value` as a CSV cell no spreadsheet runs: numbers unchanged, text starting a formula quoted."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        text = "" if value is None else str(value)
        return "'" + text if text.startswith(FORMULA_STARTS) else text
    return value


def csv_text(header: list[str], rows: Iterable[list]) -> str:
    """The CSV of `header` and `rows`, every cell through spreadsheet_safe."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([spreadsheet_safe(cell) for cell in header])
    writer.writerows([spreadsheet_safe(cell) for cell in row] for row in rows)
    return buffer.getvalue()
