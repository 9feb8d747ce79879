"""Helpers of the release tests (a module of its own: `conftest` names collide across folders)."""
from __future__ import annotations

from pathlib import Path

from autograder.classroom.samples import flat_reference_modules as flat_reference  # noqa: F401

REPO = Path(__file__).resolve().parents[2]


def execute_notebook(notebook: Path):
    """Run every cell of `notebook` headless (nbclient, the python3 kernel) in its folder, as a
    student's Run All would, and save it with its outputs; returns the executed notebook."""
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(notebook, 4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(Path(notebook).parent)}}).execute()
    nbformat.write(nb, notebook)
    return nb
