"""Stub generation: every reference module gives a stub that imports and raises NotImplementedError."""
from __future__ import annotations

import importlib.util
import inspect
import shutil
import sys
import typing
from pathlib import Path

import pytest

from autograder.build import stubgen

REPO = Path(__file__).resolve().parents[2]
PROVIDED = ("_domain", "constants", "cluster")   # not stubs: provided modules and a notebook module (cluster)
MODULES = sorted(p.stem for p in (REPO / "reference").glob("*.py")
                 if p.stem not in PROVIDED and p.stem != "__init__")


def test_regions_become_raise_at_their_indentation():
    text = ('from ._domain import check_count\n'
            '### BEGIN SOLUTION\nfrom .collectives import ring_allreduce_time\n### END SOLUTION\n'
            'def f(n: int) -> int:\n    """Doc."""\n    check_count("n", n)\n'
            '    ### BEGIN SOLUTION\n    return n\n    ### END SOLUTION\n')
    out = stubgen.strip_solutions(text)
    assert out == ('from _domain import check_count\n'
                   'def f(n: int) -> int:\n    """Doc."""\n    check_count("n", n)\n'
                   '    raise NotImplementedError()\n')


@pytest.mark.parametrize("bad", ["### BEGIN SOLUTION\nx\n", "x\n### END SOLUTION\n",
                                 "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION\n",
                                 "from .secret import x\n"])
def test_malformed_reference_is_refused(bad):
    with pytest.raises(ValueError):
        stubgen.strip_solutions(bad)


def _load_stub(module: str, folder: Path):
    stub = folder / f"{module}.py"
    stubgen.write_stub(REPO / "reference" / f"{module}.py", stub)
    for name in PROVIDED:
        shutil.copyfile(REPO / "reference" / f"{name}.py", folder / f"{name}.py")
    sys.path.insert(0, str(folder))
    try:
        spec = importlib.util.spec_from_file_location(f"stub_{module}", stub)
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
    finally:
        sys.path.remove(str(folder))
    return loaded


def _candidates(function):
    """A few plausible valid argument sets, by type hint (validation rejects the others)."""
    hints = typing.get_type_hints(function)
    params = [p for p in inspect.signature(function).parameters]
    for number, count in ((0.5, 8), (1.0, 2), (0.25, 1), (100.0, 16)):
        yield {p: (count if hints.get(p) is int else "ring" if hints.get(p) is str else number) for p in params}


@pytest.mark.parametrize("module", MODULES)
def test_stub_imports_and_every_required_function_raises(module, tmp_path):
    stub = _load_stub(module, tmp_path)
    source = (tmp_path / f"{module}.py").read_text()
    assert source.startswith("# GENERATED") and "SOLUTION" not in source
    assert "from ." not in source
    reference_text = (REPO / "reference" / f"{module}.py").read_text()
    graded = [name for name in stub.__all__ if f"def {name}(" in reference_text]
    assert graded, f"{module} declares no functions in __all__"
    for name in graded:
        function = getattr(stub, name)
        assert function.__doc__, f"{name} lost its docstring"
        outcomes = []
        for kwargs in _candidates(function):
            try:
                function(**kwargs)
                outcomes.append("returned")
            except NotImplementedError:
                outcomes.append("raised")
                break
            except (ValueError, TypeError):
                outcomes.append("invalid")
        assert "returned" not in outcomes, f"{module}.{name} returns a value in the stub"
        if "raised" not in outcomes:  # no candidate was valid: the body must still be the stub line
            body = inspect.getsource(function)
            assert stubgen.STUB_LINE in body, f"{module}.{name} has no NotImplementedError"


def test_a_formula_paragraph_is_left_out_of_the_stub_and_the_derivation_stays():
    """Staff read the closed form in the reference (`Formula:`); the stub gives the student the
    mechanism to derive it from (`Derive:`), wherever the paragraphs stand in the docstring."""
    text = ('def f(n: int, m: float) -> float:\n'
            '    """Seconds for something.\n\n'
            '    Formula: T = 2(n-1) * m  (Someone 2005).\n'
            '    Derive: each of the n-1 ranks sends m twice.\n'
            '    Zero for n = 1.\n'
            '    """\n'
            '    ### BEGIN SOLUTION\n    return 2 * (n - 1) * m\n    ### END SOLUTION\n\n\n'
            'def g(n: int) -> int:\n'
            '    """Count.\n\n'
            '    Derive: one per rank.\n\n'
            '    Formula: n, the\n'
            '    rank count (Someone 2005)."""\n'
            '    ### BEGIN SOLUTION\n    return n\n    ### END SOLUTION\n')
    out = stubgen.strip_solutions(text)
    assert "Formula" not in out and "Someone" not in out and "2(n-1) * m" not in out
    assert out.count("Derive:") == 2 and "Zero for n = 1." in out
    assert '    Derive: one per rank.\n    """\n' in out   # the quotes kept, no blank line before them
    namespace: dict = {}
    exec(compile(out, "stub", "exec"), namespace)
    assert namespace["f"].__doc__.startswith("Seconds for something.") and namespace["g"].__doc__
    assert stubgen.strip_solutions("def h():\n    \"\"\"Formula: kept when it is the first line.\"\"\"\n") \
        == "def h():\n    \"\"\"Formula: kept when it is the first line.\"\"\"\n"
