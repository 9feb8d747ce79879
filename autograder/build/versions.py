"""The released notebook of a lab with variants: every version in one notebook (issue 45).

Each version of the lab (labs/variants.py) builds its own notebook (autograder.build.notebook, the
cells of every version in the same order); this module merges them into the one nbgrader releases:

* a cell every version writes alike stays as it is;
* a markdown cell whose text differs (the story, a question's prompt with its options in the
  version's order, a design challenge's targets) becomes a locked code cell, its source collapsed,
  that shows the student's version of the text (`show`, autograder/build/student/_variant.py;
  every version's text is carried in the cell, encoded, none of them a key);
* a reveal carries every version's data; it records and explains in the student's version;
* the setup cell's scenario values that differ become `name = pick(v0, v1, ...)`, and the setup first
  finds the student's id and version (`choose`), which it says;
* a cell `student_id = None` before the setup is where a student types their id (JupyterHub's user
  name and nbgrader's id, where the kernel can know them, come first);
* the lab's first markdown cell keeps its title (and, where the story varies, a line saying the
  lab's numbers are the student's own); the story follows the setup.

Any other difference between versions is a lab the merge cannot carry: ValueError names the cell.
"""
from __future__ import annotations

import ast
import re
from typing import Sequence

import nbformat
from nbformat.v4 import new_code_cell

from autograder.build.student import _variant
from autograder.build.student._reveal import decode as decode_reveal, encode as encode_reveal

SETUP_IMPORT = "from _variant import choose, pick, show   # your version of this lab: its numbers, its options' order"
ID_CELL = "student-id"
ID_SOURCE = ("# Your id, as your course knows it, in quotes: on Gradescope your student id (else your email). On\n"
             "# your course's JupyterHub leave it: your hub user name is used. Your version of the lab follows from it.\n"
             "student_id = None")
YOURS = ("**Your version of this lab.** Its numbers and the order of its options are your own, chosen from your "
         "id: write your id in the cell below, then run the notebook from the top (Run All) to see them.")
_REVEAL = re.compile(r"^(with reveal\(globals\(\), .*?, )'([A-Za-z0-9+/=]*)'(\) as ready:)$", re.M)


def _cell(template: nbformat.NotebookNode, source: str, **changes) -> nbformat.NotebookNode:
    """A locked code cell in `template`'s place (its id and nbgrader metadata), source collapsed."""
    metadata = {k: v for k, v in template.metadata.items() if k != "jp-MarkdownHeadingCollapsed"}
    cell_id = changes.get("id", template.id)
    metadata["nbgrader"] = dict(metadata["nbgrader"], locked=True, grade_id=cell_id if cell_id != template.id
                                else metadata["nbgrader"]["grade_id"])
    metadata["jupyter"] = {"source_hidden": True}
    cell = new_code_cell(source, metadata=metadata)
    cell.id = cell_id
    return cell


def shown_source(texts: Sequence[str], what: str) -> str:
    """The source of a cell showing the student's version of a text (each distinct text carried once)."""
    distinct = list(dict.fromkeys(texts))
    blob = _variant.encode({"texts": distinct, "variants": [distinct.index(t) for t in texts]})
    return f"# {what}: your version of it (_variant.py)\nshow({blob!r})"


def shown_texts(source: str) -> tuple[str, ...] | None:
    """Every version's text of a cell `shown_source` wrote, in version order; None for another cell."""
    match = re.search(r"^show\('([A-Za-z0-9+/=]+)'\)$", source, re.M)
    if not match:
        return None
    data = _variant.decode(match.group(1))
    return tuple(data["texts"][i] for i in data["variants"])


def reveal_versions(source: str) -> list[dict] | None:
    """Every version's data of a merged reveal, or None (not a merged reveal)."""
    match = _REVEAL.search(source)
    if not match:
        return None
    data = decode_reveal(match.group(2))
    return data.get("variants")


def _merged_reveal(sources: Sequence[str], cell_id: str) -> str:
    matches = [_REVEAL.search(s) for s in sources]
    if not all(matches) or len({_REVEAL.sub("", s) for s in sources}) != 1:
        raise ValueError(f"cell {cell_id}: its versions differ in more than the reveal's data")
    versions = [decode_reveal(m.group(2)) for m in matches]
    data = encode_reveal({"assignment": versions[0].get("assignment", ""), "variants": versions})
    first = matches[0]
    return sources[0][:first.start(2) - 1] + repr(data) + sources[0][first.end(2) + 1:]


