"""`scalelabs merge LAB DIR... --out DIR`: the shards of a class (`grade-batch --shard K/N`, each graded
into a folder of its own, on as many machines) joined into one results folder, feedback pages,
gradebook and grades.csv: what one grade-batch run of the whole class writes, byte for byte.

Before anything is written, the merge refuses, one line each (MergeRefused):
- a folder that is not a finished shard of this lab: no shard.json, another assignment, a student of
  its shard without a result (a shard stopped half-way: run it again, it resumes);
- a result that is not one grade-batch wrote: a test without its record, a score that is not a number
  (the record's own check, results.record_item_scores, naming what is wrong), or a symbolic link (a
  shard's folder is graded from untrusted code: a link is never followed, nor a FIFO or device read);
- shards of different splits (N), cut from different class lists (shard.json's class digest: a shard
  graded before students were added), a shard given twice, a shard missing;
- a student in two shards;
- a shard graded by another grader than the first shard (`fingerprints.grader_changes` names what
  differs: a declaration file, a setting, scalelabs' version, the Python, numpy or hypothesis versions
  with both values) or under another course secret;
- an output folder holding results of another lab, or of students in no shard graded by another
  grader or course secret (the class would mix two graders);
- results that record lateness when no course is found where the merge runs (run it in the course, or
  --course DIR), and a result that records none when the course gives the lab a due date now (its
  submission time is in the class folder only: run that shard's grade-batch again in the course).

Lateness is the course's now, as a grade-batch rerun of the whole class records it: each result's
recorded facts (its submission time, the platform's dates) under the course's current due dates,
extensions and policy (batch.recorded_lateness_now: Deadlines.reassess); a result whose lateness
changed (an extension granted between the shard runs and the merge) has it recorded again with its
feedback page, as grade-batch does (batch.with_lateness, batch.record_texts), the engine's record as
the shard graded it.

Resumable like grade-batch: a result already in the output folder as the shard has it is not written
again, a feedback page is copied when it is its result's (the hash the result records) and rendered
otherwise; the gradebook and grades.csv are written from the whole record at the end of each run.
Each result is read, parsed and checked once; a result or page is copied as a hard link to the very
file read when the output is on the shard's filesystem (grade-batch and merge replace files, never
write into them, so the two folders cannot change each other), else written.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from autograder.classroom.batch import (OutputFolderError, check_output, class_attention, load_result, read_regular,
                                        read_result, record_texts, recorded_lateness_now, why_reassess, with_lateness,
                                        write_class_record)
from autograder.classroom.deadlines import Deadlines, Lateness, course_deadlines, known_labs
from autograder.classroom.feedback import render_feedback, write_atomic
from autograder.classroom.fingerprints import LABELS, MACHINE, grader_changes, machine_differences, machine_versions
from autograder.classroom.gradebook import GradebookWriter, sqlite_url
from autograder.classroom.shards import MANIFEST, read_manifest
from autograder.engine.results import record_item_scores
from autograder.engine.spec import Assignment


class MergeRefused(ValueError):
    """The shards cannot be merged; the message names the shard, the student or the difference."""


@dataclass
class ShardFolder:
    folder: Path
    k: int
    n: int
    digest: str
    students: list[str]
    results: dict[str, tuple[str, dict]] = field(default_factory=dict)   # student -> (file text, parsed)
    scores: dict[str, dict[str, float]] = field(default_factory=dict)    # student -> item -> score (as checked)
    files: dict[str, os.stat_result] = field(default_factory=dict)       # student -> their result file as read

    @property
    def name(self) -> str:
        return f"shard {self.k} of {self.n} ({self.folder})"


@dataclass
class MergeSummary:
    out_dir: Path
    shards: int = 0
    written: list[str] = field(default_factory=list)      # results new or changed in the output folder
    unchanged: list[str] = field(default_factory=list)    # results already there as the shard has them
    pages: int = 0                                         # feedback pages written
    reassessed: dict[str, str] = field(default_factory=dict)   # student -> why their lateness was recorded again
    attention: dict[str, list[str]] = field(default_factory=dict)
    csv_path: Path | None = None
    db_url: str = ""
    record: int = 0


def _some(names: Sequence[str], n: int = 3) -> str:
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")


def read_shard(folder: Path, assignment: Assignment) -> ShardFolder:
    """A finished shard of `assignment` in `folder`, its results read and checked; MergeRefused otherwise."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MergeRefused(f"{folder} is not a folder")
    manifest = read_manifest(folder)
    if manifest is None:
        raise MergeRefused(f"{folder} is not a shard: it has no {MANIFEST} (grade-batch --shard K/N writes one "
                           "before grading anyone); pass the --out folders of the shard runs")
    if manifest["assignment"] != assignment.id:
        raise MergeRefused(f"{folder} is a shard of {manifest['assignment']}, not {assignment.id}")
    shard = ShardFolder(folder, manifest["shard"], manifest["of"], manifest["class"], sorted(manifest["students"]))
    missing = []
    if (folder / "results").is_symlink():
        raise MergeRefused(f"{shard.name}: its results folder is a symbolic link; a shard's results are the files "
                           "grade-batch --shard wrote there (a link is never followed)")
    for student in shard.students:
        path = folder / "results" / f"{student}.json"
        found = read_result(path)
        if found is None and path.is_symlink():
            raise MergeRefused(f"{shard.name}: {path.name} is a symbolic link, not a result grade-batch wrote "
                               "(a link is never followed); grade that shard again into a fresh folder")
        if found is None and path.exists():
            raise MergeRefused(f"{shard.name}: {path.name} is not a result grade-batch wrote ({_unreadable(path)}); "
                               "grade that shard again into a fresh folder")
        if found is None or found[1]["scalelabs"].get("assignment") != assignment.id \
                or found[1]["scalelabs"].get("student") != student:
            missing.append(student)
            continue
        text, data, scores, shard.files[student] = found
        shard.results[student] = (text, data)
        shard.scores[student] = scores
    if missing:
        raise MergeRefused(f"{shard.name} is not finished: {len(missing)} of its {len(shard.students)} students have "
                           f"no result ({_some(missing)}); run that shard's grade-batch again (it resumes)")
    return shard


