"""Deadlines and late work: the course's `[deadlines]` (scalelabs.toml), per-student extensions, and
what a submission's time makes of them. Every door (grade-batch, `nbgrader autograde`, the Gradescope
zip) assesses lateness here, so one policy scores a late or an extended submission alike everywhere.

    [deadlines]
    timezone = "America/Los_Angeles"   # the zone of a date-time written without an offset (an IANA name)
    policy = "per_day"                 # none | zero | per_hour | per_day (every lab's, unless it says)
    penalty_percent = 10               # per started hour (per_hour) or day (per_day) late
    max_penalty_percent = 50           # the cap (default 100)
    grace_minutes = 15                 # up to this long after the due date a submission is on time
    extensions = "extensions.csv"      # student,lab,due (relative to scalelabs.toml; optional)

    [deadlines.lab06_collectives]
    due = 2026-12-04T23:59:00          # a TOML date-time: its offset, else `timezone`
    # policy, penalty_percent, max_penalty_percent and grace_minutes may be set per lab too

The penalty is a share of the points the submission earned (its grade of record), so it is recorded
as a percent beside the engine's score and turned into points only where a score is shown: a late
perfect lab at 10 % loses a tenth of its points, a late empty one loses nothing; "zero" is 100 %
(nbgrader's `zero`: the penalty is the score). Lateness runs from the due date (an extension's, when
the student has one); within the grace period a submission is on time, past it every started hour or
day counts. "none" records the lateness and takes nothing.

A submission whose time cannot be read (no time, not a time, no time zone, after the moment of grading)
is `unknown`: no penalty is taken on a guess, and the student needs a person (the reason says why).

    course_deadlines(path=None) -> Deadlines        the course's table, validated (ConfigError naming
                                                    the file, key and value); Deadlines() without one
    Deadlines.assess(lab, student, SubmissionTime, now) -> Lateness    (.to_json() into results)
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from autograder.engine.config import ConfigError, course_document  # noqa: F401  (the doors read it from here)

POLICIES = ("none", "zero", "per_hour", "per_day")
UNIT_S = {"per_hour": 3600.0, "per_day": 86400.0}
FUTURE_SKEW_S = 300.0     # a submission time this far past the moment of grading is not a time it was made
SETTINGS = ("policy", "penalty_percent", "max_penalty_percent", "grace_minutes")
EXTENSION_COLUMNS = ("student", "lab", "due")


class ExtensionsError(ConfigError):
    """The extensions CSV cannot be used: the message names the file and the line."""


@dataclass(frozen=True)
class Policy:
    """How late work is scored."""
    policy: str = "none"
    penalty_percent: float = 0.0
    max_penalty_percent: float = 100.0
    grace_minutes: float = 0.0

    def percent(self, late_by_s: float) -> float:
        """The penalty (percent of the points earned) of a submission `late_by_s` after its due date."""
        if late_by_s <= self.grace_minutes * 60 or self.policy == "none":
            return 0.0
        if self.policy == "zero":
            return 100.0
        units = math.ceil(late_by_s / UNIT_S[self.policy])
        return min(self.max_penalty_percent, units * self.penalty_percent)

    def describe(self) -> str:
        """One line, e.g. "10 % per started day late, at most 50 %, after a 15-minute grace period"."""
        text = {"none": "no penalty (lateness is recorded)", "zero": "a late submission scores 0"}.get(
            self.policy, f"{self.penalty_percent:g} % per started {self.policy[4:]} late, at most "
                         f"{self.max_penalty_percent:g} %")
        return text + (f", after a {self.grace_minutes:g}-minute grace period" if self.grace_minutes else "")


@dataclass(frozen=True)
class SubmissionTime:
    """When a submission was made, as its source says: `when` (aware) or why there is none (`problem`)."""
    when: datetime | None
    source: str             # "nbgrader timestamp.txt", "Gradescope created_at", "timestamps.csv line 4", ...
    problem: str = ""       # why `when` is None: "no timestamp.txt", "timestamp.txt holds 'x': not a time", ...


@dataclass(frozen=True)
class Lateness:
    """A submission against its due date, as recorded beside the engine's score (results, gradebook, CSV)."""
    status: str                   # on_time | late | unknown
    due: str                      # the due date that applies (ISO, the course's zone), an extension's if any
    lab_due: str                  # the lab's own due date
    submitted_at: str = ""        # ISO, in the course's zone ("" when unknown)
    source: str = ""
    late_by_s: float = 0.0
    penalty_percent: float = 0.0
    policy: str = ""              # Policy.describe()
    note: str = ""                # why unknown; "within the grace period"

    @property
    def extended(self) -> bool:
        return self.due != self.lab_due

    def penalty_points(self, score: float) -> float:
        """The penalty in points on a score of record (never more than the score, never below 0)."""
        return round(max(0.0, score) * self.penalty_percent / 100.0, 6)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data) -> "Lateness | None":
        """A recorded Lateness, or None (no deadline, or not ours)."""
        if not isinstance(data, dict) or data.get("status") not in ("on_time", "late", "unknown"):
            return None
        try:
            return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})
        except TypeError:
            return None

    def fingerprint(self) -> str:
        """What the record of a student depends on here (a batch regrades the student when it changes)."""
        return hashlib.sha256(json.dumps(self.to_json(), sort_keys=True).encode()).hexdigest()[:16]

    def line(self, score: float | None = None, max_score: float | None = None) -> str:
        """What a student and a TA read, one paragraph."""
        due = f"due {_shown(self.due)}" + (f" (extended from {_shown(self.lab_due)})" if self.extended else "")
        if self.status == "unknown":
            return (f"Late work: {due}; the submission time cannot be used ({self.note}), so no late penalty "
                    "was applied; the course staff will check it.")
        when = f"submitted {_shown(self.submitted_at)} ({self.source})"
        if self.status == "on_time":
            return f"Late work: {due}; {when}: on time" + (f" ({self.note})" if self.note else "") + "."
        text = f"Late work: {due}; {when}: {_duration(self.late_by_s)} late. Policy: {self.policy}"
        if score is None:
            return text + f": a penalty of {self.penalty_percent:g} % of the points earned."
        points = self.penalty_points(score)
        after = f"{score - points:g}" + (f" / {max_score:g}" if max_score is not None else "")
        return text + f": {self.penalty_percent:g} % of {score:g} points = {points:g}; score after the penalty {after}."


