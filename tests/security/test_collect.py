"""The way from nbgrader's exchange to submitted/ under attack (issues 26 and 37): students hand in with
`nbgrader submit` as themselves, each a user of this machine, into the exchange's shared inbound
folder, beside honest classmates; staff run `nbgrader collect`. The course sets nbgrader's
`Exchange.timezone` to Asia/Tokyo, so every hand-in's name is written "... JST".

The attacks, each run first against nbgrader's own collect (the control: each lands) and then against
the course's (autograder/doors/collect.py, SafeCollect):
- bin files a stub under daemon's id, after daemon's hand-in: nbgrader collects it as daemon's (0 points);
- sys hands in a one-import module beside a link to the instructor's reference/, which sys cannot
  read: nbgrader follows the link with staff's rights and the module scores as the reference;
- games hands in a dangling link: nbgrader's collect stops there, and so do the students after it;
- a hand-in named with no timestamp (nbgrader stops on it too);
- man hands in a folder dated an hour before it was made (a late hand-in dated before its deadline);
- news hands in its lab beside 1,500 nested folders: the collect ended with a RecursionError before
  any student was copied;
- uucp renames its hand-in to claim 120 s before it was made: within the 300 s the collect allowed,
  it was dated by that claim;
- proxy's hand-in is named in India's time ("... IST", from a machine of its own), which the Tokyo
  course does not write: the collect read the abbreviation as UTC, 5.5 h after the hand-in was made.
With SafeCollect each is refused, left out or dated by its files with one line, every honest student
is collected and dated when they handed in (not 9 h later: JST read as UTC), and daemon's, lp's and
mail's scores are those of what they handed in.

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
DEEP, REDATER, ELSEWHERE = "news", "uucp", "proxy"
HONEST = ("lp", "mail")
STUDENTS = (VICTIM, FORGER, LINKER, DANGLER, BACKDATER, DEEP, REDATER, ELSEWHERE, *HONEST)
STOCK = "--ExchangeFactory.collect=nbgrader.exchange.default.ExchangeCollect"
ZONE = "Asia/Tokyo"         # the course's Exchange.timezone: hand-ins are named "... JST"
NESTED = 1500               # news's folders, one in the other
NBGRADER_STAMP = "%Y-%m-%d %H:%M:%S.%f %Z"    # nbgrader's Exchange.timestamp_format


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
                           f"--Exchange.root={inbound.parents[1]}", f"--Exchange.timezone={ZONE}"], cwd=home, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (hand_in,) = set(inbound.iterdir()) - before
    _give(hand_in, as_student)
    return hand_in


def _collect(course: Path, exchange: Path, *extra: str) -> subprocess.CompletedProcess:
    shutil.rmtree(course / "submitted", ignore_errors=True)
    return subprocess.run([BIN / "nbgrader", "collect", attacks.toy.TOY_ID, f"--Exchange.root={exchange}", *extra],
                          cwd=course, env=attacks.run.__globals__["env"](), capture_output=True, text=True, timeout=600)


def _nest(folder: Path, depth: int, owner: str) -> None:
    """`depth` folders, one in the other, under folder, owned by owner: made through folder descriptors,
    as pathlib's recursive mkdir and rglob stop near Python's recursion limit."""
    entry = pwd.getpwnam(owner)
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            os.chown("d", entry.pw_uid, entry.pw_gid, dir_fd=fd, follow_symlinks=False)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


@pytest.fixture(scope="module")
def exchange_class(tmp_path_factory):
    """The toy course released to an exchange and every student's hand-in in its inbound folder;
    then nbgrader's stock collect and the course's, each into a fresh submitted/."""
    _skip_unless_root()
    work = tmp_path_factory.mktemp("collect")
    yield _hand_in_and_collect(work)
    subprocess.run(["rm", "-rf", str(work / "exchange")], check=False)   # shutil's rmtree recurses: news's folders


def _hand_in_and_collect(work: Path) -> dict:
    course = work / "toy-course"
    assignment, _ = attacks.make_course(course, {})
    with open(course / "nbgrader_config.py", "a") as config:   # the course's zone (on a hub: the global config)
        config.write(f"\nc.Exchange.timezone = {ZONE!r}\n")
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
               BACKDATER: honest["ada"], DEEP: honest["ada"], REDATER: honest["bob"], ELSEWHERE: honest["bob"],
               HONEST[0]: honest["ada"], HONEST[1]: honest["bob"]}
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
    handed_in_from = _utcnow()
    hand_ins = {s: _submit(homes[s], s, s, inbound, course_id, assignment) for s in STUDENTS if s != REDATER}
    # uucp's hand-in, renamed as soon as it is made to claim 120 s before it was begun (in UTC, which every
    # zone reads alike): well within the 300 s the collect allowed a claim before the files' last change
    redater_began = _utcnow()
    hand_ins[REDATER] = _submit(homes[REDATER], REDATER, REDATER, inbound, course_id, assignment)
    redated_to = redater_began - datetime.timedelta(seconds=120)
    hand_ins[REDATER].rename(inbound / f"{REDATER}+{assignment.id}+{redated_to.strftime(TIMESTAMP_FORMAT)}+redated")
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
    # news's 1,500 nested folders; proxy's hand-in named in India's time, as its own machine's nbgrader writes it
    _nest(hand_ins[DEEP], NESTED, DEEP)
    from dateutil.tz import gettz
    india = _utcnow().replace(tzinfo=datetime.timezone.utc).astimezone(gettz("Asia/Kolkata")).strftime(NBGRADER_STAMP)
    hand_ins[ELSEWHERE].rename(inbound / f"{ELSEWHERE}+{assignment.id}+{india}+elsewhere")
    handed_in_by = _utcnow()
    # the control: nbgrader's own collect, one student at a time (it stops at the first bad hand-in)
    stock = {s: _collect(course, exchange, STOCK, f"--student={s}") for s in (VICTIM, LINKER, DANGLER, HONEST[0])}
    stock["scores"] = {s: grade_submission(assignment, course / "submitted" / s / assignment.id, s).score
                       for s in (VICTIM, LINKER) if _collect(course, exchange, STOCK, f"--student={s}").returncode == 0}
    safe = _collect(course, exchange)
    folders = {s: course / "submitted" / s / assignment.id for s in STUDENTS}
    graded = {s: grade_submission(assignment, folders[s], s) for s in (VICTIM, LINKER, *HONEST) if folders[s].is_dir()}
    return dict(assignment=assignment, course=course, homes=homes, pristine=pristine, stock=stock, safe=safe,
                folders=folders, graded=graded, hour_ago=hour_ago, inbound=inbound, india=india,
                handed_in=(handed_in_from, handed_in_by), redater_began=redater_began)


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


def _dated(c, student) -> datetime.datetime:
    return datetime.datetime.strptime((c["folders"][student] / "timestamp.txt").read_text(), TIMESTAMP_FORMAT)


def test_honest_hand_ins_named_in_the_courses_zone_are_dated_when_they_were_handed_in(exchange_class):
    """Exchange.timezone = Asia/Tokyo: nbgrader names each hand-in "... JST". Read as UTC, an on-time
    hand-in was dated 9 h after it was made."""
    c = exchange_class
    began, ended = c["handed_in"]
    for student in HONEST:
        names = [p.name for p in c["inbound"].glob(f"{student}+*") if "not-a-time" not in p.name]
        assert len(names) == 1 and " JST+" in names[0], names
        assert began <= _dated(c, student) <= ended, (student, _dated(c, student), began, ended)


def test_a_claim_never_dates_a_hand_in_before_its_own_files(exchange_class):
    """uucp claims 120 s before it began handing in: within the collect's old 300 s it was dated by
    that claim (a hand-in 120 s late collected as on time). Its files' change time dates it."""
    c = exchange_class
    _, ended = c["handed_in"]
    assert c["redater_began"] <= _dated(c, REDATER) <= ended, (_dated(c, REDATER), c["redater_began"])
    assert (c["folders"][REDATER] / "collectives.py").read_bytes() == \
        (c["homes"][REDATER] / c["assignment"].id / "collectives.py").read_bytes()


