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

Which due date applies (`Deadlines.assess`), the same rule in every door: the platform's where it gives one
(`PlatformDates`: on Gradescope the assignment's `due_date` and each user's own, which Gradescope moves for an
extension granted in its interface), else the lab's `[deadlines]` due date; an extensions.csv row moves a
student's due date later, never earlier (of the platform's and the course's extension, the later applies).
`[deadlines]` stays the policy (per hour or day, grace, cap). Where the platform and the course disagree (the
zip's frozen due date and Gradescope's, or two extensions), the Lateness says so (`disagreement`), shown to the
student and staff; it is never resolved silently. A course with a late policy at the top of `[deadlines]`
and no lab table takes the due date from the platform alone (no platform date: no late work).

A penalty is a rule, not a number: the Lateness records the facts (the time and its source, the platform's
dates) and the percent; the points are `penalty_points(score of record)`, taken again whenever the score
of record changes (an override, a regrade), and `reassess` applies the course's current due dates,
extensions and policy to recorded facts (`nbgrader export`, grades.csv and the report do).

    course_deadlines(path=None) -> Deadlines        the course's table, validated (ConfigError naming
                                                    the file, key and value); Deadlines() without one
    Deadlines.assess(lab, student, SubmissionTime, now, PlatformDates) -> Lateness   (.to_json() into results)
    Deadlines.reassess(lab, student, Lateness) -> Lateness   the recorded facts under today's deadlines
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
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
    due_source: str = ""          # where `due` comes from: DUE_SOURCES
    disagreement: str = ""        # where the platform's dates and the course's differ, and which applies
    # the platform's word, as it gave it for this submission (a reassessment applies the rule to it again)
    platform: str = ""            # "Gradescope" ("" when the door has no platform dates)
    platform_lab_due: str = ""    # the platform's due date of the assignment (ISO)
    platform_due: str = ""        # the platform's due date of this student (their extension's, if any)
    platform_late_due: str = ""   # the platform's late due date of this student (when it stops taking uploads)

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
        """What a student and a TA read, one paragraph: the due date and where it comes from, how late, the
        penalty on the raw score (before late work) and the final score (after it)."""
        due = f"due {_shown(self.due)}" + (f" (extended from {_shown(self.lab_due)})" if self.extended else "")
        due += f", {self.due_source}" if self.due_source and self.due_source != CONFIG_SOURCE else ""
        said = f" Note: {self.disagreement}." if self.disagreement else ""
        if self.status == "unknown":
            return (f"Late work: {due}; the submission time cannot be used ({self.note}), so no late penalty "
                    "was applied; the course staff will check it." + said)
        when = f"submitted {_shown(self.submitted_at)} ({self.source})"
        if self.status == "on_time":
            return f"Late work: {due}; {when}: on time" + (f" ({self.note})" if self.note else "") + "." + said
        text = (f"Late work: {due}; {when}: {_duration(self.late_by_s)} late" + (f" ({self.note})" if self.note else "")
                + f". Policy: {self.policy}")
        if score is None:
            return text + f": a penalty of {self.penalty_percent:g} % of the points earned." + said
        points = self.penalty_points(score)
        final = f"{final_score(score, points):g}" + (f" / {max_score:g}" if max_score is not None else "")
        return (text + f": {self.penalty_percent:g} % of the raw score {score:g} = {points:g} point"
                       f"{'' if points == 1 else 's'}; final score {final}." + said)


def final_score(raw: float, penalty_points: float) -> float:
    """The final score: the raw score (the grade of record before late work) less the late penalty, never
    below 0 (nbgrader export's arithmetic)."""
    return round(max(0.0, raw - penalty_points), 6)


def late_attention(late: Lateness | None) -> str | None:
    """The line a student whose submission time cannot be used needs a person for (None otherwise)."""
    if late is None or late.status != "unknown":
        return None
    return f"the submission time cannot be used ({late.note}): no late penalty applied; check it by hand"


CONFIG_SOURCE = "[deadlines]"
# where a Lateness's due date comes from (`due_source`)
DUE_SOURCES = (CONFIG_SOURCE, "extensions.csv", "Gradescope's due date", "Gradescope's extension")


