"""What every door that takes a platform upload does with it before the engine grades it, alike: the otter
door on Gradescope (autograder/doors/otter.py), PrairieLearn's (autograder/doors/prairielearn.py) and
grade-batch of Gradescope's export (roster.py): find the lab's folder in it (`graded_folder`), and put the
modules the release provides beside the student's module (`put_provided`).

Students often zip their assignment folder, or the folder above it: the upload then holds
`lab06_collectives/...` or `Downloads/lab06_collectives/...` instead of the files. Gradescope unpacks
the uploaded zip; a zip inside it stays a zip, which neither door opens, so such an upload holds no
lab and needs a person (`no_lab_line`).
"""
from __future__ import annotations

import shutil
from pathlib import Path

from autograder.engine.spec import Assignment

LEVELS = 2                                           # Downloads/lab06_collectives/: two folders down at most
NOT_THE_STUDENTS = ("tests", "__MACOSX", "__pycache__")   # otter's tests/, a macOS zip's resource forks


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


def _folders(folder: Path) -> list[Path]:
    """The real folders in `folder` (links never followed), but NOT_THE_STUDENTS; none if it cannot be listed."""
    try:
        return [entry for entry in sorted(folder.iterdir())
                if entry.is_dir() and not entry.is_symlink() and entry.name not in NOT_THE_STUDENTS]
    except OSError:
        return []


def graded_folder(top: Path, assignment: Assignment) -> Path | None:
    """The folder holding the assignment in an upload's folder `top`: `top` itself when the student's
    module or notebook lies there, else the one folder below (LEVELS at most: a zip of
    `Downloads/lab06_collectives/`) that holds them; None where there is none, or several. Links are
    never followed; a macOS zip's `__MACOSX/` is not a folder of the student's."""
    def holds(folder: Path) -> bool:
        return holds_submission(folder, assignment)

    if holds(top):
        return top
    level, found = [top], []
    for _ in range(LEVELS):
        level = [entry for folder in level for entry in _folders(folder)]
        found = [folder for folder in level if holds(folder)]
        if found:
            break
    return found[0] if len(found) == 1 else None


def no_lab_line(top: Path, assignment: Assignment) -> str:
    """Why an upload with no graded_folder is not graded, in one line (for the student on Gradescope, for
    a person in grade-batch's summary): what it should hold, and the zip or the folders it holds instead."""
    level, zips = [Path(top)], []
    for _ in range(LEVELS + 1):     # as far down as graded_folder looks; never recursively
        for folder in level:
            try:
                zips += [p.name for p in sorted(folder.iterdir()) if p.suffix.lower() == ".zip" and p.is_file()]
            except OSError:
                continue
        level = [entry for folder in level for entry in _folders(folder)]
    zips = zips[:3]
    inside = (f" (it holds {', '.join(zips)}: a zip inside the upload is not opened)" if zips else "")
    return (f"the upload holds neither {assignment.module}.py nor {assignment.id}.ipynb, at its top or in one folder"
            f"{inside}: upload those files of your {assignment.id} folder (or that one folder, zipped)")
