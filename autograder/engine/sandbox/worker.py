"""The sandboxed worker: imports the student's module and calls its functions on request.

Standalone on purpose (stdlib only, nothing from autograder/): it runs as `python -I -S worker.py
CONFIG_JSON` inside bubblewrap, where the grader, reference/ and site-packages do not exist.

Protocol: one JSON object per line. Requests on the private copy of fd 0, replies on the private copy
of fd 1; fds 0, 1 and 2 then point at /dev/null, so the student's prints and os.write floods go
nowhere, and sys.stdout/sys.stderr are capped in-memory writers whose text is returned per call.

    {"op": "import"}                               -> {"ok": true} | {"ok": false, "error": E}
    {"op": "signature", "name": f}                 -> {"ok": true, "params": [[name, kind], ...]} | error
    {"op": "call", "name": f, "kwargs": {...}}     -> {"ok": true, "value": V, "output": s} | error
    {"op": "call_many", "name": f, "kwargs_list": [...]} -> {"ok": true, "replies": [call reply, ...]}
    E = {"kind": "missing_module" | "syntax" | "import" | "exit" | "missing_function" | "not_callable"
                 | "not_implemented" | "exception" | "memory" | "bad_return", "message": str,
         "type": the exception's nearest builtin class (student code raised it), "where": [file, line]}

"type" and "where" (the innermost frame in the student's module, else in another file of the
submission) let the grader show an error as its type and the student's own line, without the
message student code wrote (feedback before the due date: autograder.engine.views).

Return values cross strictly: exact bool/int/float/str/None (numpy scalars via .item()) and lists of
those. Anything else -- an object with a rigged __eq__, a float subclass -- is a "bad_return".
"""
import importlib
import json
import os
import sys

TEXT_CAP = 300          # characters of an exception message
LIST_CAP = 10_000       # elements of a returned list
INT_BITS_CAP = 4_000    # bits of a returned int (JSON and float comparison stay sane)


class CappedWriter:
    """A text stream that keeps the first `cap` characters written to it and drops the rest."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, cap):
        self.cap = cap
        self.parts = []
        self.size = 0
        self.truncated = False

    def write(self, text):
        if type(text) is not str:
            raise TypeError("write() argument must be str")
        room = self.cap - self.size
        if room > 0:
            self.parts.append(text[:room])
            self.size += min(room, len(text))
        if len(text) > room:
            self.truncated = True
        return len(text)

    def take(self):
        text = "".join(self.parts) + (" [output truncated]" if self.truncated else "")
        self.parts, self.size, self.truncated = [], 0, False
        return text

    def flush(self):
        pass

    def isatty(self):
        return False

    def writable(self):
        return True


class BadReturn(Exception):
    """A return value that cannot cross; `wrong_type` asks the grader to add what was expected."""

    def __init__(self, message, wrong_type=False):
        super().__init__(message)
        self.wrong_type = wrong_type


def safe_text(obj):
    """str(obj) on one line, capped; student exceptions may have hostile __str__."""
    try:
        text = str(obj)
        if type(text) is not str:
            return "<unprintable>"
    except BaseException:
        return "<unprintable>"
    text = " ".join(text.split())
    return text[:TEXT_CAP] + ("..." if len(text) > TEXT_CAP else "")


def convert(value, depth=0):
    """The JSON-safe value of a student's return, or BadReturn naming what came back instead."""
    kind = type(value)
    if value is None or kind in (bool, float, str):
        if kind is str and len(value) > LIST_CAP:
            raise BadReturn("returned a string of %d characters" % len(value))
        return value
    if kind is int:
        if value.bit_length() > INT_BITS_CAP:
            raise BadReturn("returned an integer too large to compare")
        return value
    np = sys.modules.get("numpy")
    if np is not None and depth < 3:
        if isinstance(value, np.generic):
            return convert(value.item(), depth + 1)
        if isinstance(value, np.ndarray):
            if value.ndim == 0:
                return convert(value.item(), depth + 1)
            if value.size > LIST_CAP:
                raise BadReturn("returned an array of %d elements" % value.size)
            return convert(value.tolist(), depth + 1)
    if kind in (list, tuple) and depth < 3:
        if len(value) > LIST_CAP:
            raise BadReturn("returned a list of %d elements" % len(value))
        return [convert(v, depth + 1) for v in value]
    raise BadReturn("returned a %s" % safe_text(kind.__name__), True)


CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08
PLAIN_FUNCTION = type(lambda: None)


