"""Who is in a class folder, and whether it is a class at all: decided before anything is graded or written.

A folder is a class of an assignment only when every student folder graded holds that lab's
submission (its module or its notebook, directly or in nbgrader's `<student>/<lab>/`), with the
modules the release provides beside the module, under a safe student id (autograder.classroom.identity).
Anything else -- the course folder, release/ or source/, another lab's class, one student's folder
(in either layout), a flat download -- is refused by `class_roster` with one line (NotAClass) saying
what to pass instead.

A Gradescope export (submission_metadata.yml) is graded student by student, as Gradescope graded it:
each upload is read as the otter door reads it (autograder.classroom.upload: the lab at its top or in
a folder one or two down), an upload holding no lab is graded as it is (nothing to run) with a line for
a person (`Submitter.upload`), and a submitter's id that cannot be a file name or a safe CSV cell is
graded under its safe_id (`Submitter.renamed`). The export is refused only when no upload holds the lab.

    class_roster(root, assignment, only=()) -> [Submitter(folder, name, students), ...]
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from autograder.classroom.identity import ExportEntry, ExportError, group_id, id_problem, read_export, safe_id
from autograder.classroom.upload import graded_folder, no_lab_line
from autograder.engine.spec import Assignment

COURSE_MARKER = "nbgrader_config.py"   # = autograder.course.MARKER (not imported: course imports nothing of ours)


class NotAClass(ValueError):
    """The folder cannot be graded as this assignment's class; the message says what to pass instead."""


@dataclass(frozen=True)
class Submitter:
    """One submission folder of a class and the students whose record it is (a group has several)."""
    folder: Path               # what is graded: ROOT/<name>/ or nbgrader's ROOT/<name>/<lab>/ (an export's: its lab's folder)
    name: str                  # the folder's name under ROOT
    students: tuple[str, ...]  # the student ids (sorted)
    renamed: tuple[tuple[str, str], ...] = ()   # (student id, Gradescope's id) for each id that was not safe
    upload: str = ""           # why an export's upload holds no lab (a person's line), else ""
    export: bool = False       # an export's upload: graded with the released provided modules, as the otter door grades it

    @property
    def graded_as(self) -> str:
        """The id the submission is graded (and seeded) under."""
        return group_id(list(self.students))


def _is_real_dir(path: Path) -> bool:
    """A folder, not a link to one (a student folder linked to a classmate's is not followed)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def submission_folder(student_dir: Path, assignment: Assignment) -> Path:
    """A student's submission: nbgrader's `submitted/<student>/<assignment>/` or the folder itself."""
    nested = Path(student_dir) / assignment.id
    return nested if _is_real_dir(nested) else Path(student_dir)


def students(root: Path) -> list[str]:
    """Every student subfolder; a link among them counts too (it is graded as an empty folder:
    walk_submission never follows it), so that student gets a result that says why."""
    with os.scandir(root) as it:
        return sorted(e.name for e in it if not e.name.startswith((".", "_"))
                      and (e.is_dir(follow_symlinks=False) or e.is_symlink()))


def _entries(folder: Path) -> set[str]:
    try:
        with os.scandir(folder) as it:
            return {e.name for e in it}
    except OSError:
        return set()


def _some(names: list[str], n: int = 3) -> str:
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


def _no_student_folders(root: Path, assignment: Assignment) -> str:
    wanted = {f"{assignment.module}.py", f"{assignment.id}.ipynb"}
    found = _entries(root)
    hint = ""
    if wanted & found:
        hint = (f": it looks like one submission; grade it with `scalelabs grade {assignment.id} {root} --student ID`, "
                "or put each student's files in a folder of their own")
    elif any(n.endswith((".py", ".ipynb")) for n in found):
        hint = ": put each student's files in a folder of their own (ROOT/<student>/), e.g. a Canvas download's files"
    return f"submissions root {root} has no student subfolders{hint}"


def _export(root: Path) -> dict[str, ExportEntry] | None:
    """The Gradescope export `root` is (identity.read_export), or None; NotAClass when it cannot be read."""
    try:
        return read_export(root)
    except ExportError as exc:
        raise NotAClass(str(exc)) from None


def _ids(root: Path, names: list[str], export: dict[str, ExportEntry] | None = None) -> dict[str, tuple[str, ...]]:
    """folder name -> its students' ids: the folder's name, or in a Gradescope export (`export`, read from
    root when not given) the submitters' ids from submission_metadata.yml (identity.read_export)."""
    export = _export(root) if export is None else export
    if export is None:
        return {name: (name,) for name in names}
    unlisted = [n for n in names if n not in export or not export[n].students]
    if unlisted:
        raise NotAClass(f"{_some(unlisted)} in {root} {'is' if len(unlisted) == 1 else 'are'} not a submission with a "
                        f"student id in its submission_metadata.yml (Gradescope's export): grade the export as "
                        "downloaded, or move these folders out")
    return {name: tuple(export[name].students) for name in names}


