"""Attack kit: forged worker code, a disabled audit hook, and a class run through the real CLI.

Student code shares the worker's interpreter (`__main__` is autograder/engine/sandbox/worker.py), so it can
rewrite the reply loop and clear the audit hook's deny lists; the engine must not care.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import resource
from pathlib import Path

import toy

ENGINE = Path(toy.__file__).parent
REPO = ENGINE.parent.parent
SCALELABS = [sys.executable, "-c", "from autograder.cli import main; main()"]
TOY = "toy:ASSIGNMENT"
FULL = toy.ASSIGNMENT.total_points                  # the honest classmate's score: 12
FUNCTION_POINTS = sum(f.points for f in toy.ASSIGNMENT.functions)

# Clears every deny list of the in-process audit hook: module globals and the closure cells of the
# hook (read/write roots), found through gc -- what the attacker did.
UNHOOK = '''
import sys as _sys, gc as _gc
_m = _sys.modules["__main__"]
_m.DENIED_IMPORTS.clear(); _m.DENIED_EVENTS = (); _m.PATH_WRITE_EVENTS.clear()
for _f in _gc.get_objects():
    if callable(_f) and getattr(_f, "__name__", "") in ("hook", "inside") and getattr(_f, "__closure__", None):
        for _c in _f.__closure__:
            try:
                if isinstance(_c.cell_contents, tuple):
                    _c.cell_contents = ("/",)
            except ValueError:
                pass
'''


def forge(handle: str) -> str:
    """Module suffix that replaces the worker's request handler by `_handle(self, request, orig)`."""
    return UNHOOK + f'''
_orig = _m.Worker.handle
{handle}
_m.Worker.handle = lambda self, request: _handle(self, request, _orig)
'''


def run(*args, cwd=ENGINE, env=None, timeout=600):
    return subprocess.run([*SCALELABS, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          env=env, timeout=timeout)


def grade_json(folder: Path, student: str = "mallory", *extra, env=None) -> dict:
    """`scalelabs grade --json` on one folder; it must not crash."""
    proc = run("grade", TOY, folder, "--student", student, "--json", *extra, env=env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def children_cpu_s() -> float:
    """CPU seconds of this process's finished children: the work a command did, whatever the
    machine's load (a verdict on wall-clock time would change under load)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def grade_class(root: Path, out: Path, *extra, env=None, timeout=600) -> tuple[dict[str, dict], float]:
    """`scalelabs grade-batch` over root: ({student: results.json}, CPU seconds). No grader crash."""
    start = children_cpu_s()
    proc = run("grade-batch", TOY, root, "--jobs", "2", "--out", out, *extra, env=env, timeout=timeout)
    seconds = children_cpu_s() - start
    # exit 1 says a student needs a person (an attack that times out, a module that does not import);
    # a grader error ("failed N") or a traceback is a crash
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert ", failed 0" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-3000:]
    results = {p.stem: json.loads(p.read_text()) for p in (out / "results").glob("*.json")}
    return results, seconds


def function_score(data: dict) -> float:
    items = {f.name for f in toy.ASSIGNMENT.functions}
    return sum(t["score"] for t in data["tests"] if t["name"].split(":")[0] in items)


def outputs(data: dict) -> str:
    return "\n".join(t["output"] for t in data["tests"]) + "\n" + data.get("output", "")


def honest(root: Path, name: str = "honest") -> Path:
    return toy.make_submission(root / name, toy.reference_source(), toy.key)


def attacker(root: Path, name: str, module: str, answer: str | None = None) -> Path:
    return toy.make_submission(root / name, module, answer)


def env_with_only(tmp: Path, *tools: str) -> dict:
    """The environment with a PATH holding only the named tools: bwrap (and anything else) hidden."""
    bindir = tmp / "bin"
    bindir.mkdir(exist_ok=True)
    for name in tools:
        found = shutil.which(name)
        assert found, name
        if not (bindir / name).is_symlink():
            (bindir / name).symlink_to(found)
    return dict(os.environ, PATH=str(bindir))


def constant_module(assignment=toy.ASSIGNMENT, body: str | None = None) -> str:
    """Every function of the assignment with the reference's signature and a body that computes
    nothing: `body`, else return the expected value of the item's first worked example."""
    import inspect
    lines = []
    for item in assignment.functions:
        ref = getattr(assignment.reference, item.name)
        params = ", ".join(inspect.signature(ref).parameters)
        value = body or f"return {ref(**dict(item.examples[0].kwargs))!r}"
        lines.append(f"def {item.name}({params}):\n    {value}\n")
    return "\n".join(lines)