def test_a_zone_the_course_does_not_write_is_dated_by_the_files_and_named_for_a_person(exchange_class):
    """proxy's name says IST (India, or Ireland, or Israel): the Tokyo course's zone writes JST, so the
    name gives no instant. Its files date it, and a line says so; nothing is shifted by a guessed offset."""
    c = exchange_class
    began, ended = c["handed_in"]
    assert began <= _dated(c, ELSEWHERE) <= ended, (_dated(c, ELSEWHERE), began, c["india"])
    said = " ".join(c["safe"].stderr.split())
    assert f"is written in IST, but the course's time zone {ZONE} writes JST" in said, said[-3000:]
    assert f"check when {ELSEWHERE} handed in" in said
    assert "dated 1 by their files alone for a person to check" in said


def test_a_hand_in_of_1500_nested_folders_stops_no_one(exchange_class):
    """news's 1,500 folders ended nbgrader collect with a RecursionError before anyone was copied. Its
    lab is collected, the folders below the depth cap are named in one line, and so is everyone else."""
    c = exchange_class
    said = c["safe"].stderr
    assert "RecursionError" not in said and "Traceback" not in said, said[-3000:]
    assert all(f.is_dir() for f in c["folders"].values()), [s for s, f in c["folders"].items() if not f.is_dir()]
    assert (c["folders"][DEEP] / "collectives.py").read_bytes() == \
        (c["homes"][DEEP] / c["assignment"].id / "collectives.py").read_bytes()
    deep = [line for line in said.splitlines() if line.count(f"{DEEP}+") and "nested deeper than" in line]
    assert len(deep) == 1, said[-3000:]


