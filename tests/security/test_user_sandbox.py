"""The user sandbox's files are the kernel's to guard (issue 37): with bubblewrap unusable and the grader
root, student code opens nothing outside its submission copy, its scratch folder, the interpreter, its
stdlib and numpy, however it spells the path (tests/security/escapes.py: absolute, relative after
chdir, dir_fd, a `..` walk, openat2, /proc/self/root, /proc/self/cwd, /proc/self/fd, another
process's /proc entries, inherited fds, links), and changes no file outside -- on a plain host, in a
container-like grader (tests/security/container.py: Docker's default capabilities and syscall
refusals, no user namespace), and in one whose kernel has no Landlock (the chroot fallback).

The targets are what file modes alone left open on main: an earlier classmate's results in a
`grade-batch --out` folder outside the course (world-readable, as grade-batch writes it), a
world-readable copy of the course (a TA's clone) whose reference/ an untouched stub imports, and a file
every user may write. The earlier batch (an honest classmate) is graded once; each setting grades the
attackers after it with a second honest classmate beside them: both keep full marks, every attack reads,
changes and scores nothing. Where no mechanism can run, every door refuses in one line; the sample
class gets its declared scores in the user mode.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import container
import escapes
import toy
from attack import ENGINE, FULL, REPO, SCALELABS, TOY, env_with_only, function_score, honest
from debian_venv import debian_venv
from sample_class import grade_sample_class
from autograder.engine.sandbox.modes import user_mode_problem

pytestmark = pytest.mark.skipif(user_mode_problem() is not None, reason="the user sandbox needs root")
CONTAINER = pytest.mark.skipif(not container.applies(), reason="the container filter is x86_64's")
# the user mode's mechanism in each setting: Landlock where the kernel has it, else the chroot
SETTINGS = {"host": "Landlock", "container": "Landlock", "container without Landlock": "a chroot"}
STOLEN_ITEMS = ["ring_allreduce_time", "tree_allreduce_time", "best_allreduce_algorithm"]
SHARED_TEXT = "a log every user may write\n"


def grade_batch(root: Path, out: Path, setting: str, env: dict) -> subprocess.CompletedProcess:
    """`scalelabs grade-batch` of the toy class in the user mode: on the host with bwrap off PATH (as
    the other user-mode tests), in the container-like settings with it on PATH and unusable, the
    kernel's Landlock there or not (its syscalls answer ENOSYS)."""
    args = [*SCALELABS, "grade-batch", TOY, str(root), "--jobs", "2", "--out", str(out)]
    if setting == "host":
        return subprocess.run(args, cwd=ENGINE, env=env, capture_output=True,
                              text=True, timeout=900)
    landlock_errno = errno.ENOSYS if setting == "container without Landlock" else None
    return subprocess.run([*container.prefix(), *args], cwd=ENGINE, preexec_fn=container.installer(landlock_errno),
                          capture_output=True, text=True, timeout=900)


