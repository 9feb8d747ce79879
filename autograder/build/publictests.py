"""The public checks shipped with an assignment: `test_<module>.py` + `_properties.py` +
`_property_kit.py` + `pytest.ini`.

They run offline with plain `pytest` in the released folder, without reference/ or autograder/:
the worked examples carry expected values computed from the reference at release time (numbers
compared with math.isclose at the item's tolerances, strings and bools exactly), and the public
properties are the lab's standalone `properties.py`, copied as `_properties.py` with its import of
the shared labs/property_kit.py made flat (`from _property_kit import ...`), the kit copied beside it.
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import jinja2

import labs
import labs.property_kit
from autograder.engine.spec import Assignment

PROPERTIES_FILE = "_properties.py"
KIT = Path(labs.property_kit.__file__)
KIT_FILE = f"_{KIT.name}"
_KIT_IMPORT = re.compile(rf"^from {re.escape(labs.property_kit.__name__)} import ", re.M)
_LABS_IMPORT = re.compile(r"^\s*(from|import)\s+labs\b", re.M)
# -q: no session header, so a failing function's report is most of what pytest prints
PYTEST_INI = "[pytest]\naddopts = -q -p no:cacheprovider\n"
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
                            functions=[f.name for f in assignment.functions],
                            properties_file=PROPERTIES_FILE, properties_import=properties_import,
                            public_examples=PUBLIC_PROPERTY_EXAMPLES)


def properties_path(assignment: Assignment) -> Path | None:
    """labs/<id>/properties.py, if the lab has public properties."""
    path = Path(labs.__file__).parent / assignment.id / "properties.py"
    return path if path.exists() else None


def shipped_properties(source: str, where: Path) -> str:
    """A lab's properties module as it ships: its import of the property kit made flat. Any other
    import of the staff-only labs package would fail in the released folder, so it is an error."""
    flat = _KIT_IMPORT.sub(f"from {Path(KIT_FILE).stem} import ", source)
    stray = _LABS_IMPORT.search(flat)
    if stray:
        raise ValueError(f"{where}: a shipped properties module may import only {labs.property_kit.__name__} "
                         f"from the labs package, not: {flat[stray.start():].splitlines()[0].strip()}")
    return flat


def write_public_tests(assignment: Assignment, dest_dir: Path, properties: Path | None = None) -> list[Path]:
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    properties = properties or properties_path(assignment)
    written = []
    if properties is not None:
        text = shipped_properties(properties.read_text(encoding="utf-8"), properties)
        (dest_dir / PROPERTIES_FILE).write_text(text, encoding="utf-8")
        shutil.copyfile(KIT, dest_dir / KIT_FILE)
        written += [dest_dir / PROPERTIES_FILE, dest_dir / KIT_FILE]
    test_file = dest_dir / f"test_{assignment.module}.py"
    test_file.write_text(public_test_source(assignment, properties is not None), encoding="utf-8")
    (dest_dir / "pytest.ini").write_text(PYTEST_INI, encoding="utf-8")
    return written + [test_file, dest_dir / "pytest.ini"]