# --- SafeCollect's choices, run directly (no other users needed: each hand-in is the collector's own) ---

def _safe_collect(tmp_path: Path, **options):
    """(SafeCollect of course `c`, assignment `lab`, its inbound folder, the course folder); what it
    logs is kept in `collect.said` (one entry a line)."""
    import logging

    from nbgrader.coursedir import CourseDirectory

    from autograder.doors.collect import SafeCollect

    course, inbound = tmp_path / "course", tmp_path / "exchange" / "c" / "inbound"
    course.mkdir(parents=True)
    inbound.mkdir(parents=True)
    coursedir = CourseDirectory(root=str(course), course_id="c", assignment_id="lab")
    collect = SafeCollect(coursedir=coursedir, root=str(tmp_path / "exchange"), **options)
    collect._duedate = lambda: None     # no gradebook: a test sets the due date itself
    collect.said = []
    log = logging.getLogger(f"collect-{id(collect)}")
    log.propagate = False
    log.addHandler(type("Said", (logging.Handler,), {"emit": lambda self, r: collect.said.append(r.getMessage())})())
    collect.log = log
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
    due = _now() + datetime.timedelta(seconds=600)     # claims after its files were made: dated by them
    collect, inbound, course = _safe_collect(tmp_path, before_duedate=True)
    _hand_in(inbound, "ada", due, "on time")
    _hand_in(inbound, "ada", due + datetime.timedelta(seconds=60), "after the due date")
    collect._duedate = lambda: due
    collect.init_src()
    collect.copy_files()
    submitted = course / "submitted" / "ada" / "lab"
    assert (submitted / "collectives.py").read_text() == "on time"
    assert (submitted / "timestamp.txt").read_text() == due.strftime(TIMESTAMP_FORMAT)


