"""The course secret: 32 random bytes, made once per course, that key every hidden input it draws.

A check's seed is HMAC-SHA256 of (assignment, student, item, check) under the secret
(`checks.seed_for`): whoever lacks the secret cannot compute the inputs the grader will draw for a
student, however much of the engine and the released files they read; the same secret draws the
same inputs again, so a regrade of the same files is byte-identical.

Where it lives: `<course>/.scalelabs/course_secret` (64 hex digits; the folder 0700, the file 0600;
`.scalelabs/` is gitignored), or the file `SCALELABS_COURSE_SECRET_FILE` names (kept outside a
shared course folder). The first `scalelabs release` creates it (so does `scalelabs otter`), and
nothing replaces it. A second TA machine gets a copy of that file (docs/tas.md); `scalelabs secret`
prints its fingerprint on each machine to compare. The otter zip carries it as `course_secret`,
which the lockdown makes root-only. It never reaches release/, source/, results or feedback: the
grader reports only its fingerprint, a hash that tells nothing about it.

Without one (a course that never released with scalelabs), seeds fall back to public values, as
before: hidden inputs are then predictable from the released files, and every result says so
(`NO_SECRET_NOTE`).
"""
from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

ENV = "SCALELABS_COURSE_SECRET_FILE"
RELATIVE = Path(".scalelabs") / "course_secret"
ZIP_NAME = "course_secret"        # in the otter zip: /autograder/source/course_secret
KEY_BYTES = 32
NO_SECRET_NOTE = ("Hidden inputs: this course has no course secret, so they were drawn from public values "
                  "(staff: docs/staff.md, 'Course secret')")


class SecretError(ValueError):
    """The course secret file exists but cannot be used: the message names the file and the fix."""


@dataclass(frozen=True)
class CourseSecret:
    key: bytes
    path: Path | None = None     # where it was read (a path the student's code must not read)

    def __repr__(self) -> str:   # never the key, whatever prints a config or a traceback
        return f"CourseSecret(fingerprint={self.fingerprint!r}, path={self.path!r})"

    @property
    def fingerprint(self) -> str:
        """12 hex digits naming this secret (a hash of it): equal on two machines when they hold the same one."""
        return hashlib.sha256(b"scalelabs course secret fingerprint\0" + self.key).hexdigest()[:12]

    def seed(self, message: bytes) -> bytes:
        return hmac.new(self.key, message, hashlib.sha256).digest()


def secret_path(course: Path | None = None) -> Path | None:
    """Where the course's secret is, or would be: $SCALELABS_COURSE_SECRET_FILE, else the course's
    .scalelabs/course_secret (None without a course)."""
    if os.environ.get(ENV):
        return Path(os.environ[ENV])
    if course is None:
        from autograder.course import find_course
        course = find_course()
    return Path(course) / RELATIVE if course is not None else None


def read_secret(path: Path) -> CourseSecret | None:
    """The secret in `path`, None if there is no such file; SecretError if it is not one."""
    path = Path(path)
    try:
        text = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SecretError(f"cannot read the course secret {path}: {exc}") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != KEY_BYTES:
        raise SecretError(f"{path} is not a course secret ({2 * KEY_BYTES} hex digits): restore it from the machine "
                          f"that released the course (docs/tas.md); a new one would change every student's hidden inputs")
    return CourseSecret(key, path)


def load_secret(course: Path | None = None) -> CourseSecret | None:
    """The course's secret (`secret_path`), None where it has none."""
    path = secret_path(course)
    return read_secret(path) if path is not None else None


def create_secret(course: Path | None = None) -> tuple[CourseSecret, bool]:
    """The course's secret, made now if it has none: (secret, created). Never replaces one."""
    path = secret_path(course)
    if path is None:
        from autograder.course import course_root
        path = course_root(course) / RELATIVE
    found = read_secret(path)
    if found is not None:
        return found, False
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = secrets.token_bytes(KEY_BYTES)
    try:   # O_EXCL: two releases at once keep the first secret
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return read_secret(path), False
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(key.hex() + "\n")
    return CourseSecret(key, path), True