def class_roster(root: Path, assignment: Assignment, only: tuple[str, ...] | list[str] = ()) -> list[Submitter]:
    """The submissions of `root` to grade as `assignment`'s class (only those of the ids in `only`,
    when given); NotAClass, in one line, when `root` cannot be that class (module docstring)."""
    root = Path(root)
    names = students(root)
    if not names:
        raise NotAClass(_no_student_folders(root, assignment))
    if (root / COURSE_MARKER).is_file():
        raise NotAClass(f"{root} is the course folder, not a class: pass the folder that holds one folder per "
                        f"student, e.g. submitted (nbgrader's layout: submitted/<student>/{assignment.id}/)")
    if assignment.id in names:
        if len(names) == 1:
            raise NotAClass(f"{root} is one student's folder in nbgrader's layout (it holds {assignment.id}/): grade "
                            f"it with `scalelabs grade {assignment.id} {root}`, or pass the folder above it to grade "
                            "the class")
        raise NotAClass(f"{root} holds the labs' own folders ({_some(names)}), not students' (release/ or source/?): "
                        f"pass the folder that holds one folder per student of {assignment.id}")
    export = _export(root)
    ids = _ids(root, names, export)
    if only:
        chosen = {safe_id(s) for s in only}     # Gradescope's own id names its student too
        unknown = sorted(chosen - {s for group in ids.values() for s in group})
        if unknown:
            raise NotAClass(f"--student {_some(unknown)}: no such student in {root} (its students: {_some(sorted(ids))})")
        names = [n for n in names if chosen & set(ids[n])]
    wanted = {f"{assignment.module}.py", f"{assignment.id}.ipynb"}
    folders = {n: _upload_folder(root / n, assignment) if export is not None else submission_folder(root / n, assignment)
               for n in names}
    entries = {n: _entries(folders[n]) if _is_real_dir(root / n) else set() for n in names}
    # a linked student folder is a student (graded as an empty folder: its result says why), never followed
    without = [n for n in names if not wanted & entries[n] and _is_real_dir(root / n)]
    if len(without) == len(names):
        raise NotAClass(f"no student folder in {root} ({_some(names)}) holds {' or '.join(sorted(wanted))}, directly or "
                        f"in <student>/{assignment.id}/: pass the folder that holds one folder per student of "
                        f"{assignment.id}")
    if without and export is None:
        raise NotAClass(f"{len(without)} of {len(names)} folders in {root} hold neither {' nor '.join(sorted(wanted))} "
                        f"({_some(without)}): a class folder holds only students' submissions of {assignment.id}; "
                        "move the others out (or rename a student's misnamed files) and run again")
    provided = {f"{name}.py" for name in assignment.provided}
    with_module = [found for found in entries.values() if f"{assignment.module}.py" in found]
    if with_module and export is None and all(provided - found for found in with_module):
        nested = any(submission_folder(root / n, assignment) != root / n for n in names)
        folders_glob = f'"{root}"/*/' + (f"{assignment.id}/" if nested else "")
        raise NotAClass(f"no student folder in {root} holds {', '.join(sorted(provided))} beside {assignment.module}.py, "
                        f"so no module can import them: copy the released files into each student's folder first "
                        f"(keeping the student's own), e.g. for d in {folders_glob}; do cp -n release/{assignment.id}/*.py "
                        "\"$d\"; done")
    bad = [why for n in names for s in ids[n] if (why := id_problem(s, f"the student id of {n}" if s != n else "folder"))]
    if bad:
        raise NotAClass(f"{bad[0]}{f' (and {len(bad) - 1} more)' if len(bad) > 1 else ''}: rename the folder "
                        "(its name is the student id) and run again")
    seen: dict[str, str] = {}
    for n in names:
        for s in ids[n]:
            if s in seen:
                raise NotAClass(f"student {s} has two submissions in {root} ({seen[s]} and {n}): keep one")
            seen[s] = n
    return [Submitter(folders[n], n, tuple(sorted(ids[n])),
                      tuple(sorted(export[n].renamed.items())) if export is not None else (),
                      no_lab_line(root / n, assignment) if export is not None and n in without else "",
                      export is not None)
            for n in names]


def _upload_folder(top: Path, assignment: Assignment) -> Path:
    """The folder of an export's upload that is graded: the otter door's (upload.graded_folder), else the
    upload itself (it holds no lab: graded as it is, with a line for a person)."""
    return (graded_folder(top, assignment) if _is_real_dir(top) else None) or top
