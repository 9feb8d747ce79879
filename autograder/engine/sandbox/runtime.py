"""What the worker needs to run, wherever the grader's Python lives: the interpreter, its stdlib, numpy."""
from __future__ import annotations

import importlib.util
import os
import sys
import sysconfig


def python_paths() -> tuple[str, str, str]:
    """(interpreter binary, base prefix's lib dir, stdlib dir) of the Python running the grader."""
    exe = os.path.realpath(sys.executable)
    stdlib = os.path.realpath(sysconfig.get_paths(vars={"base": sys.base_prefix, "installed_base": sys.base_prefix})["stdlib"])
    return exe, os.path.dirname(stdlib), stdlib


def numpy_dirs() -> list[str]:
    """numpy's package dir and its bundled shared libraries (numpy.libs), if numpy is installed."""
    spec = importlib.util.find_spec("numpy")
    if spec is None or not spec.submodule_search_locations:
        return []
    pkg = os.path.realpath(list(spec.submodule_search_locations)[0])
    libs = os.path.join(os.path.dirname(pkg), "numpy.libs")
    return [pkg] + ([libs] if os.path.isdir(libs) else [])