def parameters(fn):
    """[[name, kind], ...] as inspect.signature(fn) gives them. A plain function's come from its code
    object: importing inspect costs each jail ~10 ms, a third of its start, for what every submission
    needs once per function; anything else (a wrapped, partial or builtin function, a class, an
    object with __signature__) imports inspect and asks it."""
    if type(fn) is PLAIN_FUNCTION and not any(hasattr(fn, a) for a in ("__wrapped__", "__signature__")):
        code = fn.__code__
        names, flags = code.co_varnames, code.co_flags
        positional, keyword_only = code.co_argcount, code.co_kwonlyargcount
        params = [[n, "POSITIONAL_ONLY" if i < code.co_posonlyargcount else "POSITIONAL_OR_KEYWORD"]
                  for i, n in enumerate(names[:positional])]
        rest = positional + keyword_only
        if flags & CO_VARARGS:
            params.append([names[rest], "VAR_POSITIONAL"])
        params += [[n, "KEYWORD_ONLY"] for n in names[positional:rest]]
        if flags & CO_VARKEYWORDS:
            params.append([names[rest + bool(flags & CO_VARARGS)], "VAR_KEYWORD"])
        return params
    import inspect
    return [[p.name, p.kind.name] for p in inspect.signature(fn).parameters.values()]


def error(kind, message, exc=None):
    reply = {"ok": False, "error": {"kind": kind, "message": message}}
    if exc is not None:
        reply["error"]["type"] = builtin_type(exc)
        where = origin(exc)
        if where:
            reply["error"]["where"] = where
    return reply


def builtin_type(exc):
    """The name of the nearest builtin class of exc: a class student code made up (its name can
    carry anything) is named by the builtin it derives from."""
    for cls in type(exc).__mro__:
        if cls.__module__ == "builtins":
            return cls.__name__
    return "BaseException"


SUBMISSION = {"dir": "", "module": ""}   # set by main: where the student's files are


def origin(exc):
    """[file name, line] of the innermost traceback frame in the student's module (else in another
    file of the submission folder), or None."""
    own = other = None
    if isinstance(exc, SyntaxError) and type(exc.filename) is str and type(exc.lineno) is int \
            and os.path.dirname(exc.filename) == SUBMISSION["dir"]:
        return [os.path.basename(exc.filename), exc.lineno]   # compiling: no frame of the file itself
    tb = getattr(exc, "__traceback__", None)
    depth = 0
    while tb is not None and depth < 1000:
        path = tb.tb_frame.f_code.co_filename
        if type(path) is str and os.path.dirname(path) == SUBMISSION["dir"]:
            where = [os.path.basename(path), tb.tb_lineno]
            if where[0] == SUBMISSION["module"] + ".py":
                own = where
            else:
                other = where
        tb, depth = tb.tb_next, depth + 1
    return own or other


def failure(exc):
    """The protocol error for an exception raised by student code."""
    if isinstance(exc, NotImplementedError):
        return error("not_implemented", "not implemented yet (raises NotImplementedError)")
    if isinstance(exc, SystemExit):
        return error("exit", "called sys.exit(%s)" % safe_text(exc.code), exc)
    if isinstance(exc, MemoryError):
        return error("memory", "ran out of memory (the sandbox's memory limit)")
    if isinstance(exc, RecursionError):
        return error("exception", "raised RecursionError (infinite recursion?)", exc)
    if isinstance(exc, BadReturn):
        reply = error("bad_return", str(exc))
        reply["error"]["wrong_type"] = exc.wrong_type
        return reply
    return error("exception", "raised %s: %s" % (safe_text(type(exc).__name__), safe_text(exc)), exc)


class Worker:
    def __init__(self, config, capture):
        self.module_name = config["module"]
        self.capture = capture
        self.module = None

    def handle(self, request):
        op = request.get("op")
        if op == "import":
            return self.do_import()
        if self.module is None:
            return error("import", "the module is not imported")
        if op == "signature":
            return self.do_signature(request["name"])
        if op == "call":
            return self.do_call(request["name"], request["kwargs"])
        if op == "call_many":  # one round trip for a whole batch of hidden inputs
            return {"ok": True, "replies": [self.do_call(request["name"], kw) for kw in request["kwargs_list"]]}
        return error("exception", "unknown request")

    def do_import(self):
        name = self.module_name
        try:
            self.module = importlib.import_module(name)
            return {"ok": True, "output": self.capture.take()}
        except SyntaxError as exc:
            return error("syntax", "%s.py has a syntax error on line %s: %s" % (name, exc.lineno, safe_text(exc.msg)), exc)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                return error("missing_module", "%s.py is not in the submission" % name)
            return error("import", "importing %s.py raised ModuleNotFoundError: %s" % (name, safe_text(exc)))
        except SystemExit as exc:
            return error("exit", "%s.py called sys.exit(%s) while being imported" % (name, safe_text(exc.code)))
        except BaseException as exc:
            return error("import", "importing %s.py %s" % (name, failure(exc)["error"]["message"]), exc)

    def lookup(self, name):
        fn = getattr(self.module, name, None)
        if fn is None:
            return None, error("missing_function", "%s.py has no function %s" % (self.module_name, name))
        if not callable(fn):
            return None, error("not_callable", "%s.%s is not a function" % (self.module_name, name))
        return fn, None

    def do_signature(self, name):
        try:
            fn, err = self.lookup(name)
            if err:
                return err
            return {"ok": True, "params": parameters(fn)}
        except BaseException as exc:
            return failure(exc)

    def do_call(self, name, kwargs):
        try:
            fn, err = self.lookup(name)
            if err:
                return err
            value = convert(fn(**kwargs))
            return {"ok": True, "value": value, "output": self.capture.take()}
        except BaseException as exc:
            reply = failure(exc)
            reply["output"] = self.capture.take()
            return reply


