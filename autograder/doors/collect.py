"""nbgrader's collect, with the exchange's inbound folder read as student data (issues 26 and 37).

`nbgrader collect` copies each student's latest hand-in from `<exchange>/<course>/inbound/` into
`submitted/<student>/<assignment>/`, running as course staff. Every student can write into that
inbound folder, and nbgrader's own collect (0.9.6) trusts it: a hand-in filed under a classmate's id
with a later timestamp replaces the classmate's (the owner check only warns), a symbolic link in a
hand-in is followed and what it points at copied with staff's rights (the instructor's reference/),
and one dangling link stops the whole collect, leaving every later student uncollected.

`SafeCollect` is nbgrader's own collect plugin (nbgrader_config.py: `ExchangeFactory.collect`), so
`nbgrader collect` and formgrader's collect button both use it:
- a hand-in is a real folder (an entry that is a link, a file or anything else is refused) whose
  name claims a safe student id (autograder/classroom/identity.py) and a timestamp, owned by the
  student it claims (the owner's user name is the id, as on a hub where each student is a user) or
  by the user collecting, who can write submitted/ directly anyway. Any other is refused, one line
  each, and never chosen: the claimed student's own latest hand-in is collected;
- only the hand-in's regular files owned by its owner are copied, never a link, FIFO or device, and
  what is opened is checked again (autograder/engine/filetree.py), so a folder swapped for a link
  mid-copy reads nothing of anyone else's; nbgrader's ignore/include globs and size limits apply;
- a hand-in's time is the later of what its name claims and the last change of what is collected from
  it (a ctime, which no user can set back): a claim never dates a hand-in before its own files. The
  claim is read as nbgrader wrote it for the course's `Exchange.timezone` (JST in Asia/Tokyo, PDT/PST
  in America/Los_Angeles: autograder.classroom.submitted_at.nbgrader_time); a zone abbreviation the
  course's zone does not write (IST in a Tokyo course) names no instant, so that hand-in is dated by
  its files alone with one line for a person to check, never shifted by a guessed offset. The time is
  written to submitted/'s timestamp.txt in UTC, whatever the hand-in's own said;
- a hand-in is read bounded (autograder/engine/filetree.py: depth, entry count, sizes; nothing
  recursive), so no folder nesting, count or name stops the collect; what is left out is named in a
  line. A hand-in of a student's own that still cannot be read (an unreadable file, anything
  unforeseen) skips that student, one line naming them and why;
- each student is collected alone: one whose copy fails keeps the submission already in submitted/
  (the copy is made beside it and swapped in) and every other student is collected.
Set `ExchangeCollect.check_owner = False` only where every hand-in arrives through a platform that
authenticates students (ngshare, nbexchange): then the owner is not checked and any student can file
under any id. `nbgrader collect` exits 0 when some hand-ins were refused; its log names each.
"""
from __future__ import annotations

import datetime
import glob
import os
import pwd
import shutil
import stat
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect, groupby
from nbgrader.utils import check_mode, ignore_patterns

from autograder.classroom.identity import id_problem
from autograder.classroom.submitted_at import ZoneDisagrees, nbgrader_time
from autograder.engine.filetree import read_regular, walk_submission

# A hand-in changed this much later than its claimed time was changed after it was handed in: said in a line
# (it is dated by that change either way; nbgrader's own copy into inbound takes well under a second).
CHANGED_AFTER_S = 300
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"
SHOWN_LINES = 5     # what is left out of one hand-in, named one by one; more are counted


def shown(name: str) -> str:
    """A file name as one printable line: bytes that are not UTF-8 and control characters escaped."""
    text = os.fsencode(name).decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def last_change(folder: Path, owner: int | None = None) -> float:
    """The latest ctime (seconds since the epoch) of the folder, of every file collect would copy from it
    (walk_submission: bounded, links never followed, `owner`'s entries only) and of the folders holding them."""
    folder = Path(folder)
    latest = os.lstat(folder).st_ctime
    paths = set()
    for f in walk_submission(folder, hidden=True, owner=owner).files:
        parts = f.rel.split("/")
        paths.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
    for rel in paths:
        try:
            latest = max(latest, os.lstat(folder / rel).st_ctime)
        except OSError:     # gone since the walk: what is copied is dated again after the copy
            continue
    return latest


def _utc(seconds: float) -> datetime.datetime:
    """A ctime as nbgrader keeps times: naive UTC."""
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(tzinfo=None)


