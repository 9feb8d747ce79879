"""What the worker needs to run, wherever the grader's Python lives: the interpreter, its stdlib, numpy,
and the shared libraries the dynamic loader maps for them (a Debian system Python, a pyenv build, a
Fedora /usr/lib64 layout, a venv of any of them: the jail binds these, not a guess at /usr)."""
from __future__ import annotations

import importlib.util
import json
import os
import site
import subprocess
import sys
import sysconfig
from functools import lru_cache

# Run by the grader's own interpreter, as the jail runs it (-I -S, the jail's environment): load every
# extension module of the stdlib (lib-dynload) and of numpy with dlopen, which maps each with the
# libraries it needs without running its module code (a third of the CPU of importing them), then
# list the files mapped: what the dynamic loader needs of the host (libc, libpython, libz, locale...).
MAPPED_PROBE = """
import json, os, sys
dynload, numpy_dir = sys.argv[1], sys.argv[2]
paths = [os.path.join(dynload, n) for n in sorted(os.listdir(dynload)) if ".so" in n] if os.path.isdir(dynload) else []
for root, dirs, files in os.walk(numpy_dir) if numpy_dir else ():
    paths += [os.path.join(root, f) for f in sorted(files) if ".so" in f]
try:
    import ctypes
    for path in paths:
        try:
            ctypes.CDLL(path, mode=os.RTLD_LAZY | os.RTLD_LOCAL)
        except OSError:
            pass
except ImportError:         # no ctypes: import them (numpy's package dir then sits on sys.path)
    import importlib, importlib.machinery
    sys.path.insert(0, os.path.dirname(numpy_dir))
    for path in paths:
        name = os.path.basename(path).split(".")[0]
        try:
            importlib.import_module("numpy" if path.startswith(numpy_dir) else name)
        except BaseException:
            pass
print(json.dumps(sorted({row.split(None, 5)[5].strip() for row in open("/proc/self/maps")
                         if len(row.split(None, 5)) == 6 and row.split(None, 5)[5].startswith("/")})))
"""
JAIL_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}    # what the worker's environment holds (HOME aside)


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


@lru_cache(maxsize=None)
def mapped_files() -> tuple[str, ...]:
    """The files (real paths) the grader's interpreter maps once it has loaded every extension
    module of its stdlib and numpy: itself, its shared libraries and theirs, the dynamic loader,
    locale data. Asked of a child process once per grader process (~0.05 s CPU); () if it fails, and
    the jail then holds too little to start, which the jail's start check reports."""
    exe, _, stdlib = python_paths()
    dynload = os.path.join(stdlib, "lib-dynload")
    numpy = numpy_dirs()
    try:
        done = subprocess.run([exe, "-I", "-S", "-c", MAPPED_PROBE, dynload, numpy[0] if numpy else ""],
                              capture_output=True, text=True, timeout=60, env=JAIL_ENV, cwd="/")
        return tuple(os.path.realpath(p) for p in json.loads(done.stdout))
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return ()


def site_dirs() -> list[str]:
    """Every folder the grader's Python imports installed packages from (site-, dist-packages, a
    venv's, the user's, .pth additions): none of it may be seen from the jail but numpy."""
    found = [*site.getsitepackages(), site.getusersitepackages(),
             *(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))]
    _, _, stdlib = python_paths()
    found += [p for p in sys.path if p and not p.endswith(".zip")]
    found += [os.path.join(stdlib, name) for name in ("site-packages", "dist-packages")]   # hidden, so empty

    def stdlib_own(path: str) -> bool:      # the stdlib and lib-dynload are bound on purpose
        inside = os.path.relpath(path, stdlib).split(os.sep)
        return path == stdlib or (path.startswith(stdlib + os.sep) and inside[0] not in ("site-packages", "dist-packages"))
    return sorted({real for real in map(os.path.realpath, found) if os.path.isdir(real) and not stdlib_own(real)})