def world_readable(base: Path) -> None:
    for path in [base, *base.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture(scope="module")
def earlier():
    """A folder holding the class's earlier batch: the honest classmate graded on the host (results
    world-readable, as grade-batch writes them) and a TA's world-readable clone of the course."""
    base = Path(tempfile.mkdtemp(prefix="scalelabs-escapes-"))      # pytest's tmp folders are 0700
    try:
        honest(base / "class")
        (base / "shared").mkdir()
        (base / "shared" / "notes.txt").write_text(SHARED_TEXT)
        shutil.copytree(REPO / "reference", base / "ta-clone" / "scalelabs" / "reference",
                        ignore=shutil.ignore_patterns("__pycache__"))
        world_readable(base)
        (base / "shared" / "notes.txt").chmod(0o666)        # every user may write it, by its mode
        (base / "tools").mkdir()
        first = grade_batch(base / "class", base / "out", "host", env_with_only(base / "tools", "setpriv", "unshare"))
        assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
        victim = base / "out" / "results" / "honest.json"
        assert victim.stat().st_mode & 0o004, "grade-batch's results are world-readable: the target is real"
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module", params=[pytest.param(s, marks=[] if s == "host" else [CONTAINER]) for s in SETTINGS])
def graded(request, earlier):
    """({student: results.json}, the folders) of the attackers and a second honest classmate, graded in
    `request.param`'s setting after the earlier batch (a copy of it, modes kept)."""
    base = Path(tempfile.mkdtemp(prefix="scalelabs-escapes-"))
    try:
        shutil.copytree(earlier, base, symlinks=True, dirs_exist_ok=True)
        base.chmod(0o755)
        root, out, clone = base / "class", base / "out", base / "ta-clone" / "scalelabs"
        victim = out / "results" / "honest.json"
        target, marker = str(victim), b'"score"'
        assert marker in victim.read_bytes()
        honest(root, "honest2")
        shared = base / "shared" / "notes.txt"
        toy.make_submission(root / "reader", toy.reference_source() + escapes.reader(target, marker, str(shared)),
                            toy.key)
        toy.make_submission(root / "walker", toy.reference_source() + escapes.hooked_walk(target, marker), toy.key)
        toy.make_submission(root / "cloner", toy.stub_source() + escapes.cloner(str(clone), STOLEN_ITEMS), toy.key)
        world_readable(root)
        env = env_with_only(base / "tools", "setpriv", "unshare")
        second = grade_batch(root, out, request.param, env)
        assert second.returncode in (0, 1) and ", failed 0" in second.stdout, second.stdout[-2000:] + second.stderr[-3000:]
        results = {p.stem: json.loads(p.read_text()) for p in (out / "results").glob("*.json")}
        yield results, {"base": base, "clone": clone, "victim": victim, "shared": shared, "setting": request.param}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_every_spelling_of_a_path_reads_nothing_outside_the_jail(graded):
    """The reader tries each spelling of escapes.READS on the earlier classmate's results."""
    results, folders = graded
    data = results["reader"]
    assert data["scalelabs"]["sandbox"] == "user"
    assert f"{SETTINGS[folders['setting']]} kept it to its own files" in data["output"], data["output"]
    mask = escapes.returned(data, "comm_fraction")
    read = escapes.spellings(mask & 0xFFFF, escapes.READS)
    assert read == [], f"student code read an earlier classmate's results by: {', '.join(read)}"
    assert "absolute" in escapes.spellings(mask >> 16 & 0xFFFF, escapes.READS), "the attempts never ran"
    assert results["walker"]["scalelabs"]["sandbox"] == "user"
    assert escapes.returned(results["walker"], "comm_fraction") == 0, "the audit hook's dir_fd walk read it"


def test_a_file_every_user_may_write_is_not_changed(graded):
    """A file whose mode lets every user write it (a shared log, say): file modes would let the jail's
    uid append to it or truncate it; neither gets through."""
    results, folders = graded
    changed = escapes.spellings(escapes.returned(results["reader"], "comm_fraction") >> 32, escapes.WRITES)
    assert changed == [], f"student code changed a file outside the jail by: {', '.join(changed)}"
    assert folders["shared"].read_text() == SHARED_TEXT


def test_a_world_readable_copy_of_the_course_gives_no_function_point(graded):
    """An untouched stub that imports a TA clone's reference: 0 function points however it spells the clone."""
    results, folders = graded
    data = results["cloner"]
    imported = escapes.spellings(escapes.returned(data, "comm_fraction"), escapes.IMPORTS)
    assert imported == [], f"student code imported the TA clone's reference by: {', '.join(imported)}"
    assert function_score(data) == 0, [t["name"] for t in data["tests"] if t["score"]]
    assert (folders["clone"] / "reference" / "collectives.py").is_file()    # it was there to take


def test_the_honest_classmates_keep_full_marks_and_their_results(graded):
    """The earlier classmate's results are untouched; the one graded beside the attackers gets full marks."""
    results, folders = graded
    assert results["honest"]["score"] == FULL and json.loads(folders["victim"].read_text())["score"] == FULL
    assert results["honest2"]["score"] == FULL
    assert results["honest2"]["scalelabs"]["sandbox"] == "user"


# --- no kernel mechanism, no grading: one line naming the cause and the fix, in every door ---------------

def _refused(proc: subprocess.CompletedProcess) -> str:
    message = " ".join(proc.stderr.split())
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stdout[-2000:] + proc.stderr[-3000:]
    return message


@CONTAINER
@pytest.mark.parametrize("landlock_errno, cause", [(errno.ENOSYS, "the kernel has no Landlock"),
                                                   (errno.EPERM, "seccomp profile refuses the Landlock syscalls")])
def test_a_kernel_without_landlock_refuses_to_grade(tmp_path, landlock_errno, cause):
    """A container-like grader whose kernel has no Landlock (the landlock_* syscalls answer ENOSYS) or
    whose runtime's profile refuses them (EPERM, Docker before 23), started without CAP_SYS_CHROOT:
    `scalelabs grade` and `grade-batch` exit 2 with one line naming both causes, the fix and the
    opt-in, and grade no one."""
    folder = honest(tmp_path / "class")
    out = tmp_path / "out"
    for args in (("grade", TOY, folder, "--student", "honest"), ("grade-batch", TOY, tmp_path / "class", "--out", out)):
        proc = subprocess.run([*container.prefix(no_chroot=True), *SCALELABS, *map(str, args)], cwd=ENGINE,
                              preexec_fn=container.installer(landlock_errno), capture_output=True, text=True, timeout=600)
        message = _refused(proc)
        assert cause in message and "lacks CAP_SYS_CHROOT" in message and "--allow-unsandboxed" in message, message
        assert "grading refuses" in message and "apt-get install bubblewrap" in message, message
    assert not (out / "results" / "honest.json").exists()


def _no_landlock(monkeypatch):
    from autograder.engine.sandbox import chroot, landlock, modes
    monkeypatch.setattr(modes, "bwrap_available", lambda *args: None)
    monkeypatch.setattr(landlock, "abi", lambda: (0, "the kernel has no Landlock (simulated)"))
    monkeypatch.setattr(chroot, "can_chroot", lambda: "the grader lacks CAP_SYS_CHROOT (simulated)")


def test_the_otter_and_nbgrader_doors_refuse_without_a_mechanism(tmp_path, monkeypatch):
    """The same refusal through the engine's other doors: grade_submission raises it, the otter plugin
    lets it end `otter run` (the staff see a failed autograder, not zeros), and nbgrader's EngineScores
    stops autograde with one `scalelabs:` line."""
    import nbformat
    from traitlets.config import Config

    from autograder.doors import otter as otter_door
    from autograder.doors.nbgrader import EngineScores
    from autograder.engine.config import GradingConfig
    from autograder.engine.grade import grade_submission
    from autograder.engine.sandbox import SandboxUnavailable

    _no_landlock(monkeypatch)
    folder = honest(tmp_path / "class")
    with pytest.raises(SandboxUnavailable) as refused:
        grade_submission(toy.ASSIGNMENT, folder, "honest", config=GradingConfig())
    assert "\n" not in str(refused.value) and "no Landlock (simulated)" in str(refused.value), refused.value
    config = otter_door.otter_config("lab06_collectives")["plugins"][0][otter_door.PLUGIN]
    submission = tmp_path / "upload"
    submission.mkdir()
    (submission / "collectives.py").write_text(toy.reference_source())
    plugin = otter_door.EngineOverride(str(submission / "lab06_collectives.ipynb"), {}, config)
    with pytest.raises(SandboxUnavailable, match="no Landlock"):
        plugin.before_grading(None)
    assert plugin.result is None and not plugin.error
    monkeypatch.chdir(tmp_path)
    nb_config = Config()
    nb_config.CourseDirectory.root = str(tmp_path)
    nb_config.EngineScores.declaration = TOY
    with pytest.raises(SystemExit) as stopped:
        EngineScores(config=nb_config).preprocess(nbformat.v4.new_notebook(),
                                                  {"nbgrader": {"student": "honest", "assignment": toy.ASSIGNMENT_ID}})
    assert str(stopped.value).startswith("scalelabs:") and "no Landlock (simulated)" in str(stopped.value)


# --- the sample class, as declared, in the user mode ------------------------------------------------------

@pytest.mark.parametrize("python", ["this environment", "a venv of Debian's /usr/bin/python3"])
def test_the_sample_class_gets_its_declared_scores_in_the_user_mode(tmp_path, python):
    """bwrap off PATH, the grader root: Lab 06's sample class gets what samples.toml declares, graded by
    this environment's Python and by a venv of Debian's (whose stdlib holds no site-packages, and
    whose libpython the jail's uid maps from /usr)."""
    exe = Path(sys.executable) if python == "this environment" else debian_venv(tmp_path / "venv")
    if exe is None:
        pytest.skip("no Debian /usr/bin/python3 of this Python version")
    (tmp_path / "tools").mkdir()
    grade_sample_class(exe, "lab06_collectives", tmp_path, "user", env_with_only(tmp_path / "tools", "setpriv", "unshare"))


# --- the rules themselves ----------------------------------------------------------------------------------

def test_a_secret_beneath_what_the_rules_allow_refuses_before_any_student_code(tmp_path, monkeypatch):
    """A secret inside a folder the worker needs (the course installed inside the stdlib's folder, say):
    the sandbox's check against its rules refuses to start it, naming the path and the folder, before
    anything of the student's runs; with that check blinded, the start check's probe, asked from
    inside, reads it and refuses too."""
    from autograder.engine.config import GradingConfig
    from autograder.engine.sandbox import Sandbox, SandboxUnavailable, client
    from autograder.engine.sandbox.usermode import USER_UID_BASE, jail_stdlib

    inside = Path(next(p for p in jail_stdlib(USER_UID_BASE) if os.path.isdir(p))) / "json"
    folder = honest(tmp_path / "class")
    checked = client.check_jail
    monkeypatch.setattr(client, "check_jail", lambda *args, **kwargs: None)
    with Sandbox(folder, "collectives", GradingConfig(), mode="user", secrets=[inside]) as box:
        with pytest.raises(SandboxUnavailable, match="would let student code open") as refused:
            box.load()
        assert str(inside) in str(refused.value) and "Fix:" in str(refused.value) and box.proc is None
    monkeypatch.setattr(client, "check_jail", checked)
    monkeypatch.setattr(client, "_checked", set())
    monkeypatch.setattr(Sandbox, "_check_rules", lambda self: None)
    with pytest.raises(SandboxUnavailable, match="shows student code what it must not") as refused:
        Sandbox(folder, "collectives", GradingConfig(), mode="user", secrets=[inside])
    assert f"{inside}/" in str(refused.value) and "can be read" in str(refused.value)


def test_the_stdlibs_packages_folder_is_listed_never_read(monkeypatch):
    """A stdlib folder holding the interpreter's own packages folder (a `python:3` image, pyenv): the
    rules let the worker list it (the folder is the stdlib's, which Python lists to import) but read
    nothing in its packages folder, asked of the kernel by the jail's uid under those very rules."""
    from autograder.engine.sandbox import landlock, usermode

    base = Path(tempfile.mkdtemp(prefix="scalelabs-stdlib-"))     # enterable by the jail's uid
    try:
        stdlib = base / "lib" / "python3.11"
        (stdlib / "json").mkdir(parents=True)
        (stdlib / "json" / "__init__.py").write_text("PUBLIC = 1\n")
        (stdlib / "site-packages" / "reference").mkdir(parents=True)
        secret = stdlib / "site-packages" / "reference" / "collectives.py"
        secret.write_text("SOLUTION = 1\n")
        world_readable(base)
        uid = usermode.USER_UID_BASE
        real = usermode.jail_stdlib(uid)
        monkeypatch.setattr(usermode, "jail_stdlib", lambda uid: (*real, str(stdlib)))
        rules = list(usermode.runtime_rules.__wrapped__(uid))
        assert usermode.exposed_by(secret, rules) is None
        assert usermode.exposed_by(stdlib / "json" / "__init__.py", rules) == str(stdlib / "json")
        probe = ("import os, sys\n"
                 "for path in sys.argv[1:]:\n"
                 "    try:\n"
                 "        print(path, 'listed' if os.path.isdir(path) and os.listdir(path) is not None else open(path).read(1))\n"
                 "    except OSError as exc:\n"
                 "        print(path, exc.strerror)\n")
        made = landlock.ruleset(rules)
        steps = (usermode.become(uid), landlock.restrictor(made))
        try:
            done = subprocess.run([usermode.python_paths()[0], "-I", "-S", "-c", probe, str(stdlib), str(secret),
                                   str(stdlib / "site-packages"), str(stdlib / "json" / "__init__.py")],
                                  preexec_fn=lambda: [step() for step in steps], capture_output=True, text=True,
                                  timeout=60, cwd="/")
        finally:
            made.close()
        seen = dict(line.split(" ", 1) for line in done.stdout.splitlines())
        assert seen.get(str(stdlib)) == "listed", done.stdout + done.stderr
        assert seen[str(stdlib / "site-packages")] == "listed", seen
        assert seen[str(secret)] == "Permission denied", seen
        assert seen[str(stdlib / "json" / "__init__.py")] == "P", seen
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_an_older_landlock_still_keeps_truncate_out(tmp_path, monkeypatch):
    """Landlock handles truncate only from its ABI 3: with the ruleset an ABI 2 kernel would make, the
    filter's own refusal of truncate keeps a file every user may write unchanged (and writing it stays
    refused by ABI 1's rules); the honest module still runs."""
    from autograder.engine.config import GradingConfig
    from autograder.engine.sandbox import Sandbox, landlock

    shared = Path(tempfile.mkdtemp(prefix="scalelabs-shared-"))
    try:
        shared.chmod(0o755)
        notes = shared / "notes.txt"
        notes.write_text(SHARED_TEXT)
        notes.chmod(0o666)
        monkeypatch.setattr(landlock, "abi", lambda: (2, ""))
        source = toy.reference_source() + escapes.UNHOOK + (
            "\nimport os\n"
            "def changed(path):\n"
            "    out = []\n"
            "    for way in ('append', 'truncate'):\n"
            "        try:\n"
            "            os.truncate(path, 0) if way == 'truncate' else os.write(os.open(path, os.O_WRONLY | os.O_APPEND), b'x')\n"
            "            out.append(way)\n"
            "        except OSError:\n"
            "            pass\n"
            "    return out\n")
        folder = toy.make_submission(tmp_path / "mallory", source, toy.key)
        with Sandbox(folder, "collectives", GradingConfig(), mode="user") as box:
            box.load()
            assert box.call("changed", {"path": str(notes)}) == []
            assert box.call("comm_fraction", {"comm_s": 1.0, "compute_s": 3.0}) == 0.25
        assert notes.read_text() == SHARED_TEXT
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_the_chroot_fallback_shows_only_its_tree_and_creates_no_file(tmp_path, monkeypatch):
    """Where the kernel has no Landlock the worker is chrooted into the grader's tree: its / holds the
    runtime and the jails' folder, no /proc, nothing of the host; and the filter, its only wall against
    new files there, refuses one in its own tmp (its uid's) as in /tmp."""
    from autograder.engine.config import GradingConfig
    from autograder.engine.sandbox import Sandbox, chroot, landlock

    if chroot.can_chroot():
        pytest.skip(chroot.can_chroot())
    monkeypatch.setattr(landlock, "abi", lambda: (0, "the kernel has no Landlock (simulated)"))
    source = toy.reference_source() + escapes.UNHOOK + (
        "\nimport errno, os\n"
        "def top():\n"
        "    return sorted(os.listdir(os.open('/', os.O_RDONLY | os.O_DIRECTORY)))\n"
        "def create(folder):\n"
        "    try:\n"
        "        os.close(os.open(os.path.join(folder, 'new-file'), os.O_WRONLY | os.O_CREAT, 0o600))\n"
        "        return 'created'\n"
        "    except OSError as exc:\n"
        "        return errno.errorcode[exc.errno]\n")
    folder = toy.make_submission(tmp_path / "mallory", source, toy.key)
    with Sandbox(folder, "collectives", GradingConfig(), mode="user") as box:
        box.load()
        assert box.mechanism == "chroot"
        top = box.call("top", {})
        runtime = {"bin", "dev", "etc", "jails", "lib", "lib32", "lib64", "libx32", "root", "sbin", "tmp", "usr"}
        assert "jails" in top and set(top) <= runtime, top      # no proc, home, work, srv...
        assert box.call("create", {"folder": "."}) == "EPERM"
        assert box.call("create", {"folder": "/tmp"}) == "EPERM"
        assert box.call("comm_fraction", {"comm_s": 1.0, "compute_s": 3.0}) == 0.25
        assert not (box.root / "tmp" / "new-file").exists()
