"""The grader's side of the sandbox: start the worker inside a boundary, send JSON requests,
validate every reply as untrusted data (replies.py), enforce the per-call timeout, the submission's
time budget and the memory limit, and turn every failure of student code into a `StudentError`.

Boundaries (`mode`, chosen by `modes.choose_mode`; docs/ARCHITECTURE.md "Trust model"):

* "bubblewrap" (jail.py): uid/gid 65534 in a new user namespace, no capabilities, new session, no
  network, /usr and the base libraries, the stdlib (site-packages hidden), numpy in a private site
  dir, the worker script, a read-only *copy* of the submission and a size-capped tmpfs /tmp.
* "user" (usermode.py; root without a usable bwrap, e.g. a Gradescope container): a uid of its own
  (no capabilities, no_new_privs) on a private copy readable by that uid only, and a Landlock
  ruleset (landlock.py) that lets it open the interpreter, its stdlib, numpy, the copy, its tmp and
  nothing else -- or, where the kernel has no Landlock, a chroot into a tree of those (chroot.py); no
  secret may lie beneath what it allows (or grading refuses), checked from inside once per grader
  process (check_jail).
* "unsandboxed": a plain subprocess with rlimits; only when the course opts in explicitly.
"""
from __future__ import annotations

import dataclasses
import json
import os
import resource
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Collection

from autograder.course import SECRET_PACKAGES
from autograder.engine.config import GradingConfig
from autograder.engine.filetree import copy_submission, read_regular
from autograder.engine.sandbox.errors import BadReply, SandboxUnavailable, StudentError
from autograder.engine.sandbox import chroot, landlock
from autograder.engine.sandbox.jail import PATHS, bwrap_command, runtime_mounts, seen_through
from autograder.engine.sandbox.modes import MODES, bwrap_available, choose_mode, user_mode_problem
from autograder.engine.sandbox.replies import OWN_FILE, check_call, check_error, check_replies, check_signature
from autograder.engine.sandbox.roots import ROOT_PREFIX, sweep_once
from autograder.engine.sandbox.runtime import numpy_dirs, python_paths, site_dirs
from autograder.engine.sandbox.seccomp import filter_fd, installer
from autograder.engine.sandbox.usermode import (become, chroot_tree, course_secrets, exposed_by, give_back_uid,
                                                hand_over, jail_stdlib, landlock_rules, mechanism, namespaces,
                                                private_numpy_site, take_uid)
from autograder.engine.submission import Submission, read_submission

WORKER = Path(__file__).with_name("worker.py")
REPLY_CAP_BYTES = 4 << 20       # a reply longer than this is a flood on the protocol fd
FILE_CAP_BYTES = 64 << 20       # RLIMIT_FSIZE: files the student writes in /tmp
FILES_OPEN_CAP = 256            # RLIMIT_NOFILE of the worker
PROCESSES_CAP = 64              # RLIMIT_NPROC of the user mode's uid (a second wall: its filter refuses any new task)