def test_a_students_two_honest_hand_ins_the_latest_wins(tmp_path):
    """ada hands in twice, honestly, a minute apart; bob once. The collect takes ada's latest (its time in
    timestamp.txt), whichever was made first; `--update` after a third hand-in takes that
    one over what submitted/ holds, and a collect without `--update` keeps what it holds."""
    first, second = _now() + datetime.timedelta(seconds=60), _now() + datetime.timedelta(seconds=120)
    collect, inbound, course = _safe_collect(tmp_path)
    _hand_in(inbound, "ada", second, "second")     # made before the first: the later claim, the older files
    _hand_in(inbound, "ada", first, "first")
    _hand_in(inbound, "bob", first, "bob's")
    _collect_now(collect)
    submitted = course / "submitted" / "ada" / "lab"
    assert (submitted / "collectives.py").read_text() == "second" and _written(course, "ada") == second
    assert (course / "submitted" / "bob" / "lab" / "collectives.py").read_text() == "bob's"
    assert not collect.refused and not collect.failed
    third = _now() + datetime.timedelta(seconds=180)
    _hand_in(inbound, "ada", third, "third")
    for collector, expected in ((_safe_collect_of(course, inbound), "second"),
                                (_safe_collect_of(course, inbound, update=True), "third")):
        _collect_now(collector)
        assert (submitted / "collectives.py").read_text() == expected
    assert _written(course, "ada") == third


def test_of_two_hand_ins_the_one_changed_last_wins_whatever_their_names_claim(tmp_path):
    """ada's hand-in named for 2 h ago was changed after her one named for 1 h ago (both claims are far
    before their files, so each is dated by its files): the one changed last is her latest and is
    collected, not the one whose name sorts last."""
    from autograder.doors.collect import last_change

    made = _now()
    collect, inbound, course = _safe_collect(tmp_path)
    named_later = _hand_in(inbound, "ada", made - datetime.timedelta(hours=1), "named later")
    changed_later = _hand_in(inbound, "ada", made - datetime.timedelta(hours=2), "changed later")
    while last_change(changed_later) <= last_change(named_later):    # the file clock is coarse: write until it moves
        (changed_later / "collectives.py").write_text("changed later")
    _collect_now(collect)
    assert (course / "submitted" / "ada" / "lab" / "collectives.py").read_text() == "changed later"
    assert _written(course, "ada") >= made      # dated by its files, not by its name


def test_collect_of_one_student_collects_that_student_alone(tmp_path):
    """`nbgrader collect --student ada`: ada's hand-in is collected, bob's stays in inbound/ and out of submitted/."""
    collect, inbound, course = _safe_collect(tmp_path)
    for student in ("ada", "bob"):
        _hand_in(inbound, student, _now(), f"{student}'s")
    collect.coursedir.student_id = "ada"
    _collect_now(collect)
    assert (course / "submitted" / "ada" / "lab" / "collectives.py").read_text() == "ada's"
    assert not (course / "submitted" / "bob").exists() and len(list(inbound.iterdir())) == 2


def test_what_the_courses_ignore_globs_and_size_limit_leave_out_is_not_collected(tmp_path):
    """A course's nbgrader settings say what a hand-in must not bring into submitted/: its ignore globs
    (nbgrader's defaults, checkpoints, bytecode and a forged `feedback/` folder, plus the course's own,
    here `*.env`, a student's keys) and max_file_size (here 1 KB), at any depth. ada's module and notes
    are collected; none of the rest, wherever it lies."""
    collect, inbound, course = _safe_collect(tmp_path)
    collect.coursedir.ignore = [*collect.coursedir.ignore, "*.env"]
    collect.coursedir.max_file_size = 1
    folder = _hand_in(inbound, "ada", _now(), "ada's")
    kept = {"collectives.py": "ada's", "notes/plan.md": "ring first"}
    left_out = {".ipynb_checkpoints/lab-checkpoint.ipynb": "{}", "__pycache__/collectives.cpython-311.pyc": "pyc",
                "notes/__pycache__/x.pyc": "pyc", "feedback/ada.html": "full marks", "secrets.env": "TOKEN=hunter2",
                "notes/.ipynb_checkpoints/plan-checkpoint.md": "old", "notes/data.bin": "x" * 5000,
                "big.csv": "1," * 2000}
    for rel, text in {**kept, **left_out}.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    _collect_now(collect)
    submitted = course / "submitted" / "ada" / "lab"
    collected = {p.relative_to(submitted).as_posix() for p in submitted.rglob("*") if p.is_file()}
    assert collected == {*kept, "timestamp.txt"}, collected
    assert all((submitted / rel).read_text() == text for rel, text in kept.items())


