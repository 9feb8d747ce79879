"""The worker's replies are untrusted data: each is checked against the protocol's vocabulary and caps
(a reply off it is a BadReply, which the client turns into a fatal "malformed reply")."""
from __future__ import annotations

import builtins
import re
from typing import Any

from autograder.engine.sandbox.errors import BadReply, StudentError

MESSAGE_CAP = 200               # characters of student text (error message, printed output) kept from a reply
PARAMS_CAP = 64                 # parameters of a student function's signature reply
LIST_CAP = 10_000               # elements of a returned list (the worker's own cap, re-checked)
DEPTH_CAP = 3                   # nesting of a returned list
INT_BITS_CAP = 4_000            # bits of a returned int


def check_value(value: Any, depth: int = 0) -> None:
    """A returned value in the worker's vocabulary: None/bool/int/float/str and short lists of them."""
    kind = type(value)
    if value is None or kind in (bool, float):
        return
    if kind is int:
        if value.bit_length() > INT_BITS_CAP:
            raise BadReply("an integer too large")
        return
    if kind is str:
        if len(value) > LIST_CAP:
            raise BadReply("a string too long")
        return
    if kind is list:
        if depth >= DEPTH_CAP or len(value) > LIST_CAP:
            raise BadReply("a list too long or too deeply nested")
        for v in value:
            check_value(v, depth + 1)
        return
    raise BadReply(f"a value of JSON type {kind.__name__}")


def student_text(value: Any, cap: int = MESSAGE_CAP) -> str:
    if not isinstance(value, str):
        raise BadReply("a message that is not text")
    return value[:cap] + ("..." if len(value) > cap else "")


def check_error(reply: dict) -> StudentError:
    err = reply.get("error")
    if not isinstance(err, dict):
        raise BadReply("an error without its description")
    kind = "wrong_type" if err.get("wrong_type") is True else err.get("kind", "exception")
    if not isinstance(kind, str) or len(kind) > 40:
        raise BadReply("an error of unknown kind")
    exc_type = err.get("type") if err.get("type") in BUILTIN_EXCEPTIONS else ""
    where = err.get("where")
    where = ((where[0], where[1]) if isinstance(where, list) and len(where) == 2 and isinstance(where[0], str)
             and OWN_FILE.fullmatch(where[0]) and type(where[1]) is int and 0 < where[1] <= 1_000_000 else None)
    return StudentError(student_text(err.get("message", "failed")), kind, output=student_text(reply.get("output", "")),
                        reported=True, exc_type=exc_type, where=where)


# what a worker may name as an error's type and file (anything else is dropped, never shown)
BUILTIN_EXCEPTIONS = frozenset(name for name, obj in vars(builtins).items()
                               if isinstance(obj, type) and issubclass(obj, BaseException))
OWN_FILE = re.compile(r"[A-Za-z0-9_]{1,80}\.py")


def check_call(reply: Any) -> tuple[bool, Any, str]:
    """(ok, value or StudentError, output) of one call reply."""
    if not isinstance(reply, dict) or type(reply.get("ok")) is not bool:
        raise BadReply("a call reply that is not {ok: true|false, ...}")
    if not reply["ok"]:
        return False, check_error(reply), ""
    if "value" not in reply:
        raise BadReply("a call reply without a value")
    check_value(reply["value"])
    return True, reply["value"], student_text(reply.get("output", ""))


def check_signature(reply: dict) -> list[str]:
    """The parameter names of a signature reply that a caller can pass by keyword, in order."""
    params = reply.get("params")
    if not isinstance(params, list) or len(params) > PARAMS_CAP:
        raise BadReply("a signature without a short list of parameters")
    if not all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) and len(x) < 200 for x in p)
               for p in params):
        raise BadReply("a parameter that is not [name, kind]")
    return [p[0] for p in params if p[1] in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY", "POSITIONAL_ONLY")]


def check_replies(reply: dict, inputs: int) -> list[tuple[bool, Any]]:
    """A call_many reply: [(True, value) | (False, error message)], exactly one per input."""
    replies = reply.get("replies")
    if not isinstance(replies, list) or len(replies) != inputs:
        raise BadReply(f"not one reply per input ({inputs} inputs)")
    out = []
    for r in replies:
        ok, value, _ = check_call(r)
        out.append((True, value) if ok else (False, value.message))
    return out
