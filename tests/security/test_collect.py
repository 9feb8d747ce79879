"""The way from nbgrader's exchange to submitted/ under attack (issue 26): students hand in with
`nbgrader submit` as themselves, each a user of this machine, into the exchange's shared inbound
folder, beside honest classmates; staff run `nbgrader collect`.

The attacks, each run first against nbgrader's own collect (the control: each lands) and then against
the course's (autograder/doors/collect.py, SafeCollect):
- bin files a stub under daemon's id, after daemon's hand-in: nbgrader collects it as daemon's (0 points);
- sys hands in a one-import module beside a link to the instructor's reference/, which sys cannot
  read: nbgrader follows the link with staff's rights and the module scores as the reference;
- games hands in a dangling link: nbgrader's collect stops there, and so do the students after it;
- a hand-in named with no timestamp (nbgrader stops on it too);
- man hands in a folder dated an hour before it was made (a late hand-in dated before its deadline).
With SafeCollect each is refused or left out with one line, every honest student is collected, and
daemon's, lp's and mail's scores are those of what they handed in.

Students are accounts this machine already has (daemon, bin, ...), so each hand-in is owned by the
user who made it; filing as another user needs root, so the module skips without it (fails under CI=true).
"""
from __future__ import annotations

import datetime
import json
import os
import pwd
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

import door_attacks as attacks
from door_attacks import BIN

from autograder.doors.collect import TIMESTAMP_FORMAT
from autograder.engine.grade import grade_submission
from repo_copy import REPO

VICTIM, FORGER, LINKER, DANGLER, BACKDATER = "daemon", "bin", "sys", "games", "man"
HONEST = ("lp", "mail")
STUDENTS = (VICTIM, FORGER, LINKER, DANGLER, BACKDATER, *HONEST)
STOCK = "--ExchangeFactory.collect=nbgrader.exchange.default.ExchangeCollect"


def _skip_unless_root():
    missing = [s for s in STUDENTS if not _uid(s)]
    if os.geteuid() == 0 and not missing:
        return
    why = ("handing in as other users needs root" if os.geteuid() != 0
           else f"this machine has no accounts {missing}")
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"CI=true and the collect attacks cannot run: {why}", pytrace=False)
    pytest.skip(why)