def _literal_lines(source: str) -> dict[int, tuple[ast.Assign, str]]:
    """line number -> (the assignment of a literal on that line of the setup, its source text)."""
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and node.lineno == node.end_lineno and len(node.targets) == 1:
            try:
                ast.literal_eval(node.value)
            except ValueError:
                continue
            found[node.lineno] = (node, ast.get_source_segment(source, node.value))
    return found


def merged_setup(sources: Sequence[str], assignment_id: str, exchange: str | None = None) -> str:
    """The setup of every version: lines all versions share as they are, each value that differs as
    `name = pick(<version 0's>, <version 1's>, ...)`, after `choose(...)`, which finds the id."""
    split = [s.splitlines() for s in sources]
    if len({len(lines) for lines in split}) != 1:
        raise ValueError("the setup cell has a different number of lines in different versions")
    literals = [_literal_lines(s) for s in sources]
    out, chosen = [], False
    where = f", exchange={exchange!r}" if exchange else ""
    choose = [SETUP_IMPORT, f"choose({assignment_id!r}, {len(sources)}, globals(){where})   # finds your id: "
              "your version of the lab"]
    for number, lines in enumerate(zip(*split), 1):
        if len(set(lines)) == 1:
            out.append(lines[0])
            continue
        if not all(number in found for found in literals):
            raise ValueError(f"line {number} of the setup differs between versions and is not `name = <literal>`: "
                             f"{lines[0]!r}")
        node, _ = literals[0][number]
        values = ", ".join(found[number][1] for found in literals)
        comment = lines[0][node.end_col_offset:]
        if not chosen:
            out += choose
            chosen = True
        out.append(f"{lines[0][:node.value.col_offset]}pick({values}){comment}")
    if not chosen:
        out += choose
    return "\n".join(out)


def merge(books: Sequence[nbformat.NotebookNode], assignment_id: str,
          exchange: str | None = None) -> nbformat.NotebookNode:
    """One notebook holding every version of `books` (version i's notebook at index i)."""
    layouts = {tuple(c.id for c in nb.cells) for nb in books}
    if len(layouts) != 1:
        raise ValueError(f"{assignment_id}: the versions' notebooks have different cells")
    cells, story = [], None
    for index, cell in enumerate(books[0].cells):
        versions = [nb.cells[index] for nb in books]
        sources = [c.source for c in versions]
        if cell.id == "setup":
            cells.append(_cell(cell, merged_setup(sources, assignment_id, exchange)))
        elif len(set(sources)) == 1:
            cells.append(cell)
        elif cell.cell_type == "markdown" and index == 0:
            title, _, _ = cell.source.partition("\n")
            if not title.startswith("# "):
                raise ValueError(f"{assignment_id}: the first cell's story differs between versions but does not open "
                                 "on a `# ` title line")
            story = _cell(cell, shown_source([s.partition("\n")[2].strip() for s in sources], "The lab's story"),
                          id=f"{cell.id}-yours")
            opening = nbformat.v4.new_markdown_cell(f"{title}\n\n{YOURS}", metadata=cell.metadata)
            opening.id = cell.id
            cells.append(opening)
        elif cell.cell_type == "markdown":
            what = "A question with its options" if cell.id.endswith("-prompt") else "This part of the lab"
            cells.append(_cell(cell, shown_source(sources, what)))
        elif cell.cell_type == "code" and _REVEAL.search(cell.source):
            merged = new_code_cell(_merged_reveal(sources, cell.id), metadata=cell.metadata)
            merged.id = cell.id
            cells.append(merged)
        else:
            raise ValueError(f"{assignment_id}: cell {cell.id} differs between versions and is neither text, a reveal "
                             "nor the setup")
    at = next(i for i, c in enumerate(cells) if c.id == "setup")
    id_cell = new_code_cell(ID_SOURCE, metadata={"nbgrader": {"grade": False, "grade_id": ID_CELL, "locked": False,
                                                              "schema_version": 3, "solution": True, "task": False}})
    id_cell.id = ID_CELL
    cells[at:at] = [id_cell]
    if story is not None:
        cells.insert(at + 2, story)
    nb = nbformat.v4.new_notebook(cells=cells, metadata=books[0].metadata)
    nb.metadata["scalelabs"] = dict(nb.metadata.get("scalelabs", {}), variants=len(books))
    nbformat.validate(nb)
    return nb