@dataclass(frozen=True)
class PlatformDates:
    """The due dates a platform gives one submission: on Gradescope, the autograder's
    submission_metadata.json (`assignment.due_date`, `assignment.late_due_date`, and each of `users`'
    own `assignment.due_date` / `late_due_date`, which an extension set in Gradescope's interface moves;
    autograder.doors.gradescope.platform_dates reads them). None where it gives none."""
    platform: str = "Gradescope"
    lab_due: datetime | None = None
    lab_late_due: datetime | None = None
    due: dict[str, datetime] = field(default_factory=dict)         # student id -> their own due date
    late_due: dict[str, datetime] = field(default_factory=dict)    # student id -> their own late due date
    problems: tuple[str, ...] = ()                                 # dates it gave that are not times

    @classmethod
    def of_record(cls, late: Lateness, student: str) -> "PlatformDates | None":
        """The platform's dates a Lateness recorded for `student` (None when it recorded none)."""
        if not late.platform:
            return None
        moment = lambda iso: datetime.fromisoformat(iso) if iso else None   # noqa: E731
        own, late_own = moment(late.platform_due), moment(late.platform_late_due)
        return cls(late.platform, moment(late.platform_lab_due), None, {student: own} if own else {},
                   {student: late_own} if late_own else {})


def _later(*moments):
    return max((m for m in moments if m is not None), default=None)


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
    default: Policy | None = None     # the course's policy for a lab without a table (its `policy` at the top)
    extension_lines: dict[tuple[str, str], str] = field(default_factory=dict)   # (student, lab) -> "file line N"

    def of(self, lab: str) -> LabDeadline | None:
        return self.labs.get(lab)

    def policy_of(self, lab: str) -> Policy | None:
        """The late policy of `lab`: its table's, else the course's (None: the course takes no late work)."""
        deadline = self.labs.get(lab)
        return deadline.policy if deadline else self.default

    def check_students(self, known, what: str, lab: str | None = None) -> None:
        """ExtensionsError naming the file, line and student of an extension (of `lab`, or of any lab) for
        someone not in `known` (`what` says who they are: "on the roster roster.csv", ...)."""
        known = set(known)
        for (student, row_lab), where in sorted(self.extension_lines.items(), key=lambda kv: kv[1]):
            if (lab is None or row_lab == lab) and student not in known:
                near = sorted(k for k in known if k.casefold() == student.casefold())
                hint = f" (ids are exact: did you mean {near[0]}?)" if near else ""
                raise ExtensionsError(f"{where}: the student {student} is not {what}{hint}: fix the id, or remove the "
                                      "row" + ("" if "roster" in what else "; a course roster ([course] roster) checks "
                                               "ids against the whole class instead"))

    def tz(self):
        """The course's time zone (a tzinfo), or None."""
        return _zone(self.zone, self.where) if self.zone else None

    def local(self, moment: datetime) -> datetime:
        """`moment` in the course's zone (as given when there is none)."""
        return moment.astimezone(self.tz()) if self.zone else moment

    def due_of(self, lab: str, student: str, platform: PlatformDates | None = None) -> dict | None:
        """Which due date applies to `student` (module docstring): {due, lab_due, due_source, disagreement,
        late_due}, or None when there is none (no platform date and no [deadlines] due date)."""
        deadline = self.labs.get(lab)
        configured = deadline.due if deadline else None
        given_lab = platform.lab_due if platform else None
        given_own = platform.due.get(student) if platform else None
        lab_due = given_lab or configured or given_own
        if lab_due is None:
            return None
        own = given_own or lab_due
        extension = self.extensions.get((student, lab))
        due = _later(own, extension)
        name = platform.platform if platform else ""
        if extension is not None and extension > own:
            source = "extensions.csv"
        elif given_own is not None and given_own != lab_due:
            source = f"{name}'s extension"
        elif given_lab is not None or given_own is not None:
            source = f"{name}'s due date"
        else:
            source = CONFIG_SOURCE
        said = list(platform.problems) if platform else []
        if given_lab is not None and configured is not None and given_lab != configured:
            said.append(f"{name}'s due date {_shown(self.local(given_lab).isoformat())} is not the [deadlines] due "
                        f"date {_shown(self.local(configured).isoformat())}: {name}'s applies")
        if extension is not None and given_own is not None and given_own != lab_due and given_own != extension:
            said.append(f"{name} extends {student} to {_shown(self.local(given_own).isoformat())}, extensions.csv to "
                        f"{_shown(self.local(extension).isoformat())}: the later applies")
        late_due = platform.late_due.get(student) or platform.lab_late_due if platform else None
        return {"due": due, "lab_due": lab_due, "due_source": source, "disagreement": "; ".join(said),
                "late_due": late_due}

    def assess(self, lab: str, student: str, submitted: SubmissionTime, now: datetime | None = None,
               platform: PlatformDates | None = None) -> Lateness | None:
        """The lateness of `student`'s submission of `lab`, or None when the lab has no due date (neither
        the platform's nor [deadlines]') or the course no late policy for it. `platform`: the dates the
        submission's platform gives (module docstring: which due date applies)."""
        policy = self.policy_of(lab)
        found = self.due_of(lab, student, platform) if policy is not None else None
        if found is None:
            return None
        due, own = found["due"], (platform.due.get(student) if platform else None)
        iso = lambda moment: self.local(moment).isoformat() if moment is not None else ""   # noqa: E731
        base = Lateness("unknown", iso(due), iso(found["lab_due"]), source=submitted.source, policy=policy.describe(),
                        due_source=found["due_source"], disagreement=found["disagreement"],
                        platform=platform.platform if platform else "",
                        platform_lab_due=iso(platform.lab_due if platform else None), platform_due=iso(own),
                        platform_late_due=iso(found["late_due"]))
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
        percent = policy.percent(late_by)
        status = "late" if late_by > policy.grace_minutes * 60 else "on_time"
        note = "within the grace period" if late_by > 0 and status == "on_time" else ""
        if found["late_due"] is not None and when > found["late_due"]:
            note = "; ".join(filter(None, [note, f"after {base.platform}'s late due date "
                                                 f"{_shown(self.local(found['late_due']).isoformat())}"]))
        return replace(base, status=status, submitted_at=self.local(when).isoformat(), late_by_s=round(late_by, 3),
                       penalty_percent=percent, note=note)

    def reassess(self, lab: str, student: str, recorded: Lateness | None, now: datetime | None = None,
                 *, keep: bool = True) -> Lateness | None:
        """A recorded lateness under the course's deadlines as they are now (a due date moved, an extension
        added, the policy changed): the recorded facts (the time, or why there is none, and the platform's
        dates) assessed again. The recorded one where the course has no late policy for the lab here (a
        report read away from the course keeps what the door recorded); with `keep` False, None where the
        course gives the facts no due date or policy now (as `assess` does: `scalelabs merge`)."""
        if recorded is None or self.policy_of(lab) is None:
            return recorded if keep else None
        when = datetime.fromisoformat(recorded.submitted_at) if recorded.submitted_at else None
        time = SubmissionTime(when, recorded.source, "" if when else (recorded.note or "no submission time"))
        again = self.assess(lab, student, time, now, PlatformDates.of_record(recorded, student))
        if again is not None and when is None:
            again = replace(again, note=recorded.note or again.note)   # why there is no time, as it was said
        return again if again is not None or not keep else recorded

    def settings(self, lab: str) -> dict:
        """What of the course's deadlines applies to `lab`, as a table the otter zip carries (the lab's
        `[deadlines]` table with its extensions): `from_settings` reads it back on Gradescope."""
        deadline = self.labs.get(lab)
        policy = self.policy_of(lab)
        if policy is None:
            return {}
        dated = {"due": deadline.due.isoformat()} if deadline else {}   # none: the platform's due date alone
        return {**dated, **asdict(policy), "timezone": self.zone,
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
        due = table.pop("due", None)
        due = _moment(due, zone, where, f"[deadlines.{lab}] due") if due is not None else None
        policy = _policy(_settings(table, where, f"deadlines.{lab}"), where, f"deadlines.{lab}")
        if not isinstance(extensions, dict):
            raise ConfigError(f"{where}: the deadlines' extensions must be a table of student -> due date")
        ext = {(str(s), lab): _moment(d, zone, where, f"the extension of {s}") for s, d in extensions.items()}
        if due is None:   # the course's policy, the platform's due date
            return cls({}, ext, zone, where, default=policy)
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
        if re.fullmatch(r"\d{4}-\d\d-\d\d", text):   # fromisoformat would read midnight, the start of that day
            raise ValueError(f"{value!r} is a date without a time: write the time too, e.g. {text}T23:59:00-08:00 "
                             f"(or {text}T23:59:00 in the course's [deadlines] timezone)")
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
        value = _local(value, _zone(zone, "[deadlines]"), zone)
    return value


def _local(value: datetime, tzinfo, zone: str) -> datetime:
    """A naive `value` as the one instant it names in `tzinfo`; ValueError where the clock change makes it
    two (the hour the clocks go back is lived twice) or none (the hour they skip): a guess would move a
    time, or a due date, by that hour."""
    first, second = value.replace(tzinfo=tzinfo, fold=0), value.replace(tzinfo=tzinfo, fold=1)
    if first.utcoffset() == second.utcoffset():
        return first
    shown = value.isoformat()
    readings = " or ".join(_offset(m) for m in (first, second))
    if first.astimezone(timezone.utc).astimezone(tzinfo).replace(tzinfo=None) != value:
        raise ValueError(f"{shown} never happened in {zone} (the clocks skip that hour): write the time with "
                         f"its offset, e.g. {shown}{_offset(first)}")
    raise ValueError(f"{shown} happened twice in {zone} (the clocks go back that hour): write the time with "
                     f"its offset ({readings}), e.g. {shown}{_offset(second)}")


def _offset(moment: datetime) -> str:
    """A datetime's offset as ISO 8601 writes it: -07:00."""
    text = moment.strftime("%z")
    return f"{text[:3]}:{text[3:]}"


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
    if not table:
        return Deadlines(where=str(where or ""))
    deadlines = deadlines_from_table(table, where, labs)
    roster = course_roster(where)
    if roster is not None:
        deadlines.check_students(roster[1], f"on the course's roster {roster[0]}")
    return deadlines


def course_roster(settings_file) -> tuple[Path, set[str]] | None:
    """(the roster file, its student ids) of the course whose scalelabs.toml is `settings_file`
    ([course] roster, default roster.csv); None without one."""
    from autograder.course import MARKER, course_settings

    if not settings_file or not (Path(settings_file).parent / MARKER).is_file():
        return None
    from autograder.classroom.names import read_roster

    roster = course_settings(Path(settings_file).parent).roster
    return (roster, set(read_roster(roster))) if roster is not None else None


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
    extensions, lines = {}, {}
    if "extensions" in table:
        name = table["extensions"]
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}: [deadlines] extensions = {name!r}: must be a file name (e.g. \"extensions.csv\")")
        csv_path = (Path(where).parent if where else Path.cwd()) / name
        extensions, lines = read_extensions(csv_path, found, zone)
    default = _policy(course, where, "deadlines") if "policy" in course else None
    return Deadlines(found, extensions, zone, str(where or ""), default, lines)


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


def read_extensions(path: Path, labs: dict[str, LabDeadline], zone: str
                    ) -> tuple[dict[tuple[str, str], datetime], dict[tuple[str, str], str]]:
    """(student, lab) -> the extended due date, from a CSV `student,lab,due`, and (student, lab) -> where
    its row is ("extensions.csv line 3"); ExtensionsError names the file and line of a bad row (an unsafe
    id, a lab with no due date, a date without a time, a time that is not one or has no zone, a due date
    before the lab's, a student listed twice for a lab). Whether each student is in the class is
    `Deadlines.check_students`'."""
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
    return out, {key: f"{Path(path).name} line {line}" for key, line in lines.items()}