def _uid(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None


def _give(path: Path, student: str) -> None:
    """path and everything in it owned by the student, links themselves included."""
    entry = pwd.getpwnam(student)
    for p in [path, *path.rglob("*")]:
        os.lchown(p, entry.pw_uid, entry.pw_gid)


def _submit(home: Path, student: str, as_student: str, inbound: Path, course_id: str, assignment) -> Path:
    """`nbgrader submit` of home/<assignment>/ under the id `student`, the hand-in then owned by
    `as_student`, as that user's own `nbgrader submit` leaves it (this machine's Python is not
    readable by other users, so the submit runs as root and the hand-in is given to the student).
    Returns the hand-in's folder in the inbound folder."""
    before = set(inbound.iterdir()) if inbound.is_dir() else set()
    env = {**attacks.run.__globals__["env"](), "HOME": str(home), "JUPYTER_DATA_DIR": str(home / ".jupyter-data")}
    done = subprocess.run([BIN / "nbgrader", "submit", assignment.id, "--course", course_id, "--student", student,
                           f"--Exchange.root={inbound.parents[1]}"], cwd=home, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (hand_in,) = set(inbound.iterdir()) - before
    _give(hand_in, as_student)
    return hand_in


def _collect(course: Path, exchange: Path, *extra: str) -> subprocess.CompletedProcess:
    shutil.rmtree(course / "submitted", ignore_errors=True)
    return subprocess.run([BIN / "nbgrader", "collect", attacks.toy.TOY_ID, f"--Exchange.root={exchange}", *extra],
                          cwd=course, env=attacks.run.__globals__["env"](), capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def exchange_class(tmp_path_factory):
    """The toy course released to an exchange and every student's hand-in in its inbound folder;
    then nbgrader's stock collect and the course's, each into a fresh submitted/."""
    _skip_unless_root()
    return _hand_in_and_collect(tmp_path_factory.mktemp("collect"))


def _hand_in_and_collect(work: Path) -> dict:
    course = work / "toy-course"
    assignment, _ = attacks.make_course(course, {})
    private = course / "private"                  # the instructor's reference, out of the students' reach
    shutil.copytree(REPO / "reference", private / "ref", ignore=shutil.ignore_patterns("__pycache__"))
    os.chmod(private, 0o700)
    exchange = work / "exchange"
    exchange.mkdir(mode=0o777)
    os.chmod(exchange, 0o777)
    attacks.run([str(BIN / "nbgrader"), "release_assignment", assignment.id, f"--Exchange.root={exchange}"], course)
    course_id = course.name
    honest = attacks.honest_class()           # ada: the reference and the right answer, bob: buggy
    modules = {VICTIM: honest["ada"], LINKER: (None, {}), FORGER: honest["bob"], DANGLER: honest["bob"],
               BACKDATER: honest["ada"], HONEST[0]: honest["ada"], HONEST[1]: honest["bob"]}
    homes = {}
    for student, (module, answers) in modules.items():
        home = work / "homes" / student
        (home / "samples" / student).mkdir(parents=True)
        if module is not None:
            (home / "samples" / student / "collectives.py").write_text(module)
        (home / "samples" / student / "answers.json").write_text(json.dumps(answers))
        attacks.samples.materialise(assignment.id, student, home / assignment.id, assignment=assignment,
                                    release_dir=course / "release" / assignment.id, samples_dir=home / "samples")
        shutil.rmtree(home / "samples")
        homes[student] = home
    (homes[LINKER] / assignment.id / "collectives.py").write_text("from ref.collectives import *  # noqa\n")
    pristine = {s: grade_submission(assignment, homes[s] / assignment.id, s).item_scores()
                for s in (VICTIM, *HONEST)}
    inbound = exchange / course_id / "inbound"
    hand_ins = {s: _submit(homes[s], s, s, inbound, course_id, assignment) for s in STUDENTS}
    # links added to their own hand-ins (nbgrader submit would follow them): sys's to the reference it
    # cannot read, beside its one-import module; games's to nothing
    os.symlink(private / "ref", hand_ins[LINKER] / "ref")
    os.symlink(work / "nowhere", hand_ins[DANGLER] / "notes.txt")
    _give(hand_ins[LINKER], LINKER)
    _give(hand_ins[DANGLER], DANGLER)
    # bin files its stub under daemon's id, after daemon
    stub = homes[FORGER] / "forged"
    shutil.copytree(course / "release" / assignment.id, stub / assignment.id)
    _submit(stub, VICTIM, FORGER, inbound, course_id, assignment)
    # a name nbgrader cannot parse, and man's hand-in named an hour before it was made
    junk = inbound / f"{HONEST[0]}+{assignment.id}+not-a-time+x"
    junk.mkdir()
    _give(junk, HONEST[0])
    ours = next(inbound.glob(f"{BACKDATER}+*"))
    hour_ago = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)).strftime(TIMESTAMP_FORMAT)
    claimed = inbound / f"{BACKDATER}+{assignment.id}+{hour_ago}+backdated"
    ours.rename(claimed)
    (claimed / "timestamp.txt").write_text(hour_ago)
    # the control: nbgrader's own collect, one student at a time (it stops at the first bad hand-in)
    stock = {s: _collect(course, exchange, STOCK, f"--student={s}") for s in (VICTIM, LINKER, DANGLER, HONEST[0])}
    stock["scores"] = {s: grade_submission(assignment, course / "submitted" / s / assignment.id, s).score
                       for s in (VICTIM, LINKER) if _collect(course, exchange, STOCK, f"--student={s}").returncode == 0}
    safe = _collect(course, exchange)
    folders = {s: course / "submitted" / s / assignment.id for s in STUDENTS}
    graded = {s: grade_submission(assignment, f, s) for s, f in folders.items() if f.is_dir()}
    return dict(assignment=assignment, course=course, homes=homes, pristine=pristine, stock=stock, safe=safe,
                folders=folders, graded=graded, hour_ago=hour_ago)


def test_nbgrader_collect_alone_falls_to_every_attack(exchange_class):
    """The control, nbgrader's own collect of the same inbound folder: daemon gets bin's stub, sys
    the reference, and the dangling link and the bad name each stop the collect."""
    c = exchange_class
    total = c["assignment"].total_points
    assert c["stock"]["scores"][VICTIM] == 0 < sum(s for s, _ in c["pristine"][VICTIM].values())
    assert c["stock"]["scores"][LINKER] >= total / 2, c["stock"]["scores"]
    for student in (DANGLER, HONEST[0]):
        assert "Traceback" in c["stock"][student].stderr, (student, c["stock"][student].stderr[-1500:])


def test_a_hand_in_under_a_classmates_id_is_refused_and_the_classmate_keeps_their_score(exchange_class):
    c = exchange_class
    said = c["safe"].stderr
    assert c["safe"].returncode == 0, said[-3000:]
    assert f"it claims the student {VICTIM} but is owned by {FORGER}" in said, said[-3000:]
    assert c["graded"][VICTIM].item_scores() == c["pristine"][VICTIM]
    assert sum(s for s, _ in c["pristine"][VICTIM].values()) == c["assignment"].total_points
    assert (c["folders"][VICTIM] / "collectives.py").read_bytes() == \
        (c["homes"][VICTIM] / c["assignment"].id / "collectives.py").read_bytes()


def test_a_link_to_the_reference_is_never_followed(exchange_class):
    c = exchange_class
    assert not (c["folders"][LINKER] / "ref").exists(), "collect followed sys's link into the reference"
    assert f"ref is a symbolic link (links are not followed), not collected" in c["safe"].stderr
    linker = c["graded"][LINKER]
    assert sum(s for s, _ in linker.item_scores().values()) == 0, linker.item_scores()


def test_a_dangling_link_or_a_bad_name_skips_only_what_is_bad(exchange_class):
    c = exchange_class
    said = c["safe"].stderr
    assert f"{HONEST[0]}+{c['assignment'].id}+not-a-time+x: its timestamp" in said, said[-3000:]
    assert "notes.txt is a symbolic link" in said
    assert all(f.is_dir() for f in c["folders"].values()), [s for s, f in c["folders"].items() if not f.is_dir()]
    assert (c["folders"][DANGLER] / "collectives.py").is_file()


def test_honest_classmates_are_collected_as_they_handed_in(exchange_class):
    c = exchange_class
    for student in HONEST:
        assert c["graded"][student].item_scores() == c["pristine"][student], student
        mine = c["homes"][student] / c["assignment"].id
        theirs = c["folders"][student]
        assert {p.name for p in mine.iterdir()} <= {p.name for p in theirs.iterdir()}, student


def test_a_hand_in_is_dated_by_its_last_change_when_it_claims_an_earlier_time(exchange_class):
    c = exchange_class
    assert f"{BACKDATER}+{c['assignment'].id}+{c['hour_ago']}+backdated claims" in c["safe"].stderr
    written = (c["folders"][BACKDATER] / "timestamp.txt").read_text()
    dated = datetime.datetime.strptime(written, TIMESTAMP_FORMAT)
    assert (datetime.datetime.utcnow() - dated).total_seconds() < 1800, written
    honest = (c["folders"][HONEST[1]] / "timestamp.txt").read_text()
    own = next(p for p in (c["course"].parent / "exchange").rglob(f"{HONEST[1]}+*")).name.split("+")[2]
    assert honest == datetime.datetime.strptime(own, TIMESTAMP_FORMAT).strftime(TIMESTAMP_FORMAT)


# --- SafeCollect's choices, run directly (no other users needed: each hand-in is the collector's own) ---

def _safe_collect(tmp_path: Path, **options):
    """(SafeCollect of course `c`, assignment `lab`, its inbound folder, the course folder)."""
    from nbgrader.coursedir import CourseDirectory

    from autograder.doors.collect import SafeCollect

    course, inbound = tmp_path / "course", tmp_path / "exchange" / "c" / "inbound"
    course.mkdir()
    inbound.mkdir(parents=True)
    coursedir = CourseDirectory(root=str(course), course_id="c", assignment_id="lab")
    collect = SafeCollect(coursedir=coursedir, root=str(tmp_path / "exchange"), **options)
    collect._duedate = lambda: None     # no gradebook: a test sets the due date itself
    return collect, inbound, course


def _hand_in(inbound: Path, student: str, when: datetime.datetime, module: str) -> Path:
    folder = inbound / f"{student}+lab+{when.strftime(TIMESTAMP_FORMAT)}+{len(list(inbound.iterdir()))}"
    folder.mkdir()
    (folder / "collectives.py").write_text(module)
    return folder


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)