def late_attention(late: Lateness | None) -> str | None:
    """The line a student whose submission time cannot be used needs a person for (None otherwise)."""
    if late is None or late.status != "unknown":
        return None
    return f"the submission time cannot be used ({late.note}): no late penalty applied; check it by hand"


def _shown(iso: str) -> str:
    """An ISO date-time as a person reads it: 2026-12-04 23:59 -08:00."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    return moment.strftime("%Y-%m-%d %H:%M") + (" " + moment.strftime("%z")[:3] + ":" + moment.strftime("%z")[3:]
                                                if moment.tzinfo else "")


def _duration(seconds: float) -> str:
    minutes = int(round(seconds / 60))
    days, rest = divmod(minutes, 1440)
    hours, minutes = divmod(rest, 60)
    parts = [f"{days} d"] * bool(days) + [f"{hours} h"] * bool(hours) + [f"{minutes} min"] * bool(minutes or not (days or hours))
    return " ".join(parts)


@dataclass(frozen=True)
class LabDeadline:
    due: datetime
    policy: Policy


@dataclass(frozen=True)
class Deadlines:
    """The course's deadlines: each lab's due date and policy, the extensions, the course's zone."""
    labs: dict[str, LabDeadline] = field(default_factory=dict)
    extensions: dict[tuple[str, str], datetime] = field(default_factory=dict)   # (student, lab) -> due
    zone: str = ""                    # IANA name of `timezone` ("" when unset)
    where: str = ""                   # the file they were read from

    def of(self, lab: str) -> LabDeadline | None:
        return self.labs.get(lab)

    def tz(self):
        """The course's time zone (a tzinfo), or None."""
        return _zone(self.zone, self.where) if self.zone else None

    def local(self, moment: datetime) -> datetime:
        """`moment` in the course's zone (as given when there is none)."""
        return moment.astimezone(self.tz()) if self.zone else moment

    def assess(self, lab: str, student: str, submitted: SubmissionTime, now: datetime | None = None) -> Lateness | None:
        """The lateness of `student`'s submission of `lab`, or None when the lab has no due date."""
        deadline = self.labs.get(lab)
        if deadline is None:
            return None
        due = self.extensions.get((student, lab), deadline.due)
        base = Lateness("unknown", self.local(due).isoformat(), self.local(deadline.due).isoformat(),
                        source=submitted.source, policy=deadline.policy.describe())
        when = submitted.when
        now = now or datetime.now(timezone.utc)
        if when is None:
            return replace(base, note=submitted.problem or "no submission time")
        if when.tzinfo is None or when.utcoffset() is None:
            return replace(base, note=f"{submitted.source} gives {when.isoformat()} without a time zone")
        if (when - now).total_seconds() > FUTURE_SKEW_S:
            # the moment of grading is not in the note: a record that changed with every run would be
            # written again by every batch
            return replace(base, note=f"{submitted.source} gives {self.local(when).isoformat()}, after the time of "
                                      "grading")
        late_by = max(0.0, (when - due).total_seconds())
        percent = deadline.policy.percent(late_by)
        status = "late" if late_by > deadline.policy.grace_minutes * 60 else "on_time"
        note = "within the grace period" if late_by > 0 and status == "on_time" else ""
        return replace(base, status=status, submitted_at=self.local(when).isoformat(), late_by_s=round(late_by, 3),
                       penalty_percent=percent, note=note)

    def settings(self, lab: str) -> dict:
        """What of the course's deadlines applies to `lab`, as a table the otter zip carries (the lab's
        `[deadlines]` table with its extensions): `from_settings` reads it back on Gradescope."""
        deadline = self.labs.get(lab)
        if deadline is None:
            return {}
        return {"due": deadline.due.isoformat(), **asdict(deadline.policy), "timezone": self.zone,
                "extensions": {s: due.isoformat() for (s, l), due in sorted(self.extensions.items()) if l == lab}}

    @classmethod
    def from_settings(cls, lab: str, table: dict, where: str) -> "Deadlines":
        """The inverse of `settings` (the otter zip's copy); ConfigError names `where` and what is wrong."""
        if not table:
            return cls(where=where)
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: the deadlines must be a table")
        table = dict(table)
        extensions = table.pop("extensions", {})
        zone = table.pop("timezone", "")
        if zone:
            _zone(zone, where)
        due = _moment(table.pop("due", None), zone, where, f"[deadlines.{lab}] due")
        policy = _policy(_settings(table, where, f"deadlines.{lab}"), where, f"deadlines.{lab}")
        if not isinstance(extensions, dict):
            raise ConfigError(f"{where}: the deadlines' extensions must be a table of student -> due date")
        ext = {(str(s), lab): _moment(d, zone, where, f"the extension of {s}") for s, d in extensions.items()}
        return cls({lab: LabDeadline(due, policy)}, ext, zone, where)


