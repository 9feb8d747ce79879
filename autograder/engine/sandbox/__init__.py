"""The isolated worker that runs student code, and the grader's client for it.

`StudentError` is what a student callable raises when the student's code fails in any way;
`SandboxUnavailable` is the refusal to grade where no boundary can run (and none was opted out of).
"""
from autograder.engine.sandbox.client import MODES, Sandbox, SandboxUnavailable, StudentError, bwrap_available, choose_mode

__all__ = ["MODES", "Sandbox", "SandboxUnavailable", "StudentError", "bwrap_available", "choose_mode"]
