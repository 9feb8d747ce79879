"""The grader's side of the sandbox: start the worker (bubblewrap, or a plain subprocess where
bwrap is missing), send JSON requests, enforce the per-call timeout, the submission's time budget
and the memory limit, and turn every failure of student code into a `StudentError`.

The worker sees: /usr and the base libraries, the Python stdlib (its site-packages hidden under a
tmpfs), numpy bound into a private site dir, the worker script, a read-only *copy* of the
submission, a writable tmpfs /tmp; no network, no repo, no reference/, no autograder/.
"""
from __future__ import annotations

import importlib.util
import json
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..config import GradingConfig

WORKER = Path(__file__).with_name("worker.py")
REPLY_CAP_BYTES = 4 << 20       # a reply longer than this is a flood on the protocol fd
FILE_CAP_BYTES = 64 << 20       # RLIMIT_FSIZE: files the student writes in /tmp
COPY_CAP_BYTES = 20 << 20       # submission files larger than this are not copied in


class StudentError(Exception):
    """The student's code failed: `message` is one line a student understands.

    `fatal` means the worker is gone (timeout, crash, exit, budget): calling again is pointless
    until the sandbox restarts it.
    """

    def __init__(self, message: str, kind: str = "exception", *, fatal: bool = False, output: str = ""):
        super().__init__(message)
        self.message, self.kind, self.fatal, self.output = message, kind, fatal, output


