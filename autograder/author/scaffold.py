"""`scalelabs new-lab LAB_ID --module NAME`: a new lab's skeleton, every file with its required parts,
ready to release, grade its sample class and pass `scalelabs lint` as generated (tests/author/test_scaffold.py).

It writes the lab's own places in the course it runs in (`--course DIR`), nothing else: its reference module (one function, one solution
region), its folder labs/<lab>/ (declaration, scenario, questions, items, public properties,
misconceptions, a design challenge, the notebook, the demo class, and its parts of docs/: physics.md,
errata.md, instruments.md), its test folder tests/labs/<lab>/ (impls/ and its own tests); then
`scalelabs docs` adds the lab to the generated pages. The templates are autograder/author/templates/newlab/
(jinja2 with << >> delimiters, since the files hold jinja2 and format braces of their own); a path's LAB,
MODULE and NN are the lab id, the module and the lab's number.
"""
from __future__ import annotations

import keyword
import re
import sys
from pathlib import Path

import jinja2

import labs
from autograder.author import docs
from autograder.author.docs import REPO

TEMPLATES = Path(__file__).resolve().parent / "templates" / "newlab"
LAB_ID = re.compile(r"^lab(\d\d)_[a-z][a-z0-9_]*$")
SOURCE_LAB = "Vol II Lab {number}, {title}: labs/vol2/ of https://github.com/harvard-edge/cs249r_book"

_JINJA = jinja2.Environment(variable_start_string="<<", variable_end_string=">>", block_start_string="<%",
                            block_end_string="%>", comment_start_string="<#", comment_end_string="#>",
                            keep_trailing_newline=True, undefined=jinja2.StrictUndefined, autoescape=False)


class ScaffoldError(ValueError):
    """The lab cannot be scaffolded as asked; the message says why and what to pass instead."""


def _refuse_names(lab_id: str, module: str, root: Path = REPO) -> str:
    """The lab's two-digit number, or ScaffoldError naming what is wrong with the names (the labs and
    reference modules of the course at `root`)."""
    match = LAB_ID.match(lab_id)
    if match is None:
        raise ScaffoldError(f"lab id {lab_id!r} is not lab<NN>_<topic> (two digits, then lower-case words: "
                            "lab07_fault_tolerance)")
    number = match.group(1)
    existing = {p.parent.name for p in (root / "labs").glob("*/__init__.py")}
    if lab_id in existing:
        raise ScaffoldError(f"labs/{lab_id}/ exists already")
    taken = sorted(lab for lab in existing if lab.startswith(f"lab{number}_"))
    if taken:
        raise ScaffoldError(f"lab number {number} is taken by {taken[0]} (its tests are test_lab{number}_*.py): "
                            "choose another number")
    if not module.isidentifier() or keyword.iskeyword(module) or module != module.lower() or module.startswith("_"):
        raise ScaffoldError(f"module {module!r} is not a lower-case Python name (students `import {module}`)")
    if (root / "reference" / f"{module}.py").exists():
        raise ScaffoldError(f"reference/{module}.py exists already: every lab has a module of its own")
    if module in sys.stdlib_module_names or module in {"constants", "numpy", "hypothesis", "pytest", "test"} \
            or module.startswith("test"):
        raise ScaffoldError(f"module {module!r} would shadow a module students import: choose another name")
    return number


def plan(lab_id: str, module: str, title: str | None = None, source_lab: str | None = None,
         summary: str | None = None, root: Path = REPO) -> dict[Path, str]:
    """path -> text of every file the new lab needs in the course at `root` (nothing written)."""
    number = _refuse_names(lab_id, module, root)
    title = title or lab_id.partition("_")[2].replace("_", " ").capitalize()
    source_lab = source_lab or SOURCE_LAB.format(number=number, title=title)
    if not re.match(rf"^Vol II Lab {number}, [^:]+: .*https://github\.com/", source_lab):
        raise ScaffoldError(f"source lab {source_lab!r} is not 'Vol II Lab {number}, <title>: <where> of "
                            "https://github.com/...' (the README's and the errata's source column)")
    values = dict(lab=lab_id, module=module, number=number, title=title, source_lab=source_lab,
                  source_name=source_lab.partition(": ")[0],
                  summary=summary or f"{title.lower()}: the transfer time of one message (the skeleton's physics)")
    files = {}
    for template in sorted(TEMPLATES.rglob("*.j2")):
        relative = template.relative_to(TEMPLATES).as_posix().removesuffix(".j2")
        relative = relative.replace("LAB", lab_id).replace("MODULE", module).replace("labNN", f"lab{number}")
        files[root / relative] = _JINJA.from_string(template.read_text(encoding="utf-8")).render(**values)
    return files


def imports_from(root: Path) -> bool:
    """Whether this scalelabs imports its labs from the course at `root` (a clone with `pip install -e .`),
    so a lab written there is the one lint, release and grading see."""
    return Path(root).resolve() == REPO.resolve()


def new_lab(lab_id: str, module: str, root: Path = REPO, **options: str | None) -> list[Path]:
    """Write the lab's files into the course at `root` (refusing to overwrite any), add it to the
    generated pages when this scalelabs imports that course's labs; the paths written."""
    root = Path(root).resolve()
    files = plan(lab_id, module, root=root, **options)
    existing = [path for path in files if path.exists()]
    if existing:
        raise ScaffoldError(f"{existing[0].relative_to(root)} exists already: nothing written")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    labs.all_assignments.cache_clear()
    return sorted(files) + (docs.write() if imports_from(root) else [])
