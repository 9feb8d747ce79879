"""The public checks shipped with an assignment: `test_<module>.py` + `_properties.py` + `pytest.ini`.

They run offline with plain `pytest` in the released folder, without reference/ or autograder/:
the worked examples carry expected values computed from the reference at release time (numbers
compared with math.isclose at the item's tolerances, strings and bools exactly), and the public
properties are the lab's standalone `properties.py`, copied verbatim as `_properties.py`.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import jinja2

from autograder.engine.spec import Assignment

PROPERTIES_FILE = "_properties.py"
PYTEST_INI = "[pytest]\naddopts = -p no:cacheprovider\n"
# Examples per public property: derandomized (the same inputs on every run), so a student's `pytest`
# is a quick, repeatable check (about 2 s for a whole lab); grading runs the hidden checks and its
# own seeded examples per property on top.
PUBLIC_PROPERTY_EXAMPLES = 10

# Generated Python files (this public test module, the otter door's test files) are jinja2 templates
# in build/templates/ (the project's one templating library); `| repr` writes a Python literal.
CODE_TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).with_name("templates")),
                                    keep_trailing_newline=True, autoescape=False,
                                    undefined=jinja2.StrictUndefined)
CODE_TEMPLATES.filters["repr"] = repr
_TEMPLATE = CODE_TEMPLATES.get_template("test_module.py.j2")


def example_rows(assignment: Assignment) -> list[tuple]:
    """(function, label, kwargs, expected, rel_tol, abs_tol) per worked example, from reference/."""
    rows = []
    for item in assignment.functions:
        reference = getattr(assignment.reference, item.name)
        for example in item.examples:
            expected = reference(**dict(example.kwargs))
            if not isinstance(expected, (int, float, str)):   # bool is an int: compared exactly
                raise TypeError(f"{item.name}: example {example.label!r} gives {expected!r}; "
                                "public examples must give a number, a string or a bool")
            rows.append((item.name, example.label, dict(example.kwargs), expected, item.rel_tol, item.abs_tol))
    return rows


def public_test_source(assignment: Assignment, has_properties: bool) -> str:
    examples = "".join(f"    {row!r},\n" for row in example_rows(assignment))
    properties_import = (f"from {Path(PROPERTIES_FILE).stem} import PROPERTIES" if has_properties
                         else "PROPERTIES = []")
    return _TEMPLATE.render(module=assignment.module, examples=examples,
                            properties_file=PROPERTIES_FILE, properties_import=properties_import,
                            public_examples=PUBLIC_PROPERTY_EXAMPLES)


def properties_path(assignment: Assignment) -> Path | None:
    """labs/<id>/properties.py, if the lab has public properties."""
    import labs
    path = Path(labs.__file__).parent / assignment.id / "properties.py"
    return path if path.exists() else None


def write_public_tests(assignment: Assignment, dest_dir: Path, properties: Path | None = None) -> list[Path]:
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    properties = properties or properties_path(assignment)
    written = []
    if properties is not None:
        shutil.copyfile(properties, dest_dir / PROPERTIES_FILE)
        written.append(dest_dir / PROPERTIES_FILE)
    test_file = dest_dir / f"test_{assignment.module}.py"
    test_file.write_text(public_test_source(assignment, properties is not None), encoding="utf-8")
    (dest_dir / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    return written + [test_file, dest_dir / "pytest.ini"]
