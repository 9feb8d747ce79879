"""The isolated worker that runs student code, and the grader's client for it.

`StudentError` is what a student callable raises when the student's code fails in any way;
`SandboxUnavailable` is the refusal to grade where no boundary can run (and none was opted out of).

One module per job: `modes` (which boundary), `jail` (the bubblewrap command), `seccomp` (its
filter), `usermode` (the separate uid), `landlock` (the kernel's rules of what that uid may open),
`chroot` (the prepared tree where the kernel has no Landlock), `runtime` (what the worker needs of the
grader's Python), `replies` (every reply checked as untrusted data), `roots` (the jails' folders),
`client` (`Sandbox`), `worker` (the standalone worker itself). The submission's file tree is autograder.engine.filetree.
"""
from autograder.engine.sandbox.client import Sandbox, check_jail, check_jail_soon, jail_beside_the_check
from autograder.engine.sandbox.errors import SandboxUnavailable, StudentError
from autograder.engine.sandbox.modes import MODES, bwrap_available, choose_mode

__all__ = ["MODES", "Sandbox", "SandboxUnavailable", "StudentError", "bwrap_available", "check_jail", "check_jail_soon",
           "choose_mode", "jail_beside_the_check"]