def test_before_the_due_date_a_hand_in_made_exactly_at_it_is_collected(tmp_path):
    """`nbgrader collect --before-duedate`: the latest hand-in at or before the due date. One made
    exactly at the due date is on time (nbgrader's rule, `<=`), not passed over for a later one."""
    due = _now() - datetime.timedelta(seconds=120)     # within ARRIVAL_SLACK_S: dated by its name
    collect, inbound, course = _safe_collect(tmp_path, before_duedate=True)
    _hand_in(inbound, "ada", due, "on time")
    _hand_in(inbound, "ada", due + datetime.timedelta(seconds=60), "after the due date")
    collect._duedate = lambda: due
    collect.init_src()
    collect.copy_files()
    submitted = course / "submitted" / "ada" / "lab"
    assert (submitted / "collectives.py").read_text() == "on time"
    assert (submitted / "timestamp.txt").read_text() == due.strftime(TIMESTAMP_FORMAT)


def test_a_hand_in_that_cannot_be_copied_leaves_the_submission_collected_before(tmp_path):
    """`nbgrader collect --update` where a student's new hand-in fails to copy (here: over
    CourseDirectory.max_dir_size): the submission already in submitted/ stays as it was, the failure
    is named, and a classmate's hand-in is collected."""
    collect, inbound, course = _safe_collect(tmp_path, update=True)
    before = course / "submitted" / "ada" / "lab"
    before.mkdir(parents=True)
    (before / "collectives.py").write_text("collected before")
    (before / "timestamp.txt").write_text((_now() - datetime.timedelta(hours=1)).strftime(TIMESTAMP_FORMAT))
    _hand_in(inbound, "ada", _now() - datetime.timedelta(seconds=60), "x" * 5000)
    _hand_in(inbound, "bob", _now() - datetime.timedelta(seconds=60), "bob's")
    collect.coursedir.max_dir_size = 1        # KB: ada's 5,000 bytes are over it, bob's 5 are not
    collect.init_src()
    collect.copy_files()
    assert collect.failed == ["ada"]
    assert sorted(p.name for p in before.iterdir()) == ["collectives.py", "timestamp.txt"]
    assert (before / "collectives.py").read_text() == "collected before"
    assert (course / "submitted" / "bob" / "lab" / "collectives.py").read_text() == "bob's"


def test_before_the_due_date_replaces_a_late_hand_in_collected_earlier(tmp_path):
    """`nbgrader collect --before-duedate` after a plain collect took ada's late hand-in: the on-time
    one replaces it in submitted/ (its time in timestamp.txt), so she is not marked late."""
    due = _now() - datetime.timedelta(seconds=120)     # within ARRIVAL_SLACK_S: dated by its name
    collect, inbound, course = _safe_collect(tmp_path, before_duedate=True)
    submitted = course / "submitted" / "ada" / "lab"
    submitted.mkdir(parents=True)
    (submitted / "collectives.py").write_text("after the due date")
    late = due + datetime.timedelta(seconds=60)
    (submitted / "timestamp.txt").write_text(late.strftime(TIMESTAMP_FORMAT))
    _hand_in(inbound, "ada", due - datetime.timedelta(seconds=30), "on time")
    _hand_in(inbound, "ada", late, "after the due date")
    collect._duedate = lambda: due
    collect.init_src()
    collect.copy_files()
    assert (submitted / "collectives.py").read_text() == "on time"
    assert (submitted / "timestamp.txt").read_text() == (due - datetime.timedelta(seconds=30)).strftime(TIMESTAMP_FORMAT)