def _safe_collect_of(course: Path, inbound: Path, **options):
    """SafeCollect of the course folder and inbound folder _safe_collect made (a second collect run)."""
    from nbgrader.coursedir import CourseDirectory

    from autograder.doors.collect import SafeCollect

    coursedir = CourseDirectory(root=str(course), course_id="c", assignment_id="lab")
    collect = SafeCollect(coursedir=coursedir, root=str(inbound.parents[1]), **options)
    collect._duedate = lambda: None
    return collect


def test_before_the_due_date_the_latest_of_several_on_time_hand_ins_wins(tmp_path):
    """`nbgrader collect --before-duedate`: of ada's two on-time hand-ins and a late one, the later on-time one."""
    due = _now() + datetime.timedelta(seconds=600)
    collect, inbound, course = _safe_collect(tmp_path, before_duedate=True)
    for when, text in ((due - datetime.timedelta(seconds=300), "early"), (due - datetime.timedelta(seconds=60), "on time"),
                       (due + datetime.timedelta(seconds=60), "late")):
        _hand_in(inbound, "ada", when, text)
    collect._duedate = lambda: due
    _collect_now(collect)
    assert (course / "submitted" / "ada" / "lab" / "collectives.py").read_text() == "on time"
    assert _written(course, "ada") == due - datetime.timedelta(seconds=60)


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
    due = _now() + datetime.timedelta(seconds=600)     # claims after its files were made: dated by them
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


def _collect_now(collect) -> None:
    collect.init_src()
    collect.copy_files()


def _written(course: Path, student: str) -> datetime.datetime:
    return datetime.datetime.strptime((course / "submitted" / student / "lab" / "timestamp.txt").read_text(),
                                      TIMESTAMP_FORMAT)


def test_a_claim_120_s_before_the_files_is_no_hand_in_on_time(tmp_path):
    """`nbgrader collect --before-duedate` with the due date 60 s ago: ada's hand-ins, both made now, one
    renamed to claim 60 s before the due date. Within the old 300 s that claim dated it, on time, and
    --before-duedate took it over her latest; both are late, so her latest is taken, dated by its files."""
    made = _now()
    due = made - datetime.timedelta(seconds=60)
    collect, inbound, course = _safe_collect(tmp_path, before_duedate=True)
    _hand_in(inbound, "ada", due - datetime.timedelta(seconds=60), "claims to be on time")
    _hand_in(inbound, "ada", due + datetime.timedelta(seconds=10), "her latest")
    _hand_in(inbound, "bob", due + datetime.timedelta(seconds=3600), "bob's")   # bob claims later than his files
    collect._duedate = lambda: due
    _collect_now(collect)
    assert (course / "submitted" / "ada" / "lab" / "collectives.py").read_text() == "her latest"
    assert _written(course, "ada") >= made > due
    assert _written(course, "bob") == due + datetime.timedelta(seconds=3600)


def test_a_hand_in_changed_while_it_is_collected_is_dated_by_that_change(tmp_path, monkeypatch):
    """ada's file changes after her hand-in was dated, as the collect copies it: the copy (which may hold
    the change) is dated no earlier than it, with a line saying so."""
    import time

    from autograder.doors.collect import SafeCollect

    collect, inbound, course = _safe_collect(tmp_path)
    folder = _hand_in(inbound, "ada", _now() - datetime.timedelta(seconds=10), "ada's")
    copy = SafeCollect.do_copy

    def changed_first(self, src, dest, log=None):
        time.sleep(0.05)
        (folder / "collectives.py").write_text("ada's, changed")
        return copy(self, src, dest, log)
    monkeypatch.setattr(SafeCollect, "do_copy", changed_first)
    _collect_now(collect)
    changed = datetime.datetime.fromtimestamp(os.lstat(folder / "collectives.py").st_ctime, datetime.timezone.utc)
    assert collect.src_records[0]["timestamp"] < changed.replace(tzinfo=None) <= _written(course, "ada")
    assert any("changed while it was collected" in line for line in collect.said), collect.said


