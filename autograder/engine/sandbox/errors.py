"""What the sandbox raises: a student's failure, a boundary that cannot run, a reply off the protocol."""
from __future__ import annotations


class StudentError(Exception):
    """The student's code failed: `message` is one line a student understands.

    `fatal` means the worker is gone (timeout, crash, exit, budget, malformed reply): calling again
    is pointless until the sandbox restarts it.
    """

    def __init__(self, message: str, kind: str = "exception", *, fatal: bool = False, output: str = "",
                 reported: bool = False, exc_type: str = "", where: tuple[str, int] | None = None):
        super().__init__(message)
        self.message, self.kind, self.fatal, self.output = message, kind, fatal, output
        # reported by the worker (so `message` and `output` are student text), with the exception's
        # builtin class and the student's own line where the worker named them (replies.check_error
        # checks their shape; the line is shown from the graded copy: autograder.engine.views)
        self.reported, self.exc_type, self.where = reported, exc_type, where


class SandboxUnavailable(RuntimeError):
    """No boundary can run here and the course did not opt in to grading without one."""


class BadReply(Exception):
    """A worker reply that is not what the protocol says (student code rewrote the worker)."""
