"""When a submission was made, from the record its door keeps (autograder.classroom.deadlines weighs it):

    nbgrader     submitted/<student>/<lab>/timestamp.txt: the course's collect writes it in UTC (the later of
                 the hand-in's name, `%Y-%m-%d %H:%M:%S.%f %Z` in Exchange.timezone as `nbgrader submit`
                 writes it, and its files' last change: autograder/doors/collect.py); nbgrader's own
                 collect copies what `nbgrader submit` wrote
    Gradescope   the autograder's submission_metadata.json `created_at` (the otter door), an export's
                 submission_metadata.yml `:created_at` (grade-batch and the report of an export)
    a TA's CSV   `student,submitted_at` (optionally `lab`), for a platform download (`--timestamps`)

What a student can write is weighed as such (docs/tas.md, "Late work"): Gradescope's times are the
platform's; nbgrader's timestamp.txt is written by `nbgrader submit`, which runs as the student, so a
time without a zone (which nbgrader would read as UTC, whatever zone it was written in) or one after
the moment of grading is not used. Each reader returns a SubmissionTime: the time, or why there is none.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

from autograder.classroom.deadlines import SubmissionTime, parse_moment, read_rows
from autograder.engine.config import ConfigError

NBGRADER_FILE = "timestamp.txt"
NBGRADER_SOURCE = f"nbgrader {NBGRADER_FILE}"
GRADESCOPE_SOURCE = "Gradescope created_at"
TIMESTAMP_COLUMNS = ("student", "submitted_at")
STAMP_CAP_BYTES = 256      # nbgrader writes about 30 characters


class TimestampsError(ConfigError):
    """A TA's timestamps CSV cannot be used: the message names the file and the line."""


def _naive(text: str) -> datetime | None:
    """A date and time without a zone (`2026-11-20 10:00:00.1` too: any number of fraction digits), else None."""
    match = re.fullmatch(r"(\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d)?)(?:\.(\d+))?", text)
    if match is None:
        return None
    try:
        moment = datetime.fromisoformat(match[1])
    except ValueError:
        return None
    return moment.replace(microsecond=int((match[2] or "0")[:6].ljust(6, "0")))


ABBREVIATION = re.compile(r"[A-Za-z]{2,6}")           # JST, IST, AEDT, CEST: a zone's name for itself, not an instant


class ZoneDisagrees(ValueError):
    """A time written with a zone's abbreviation that the configured zone does not write at that time (an
    abbreviation names no single offset: IST is India's, Ireland's and Israel's), so it names no instant."""


def nbgrader_time(text: str, zone: str = "") -> datetime:
    """A timestamp as nbgrader's submit writes it, `datetime.now(gettz(Exchange.timezone)).strftime(
    "%Y-%m-%d %H:%M:%S.%f %Z")`: ISO 8601 with an offset, `... UTC`/`... GMT`, `... +04` or `... -0330` (a
    zone whose name is its offset), or `... <abbreviation>` read in `zone`, the course's zone (an IANA name
    as dateutil's gettz reads it, nbgrader's own reader): JST in Asia/Tokyo, IST in Asia/Kolkata, AEST and
    AEDT in Australia/Sydney, PDT then PST in the hour the clocks go back. ValueError says why it is not
    one: not a date-time, or no zone (nbgrader would take it for UTC, whatever zone it was written in);
    ZoneDisagrees when the abbreviation is not one `zone` writes at that time (or no zone is set)."""
    text = text.strip()
    try:
        return parse_moment(text)
    except ValueError:
        pass
    if _naive(text) is not None:
        raise ValueError(f"{text!r} has no time zone")
    stamp, _, token = text.rpartition(" ")
    local = _naive(stamp)
    if local is None:
        raise ValueError(f"{text!r} is not a date-time")
    if offset := re.fullmatch(r"([+-])(\d\d):?(\d\d)", token):
        sign = -1 if offset[1] == "-" else 1
        return local.replace(tzinfo=timezone(sign * timedelta(hours=int(offset[2]), minutes=int(offset[3]))))
    if not ABBREVIATION.fullmatch(token):
        raise ValueError(f"{text!r}: {token!r} is not an offset, UTC or a time zone's abbreviation")
    return _written_in(local, token, zone, text)


def _written_in(local: datetime, token: str, zone: str, text: str) -> datetime:
    """`local` read in `zone` where `zone` writes it with the abbreviation `token` (fold: the hour the
    clocks go back is written twice, EDT then EST); else ZoneDisagrees."""
    from dateutil import tz

    tzinfo = tz.gettz(zone) if zone else None
    written = {}
    for fold in (0, 1):
        moment = tz.enfold(local.replace(tzinfo=tzinfo), fold) if tzinfo else None
        if moment is not None and tz.datetime_exists(moment):
            written.setdefault(moment.tzname(), moment)
    if token in written:
        return written[token]
    if not zone or tzinfo is None:
        raise ZoneDisagrees(f"{text!r}: {token!r} is not an offset, UTC, or the course's time zone's abbreviation "
                            f"({zone or 'none set'}{'' if tzinfo or not zone else ': not a time zone'}), so it names no "
                            "one instant")
    names = " or ".join(written) or "nothing (the clocks skip that hour)"
    raise ZoneDisagrees(f"{text!r} is written in {token}, but the course's time zone {zone} writes {names} at that "
                        f"time: {token} names no one instant here")


