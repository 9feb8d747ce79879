"""`nbgrader autograde`'s output: a line per student plus what needs a person (issue 28).

nbgrader logs every file it copies, converts and writes at INFO: 110 lines for 4 students, where
the line a TA needs (who was graded, with what score) and the warnings drown. The course's config
installs `OnePerStudent` on the autograde app's logger: nbgrader's per-file chatter (CHATTER, INFO
only) is dropped; every warning and error, nbgrader's or ours, still shows; `EngineScores` logs the
one line per student (`<student>: <score>/<max> points`).
"""
from __future__ import annotations

import logging

# nbgrader 0.9.6's INFO messages that repeat per file or per step of each student
CHATTER = ("Copying ", "Overwriting files with master versions", "Sanitizing ", "Converting notebook ",
           "Writing ", "Autograding ", "Setting destination file permissions", "Creating/updating student ")
APPS = ("AutogradeApp",)   # traitlets names an application's logger after its class


class OnePerStudent(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.INFO or not str(record.msg).startswith(CHATTER)


def one_line_per_student() -> None:
    for name in APPS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, OnePerStudent) for f in logger.filters):
            logger.addFilter(OnePerStudent())
