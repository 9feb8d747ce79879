"""What the platform doors (Gradescope's otter zip, PrairieLearn's question) do alike with an upload
before the engine grades it: find the lab's files in it, and put the modules the release provides beside
the student's module (a platform upload holds only what the student chose to upload)."""
from __future__ import annotations

import shutil
from pathlib import Path

from autograder.engine.spec import Assignment


def holds_submission(folder: Path, assignment: Assignment) -> bool:
    """Whether `folder` holds the student's module or notebook as a regular file (a link does not count)."""
    return any((folder / name).is_file() and not (folder / name).is_symlink()
               for name in (f"{assignment.module}.py", f"{assignment.id}.ipynb"))


def put_provided(folder: Path, provided_dir: Path, names) -> None:
    """The provided modules as the door carries them, over whatever the upload holds under their names
    (a student's edited or missing `_domain.py` grades like the released one, as on every door)."""
    for name in names:
        source, target = provided_dir / f"{name}.py", folder / f"{name}.py"
        if not source.is_file():
            continue
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.is_symlink():
            target.unlink()
        shutil.copyfile(source, target)