def _zone(name: str, where):
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"{where}: [deadlines] timezone = {name!r}: not a time zone (an IANA name, "
                          "e.g. \"America/Los_Angeles\" or \"UTC\")") from None


def parse_moment(value, zone: str = "") -> datetime:
    """A date-time with its zone: a datetime (TOML's, YAML's) or ISO 8601 text ("2026-12-04T23:59:00-08:00",
    "2026-12-04 23:59 Z"); one written without an offset is in `zone` (an IANA name). ValueError says
    why it cannot be one (not a date-time; no time zone)."""
    if isinstance(value, str):
        text = value.strip()
        if text.endswith((" UTC", " GMT")):
            text = text[:-4] + "+00:00"
        try:
            value = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{value!r} is not a date-time (write e.g. 2026-12-04T23:59:00-08:00)") from None
    if not isinstance(value, datetime):
        raise ValueError(f"{value!r} is not a date-time with a time (write e.g. 2026-12-04T23:59:00-08:00)")
    if value.tzinfo is None or value.utcoffset() is None:
        if not zone:
            raise ValueError(f"{value.isoformat()} has no time zone (write its offset, e.g. "
                             f"{value.isoformat()}-08:00, or set [deadlines] timezone)")
        value = value.replace(tzinfo=_zone(zone, "[deadlines]"))
    return value