def from_timestamp_file(folder: Path, zone: str = "") -> SubmissionTime:
    """The time nbgrader's timestamp.txt in `folder` gives (a link, FIFO or device is not read)."""
    from autograder.engine.filetree import read_regular

    path = Path(folder) / NBGRADER_FILE
    try:
        raw = read_regular(path, STAMP_CAP_BYTES)
    except FileNotFoundError:
        return SubmissionTime(None, NBGRADER_SOURCE, f"no {NBGRADER_FILE} in the submission")
    except (OSError, ValueError) as exc:
        return SubmissionTime(None, NBGRADER_SOURCE, f"{NBGRADER_FILE} cannot be read ({exc})")
    try:
        return SubmissionTime(nbgrader_time(raw.decode("utf-8"), zone), NBGRADER_SOURCE)
    except UnicodeDecodeError:
        return SubmissionTime(None, NBGRADER_SOURCE, f"{NBGRADER_FILE} is not text")
    except ValueError as exc:
        return SubmissionTime(None, NBGRADER_SOURCE, f"{NBGRADER_FILE}: {exc}")


def from_gradescope(created_at, source: str = GRADESCOPE_SOURCE) -> SubmissionTime:
    """A Gradescope submission's `created_at` (the autograder's ISO text, or the export's YAML time)."""
    if created_at in (None, ""):
        return SubmissionTime(None, source, "Gradescope gave no created_at")
    try:
        return SubmissionTime(parse_moment(created_at), source)
    except ValueError as exc:
        return SubmissionTime(None, source, f"created_at {exc}")


def read_timestamps(path: Path, lab: str, zone: str = "") -> dict[str, SubmissionTime]:
    """student -> SubmissionTime from a TA's CSV (`student,submitted_at`, an optional `lab` column whose
    other labs' rows are skipped). TimestampsError names the file and line of a bad row: an unsafe id, a
    time that is not one, has no zone (and the course sets no [deadlines] timezone) or lies in the
    future, a student listed twice. A TA can fix the file and rerun: nothing is graded before."""
    from autograder.classroom.deadlines import FUTURE_SKEW_S
    from autograder.classroom.identity import id_problem

    path = Path(path)
    now = datetime.now(timezone.utc)
    out: dict[str, SubmissionTime] = {}
    lines: dict[str, int] = {}
    for line, row in read_rows(path, TIMESTAMP_COLUMNS, TimestampsError):
        if row.get("lab", lab) not in (lab, ""):
            continue
        where = f"{path} line {line}"
        student = row["student"]
        if why := id_problem(student):
            raise TimestampsError(f"{where}: {why}")
        try:
            moment = parse_moment(row["submitted_at"], zone)
        except ValueError as exc:
            raise TimestampsError(f"{where}: submitted_at {exc}") from None
        if (moment - now).total_seconds() > FUTURE_SKEW_S:
            raise TimestampsError(f"{where}: submitted_at {row['submitted_at']} is in the future")
        if student in out:
            raise TimestampsError(f"{where}: {student} is listed already (line {lines[student]}): keep one")
        out[student], lines[student] = SubmissionTime(moment, f"{path.name} line {line}"), line
    return out


class NoSubmissionTimes(ValueError):
    """The lab has a due date but the class folder says nothing of when anyone submitted."""


def class_times(root: Path, submitters, lab: str, zone: str = "", timestamps: Path | None = None
                ) -> dict[str, SubmissionTime]:
    """Each submitter folder's submission time (keyed by the folder's name under `root`): from the TA's
    CSV when given (per student: a group's is its earliest member row), else a Gradescope export's
    `:created_at`, else nbgrader's timestamp.txt in the `<student>/<lab>/` layout. NoSubmissionTimes when
    the folder has none of these (a plain class folder: pass --timestamps)."""
    from autograder.classroom.identity import read_export

    root = Path(root)
    if timestamps is not None:
        rows = read_timestamps(timestamps, lab, zone)
        out = {}
        for sub in submitters:
            found = [rows[s] for s in sub.students if s in rows]
            out[sub.name] = min(found, key=lambda t: t.when) if found else \
                SubmissionTime(None, Path(timestamps).name, f"no row for {' or '.join(sub.students)} in {Path(timestamps).name}")
        return out
    export = read_export(root)
    if export is not None:
        return {sub.name: from_gradescope(export[sub.name].created_at if sub.name in export else None,
                                          "Gradescope export :created_at") for sub in submitters}
    if any(sub.folder != root / sub.name for sub in submitters):   # nbgrader's submitted/<student>/<lab>/
        return {sub.name: from_timestamp_file(sub.folder, zone) if sub.folder != root / sub.name else
                SubmissionTime(None, NBGRADER_SOURCE, f"no {lab}/ folder, so no {NBGRADER_FILE}") for sub in submitters}
    raise NoSubmissionTimes(f"{lab} has a due date in scalelabs.toml [deadlines], but {root} says nothing of when each "
                            "student submitted (no nbgrader submitted/<student>/<lab>/timestamp.txt, no Gradescope "
                            "submission_metadata.yml): pass --timestamps CSV (columns student,submitted_at, e.g. from "
                            "the platform's download), or grade into an --out of its own with the lab's due date removed")