# --- the guard: an audit hook that keeps student code to the submission, the stdlib and /tmp ---

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
DENIED_IMPORTS = {"_ctypes", "ctypes", "_socket", "socket", "_posixsubprocess", "subprocess",
                  "multiprocessing", "_multiprocessing", "pty"}
DENIED_EVENTS = ("socket.", "subprocess.", "os.system", "os.exec", "os.posix_spawn", "os.spawn",
                 "os.fork", "os.forkpty", "os.kill", "os.killpg", "ctypes.", "pty.", "webbrowser.",
                 "_thread.start_new_thread")
PATH_WRITE_EVENTS = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
                     "os.symlink", "os.link", "os.truncate", "os.utime", "os.chflags", "os.lchflags",
                     "os.mkfifo", "os.mknod", "shutil.rmtree", "shutil.copytree", "shutil.move"}


def install_guard(read_roots, write_roots):
    """Deny file access outside the given roots, sockets, subprocesses and ctypes (sys.addaudithook).

    Defence in depth: bubblewrap is the real boundary; without it this hook is the only one.
    """
    realpath, sep = os.path.realpath, os.sep
    reads = tuple(realpath(r) for r in read_roots + write_roots)
    writes = tuple(realpath(r) for r in write_roots)

    def inside(path, roots):
        if isinstance(path, int) or path is None:
            return True
        p = realpath(os.fsdecode(path))
        return any(p == r or p.startswith(r.rstrip(sep) + sep) for r in roots)

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            writing = bool((flags or 0) & WRITE_FLAGS) or any(c in (mode or "") for c in "wax+")
            if not inside(path, writes if writing else reads):
                raise PermissionError("the sandbox does not allow %s %s" % ("writing" if writing else "reading", path))
        elif event in PATH_WRITE_EVENTS:
            if args and not inside(args[0], writes):
                raise PermissionError("the sandbox does not allow changing files outside the temporary folder")
        elif event in ("os.listdir", "os.scandir"):
            if args and not inside(args[0] or ".", reads):
                raise PermissionError("the sandbox does not allow listing %s" % (args[0],))
        elif event == "import":
            if args and args[0] in DENIED_IMPORTS:
                raise ImportError("the sandbox does not allow importing %s" % args[0])
        elif event.startswith(DENIED_EVENTS):
            raise PermissionError("the sandbox does not allow %s" % event)

    sys.addaudithook(hook)


def main():
    config = json.loads(sys.argv[1])
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8")
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = config.get("devnull_fd")    # the grader's, where a chroot may have no /dev/null
    if devnull is None:
        devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    capture = CappedWriter(int(config["output_cap"]))
    sys.stdout = sys.stderr = capture
    sys.stdin = os.fdopen(os.dup(devnull), "r")
    sys.dont_write_bytecode = True
    here = os.path.realpath(os.path.dirname(__file__))
    stdlib = [p for p in sys.path if p and os.path.realpath(p) != here]
    sys.path[:] = [config["submission"], config["site"]] + stdlib
    SUBMISSION.update(dir=config["submission"], module=config["module"])
    os.chdir(config["tmp"])
    # numpy (if the student imports it) must not start a thread pool that eats the memory limit
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = "1"
    install_guard(config["read_roots"], [config["tmp"], os.devnull])
    worker = Worker(config, capture)
    replies.write(json.dumps({"ok": True, "ready": True}) + "\n")
    replies.flush()
    for line in requests:
        reply = worker.handle(json.loads(line))
        try:
            text = json.dumps(reply)
        except (TypeError, ValueError):
            text = json.dumps(error("bad_return", "returned a value that cannot be sent back"))
        replies.write(text + "\n")
        replies.flush()


if __name__ == "__main__":
    main()