class Sandbox:
    """One submission's worker. Use as a context manager; `load()` first, then `signature`/`call`.

    `deadline` is a time.monotonic() value: no call runs past it (the submission's budget).
    `mode` is one of MODES (see choose_mode); `secrets`/`outputs` are, in "user" mode, paths the
    jail uid must not read / write besides the course folder and the submission itself.
    `provided`: the modules shipped beside `module` (Assignment.provided); like `module`, only their
    .py files are copied in (copy_submission), and what was left out is in `ignored`.
    `submission`: the submission's record (autograder.engine.submission: its tree, walked once), or
    its folder, walked when the sandbox is built.
    """

    def __init__(self, submission: Submission | Path | None, module: str, config: GradingConfig,
                 *, deadline: float | None = None, mode: str | None = None,
                 secrets: list[Path] = (), outputs: list[Path] = (), provided: Collection[str] = (),
                 _probe: bool = False, _unchecked: bool = False):
        self.submission = _record(submission) if submission is not None else None   # None: ahead()
        self.submission_dir = self.submission.folder if self.submission is not None else None
        self.module = module
        self.modules = (module, *provided)
        self.config = config
        self.deadline = deadline
        self.mode = mode or choose_mode(config.sandbox, tmp_bytes=self.tmp_bytes)
        if self.mode not in MODES:
            raise ValueError(f"unknown sandbox mode {self.mode!r}")
        self.bwrap = bwrap_available(self.tmp_bytes) if self.mode == "bubblewrap" else None
        if self.mode == "bubblewrap" and not self.bwrap:
            raise SandboxUnavailable("bubblewrap was requested but is not usable here: apt-get install bubblewrap")
        if self.mode == "user":
            problem = user_mode_problem()
            if problem:
                raise SandboxUnavailable(f"the unprivileged-user sandbox cannot run: {problem}")
        self.taken_uid = take_uid() if self.mode == "user" else None
        self.uid = self.taken_uid       # "user" mode: this student's own uid
        self.mechanism = mechanism()[0] if self.mode == "user" else ""     # "landlock" or "chroot"
        self.tree: chroot.Tree | None = None    # the chroot's tree, where the jail's folder then lies
        self.devnull_fd: int | None = None      # the user mode: the grader's /dev/null, passed while spawning
        self.secrets = [*course_secrets(), *([self.submission_dir] if self.submission_dir else []), *map(Path, secrets)]
        self.outputs = list(map(Path, outputs))
        self.probe = _probe             # the start check's own jail (check_jail): it reads anywhere the jail shows
        self.fault: SandboxUnavailable | None = None   # the jail could not start: the grader's fault
        self.stderr: Any = subprocess.DEVNULL
        self.before_exec: list[Callable[[], None]] = []     # _spawn's steps for the child (_limits)
        if self.mode in ("bubblewrap", "user") and not _probe and not _unchecked:
            check_jail(config, self.secrets, self.mode)
        self.root: Path | None = None
        self._source_lines: dict[str, list[str]] = {}   # file name -> lines of the graded copy (source_line)
        self.skipped: list[str] = []
        self.ignored: list[str] = []
        self.proc: subprocess.Popen | None = None
        self.buffer = b""
        self.import_error: StudentError | None = None
        self.timeouts: list[str] = []   # what ran out of time (a person should look: grade.needs_person)
        self.imported = False
        self.starting = False       # spawned, its "ready" line not read yet (ahead())

    @classmethod
    def ahead(cls, module: str, config: GradingConfig, *, checked: bool = True) -> "Sandbox":
        """A bubblewrap jail started before its submission is known, so that its interpreter starts
        while the grader works on something else (a batch starts the next student's jail while it
        grades this one); `take` then copies the submission in. Only bubblewrap: the "user" mode
        guards each submission's own files before its worker may start. The jail binds the copy's
        folder, so files copied in after the start are what the worker imports.
        `checked=False`: start it without waiting for the start check (check_jail), so that it boots
        beside the check's probe jail (a single `scalelabs grade`); it holds only the worker until
        `take`, which runs the check (waiting for the one under way) before anything of the
        submission is copied in, and refuses as a fresh sandbox would."""
        box = cls(None, module, config, mode="bubblewrap", _unchecked=not checked)
        try:
            box._make_root()
            box._spawn()
        except BaseException:
            box.close()
            raise
        return box

    def take(self, submission: Submission | Path, deadline: float | None = None,
             provided: Collection[str] = (), secrets: Collection[Path] = ()) -> "Sandbox":
        """Copy a submission (its record or folder) into a jail started ahead (nothing of it has run
        yet) and set its deadline; `provided` and `secrets` as in the constructor (the start check
        covers them, as a fresh sandbox's does, before anything is copied in)."""
        if self.submission_dir is not None or self.imported:
            raise ValueError("this sandbox already holds a submission")
        self.submission, self.deadline = _record(submission), deadline
        self.submission_dir = self.submission.folder
        check_jail(self.config, [self.submission_dir, *map(Path, secrets)])
        self.modules = (self.module, *provided)
        self.secrets += [self.submission_dir, *map(Path, secrets)]
        self._copy_in()
        return self

    @property
    def tmp_bytes(self) -> int:
        """Size of the jail's tmpfs /tmp: it is memory, so it counts against memory_mb (_limits
        gives the address space only the rest)."""
        return min(self.config.tmp_mb, self.config.memory_mb // 2) << 20

    # --- lifecycle ---

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._kill()
        if self.taken_uid is not None:
            give_back_uid(self.taken_uid)
            self.taken_uid = None
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def _prepare(self) -> None:
        self._make_root()
        if self.mode == "user":
            self._check_rules()
        self._copy_in()

    def _check_rules(self) -> None:
        """The user mode: no secret or output may lie beneath what the worker's Landlock rules allow,
        or what the chroot's tree holds (the course installed inside the stdlib's folder, say);
        SandboxUnavailable naming it."""
        if self.tree is not None:
            rules = [(source, landlock.READ) for source in self.tree.sources]
        else:
            rules = landlock_rules(self.uid, self.root)
        for path in (*self.secrets, *self.outputs):
            allowed = exposed_by(path, rules)
            if allowed is not None:
                raise SandboxUnavailable(
                    f"the unprivileged-user sandbox would let student code open {path}, because the worker needs "
                    f"{allowed}, so grading refuses. Fix: keep the course, the packages and the submissions outside "
                    f"the interpreter's folders ({python_paths()[2]})")

    def _copy_in(self) -> None:
        """The submission's copy in the jail's folder (_prepare, or take for a jail started ahead)."""
        self.skipped, self.ignored = copy_submission(self.submission_dir, self.root / "submission", self.modules,
                                                   self.submission.tree)
        if self.mode == "user":
            hand_over(self.root, self.uid)

    def _make_root(self) -> None:
        """The jail's folder: an empty submission/ (filled by _prepare or take), tmp/, site/, the worker.
        Named by the grader's pid, so that a later grader can tell a dead one's folder (sweep_stale_roots)."""
        sweep_once()
        if self.mechanism == "chroot":      # inside the tree (removed with it if the grader is killed)
            self.tree = chroot_tree(self.uid)
            self.root = self.tree.jail()
        else:
            self.root = Path(tempfile.mkdtemp(prefix=f"{ROOT_PREFIX}{os.getpid()}-"))
        (self.root / "submission").mkdir()
        (self.root / "tmp").mkdir()
        site = self.root / "site"
        site.mkdir()
        if self.mode == "unsandboxed":
            for d in numpy_dirs():
                (site / os.path.basename(d)).symlink_to(d)
        elif self.mode == "user":
            for d in private_numpy_site().iterdir():
                (site / d.name).symlink_to(d)
        shutil.copyfile(WORKER, self.root / "worker.py")

    def _command(self, seccomp_fd: int | None = None) -> tuple[list[str], dict[str, Any]]:
        """The worker's command line and its paths; bubblewrap loads the filter from `seccomp_fd`; the
        user mode's worker gets the grader's /dev/null as fd `devnull_fd` (a chroot may have none)."""
        exe, libdir, stdlib = python_paths()
        roots = [stdlib, libdir]
        if self.mode == "bubblewrap":
            paths = dict(PATHS)
            cmd = bwrap_command(self.bwrap, self.root, self.tmp_bytes, seccomp_fd)
            roots += ["/sandbox"]
        else:
            seen = self.tree.inside if self.tree is not None else str      # the chrooted worker's names
            paths = {k: seen(self.root / k) for k in ("submission", "site", "tmp")}
            cmd = [exe, "-I", "-S", seen(self.root / "worker.py")]
            if self.mode == "user":
                roots += [paths["submission"], paths["site"], str(private_numpy_site()), *jail_stdlib(self.uid)]
            else:
                roots += [paths["submission"], paths["site"]] + numpy_dirs()
        if self.probe:
            roots = ["/"]       # the start check reads what an attacker without the courtesy hook could
        config = dict(paths, module=self.module, read_roots=roots, output_cap=self.config.output_cap_chars)
        if self.devnull_fd is not None:
            config["devnull_fd"] = self.devnull_fd
        return cmd + [json.dumps(config)], paths

    def _limits(self) -> None:
        """Runs in the child before exec: memory, CPU backstop, file size, open files (each socket or
        pipe holds kernel memory), no core dumps, no POSIX message queue memory; outside bubblewrap
        (which loads the filter itself) the worker's namespaces (user mode) and then the seccomp
        filter, under no_new_privs, kept across exec: one process, no network, no new file."""
        mem = (self.config.memory_mb << 20) - (self.tmp_bytes if self.mode == "bubblewrap" else 0)
        cpu = int(self.config.budget_s) + 10
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_CAP_BYTES, FILE_CAP_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (FILES_OPEN_CAP, FILES_OPEN_CAP))
        resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))
        if self.mode == "user":
            resource.setrlimit(resource.RLIMIT_NPROC, (PROCESSES_CAP, PROCESSES_CAP))
        for step in self.before_exec:
            step()

    def _spawn(self) -> None:
        seccomp = filter_fd() if self.mode == "bubblewrap" else None
        install = None if self.mode == "bubblewrap" else installer(create_files=False)
        if self.mode == "user" and install is None:     # user_mode_problem() refused it already
            raise SandboxUnavailable("the unprivileged-user sandbox has no seccomp filter for this machine")
        rules = devnull = self.devnull_fd = None
        if self.mode == "user":     # in the child: namespaces and the chroot as root, then the uid, Landlock, the filter
            devnull = self.devnull_fd = os.open(os.devnull, os.O_RDWR)
            if self.tree is not None:
                confine = chroot.enter(self.tree, self.tree.inside(self.root / "tmp"))
                self.before_exec = [namespaces(), confine, become(self.uid), install]
            else:
                try:
                    rules = landlock.ruleset(landlock_rules(self.uid, self.root))
                except OSError as exc:
                    os.close(devnull)
                    raise self._broken(f"the kernel refused its Landlock rules: {exc}") from None
                self.before_exec = [namespaces(), become(self.uid), landlock.restrictor(rules), install]
        else:
            self.before_exec = [install] if install else []
        try:
            cmd, paths = self._command(seccomp)
            env = {"PATH": "/usr/bin:/bin", "HOME": paths["tmp"], "LANG": "C.UTF-8"}
            self.buffer = b""
            try:
                self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                             cwd=self.root / "tmp", env=env, preexec_fn=self._limits,
                                             start_new_session=True, close_fds=True,
                                             pass_fds=tuple(fd for fd in (seccomp, devnull) if fd is not None))
            except (OSError, subprocess.SubprocessError) as exc:    # e.g. the kernel refused the filter
                raise self._broken(f"{type(exc).__name__}: {exc}") from None
        finally:
            if seccomp is not None:
                os.close(seccomp)
            if rules is not None:
                rules.close()
            if devnull is not None:
                os.close(devnull)
                self.devnull_fd = None
        self.starting = True

    def _start(self) -> None:
        if self.root is None:
            self._prepare()
        if not (self.starting and self.alive):   # a jail started ahead is used once, if it still runs
            if self.starting:
                self._kill()
            self._spawn()
        self.starting = False
        # Nothing of the submission runs before the worker's ready line (it imports the module only
        # when asked): a worker that does not get there is the jail's failure, never the student's.
        try:
            ready = self._read(self.config.import_timeout_s, what="starting Python")
        except StudentError as exc:
            if exc.kind == "budget":
                raise
            raise self._broken(exc.message)
        if not isinstance(ready, dict) or ready.get("ok") is not True:
            self._kill()
            raise self._broken("its first reply was not the ready line")

    def _broken(self, why: str) -> SandboxUnavailable:
        """The grader's fault: the jail cannot start Python. Kept (`fault`): every later start
        fails at once, and grade_submission raises it instead of scoring anyone."""
        self._kill()
        self.fault = SandboxUnavailable(
            f"the {self.mode} sandbox could not start Python ({why}), which is the grader's fault, not the "
            f"student's: nothing was scored. Fix: run `scalelabs grade` on one submission to see why, and check "
            f"that {python_paths()[0]} runs (docs/staff.md, the sandbox)")
        return self.fault

    def _kill(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self.proc.wait()
            self.proc = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    # --- protocol ---

    def _death(self, what: str) -> StudentError:
        """The message for a worker that stopped without replying."""
        code = self.proc.wait() if self.proc else None
        self._kill()
        if code is not None and code < 0:
            sig = signal.Signals(-code)
            if sig is signal.SIGXCPU:
                self.timeouts.append(f"{what} used up its CPU time")
                return StudentError(self.timeouts[-1], "timeout", fatal=True)
            if sig is signal.SIGXFSZ:
                return StudentError(f"{what} wrote a file larger than {FILE_CAP_BYTES >> 20} MB", "died", fatal=True)
            return StudentError(f"{what} crashed the worker process ({sig.name})", "died", fatal=True)
        return StudentError(f"{what} stopped the worker process (exit code {code}: os._exit() or a crash)",
                            "died", fatal=True)

    def _read(self, timeout_s: float, what: str) -> Any:
        """One reply line within the timeout (and the submission's deadline), parsed; else a fatal StudentError."""
        start = time.monotonic()
        limit = start + timeout_s
        budget_bound = self.deadline is not None and self.deadline < limit
        if budget_bound:
            limit = self.deadline
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            remaining = limit - time.monotonic()
            ready = select.select([fd], [], [], max(remaining, 0))[0] if remaining > 0 else []
            if not ready:
                self._kill()
                if budget_bound:
                    self.timeouts.append("the time budget for grading this submission ran out")
                    raise StudentError(self.timeouts[-1], "budget", fatal=True)
                self.timeouts.append(f"{what} did not finish within {timeout_s:g} s (an infinite loop?)")
                raise StudentError(self.timeouts[-1], "timeout", fatal=True)
            chunk = os.read(fd, 65536)
            if not chunk:
                raise self._death(what)
            self.buffer += chunk
            if len(self.buffer) > REPLY_CAP_BYTES:
                self._kill()
                raise StudentError(f"{what} flooded the grader's channel", "died", fatal=True)
        line, self.buffer = self.buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: arrays nested 100k deep
            self._kill()
            raise StudentError(f"{what} corrupted the grader's channel", "died", fatal=True)

    def _malformed(self, what: str, why: str) -> StudentError:
        self._kill()
        return StudentError(f"{what}: the worker sent a malformed reply ({why}); "
                            "student code must not tamper with the grader's channel", "protocol", fatal=True)

    def _request(self, request: dict, timeout_s: float, what: str, check: Callable[[dict], Any]) -> Any:
        """Send one request; `check(reply)` validates an ok reply and returns what the caller needs."""
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self._kill()
            self.timeouts.append("the time budget for grading this submission ran out")
            raise StudentError(self.timeouts[-1], "budget", fatal=True)
        if not self.alive:
            raise StudentError("the worker process is not running", "died", fatal=True)
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._death(what)
        reply = self._read(timeout_s, what)
        try:
            if not isinstance(reply, dict) or type(reply.get("ok")) is not bool:
                raise BadReply("not {ok: true|false, ...}")
            if not reply["ok"]:
                error = check_error(reply)
            else:
                return check(reply)
        except (BadReply, RecursionError) as exc:
            raise self._malformed(what, str(exc) if isinstance(exc, BadReply) else "nested too deeply")
        raise error

    # --- the API the checks use ---

    def load(self) -> None:
        """Start the worker and import the module; a failure is kept in `import_error` and raised
        (a jail that cannot start: `fault`, SandboxUnavailable)."""
        if self.fault is not None:
            raise self.fault
        if self.import_error is not None:
            raise self.import_error
        if self.alive and self.imported:
            return
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.timeouts.append("the time budget for grading this submission ran out")
            raise StudentError(self.timeouts[-1], "budget", fatal=True)
        if self.root is None:
            self._prepare()
        if not (self.root / "submission" / f"{self.module}.py").is_file():
            why = next((s for s in self.skipped if s.startswith(f"{self.module}.py ")), "")
            self.import_error = StudentError(f"{self.module}.py is not in the submission" + (f" ({why})" if why else ""),
                                             "missing_module")
            raise self.import_error
        what = f"importing {self.module}.py"
        try:
            self._start()
            self._request({"op": "import"}, self.config.import_timeout_s, what, lambda reply: None)
            self.imported = True
        except StudentError as exc:
            if exc.kind == "budget":
                raise
            self.import_error = exc
            raise

    def restart(self) -> None:
        """A fresh worker (after a timeout or crash), with the module imported again."""
        self._kill()
        self.imported = False
        self.load()

    def signature(self, name: str) -> list[str]:
        """The parameter names of the student's function, in order."""
        return self._request({"op": "signature", "name": name}, self.config.call_timeout_s, f"inspecting {name}",
                             check_signature)

    def call(self, name: str, kwargs: dict) -> Any:
        """The student's name(**kwargs) as a JSON value, or StudentError."""
        return self._request({"op": "call", "name": name, "kwargs": kwargs}, self.config.call_timeout_s, name,
                             lambda reply: check_call(reply)[1])

    def call_many(self, name: str, kwargs_list: list[dict]) -> list[tuple[bool, Any]]:
        """Many calls in one round trip: [(True, value) | (False, error message)], exactly one per
        input, or a fatal StudentError for the whole batch (which then has no culprit; callers
        retry one by one)."""
        return self._request({"op": "call_many", "name": name, "kwargs_list": kwargs_list},
                             self.config.call_timeout_s, name, lambda reply: check_replies(reply, len(kwargs_list)))


    def source_line(self, filename: str, line: int) -> str | None:
        """Line `line` of the graded copy's top-level `filename`, stripped and capped (SOURCE_LINE_CAP):
        the student's own line an error points at, read by the grader from what was graded (a worker's
        claim names only the place). None where there is no such line."""
        if self.root is None or not OWN_FILE.fullmatch(filename):
            return None
        lines = self._source_lines.get(filename)
        if lines is None:
            try:
                lines = read_regular(self.root / "submission" / filename).decode("utf-8", "replace").splitlines()
            except (OSError, ValueError):
                lines = []
            self._source_lines[filename] = lines
        if not 0 < line <= len(lines):
            return None
        text = " ".join(lines[line - 1].split())
        return text if len(text) <= SOURCE_LINE_CAP else text[:SOURCE_LINE_CAP - 3] + "..."


SOURCE_LINE_CAP = 120           # characters of a student's source line quoted in feedback


def _record(submission: Submission | Path) -> Submission:
    """A submission record as given, or the tree of a folder (read_submission without its notebook)."""
    return submission if isinstance(submission, Submission) else read_submission(Path(submission))


# --- the jail's start check: the real command, the real binds, asked from inside ---

PROBE_MODULE = "_scalelabs_jail_check"
_PROBE_SOURCE = """
import importlib.util, os

def leaks(paths, packages):
    found = []
    for name in packages:
        try:
            if importlib.util.find_spec(name) is not None:
                found.append("the package %s can be imported" % name)
        except Exception:
            pass
    for path in paths:
        try:
            os.stat(path)
        except OSError:
            continue
        try:
            if os.path.isdir(path) and not os.listdir(path):
                continue        # an empty folder: a hidden package folder's mount point
        except OSError:
            continue
        found.append("%s can be read" % path)
    return found

def opened(paths, packages, files_per_folder):
    \"\"\"Under Landlock a path's metadata stays visible: what of `paths` student code can open (a file
    read, or a file beneath a folder it can list).\"\"\"
    found = [("the package %s can be imported" % name) for name in packages if _finds(name)]
    for path in paths:
        if os.path.isfile(path):
            if _reads(path):
                found.append("%s can be read" % path)
            continue
        try:
            walked = os.walk(path)
            for folder, _, files in walked:
                readable = [f for f in files[:files_per_folder] if _reads(os.path.join(folder, f))]
                if readable:
                    found.append("%s can be read" % os.path.join(folder, readable[0]))
                    break
        except OSError:
            pass
    return found

def _reads(path):
    try:
        with open(path, "rb") as f:
            f.read(1)
        return True
    except OSError:
        return False

def _finds(name):
    try:
        return importlib.util.find_spec(name) is not None
    except Exception:
        return False

def numpy_version():
    import numpy
    return numpy.__version__
"""
_checked: set[tuple] = set()
_checking = threading.Lock()    # one start check at a time: a sandbox's own waits for check_jail_soon's


def check_jail(config: GradingConfig, secrets: Collection[Path] = (), mode: str = "bubblewrap") -> None:
    """Refuse to grade (SandboxUnavailable, one line naming the cause and the fix) where the jail would
    show student code a secret or cannot run the worker. Under bubblewrap each call checks `secrets`,
    the course's and the grader's site folders against the binds (jail.seen_through); in the user mode
    each sandbox checks them against its Landlock rules (Sandbox._check_rules). The first call of a
    process for a configuration also starts the real jail (the real command, binds or rules, and
    limits) on a probe module and asks from inside that the worker starts, numpy imports where the
    grader has it, and neither the packages (reference, autograder, labs) nor those paths can be
    reached -- in the user mode by opening them (Landlock leaves a path's metadata visible), among
    them a canary every user may read by its file modes: the kernel's confinement is in force."""
    secrets = [Path(p) for p in (*course_secrets(), *site_dirs(), *secrets)]
    if mode == "bubblewrap":
        for path in secrets:
            source = seen_through(path)
            if source is not None:
                raise SandboxUnavailable(
                    f"the bubblewrap sandbox would let student code read {path}, because it binds {source} (what "
                    "the worker needs of this Python), so grading refuses. Fix: install scalelabs and keep the course "
                    f"and the submissions outside {source}")
    key = (mode, config.memory_mb, config.tmp_mb, config.import_timeout_s, bwrap_available() if mode == "bubblewrap" else "")
    with _checking:
        if key in _checked:
            return
        return _probe_jail(config, secrets, mode, key)


def _probe_jail(config: GradingConfig, secrets: list[Path], mode: str, key: tuple):
    """check_jail's probe: the real jail on a probe module, asked from inside (under the lock)."""
    name = "bubblewrap sandbox" if mode == "bubblewrap" else "unprivileged-user sandbox"
    with tempfile.TemporaryDirectory(prefix="scalelabs-jail-check-") as folder, \
            tempfile.TemporaryFile() as errors:
        (Path(folder) / f"{PROBE_MODULE}.py").write_text(_PROBE_SOURCE)
        canary = Path(folder) / "canary" / "world-readable"
        canary.parent.mkdir()
        canary.write_text("open to every user by its file modes\n")
        for path, bits in ((folder, 0o755), (canary.parent, 0o755), (canary, 0o644)):
            os.chmod(path, bits)
        # the probe's calls are the grader's own work, not a student's: they get the start-up time, never the
        # course's per-call limit (0.5 s timed out numpy's import at load 14 and refused the whole class)
        probe_config = dataclasses.replace(config, call_timeout_s=max(config.call_timeout_s, config.import_timeout_s))
        box = Sandbox(Path(folder), PROBE_MODULE, probe_config, mode=mode, _probe=True)
        box.stderr = errors
        try:
            with box:
                box.load()
                if mode == "bubblewrap":
                    found = box.call("leaks", {"paths": [str(p) for p in secrets], "packages": list(SECRET_PACKAGES)})
                else:
                    paths = [str(p) for p in secrets if p not in map(Path, site_dirs())] + [str(canary)]
                    found = box.call("opened", {"paths": paths, "packages": list(SECRET_PACKAGES), "files_per_folder": 3})
                if numpy_dirs():
                    box.call("numpy_version", {})
        except (SandboxUnavailable, StudentError) as exc:
            errors.seek(0)
            said = " ".join(errors.read(4096).decode(errors="replace").split())[-300:]
            fix = ("set sandbox = \"user\" under [grading] in scalelabs.toml where the grader runs as root"
                   if mode == "bubblewrap" else "make them readable by all users")
            raise SandboxUnavailable(
                f"the {name} cannot run the grader's worker here, so grading refuses"
                f" ({said or getattr(exc, 'message', str(exc))}). Fix: grade with a Python whose interpreter, "
                f"standard library and numpy the {name} can reach read-only (now {python_paths()[0]}), or {fix}") from None
    if found:
        where = (f"the folders the jail binds ({', '.join(runtime_mounts().binds[:4])}, ...)" if mode == "bubblewrap"
                 else f"the interpreter's folders ({python_paths()[2]})")
        raise SandboxUnavailable(
            f"the {name} shows student code what it must not ({'; '.join(map(str, found[:3]))}), so "
            f"grading refuses. Fix: install scalelabs and keep the course and the submissions outside {where}")
    _checked.add(key)


def check_jail_soon(config: GradingConfig, secrets: Collection[Path] = ()) -> threading.Thread:
    """Start check_jail on a thread of its own for the mode `config` chooses, so that its processes (bwrap's
    probe, the runtime's, the probe jail: most of a grader's start-up, and most of it waiting) run while
    this process imports and loads the lab. Nothing is skipped: a sandbox's own check_jail waits for this
    one (one lock) and, where it failed, runs the check again and raises its refusal then; a mode that
    cannot be chosen is left to grading to refuse. `secrets` as check_jail's (the submission folder, the
    course secret's file: the probe reads for them from inside)."""
    def check() -> None:
        try:
            mode = choose_mode(config.sandbox, config.allow_unsandboxed)
            if mode in ("bubblewrap", "user"):
                check_jail(config, secrets, mode)
        except Exception:   # noqa: BLE001 -- the sandbox's own check raises it, where grading can say it
            pass
    # not a daemon: a command that ends early waits for the probe jail to go and its folder to be removed
    thread = threading.Thread(target=check, name="scalelabs-jail-check")
    thread.start()
    return thread


def jail_beside_the_check(module: str, config: GradingConfig) -> "Sandbox | None":
    """Under bubblewrap, the grading jail started now, beside the start check's probe jail (check_jail_soon),
    so that the two boot on two cores at once; it holds only the worker until grading hands it the submission
    (grade_submission's `ahead`), which waits for the check and refuses as a fresh sandbox would
    (Sandbox.ahead's checked=False). None in any other mode or where it cannot start: grading then starts
    its own sandbox, which meets the same cause and names it."""
    try:
        if choose_mode(config.sandbox, config.allow_unsandboxed) != "bubblewrap":
            return None
        return Sandbox.ahead(module, config, checked=False)
    except Exception:   # noqa: BLE001 -- see above
        return None