def _unreadable(path: Path) -> str:
    """What is wrong with a results file read_result refused, in a few words (the refusal's path only)."""
    try:
        data = json.loads(read_regular(path)[0])
        if not isinstance(data, dict) or not isinstance(data.get("scalelabs"), dict):
            return "no scalelabs record"
        record_item_scores(data)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        return " ".join(str(exc).split())[:200] or type(exc).__name__
    return "it cannot be read"


def check_shards(shards: list[ShardFolder]) -> None:
    """The refusals between shards (module docstring); MergeRefused names the first found."""
    first = shards[0]
    for shard in shards[1:]:
        if shard.n != first.n:
            raise MergeRefused(f"{shard.name} and {first.name} split the class differently: merge the shards of "
                               "one split (the same N)")
        if shard.digest != first.digest:
            raise MergeRefused(f"{shard.name} and {first.name} were cut from different class lists (students were "
                               "added or removed between their runs): grade every shard of the current class again")
    by_k: dict[int, ShardFolder] = {}
    for shard in shards:
        if shard.k in by_k:
            raise MergeRefused(f"shard {shard.k} of {shard.n} is given twice: {by_k[shard.k].folder} and {shard.folder}")
        by_k[shard.k] = shard
    absent = [k for k in range(first.n) if k not in by_k]
    if absent:
        raise MergeRefused(f"shard{'s' if len(absent) > 1 else ''} {_some([str(k) for k in absent])} of {first.n} "
                           f"{'are' if len(absent) > 1 else 'is'} missing: pass every shard's folder (0 .. {first.n - 1})")
    owner: dict[str, ShardFolder] = {}
    for shard in shards:
        for student in shard.students:
            if student in owner:
                raise MergeRefused(f"{student} is in two shards: {owner[student].name} and {shard.name}")
            owner[student] = shard
    reference: tuple[ShardFolder, dict] | None = None   # the first result: every other is graded as it was
    for shard in shards:
        for student, (_, data) in sorted(shard.results.items()):
            if reference is None:
                reference = (shard, data["scalelabs"])
            elif why := _other_grader(reference[1], data["scalelabs"], f"in shard {reference[0].k}",
                                      f"in shard {shard.k}"):
                raise MergeRefused(f"{shard.name} was graded by another grader than {reference[0].name} ({student}: "
                                   f"{why}): grade every shard with the same scalelabs, course files, settings, course "
                                   "secret and image, then merge")