@lru_cache(maxsize=None)
def bwrap_available() -> str | None:
    """Path of a working bwrap (it may exist but be unusable without user namespaces), else None."""
    path = shutil.which("bwrap")
    if not path:
        return None
    probe = [path, "--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "true"]
    try:
        ok = subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    return path if ok else None


def _python() -> tuple[str, str, str]:
    """(interpreter binary, base prefix's lib dir, stdlib dir) of the Python running the grader."""
    exe = os.path.realpath(sys.executable)
    stdlib = os.path.realpath(sysconfig.get_paths(vars={"base": sys.base_prefix, "installed_base": sys.base_prefix})["stdlib"])
    return exe, os.path.dirname(stdlib), stdlib


def _numpy_dirs() -> list[str]:
    """numpy's package dir and its bundled shared libraries (numpy.libs), if numpy is installed."""
    spec = importlib.util.find_spec("numpy")
    if spec is None or not spec.submodule_search_locations:
        return []
    pkg = os.path.realpath(list(spec.submodule_search_locations)[0])
    libs = os.path.join(os.path.dirname(pkg), "numpy.libs")
    return [pkg] + ([libs] if os.path.isdir(libs) else [])


def copy_submission(src: Path, dest: Path) -> None:
    """Copy regular files only (no symlinks: a link to reference/ must not be followed by the
    grader), skipping notebooks, caches, hidden entries and files over COPY_CAP_BYTES."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir(src):
        if entry.name.startswith(".") or entry.name == "__pycache__" or entry.is_symlink():
            continue
        target = dest / entry.name
        if entry.is_dir(follow_symlinks=False):
            copy_submission(Path(entry.path), target)
        elif entry.is_file(follow_symlinks=False) and not entry.name.endswith(".ipynb"):
            if entry.stat(follow_symlinks=False).st_size <= COPY_CAP_BYTES:
                shutil.copyfile(entry.path, target)


class Sandbox:
    """One submission's worker. Use as a context manager; `load()` first, then `signature`/`call`.

    `deadline` is a time.monotonic() value: no call runs past it (the submission's budget).
    """

    def __init__(self, submission_dir: Path, module: str, config: GradingConfig,
                 *, deadline: float | None = None, use_bwrap: bool | None = None):
        self.submission_dir = Path(submission_dir)
        self.module = module
        self.config = config
        self.deadline = deadline
        self.bwrap = bwrap_available() if use_bwrap in (None, True) else None
        if use_bwrap and not self.bwrap:
            raise RuntimeError("bubblewrap was requested but is not usable here")
        self.root: Path | None = None
        self.proc: subprocess.Popen | None = None
        self.buffer = b""
        self.import_error: StudentError | None = None
        self.imported = False

    @property
    def mode(self) -> str:
        return "bubblewrap" if self.bwrap else "subprocess"

    # --- lifecycle ---

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._kill()
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def _prepare(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="scalelabs-sandbox-"))
        copy_submission(self.submission_dir, self.root / "submission")
        (self.root / "tmp").mkdir()
        site = self.root / "site"
        site.mkdir()
        if not self.bwrap:
            for d in _numpy_dirs():
                (site / os.path.basename(d)).symlink_to(d)
            shutil.copyfile(WORKER, self.root / "worker.py")

    def _command(self) -> tuple[list[str], dict[str, Any]]:
        exe, libdir, stdlib = _python()
        roots = [stdlib, libdir]
        if self.bwrap:
            paths = {"submission": "/sandbox/submission", "site": "/sandbox/site", "tmp": "/tmp"}
            cmd = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
                   "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8",
                   "--ro-bind", "/usr", "/usr"]
            for top in ("/lib", "/lib64", "/lib32", "/bin", "/sbin"):
                if os.path.islink(top):
                    cmd += ["--symlink", os.readlink(top), top]
                elif os.path.isdir(top):
                    cmd += ["--ro-bind", top, top]
            cmd += ["--ro-bind", exe, exe, "--ro-bind", libdir, libdir,
                    "--tmpfs", os.path.join(stdlib, "site-packages")]
            for d in _numpy_dirs():
                cmd += ["--ro-bind", d, f"/sandbox/site/{os.path.basename(d)}"]
            cmd += ["--ro-bind", str(WORKER), "/sandbox/worker.py",
                    "--ro-bind", str(self.root / "submission"), paths["submission"],
                    "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev", "--chdir", "/tmp",
                    exe, "-I", "-S", "/sandbox/worker.py"]
            roots += ["/sandbox"]
        else:
            paths = {k: str(self.root / k) for k in ("submission", "site", "tmp")}
            cmd = [exe, "-I", "-S", str(self.root / "worker.py")]
            roots += [paths["submission"], paths["site"]] + _numpy_dirs()
        config = dict(paths, module=self.module, read_roots=roots, output_cap=self.config.output_cap_chars)
        return cmd + [json.dumps(config)], paths

    def _limits(self) -> None:
        """Runs in the child before exec: memory, CPU backstop, file size, no core dumps."""
        mem = self.config.memory_mb << 20
        cpu = int(self.config.budget_s) + 10
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_CAP_BYTES, FILE_CAP_BYTES))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def _start(self) -> None:
        if self.root is None:
            self._prepare()
        cmd, paths = self._command()
        env = {"PATH": "/usr/bin:/bin", "HOME": paths["tmp"], "LANG": "C.UTF-8"}
        self.buffer = b""
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=self.root / "tmp", env=env, preexec_fn=self._limits,
                                     start_new_session=True, close_fds=True)
        self._read(self.config.import_timeout_s, what=f"starting Python for {self.module}.py")

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
                return StudentError(f"{what} used up its CPU time", "timeout", fatal=True)
            if sig is signal.SIGXFSZ:
                return StudentError(f"{what} wrote a file larger than {FILE_CAP_BYTES >> 20} MB", "died", fatal=True)
            return StudentError(f"{what} crashed the worker process ({sig.name})", "died", fatal=True)
        return StudentError(f"{what} stopped the worker process (exit code {code}: os._exit() or a crash)",
                            "died", fatal=True)

    def _read(self, timeout_s: float, what: str) -> dict:
        """One reply line within the timeout (and the submission's deadline), else a fatal StudentError."""
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
                    raise StudentError("the time budget for grading this submission ran out", "budget", fatal=True)
                raise StudentError(f"{what} did not finish within {timeout_s:g} s (an infinite loop?)",
                                   "timeout", fatal=True)
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
        except ValueError:
            self._kill()
            raise StudentError(f"{what} corrupted the grader's channel", "died", fatal=True)

    def _request(self, request: dict, timeout_s: float, what: str) -> dict:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self._kill()
            raise StudentError("the time budget for grading this submission ran out", "budget", fatal=True)
        if not self.alive:
            raise StudentError("the worker process is not running", "died", fatal=True)
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._death(what)
        reply = self._read(timeout_s, what)
        if not reply.get("ok"):
            err = reply.get("error") or {}
            kind = "wrong_type" if err.get("wrong_type") else str(err.get("kind", "exception"))
            raise StudentError(str(err.get("message", "failed")), kind, output=str(reply.get("output", "")))
        return reply

    # --- the API the checks use ---

    def load(self) -> None:
        """Start the worker and import the module; a failure is kept in `import_error` and raised."""
        if self.import_error is not None:
            raise self.import_error
        if self.alive and self.imported:
            return
        if not (self.submission_dir / f"{self.module}.py").is_file():
            self.import_error = StudentError(f"{self.module}.py is not in the submission", "missing_module")
            raise self.import_error
        what = f"importing {self.module}.py"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise StudentError("the time budget for grading this submission ran out", "budget", fatal=True)
        try:
            self._start()
            self._request({"op": "import"}, self.config.import_timeout_s, what)
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
        reply = self._request({"op": "signature", "name": name}, self.config.call_timeout_s, f"inspecting {name}")
        return [p[0] for p in reply["params"] if p[1] in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY", "POSITIONAL_ONLY")]

    def call(self, name: str, kwargs: dict) -> Any:
        """The student's name(**kwargs) as a JSON value, or StudentError."""
        reply = self._request({"op": "call", "name": name, "kwargs": kwargs}, self.config.call_timeout_s, name)
        return reply["value"]

    def call_many(self, name: str, kwargs_list: list[dict]) -> list[tuple[bool, Any]]:
        """Many calls in one round trip: [(True, value) | (False, error message)], or a fatal
        StudentError for the whole batch (which then has no culprit; callers retry one by one)."""
        reply = self._request({"op": "call_many", "name": name, "kwargs_list": kwargs_list},
                              self.config.call_timeout_s, name)
        return [(True, r["value"]) if r.get("ok") else (False, r.get("error", {}).get("message", ""))
                for r in reply["replies"]]