def _moment(value, zone: str, where, what: str) -> datetime:
    if value is None:
        raise ConfigError(f"{where}: {what} is missing (a date-time, e.g. 2026-12-04T23:59:00-08:00)")
    try:
        return parse_moment(value, zone)
    except ValueError as exc:
        shown = value.isoformat() if isinstance(value, datetime) else repr(value)
        raise ConfigError(f"{where}: {what} = {shown}: {exc}") from None


def _settings(table: dict, where, name: str) -> dict:
    """The policy keys of `table` (SETTINGS), each checked; ConfigError names `where`, [name], key and value."""
    out = {}
    for key in SETTINGS:
        if key not in table:
            continue
        value = table[key]
        if key == "policy":
            if value not in POLICIES:
                raise ConfigError(f"{where}: [{name}] policy = {value!r}: must be one of "
                                  + ", ".join(f'"{p}"' for p in POLICIES))
        elif type(value) not in (int, float) or value < 0 or (key.endswith("percent") and value > 100):
            bound = "between 0 and 100" if key.endswith("percent") else "0 or more"
            raise ConfigError(f"{where}: [{name}] {key} = {value!r}: must be a number {bound}")
        out[key] = value if key == "policy" else float(value)
    return out


def _policy(settings: dict, where, name: str) -> Policy:
    """A Policy of checked settings (`_settings`); a per-hour or per-day policy needs its percent."""
    policy = Policy(**settings)
    if policy.policy in UNIT_S and not policy.penalty_percent:
        raise ConfigError(f"{where}: [{name}] policy = {policy.policy!r} needs penalty_percent (more than 0)")
    return policy


def course_deadlines(path: Path | None = None, labs: set[str] | None = None) -> Deadlines:
    """The course's `[deadlines]` and extensions, validated: ConfigError (ExtensionsError for the CSV)
    names the file and the key, value or line at fault. `labs`: the lab ids a lab table may name
    (default: every lab of labs/)."""
    document, where = course_document(path)
    table = document.get("deadlines", {})
    return deadlines_from_table(table, where, labs) if table else Deadlines(where=str(where or ""))


def known_labs(*extra: str) -> set[str]:
    """The lab ids a `[deadlines.<lab>]` table may name: every lab package of labs/, and `extra` (the
    assignment being graded, when it is a course's or a test's own declaration)."""
    import pkgutil

    import labs

    return {m.name for m in pkgutil.iter_modules(labs.__path__) if m.ispkg and not m.name.startswith("_")} | set(extra)