def _other_grader(ours: dict, theirs: dict, there: str, here: str) -> str:
    """How the grader or course secret of a result (`theirs`, graded `here`) differs from `ours` (`there`), or ''."""
    if ours.get("course_secret", "") != theirs.get("course_secret", ""):
        return (f"course secret {ours.get('course_secret') or 'none'} {there}, {theirs.get('course_secret') or 'none'} "
                f"{here}: the hidden inputs differ")
    grader = theirs.get("grader") if isinstance(theirs.get("grader"), dict) else {}
    changes = grader_changes(ours.get("grader"), grader)
    if not changes:
        return ""
    machine = {LABELS[part]: machine_differences({part: machine_versions(ours.get("grader"))[part]}, grader,
                                                 there, here)
               for part in MACHINE}
    named = [line for change in changes for line in (machine.get(change) or [change])]
    return ", ".join(named[:4]) + (f" and {len(named) - 4} more" if len(named) > 4 else "")


def _check_out(out_dir: Path, assignment: Assignment, shards: list[ShardFolder],
               reference: dict | None) -> tuple[dict[str, str], dict[str, dict]]:
    """Refuse an output folder that is one of the shards, or holds what the merge would mix with; else
    (the text of each shard student's result already there, the results of students in no shard)."""
    for shard in shards:
        if shard.folder.resolve() == out_dir.resolve():
            raise MergeRefused(f"--out {out_dir} is {shard.name}: merge into a folder of its own")
    texts = {student: text for shard in shards for student, (text, _) in shard.results.items()}
    there: dict[str, str] = {}
    others: dict[str, dict] = {}
    for path in sorted((out_dir / "results").glob("*.json")):
        if path.stem in texts:       # replaced by the shard's, unless it is already the same text
            try:
                there[path.stem] = text = path.read_text(encoding="utf-8")
                data = json.loads(text) if text != texts[path.stem] else None
            except (OSError, ValueError):
                continue
            meta = data.get("scalelabs") if isinstance(data, dict) else None
            if isinstance(meta, dict) and meta.get("assignment") != assignment.id:
                raise MergeRefused(f"{out_dir} holds results of {meta.get('assignment')} ({path.name}): merge "
                                   f"{assignment.id} into a folder of its own")
            continue
        data = load_result(path)
        if data is None:
            continue
        if data["scalelabs"].get("assignment") != assignment.id:
            raise MergeRefused(f"{out_dir} holds results of {data['scalelabs'].get('assignment')} ({path.name}): merge "
                               f"{assignment.id} into a folder of its own")
        why = _other_grader(reference, data["scalelabs"], "in the shards", f"in {path.name}") if reference else ""
        if why:
            raise MergeRefused(f"{out_dir} holds {path.stem}'s result, in no shard, graded by another grader ({why}): "
                               "merge into another --out, or `scalelabs forget` that student there")
        others[path.stem] = data
    return there, others


def _page(shard: ShardFolder, student: str, data: dict, title: str) -> tuple[str, os.stat_result | None]:
    """The student's feedback page: the shard's (and its file's status) when it is its result's (the
    recorded hash), else rendered (and None)."""
    try:
        page, status = read_regular(shard.folder / "feedback" / f"{student}.html")   # a link is never followed
        if hashlib.sha256(page.encode()).hexdigest() == data["scalelabs"].get("feedback"):
            return page, status
    except (OSError, ValueError):
        pass
    return render_feedback(title, student, data, data["scalelabs"].get("view", "after")), None


def _place(dest: Path, text: str, source: Path, read: os.stat_result | None) -> None:
    """`dest` made to hold `text`, read from the shard's file `source` (its status `read`, None when the
    text is not the file's): a hard link to that file when it is still the very file read (same inode,
    size and modification time: grade-batch never writes a file in place, it replaces it) and the
    output is on its filesystem, else written (write_atomic). A link is made under a temporary name and
    checked before it replaces `dest`, so a shard file swapped for a link or another file since it was
    read is never what the merge leaves."""
    if read is not None:
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.link")
        try:
            os.link(source, tmp, follow_symlinks=False)
            now = os.lstat(tmp)
            if stat.S_ISREG(now.st_mode) and (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns) == \
                    (read.st_dev, read.st_ino, read.st_size, read.st_mtime_ns):
                os.replace(tmp, dest)
                return
            os.unlink(tmp)
        except OSError:          # another filesystem, a file the merge may not link (protected_hardlinks)
            with suppress(OSError):
                os.unlink(tmp)
    write_atomic(dest, text)


