"""The isolated worker that runs student code, and the grader's client for it.

`StudentError` is what a student callable raises when the student's code fails in any way.
"""
from .client import Sandbox, StudentError, bwrap_available

__all__ = ["Sandbox", "StudentError", "bwrap_available"]