# How `nbgrader submit` names a hand-in: datetime.now(gettz(Exchange.timezone)).strftime(timestamp_format)
# (nbgrader/exchange/abc/exchange.py, set_timestamp), here at a given instant.
def _nbgrader_stamp(instant: datetime.datetime, zone: str) -> str:
    from dateutil.tz import gettz
    from nbgrader.exchange.abc.exchange import Exchange

    return instant.replace(tzinfo=datetime.timezone.utc).astimezone(gettz(zone)).strftime(
        Exchange.timestamp_format.default_value)


ZONES = ["Asia/Kolkata", "Australia/Sydney", "Asia/Seoul", "Europe/Berlin", "America/New_York",
         "America/Los_Angeles", "Asia/Dubai", "Asia/Kathmandu", "Asia/Tokyo", "UTC"]


def test_every_zone_is_read_as_nbgrader_writes_it(tmp_path):
    """A course in each zone; its student's hand-in named as nbgrader names it, claiming an hour from now
    (a claim later than the files, so the claim dates it): timestamp.txt holds that instant, in UTC."""
    later = _now() + datetime.timedelta(hours=1)
    for zone in ZONES:
        collect, inbound, course = _safe_collect(tmp_path / zone.replace("/", "-"), timezone=zone)
        (inbound / f"ada+lab+{_nbgrader_stamp(later, zone)}+AbCdEfGhIjKl").mkdir()
        (inbound / f"bob+lab+{_nbgrader_stamp(later, zone)}").mkdir()     # nbgrader's add_random_string off
        _collect_now(collect)
        assert _written(course, "ada") == later, (zone, collect.said)
        assert _written(course, "bob") == later, (zone, collect.said)
        assert collect.doubted == [] and collect.refused == [], (zone, collect.said)


# (zone, instant in UTC, what nbgrader writes): both sides of each change of the clocks, and the hour the
# clocks go back in New York, written twice (EDT, then EST)
CHANGES = [("Australia/Sydney", datetime.datetime(2026, 1, 15, 2), "AEDT"),
           ("Australia/Sydney", datetime.datetime(2026, 7, 15, 2), "AEST"),
           ("Europe/Berlin", datetime.datetime(2026, 1, 15, 12), "CET"),
           ("Europe/Berlin", datetime.datetime(2026, 7, 15, 12), "CEST"),
           ("America/New_York", datetime.datetime(2026, 11, 1, 5, 30), "EDT"),
           ("America/New_York", datetime.datetime(2026, 11, 1, 6, 30), "EST"),
           ("America/Los_Angeles", datetime.datetime(2026, 3, 8, 9, 59), "PST"),
           ("America/Los_Angeles", datetime.datetime(2026, 3, 8, 10, 1), "PDT"),
           ("Asia/Kolkata", datetime.datetime(2026, 7, 15, 12), "IST"),
           ("Europe/Dublin", datetime.datetime(2026, 7, 15, 12), "IST"),     # Irish Standard Time: +01
           ("Asia/Jerusalem", datetime.datetime(2026, 1, 15, 12), "IST"),    # Israel's: +02
           ("Asia/Seoul", datetime.datetime(2026, 7, 15, 12), "KST")]


@pytest.mark.parametrize("zone, instant, written", CHANGES)
def test_a_zones_abbreviation_is_read_in_the_courses_zone_across_its_changes(zone, instant, written, tmp_path):
    collect, _, _ = _safe_collect(tmp_path, timezone=zone)
    stamp = _nbgrader_stamp(instant, zone)
    assert stamp.endswith(f" {written}")
    assert collect.claimed_time(f"{stamp}+AbCdEfGhIjKl") == instant