def lateness_now(assignment: Assignment, shards: list[ShardFolder], deadlines: Deadlines) -> dict[str, tuple[str, dict]]:
    """student -> (why, their result with its lateness recorded again) for each result whose lateness
    under the course's deadlines now is not the one its shard recorded (module docstring); MergeRefused
    where the result cannot say it."""
    changed = {}
    for shard in shards:
        for student, (_, data) in sorted(shard.results.items()):
            if not deadlines.where and data["scalelabs"].get("late") is not None:
                raise MergeRefused(f"{shard.name}: {student}'s result records lateness under a course's [deadlines], "
                                   "and no course (scalelabs.toml) is found here: run merge in the course folder, or "
                                   "pass --course DIR, so that its due dates and extensions now apply")
            try:
                late = recorded_lateness_now(deadlines, assignment.id, student, data)
            except ValueError as exc:
                raise MergeRefused(f"{shard.name}: {exc}: only the class folder has their submission time; run that "
                                   "shard's grade-batch again in the course (it records their lateness without "
                                   "regrading), or grade-batch the class") from None
            if why := why_reassess(data, late):
                changed[student] = (why, with_lateness({**data, "scalelabs": dict(data["scalelabs"])}, late))
    return changed


def merge(assignment: Assignment, folders: Sequence[Path], out_dir: Path, db_url: str | None = None,
          deadlines: Deadlines | None = None) -> MergeSummary:
    """Merge the shards in `folders` into `out_dir` (module docstring); MergeRefused, OutputFolderError
    before anything is written; GradebookUnavailable (grades.csv from the results alone) at the end.
    `deadlines`: the course's (default: those of the course found here, as grade-batch reads them)."""
    if not folders:
        raise MergeRefused("no shard folders given: pass the --out folder of every shard run")
    shards = sorted((read_shard(Path(f), assignment) for f in folders), key=lambda s: (s.k, str(s.folder)))
    check_shards(shards)
    reassessed = lateness_now(assignment, shards, deadlines if deadlines is not None
                              else course_deadlines(labs=known_labs(assignment.id)))
    reference = next((data["scalelabs"] for shard in shards for _, data in shard.results.values()), None)
    out_dir = Path(out_dir)
    try:
        check_output(out_dir)
    except OutputFolderError as exc:
        raise MergeRefused(str(exc)) from None
    there, others = _check_out(out_dir, assignment, shards, reference)
    summary = MergeSummary(out_dir, shards=len(shards), reassessed={s: why for s, (why, _) in reassessed.items()})
    summary.db_url = db_url or sqlite_url(out_dir / "gradebook.db")
    with GradebookWriter(summary.db_url, assignment) as gradebook:   # nbgrader loads while the files are copied
        for shard in shards:
            for student, (text, data) in sorted(shard.results.items()):
                if student in reassessed:   # the result with its lateness now, and its page, as grade-batch writes them
                    data = reassessed[student][1]
                    (page, text), page_read, read = record_texts(assignment.title, student, data), None, None
                    shard.results[student] = (text, data)
                else:
                    (page, page_read), read = _page(shard, student, data, assignment.title), shard.files[student]
                page_path = out_dir / "feedback" / f"{student}.html"
                try:
                    page_same = page_path.read_text(encoding="utf-8") == page
                except OSError:
                    page_same = False
                if not page_same:   # the page first, then the result that records it (as grade-batch)
                    _place(page_path, page, shard.folder / "feedback" / f"{student}.html", page_read)
                    summary.pages += 1
                if there.get(student) == text:
                    summary.unchanged.append(student)
                else:
                    _place(out_dir / "results" / f"{student}.json", text, shard.folder / "results" / f"{student}.json",
                           read)
                    summary.written.append(student)
        merged = {s: data for shard in shards for s, (_, data) in shard.results.items()}
        # the lab's whole record, in the order grade-batch reads it from results/ (all_results)
        results = dict(sorted({**others, **merged}.items(), key=lambda kv: f"{kv[0]}.json"))
        late = {s: Lateness.from_json(data["scalelabs"].get("late")) for s, data in merged.items()}
        summary.attention = class_attention(results, merged, late)
        scores = {s: scores for shard in shards for s, scores in shard.scores.items()}
        summary.csv_path, summary.record = write_class_record(assignment, out_dir, results, gradebook, summary.db_url,
                                                              summary.attention, set(merged), scores=scores)
    summary.written.sort()
    summary.unchanged.sort()
    return summary