class SafeCollect(ExchangeCollect):
    """nbgrader's collect, refusing what a student could forge (module docstring)."""

    def refuse(self, name: str, why: str) -> None:
        self.refused.append(name)
        self.log.error("refused %s: %s", shown(name), why)

    def owner_problem(self, student: str, uid: int) -> str | None:
        """Why a hand-in owned by uid cannot be `student`'s, or None."""
        if uid == os.geteuid() or not self.check_owner:
            return None
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:
            name = f"uid {uid}"
        return None if name == student else f"it claims the student {student} but is owned by {name}"

    def claimed_time(self, rest: str) -> datetime.datetime:
        """The time a hand-in's name claims, from what follows `<student>+<assignment>+`: `<timestamp>+<random>`
        (or nbgrader's `<timestamp>` alone, without add_random_string; a timestamp may hold a `+`: `... +04`),
        read in the course's Exchange.timezone (naive UTC). ValueError when it is no time; ZoneDisagrees
        when its zone's abbreviation is not the course zone's."""
        candidates = [rest.rsplit("+", 1)[0], rest] if "+" in rest else [rest]
        problems = []
        for stamp in candidates:
            try:
                moment = nbgrader_time(stamp, self.timezone)
            except ValueError as exc:
                problems.append(exc)
                continue
            return moment.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        raise next((p for p in problems if isinstance(p, ZoneDisagrees)), problems[0])

    def hand_in(self, path: str) -> dict | None:
        """The record of one inbound entry (student, filename, timestamp, uid), or None when refused. A
        record with `unreadable` set is a hand-in of the student's own that could not be read."""
        name = os.path.basename(path)
        at = name.rfind(f"+{self.coursedir.assignment_id}+")
        if at <= 0:
            return self.refuse(name, "not a hand-in's name (<student>+<assignment>+<timestamp>+<random>)")
        student, rest = name[:at], name[at + len(self.coursedir.assignment_id) + 2:]
        problem = id_problem(student)
        if problem:
            return self.refuse(name, problem)
        doubt = ""
        try:
            claimed = self.claimed_time(rest)
        except ZoneDisagrees as exc:
            claimed, doubt = None, str(exc)
        except (ValueError, OverflowError) as exc:
            return self.refuse(name, f"its timestamp cannot be read ({exc})")
        try:
            info = os.lstat(path)
        except OSError as exc:
            return self.refuse(name, f"its folder cannot be read ({exc.strerror})")
        if not stat.S_ISDIR(info.st_mode):
            return self.refuse(name, "not a folder (a link or a file): links are never followed")
        problem = self.owner_problem(student, info.st_uid)
        if problem:
            return self.refuse(name, problem)
        record = {"username": student, "filename": name, "uid": info.st_uid, "claimed": claimed, "doubt": doubt}
        try:
            changed = _utc(last_change(Path(path), info.st_uid))
        except Exception as exc:  # noqa: BLE001  (whatever a hand-in holds, it stops only its student)
            return {**record, "timestamp": claimed or datetime.datetime.min, "unreadable": f"{type(exc).__name__}: {exc}"}
        return {**record, "changed": changed, "timestamp": max(claimed, changed) if claimed else changed}

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail("Course not found: {}".format(self.inbound_path))
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail("You don't have read permissions for the directory: {}".format(self.inbound_path))
        self.refused, self.failed, self.doubted = [], [], []
        student_id = self.coursedir.student_id or "*"    # a glob, as nbgrader reads it (default "*")
        pattern = os.path.join(glob.escape(self.inbound_path), f"{student_id}+{glob.escape(self.coursedir.assignment_id)}+*")
        records = []
        for path in sorted(glob.glob(pattern)):
            try:
                record = self.hand_in(path)
            except Exception as exc:  # noqa: BLE001  (one hand-in never stops the class)
                record = self.refuse(os.path.basename(path), f"it cannot be read ({type(exc).__name__}: {exc})")
            if record is not None:
                records.append(record)
        self.duedate = self._duedate()
        self.src_records = []
        for student, versions in groupby(records, lambda r: r["username"]).items():   # each student's latest
            unreadable = [r for r in versions if "unreadable" in r]
            if unreadable:
                self.failed.append(student)
                self.log.error("%s not collected: its hand-in %s cannot be read (%s); what submitted/ holds for them "
                               "stays, and the rest of the class is collected", student, shown(unreadable[0]["filename"]),
                               shown(unreadable[0]["unreadable"]))
                continue
            versions = self._sort_by_timestamp(versions)
            if self.duedate is not None and self.before_duedate:
                versions = [r for r in versions if r["timestamp"] <= self.duedate] or versions
            self.src_records.append(self.dated(versions[0]))

    def dated(self, record: dict) -> dict:
        """The record chosen for its student, its date said in a line where a person should know it."""
        name = shown(record["filename"])
        if record["doubt"]:
            self.doubted.append(record["username"])
            self.log.error("%s: %s; dated by its files' last change, %s UTC: check when %s handed in", name,
                           record["doubt"], record["changed"], record["username"])
        elif (record["changed"] - record["claimed"]).total_seconds() > CHANGED_AFTER_S:
            self.log.warning("%s claims %s but was last changed at %s: it is dated by its last change",
                             name, record["claimed"], record["changed"])
        return record

    def _duedate(self):
        from nbgrader.api import Gradebook, MissingEntry
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                return gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                return None

    def do_copy(self, src, dest, log=None):
        """The hand-in's own regular files (links, FIFOs, devices and files of other users left out, and
        what lies deeper or beyond walk_submission's caps: named in a line each, at most SHOWN_LINES),
        with nbgrader's ignore/include globs and size limits, into dest (made new)."""
        uid = os.lstat(src).st_uid
        tree = walk_submission(Path(src), hidden=True, owner=uid)
        # nbgrader's get_size walks the whole tree recursively (a deep hand-in stops it): the bounded walk's sizes
        if sum(f.size for f in tree.files) > 1000 * self.coursedir.max_dir_size:
            raise RuntimeError(f"larger than CourseDirectory.max_dir_size ({self.coursedir.max_dir_size} KB)")
        ignored = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                  max_file_size=self.coursedir.max_file_size, log=self.log)
        name = shown(os.path.basename(src))
        odd = {f.rel for f in tree.files if shown(f.rel) != f.rel}   # no module's name, and no name for a log line
        tree.skipped += [f"{shown(rel)}: its name is not UTF-8 text (or holds a control character)" for rel in sorted(odd)]
        for line in tree.skipped[:SHOWN_LINES]:
            self.log.warning("%s: %s, not collected", name, shown(line))
        if len(tree.skipped) > SHOWN_LINES:
            self.log.warning("%s: and %d more entries not collected", name, len(tree.skipped) - SHOWN_LINES)
        os.makedirs(dest)
        for f in tree.files:
            if f.rel in odd:
                continue
            parts = f.rel.split("/")
            if any(ignored(os.path.join(src, *parts[:i]), [part]) for i, part in enumerate(parts)):
                continue
            target = Path(dest, *parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(read_regular(f.path, owner=uid))

    def copy_files(self):
        if not self.src_records:
            self.log.warning("No submissions of '%s' for course '%s' to collect",
                             self.coursedir.assignment_id, self.coursedir.course_id)
        copied = 0
        for record in self.src_records:
            try:
                self.collect_one(record)
                copied += 1
            except Exception as exc:  # noqa: BLE001  (one student's hand-in never stops the class)
                self.failed.append(record["username"])
                self.log.error("%s not collected: %s (%s: %s); what submitted/ holds for them stays, and the rest "
                               "of the class is collected", record["username"], shown(record["filename"]),
                               type(exc).__name__, shown(str(exc)))
        if self.refused or self.failed or self.doubted:
            self.log.error("collected %d; refused %d hand-ins, could not read or copy %d students' and dated %d by "
                           "their files alone for a person to check (each named above)", copied, len(self.refused),
                           len(self.failed), len(self.doubted))

    def collect_one(self, record: dict) -> None:
        student, assignment = record["username"], self.coursedir.assignment_id
        src = os.path.join(self.inbound_path, record["filename"])
        dest = Path(self.coursedir.format_path(self.coursedir.submitted_directory, student, assignment))
        if dest.is_dir():
            existing = self.coursedir.get_existing_timestamp(str(dest))
            newer = existing is None or record["timestamp"] > existing
            if not ((self.update and newer) or (self.before_duedate and existing != record["timestamp"])):
                self.log.info("%s: %s %s", "No newer submission to collect" if self.update else
                              "Submission already exists, use --update to update", student, assignment)
                return
        dest.parent.mkdir(parents=True, exist_ok=True)
        staging = dest.with_name(f".{dest.name}.collecting")
        shutil.rmtree(staging, ignore_errors=True)
        try:
            self.do_copy(src, str(staging))
            # what was copied may have changed since the hand-in was dated: never dated before that change
            changed = _utc(last_change(Path(src), record["uid"]))
            if changed > record["timestamp"]:
                self.log.warning("%s changed while it was collected (at %s): it is dated by that change",
                                 shown(record["filename"]), changed)
            # the later of its claim and its files' last change, not a file of its own
            when = max(record["timestamp"], changed)
            (staging / "timestamp.txt").write_text(when.strftime(TIMESTAMP_FORMAT))
            self.log.info("%s submission: %s %s", "Updating" if dest.exists() else "Collecting", student, assignment)
            if dest.exists():
                shutil.rmtree(dest)
            staging.rename(dest)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
