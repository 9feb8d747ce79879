"""Imports a scalelabs process and the tools it starts pay for and never use, left out.

jsonschema imports the optional rfc3987-syntax when it is installed (jupyter-events pulls it in), which
compiles ~40 Lark grammars at import: 1.2-2.3 s of CPU in every process that imports nbformat (release,
otter, lint, demo, nbgrader and otter themselves), for the IRI format checks of jsonschema that no
notebook schema asks for (nbformat's schemas have no "iri" format). Without it jsonschema leaves those
two checks out, as it does where the package is not installed (the otter zip's setup.sh uninstalls it
on Gradescope for the same reason). A process that imported it already keeps it.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

UNUSED = ("rfc3987_syntax",)
# First on PYTHONPATH of the tools scalelabs starts (nbgrader, otter): a module per name in UNUSED whose
# import fails as an uninstalled package's does.
LEAN_PATH = Path(__file__).resolve().with_name("_lean_path")


def skip_unused() -> None:
    """This process: importing a name of UNUSED fails (ImportError), unless it is imported already."""
    for name in UNUSED:
        sys.modules.setdefault(name, None)


def lean_env(env: dict) -> dict:
    """`env` with LEAN_PATH first on PYTHONPATH (a copy)."""
    env = dict(env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(LEAN_PATH), env.get("PYTHONPATH", "")) if p)
    return env