def test_a_zone_the_course_does_not_write_is_named_for_a_person_and_not_shifted(tmp_path):
    """nbgrader's default zone is UTC: a hand-in named "... JST" (a student's own config) or "... IST"
    (three zones' name) names no instant there. Each is dated by its files, with a line naming the
    student; a hand-in named in UTC beside them is dated by its claim."""
    later = _now() + datetime.timedelta(hours=1)
    made = _now()
    collect, inbound, course = _safe_collect(tmp_path)           # Exchange.timezone: nbgrader's UTC
    (inbound / f"ada+lab+{_nbgrader_stamp(later, 'Asia/Tokyo')}+x").mkdir()
    (inbound / f"cy+lab+{_nbgrader_stamp(later, 'Asia/Kolkata')}+x").mkdir()
    (inbound / f"bob+lab+{_nbgrader_stamp(later, 'UTC')}+x").mkdir()
    _collect_now(collect)
    for student in ("ada", "cy"):
        assert made <= _written(course, student) < made + datetime.timedelta(minutes=5), collect.said
    assert _written(course, "bob") == later
    assert sorted(collect.doubted) == ["ada", "cy"]
    lines = [line for line in collect.said if "the course's time zone UTC writes UTC" in line]
    assert [line.split("check when ")[1] for line in sorted(lines)] == ["ada handed in", "cy handed in"], collect.said
    assert "is written in JST" in lines[0] + lines[1] and "is written in IST" in lines[0] + lines[1]


def test_a_hand_in_that_cannot_be_read_skips_its_student_only(tmp_path, monkeypatch):
    """Whatever reading a hand-in raises (here a RecursionError, as a 1,500-deep folder did), that
    student is skipped with one line naming them and why, and the class is collected."""
    from autograder.doors import collect as door

    real = door.last_change
    monkeypatch.setattr(door, "last_change", lambda folder, owner=None: (
        (_ for _ in ()).throw(RecursionError("maximum recursion depth exceeded")) if "ada+" in str(folder)
        else real(folder, owner)))
    collect, inbound, course = _safe_collect(tmp_path)
    _hand_in(inbound, "ada", _now(), "ada's")
    _hand_in(inbound, "bob", _now(), "bob's")
    _collect_now(collect)
    assert collect.failed == ["ada"] and not (course / "submitted" / "ada").exists()
    assert (course / "submitted" / "bob" / "lab" / "collectives.py").read_text() == "bob's"
    (line,) = [line for line in collect.said if line.startswith("ada not collected")]
    assert "RecursionError: maximum recursion depth exceeded" in line and "rest of the class is collected" in line


def test_names_that_are_not_utf8_are_named_in_one_printable_line(tmp_path):
    """A hand-in whose student part is not UTF-8 is refused; a file whose name is not UTF-8 (or holds a
    newline) is left out; each said in one line that prints; the honest hand-in beside is collected."""
    collect, inbound, course = _safe_collect(tmp_path)
    (inbound / (os.fsdecode(b"d\xffn") + f"+lab+{_now().strftime(TIMESTAMP_FORMAT)}+x")).mkdir()
    bob = _hand_in(inbound, "bob", _now(), "bob's")
    (bob / os.fsdecode(b"notes\xff.py")).write_text("x")
    (bob / "two\nlines.py").write_text("x")
    _collect_now(collect)
    assert sorted(p.name for p in (course / "submitted" / "bob" / "lab").iterdir()) == ["collectives.py", "timestamp.txt"]
    assert all(line.isprintable() for line in collect.said), collect.said
    said = "\n".join(collect.said)
    assert "refused d\\xffn+lab+" in said and "notes\\xff.py: its name is not UTF-8" in said
    assert "two\\nlines.py: its name is not UTF-8" in said


def test_a_hand_in_of_1500_nested_folders_is_collected_to_the_depth_cap_beside_the_class(tmp_path):
    """The 1,500 folders of news's hand-in (the module-level attack, run here as the collector's own
    hand-in): no RecursionError stops the collect; its lab is copied, what lies too deep is one line."""
    collect, inbound, course = _safe_collect(tmp_path)
    deep = _hand_in(inbound, "ada", _now(), "ada's")
    _hand_in(inbound, "bob", _now(), "bob's")
    _nest(deep, NESTED, pwd.getpwuid(os.geteuid()).pw_name)
    try:
        _collect_now(collect)
    finally:
        said = list(collect.said)
        subprocess.run(["rm", "-rf", str(deep)], check=False)
    for student in ("ada", "bob"):
        assert (course / "submitted" / student / "lab" / "collectives.py").read_text() == f"{student}'s", said
    assert collect.failed == [] and collect.refused == []
    assert len([line for line in said if "nested deeper than" in line]) == 1, said
