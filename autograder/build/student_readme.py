"""The released folder's README.md: what a student does there, how to check, what to hand in.

A released folder holds a dozen files, most of them the course's (`_checks.py`, `_properties.py`,
`constants.py`, ...) and two of them the student's; this one short file, written from the declaration
(build/templates/student_readme.md.j2), says which two and what to do with them. It is student-facing:
it names only what the released folder already shows (module, notebook, function names), and the leak
scan reads it with every other released file.
"""
from __future__ import annotations

from pathlib import Path

from autograder.build.publictests import CODE_TEMPLATES
from autograder.engine.spec import Assignment

README = "README.md"
_TEMPLATE = CODE_TEMPLATES.get_template("student_readme.md.j2")


def readme_text(assignment: Assignment) -> str:
    modules = [f"`{name}.py`" for name in (*assignment.provided, *assignment.notebook_modules) if not name.startswith("_")]
    return _TEMPLATE.render(title=assignment.title, id=assignment.id, module=assignment.module,
                            functions=list(assignment.functions), challenges=list(assignment.challenges),
                            extra=" and ".join(modules))


def write_readme(assignment: Assignment, source_dir: Path) -> Path:
    path = Path(source_dir) / README
    path.write_text(readme_text(assignment), encoding="utf-8")
    return path