def deadlines_from_table(table, where, labs: set[str] | None = None) -> Deadlines:
    """A `[deadlines]` table (module docstring) as Deadlines, the extensions CSV read; ConfigError names
    `where` and the key or value at fault (ExtensionsError the CSV's file and line)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: [deadlines] must be a table")
    labs = known_labs() if labs is None else set(labs)
    zone = table.get("timezone", "")
    if not isinstance(zone, str):
        raise ConfigError(f"{where}: [deadlines] timezone = {zone!r}: must be a string (an IANA name)")
    if zone:
        _zone(zone, where)
    course = _settings(table, where, "deadlines")      # every lab's, unless its own table says
    known = {"timezone", "extensions", *SETTINGS}
    lab_tables = {k: v for k, v in table.items() if isinstance(v, dict)}
    unknown = sorted(k for k in table if k not in known and k not in lab_tables)
    if unknown:
        raise ConfigError(f"{where}: unknown [deadlines] keys {unknown}; known: {', '.join(sorted(known))}, "
                          "and a table per lab ([deadlines.<lab>])")
    found = {}
    for lab, lab_table in lab_tables.items():
        if lab not in labs:
            raise ConfigError(f"{where}: [deadlines.{lab}]: no lab {lab!r} (labs: {', '.join(sorted(labs))})")
        extra = sorted(set(lab_table) - {"due", *SETTINGS})
        if extra:
            raise ConfigError(f"{where}: unknown [deadlines.{lab}] keys {extra}; known: due, {', '.join(SETTINGS)}")
        settings = course | _settings(lab_table, where, f"deadlines.{lab}")
        found[lab] = LabDeadline(_moment(lab_table.get("due"), zone, where, f"[deadlines.{lab}] due"),
                                 _policy(settings, where, f"deadlines.{lab}"))
    extensions = {}
    if "extensions" in table:
        name = table["extensions"]
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}: [deadlines] extensions = {name!r}: must be a file name (e.g. \"extensions.csv\")")
        csv_path = (Path(where).parent if where else Path.cwd()) / name
        extensions = read_extensions(csv_path, found, zone)
    return Deadlines(found, extensions, zone, str(where or ""))


def read_rows(path: Path, columns: tuple[str, ...], error=ExtensionsError) -> list[tuple[int, dict]]:
    """(line number, row) of a CSV with `columns` among its header; `error` names the file and line of
    anything that stops it being read (missing, not UTF-8, a column missing, a row of the wrong length)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot be read ({type(exc).__name__}): save it as UTF-8 CSV") from None
    reader = csv.reader(io.StringIO(text))
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise error(f"{path} line 1: empty; the first line names the columns {','.join(columns)}") from None
    missing = [c for c in columns if c not in header]
    if missing:
        raise error(f"{path} line 1: no column {', '.join(missing)}; the first line names the columns "
                    f"{','.join(columns)} (it reads {','.join(header)})")
    rows = []
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise error(f"{path} line {line}: {len(row)} fields where the header has {len(header)}")
        rows.append((line, {h: cell.strip() for h, cell in zip(header, row)}))
    return rows


def read_extensions(path: Path, labs: dict[str, LabDeadline], zone: str) -> dict[tuple[str, str], datetime]:
    """(student, lab) -> the extended due date, from a CSV `student,lab,due`; ExtensionsError names the
    file and line of a bad row (an unsafe id, a lab with no due date, a time that is not one or has no
    zone, a due date before the lab's, a student listed twice for a lab)."""
    from autograder.classroom.identity import id_problem

    out: dict[tuple[str, str], datetime] = {}
    lines: dict[tuple[str, str], int] = {}
    for line, row in read_rows(path, EXTENSION_COLUMNS):
        student, lab, due = row["student"], row["lab"], row["due"]
        where = f"{path} line {line}"
        if why := id_problem(student):
            raise ExtensionsError(f"{where}: {why}")
        if lab not in labs:
            raise ExtensionsError(f"{where}: lab {lab!r} has no due date in [deadlines] (labs with one: "
                                  f"{', '.join(sorted(labs)) or 'none'})")
        try:
            moment = parse_moment(due, zone)
        except ValueError as exc:
            raise ExtensionsError(f"{where}: due {exc}") from None
        if moment < labs[lab].due:
            raise ExtensionsError(f"{where}: due {due} is before {lab}'s own due date {labs[lab].due.isoformat()}: "
                                  "an extension moves the due date later")
        if (student, lab) in out:
            raise ExtensionsError(f"{where}: {student} already has an extension of {lab} (line {lines[student, lab]}): "
                                  "keep one")
        out[student, lab], lines[student, lab] = moment, line
    return out
