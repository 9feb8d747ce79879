"""nbgrader's collect, with the exchange's inbound folder read as student data (issue 26).

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
- a hand-in's time is what its name claims, unless something in it changed later than that (a
  ctime, which no user can set back) by more than ARRIVAL_SLACK_S: then its last change, with one
  line saying so; either is written to submitted/'s timestamp.txt, whatever the hand-in's own said
  (a late hand-in cannot be dated before its deadline);
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
from nbgrader.utils import check_mode, ignore_patterns, parse_utc

from autograder.classroom.identity import id_problem
from autograder.engine.filetree import read_regular, walk_submission

# A hand-in's copy into inbound takes seconds; a change later than its claimed time by more than
# this is a change made after the hand-in was submitted.
ARRIVAL_SLACK_S = 300
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"


def last_change(folder: Path) -> float:
    """The latest ctime of the folder and every entry in it (links not followed)."""
    latest = os.lstat(folder).st_ctime
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*dirnames, *filenames]:
            try:
                latest = max(latest, os.lstat(os.path.join(dirpath, name)).st_ctime)
            except OSError:
                continue
    return latest


class SafeCollect(ExchangeCollect):
    """nbgrader's collect, refusing what a student could forge (module docstring)."""

    def refuse(self, name: str, why: str) -> None:
        self.refused.append(name)
        self.log.error("refused %s: %s", name, why)

    def owner_problem(self, student: str, uid: int) -> str | None:
        """Why a hand-in owned by uid cannot be `student`'s, or None."""
        if uid == os.geteuid() or not self.check_owner:
            return None
        try:
            name = pwd.getpwuid(uid).pw_name
        except KeyError:
            name = f"uid {uid}"
        return None if name == student else f"it claims the student {student} but is owned by {name}"

    def hand_in(self, path: str) -> dict | None:
        """The record of one inbound entry (student, filename, timestamp, uid), or None when refused."""
        name = os.path.basename(path)
        parts = name.rsplit("+", 3)
        if len(parts) != 4:
            return self.refuse(name, "not a hand-in's name (<student>+<assignment>+<timestamp>+<random>)")
        student = parts[0]
        problem = id_problem(student)
        if problem:
            return self.refuse(name, problem)
        try:
            claimed = parse_utc(parts[2])
            info = os.lstat(path)
        except (ValueError, OverflowError, OSError) as exc:
            return self.refuse(name, f"its timestamp or folder cannot be read ({exc})")
        if not stat.S_ISDIR(info.st_mode):
            return self.refuse(name, "not a folder (a link or a file): links are never followed")
        problem = self.owner_problem(student, info.st_uid)
        if problem:
            return self.refuse(name, problem)
        changed = datetime.datetime.fromtimestamp(last_change(Path(path)), datetime.timezone.utc).replace(tzinfo=None)
        late = (changed - claimed).total_seconds() > ARRIVAL_SLACK_S
        if late:
            self.log.warning("%s claims %s but was last changed at %s: it is dated by its last change",
                             name, claimed, changed)
        return {"username": student, "filename": name, "timestamp": changed if late else claimed,
                "uid": info.st_uid, "redated": late}

    def init_src(self):
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail("Course not found: {}".format(self.inbound_path))
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail("You don't have read permissions for the directory: {}".format(self.inbound_path))
        self.refused, self.failed = [], []
        student_id = self.coursedir.student_id or "*"    # a glob, as nbgrader reads it (default "*")
        pattern = os.path.join(glob.escape(self.inbound_path), f"{student_id}+{glob.escape(self.coursedir.assignment_id)}+*")
        records = [r for r in (self.hand_in(p) for p in sorted(glob.glob(pattern))) if r is not None]
        self.duedate = self._duedate()
        self.src_records = []
        for versions in groupby(records, lambda r: r["username"]).values():   # each student's latest
            versions = self._sort_by_timestamp(versions)
            if self.duedate is not None and self.before_duedate:
                versions = [r for r in versions if r["timestamp"] <= self.duedate] or versions
            self.src_records.append(versions[0])

    def _duedate(self):
        from nbgrader.api import Gradebook, MissingEntry
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
            try:
                return gb.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                return None

    def do_copy(self, src, dest, log=None):
        """The hand-in's own regular files (links, FIFOs, devices and files of other users left out,
        one line each), with nbgrader's ignore/include globs and size limits, into dest (made new)."""
        uid = os.lstat(src).st_uid
        if self.get_size(src) > 1000 * self.coursedir.max_dir_size:
            raise RuntimeError(f"larger than CourseDirectory.max_dir_size ({self.coursedir.max_dir_size} KB)")
        ignored = ignore_patterns(exclude=self.coursedir.ignore, include=self.coursedir.include,
                                  max_file_size=self.coursedir.max_file_size, log=self.log)
        tree = walk_submission(Path(src), hidden=True, owner=uid)
        for line in tree.skipped:
            self.log.warning("%s: %s, not collected", os.path.basename(src), line)
        os.makedirs(dest)
        for f in tree.files:
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
        for record in self.src_records:
            try:
                self.collect_one(record)
            except Exception as exc:  # noqa: BLE001  (one student's hand-in never stops the class)
                self.failed.append(record["username"])
                self.log.error("%s not collected (%s: %s); the rest of the class is collected",
                               record["filename"], type(exc).__name__, exc)
        if self.refused or self.failed:
            self.log.error("collected %d; refused %d hand-ins and could not copy %d (each named above)",
                           len(self.src_records) - len(self.failed), len(self.refused), len(self.failed))

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
            # the time the hand-in was chosen by (its name's, or its last change), not a file of its own
            (staging / "timestamp.txt").write_text(record["timestamp"].strftime(TIMESTAMP_FORMAT))
            self.log.info("%s submission: %s %s", "Updating" if dest.exists() else "Collecting", student, assignment)
            if dest.exists():
                shutil.rmtree(dest)
            staging.rename(dest)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
