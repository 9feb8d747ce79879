"""Who a submission is: one student, one id, whatever the door (docs/tas.md, "Student ids").

The id seeds the student's hidden inputs and names their results, feedback page and gradebook rows,
so every door must give the same student the same id:

    nbgrader (`nbgrader autograde`, grade-batch of `submitted/`)   the nbgrader student id: submitted/<id>/<lab>/
    a class folder (grade-batch ROOT)                             the student's folder name: ROOT/<id>/
    Gradescope (the otter zip, grade-batch of an export)          the submitter's `sid` (student id) in
                                                                  Gradescope's metadata, else their email
    scalelabs grade                                               --student ID, or the layout's id (above)

A Gradescope group submission is graded once, under the smallest of its members' ids (so both
doors seed it alike, whatever order Gradescope lists the members in); each member gets the record.

Ids are restricted to a safe alphabet (SAFE_ID): ASCII letters and digits first, then also `.`, `_`,
`-`, `@` and `+`, at most ID_CHARS characters. Such an id is a file name everywhere, never a path,
and never starts a spreadsheet formula; any other id is refused in one line (`id_problem`), but for
a Gradescope submitter's, which no one can rename: that one is graded under `safe_id(id)`, its safe
rendering with a hash of the whole id (`mary.o'brien@uni.edu` -> `mary.o_brien@uni.edu-<10 hex>`),
the same in both doors that read Gradescope's ids (so the hidden inputs agree), and named in
grade-batch's summary.
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

ID_CHARS = 128
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,%d}" % (ID_CHARS - 1))
SAFE_ID_TEXT = (f"ASCII letters, digits and . _ - @ + (starting with a letter or digit, at most {ID_CHARS} "
                "characters)")
EXPORT_METADATA = "submission_metadata.yml"   # Gradescope's "Export Submissions": who each submission_<n>/ is


def id_problem(student: str, where: str = "student id") -> str | None:
    """Why `student` cannot be a student id, in one line, or None when it can."""
    if isinstance(student, str) and SAFE_ID.fullmatch(student):
        return None
    shown = repr(student)[:60]
    return f"{where} {shown} is not a safe student id: ids use {SAFE_ID_TEXT}"


MAPPED_HASH_CHARS = 10     # hex digits of sha256(id) that end a mapped id: two ids share them once in 10**12


def safe_id(platform_id: str) -> str:
    """The student id a platform's id is graded under: the id itself when it is safe (id_problem), else
    its ASCII letters, digits and `._@+-` (accents dropped, anything else `_`, starting with a letter or
    digit) followed by `-` and MAPPED_HASH_CHARS hex digits of the sha256 of the whole id: a safe id,
    the same on every machine and in every door, and two ids map to one only if their hashes collide."""
    if id_problem(platform_id) is None:
        return platform_id
    text = str(platform_id)
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:MAPPED_HASH_CHARS]
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    readable = re.sub(r"[^A-Za-z0-9._@+-]", "_", ascii_text).lstrip("._@+-")[:ID_CHARS - MAPPED_HASH_CHARS - 1]
    return f"{readable or 'id'}-{digest}"


def submitter_id(user: dict) -> str:
    """A Gradescope submitter's id: their `sid` (student id), else their email ('' when neither).
    Takes the autograder's metadata (`sid`, `email`) and the export's (`:sid`, `:email`) alike."""
    if not isinstance(user, dict):
        return ""
    for key in ("sid", ":sid", "email", ":email"):
        value = user.get(key)
        if value not in (None, ""):
            return str(value).strip()
    return ""


def group_id(ids: list[str]) -> str:
    """The id a submission is graded (and its hidden inputs seeded) under: its only submitter's, or a
    group's smallest, so the order Gradescope lists a group in changes nothing."""
    return min(ids)


def platform_ids(submission_metadata: dict | None) -> dict[str, str]:
    """Every submitter of one Gradescope submission, from the autograder's `submission_metadata.json`
    (`users`) or an export's entry (`:submitters`): the id graded under (safe_id) -> Gradescope's own."""
    metadata = submission_metadata if isinstance(submission_metadata, dict) else {}
    users = metadata.get("users", metadata.get(":submitters")) or []
    return {safe_id(i): i for i in (submitter_id(u) for u in users if isinstance(users, list)) if i}


def gradescope_ids(submission_metadata: dict | None) -> list[str]:
    """Every submitter's id of one Gradescope submission (platform_ids: safe), sorted, unique."""
    return sorted(platform_ids(submission_metadata))


@dataclass(frozen=True)
class ExportEntry:
    folder: str           # submission_<n>
    students: list[str]   # its submitters' ids, sorted (a group has several)
    score: float | None   # the score Gradescope gave, when the export says
    created_at: object = None     # when it was submitted (`:created_at`: YAML's datetime, or text)
    results: dict | None = None   # the autograder's results.json Gradescope kept (`:results`)
    renamed: dict = field(default_factory=dict)   # safe_id -> Gradescope's id, for each id that was not safe


class ExportError(ValueError):
    """An export's submission_metadata.yml cannot be read; the message names the file and why."""


def read_export(root: Path) -> dict[str, ExportEntry] | None:
    """A Gradescope export's folders and who submitted each (ROOT/submission_metadata.yml), or None
    when ROOT is not an export. The file is YAML (keys `:submitters`, `:sid`, `:email`, `:score`,
    `:created_at`, `:results`)."""
    path = Path(root) / EXPORT_METADATA
    if not path.is_file():
        return None
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ExportError(f"{path} cannot be read ({type(exc).__name__}): download the export again") from None
    if not isinstance(data, dict):
        raise ExportError(f"{path} is not Gradescope's submission metadata (a mapping of submission folders)")
    entries = {}
    for folder, meta in data.items():
        meta = meta if isinstance(meta, dict) else {}
        score = meta.get(":score", meta.get("score"))
        results = meta.get(":results", meta.get("results"))
        ids = platform_ids(meta)
        entries[str(folder)] = ExportEntry(str(folder), sorted(ids),
                                           float(score) if isinstance(score, (int, float)) else None,
                                           meta.get(":created_at", meta.get("created_at")),
                                           results if isinstance(results, dict) else None,
                                           {safe: own for safe, own in ids.items() if safe != own})
    return entries


def layout_student(folder: Path, assignment_id: str) -> str | None:
    """The student id the layout gives `folder` (as `scalelabs grade` is handed it), or None:
    nbgrader's `submitted/<id>/` or `submitted/<id>/<lab>/`, or a Gradescope export's
    `submission_<n>/` (its submitters' id from the export's metadata)."""
    folder = Path(folder).resolve()
    if folder.name == assignment_id and folder.parent.parent.name == "submitted":
        return folder.parent.name
    if (folder / assignment_id).is_dir() and folder.parent.name == "submitted":
        return folder.name
    try:
        export = read_export(folder.parent)
    except ExportError:
        return None
    entry = (export or {}).get(folder.name)
    return group_id(entry.students) if entry and entry.students else None

