"""What a Gradescope autograder zip carries about time, and the Gradescope settings that must match it.

The zip `scalelabs otter` builds carries the lab's `[deadlines]` (due date, late policy, extensions) and
`[feedback]` from scalelabs.toml in its otter_config.json; Gradescope has dates of its own (the due date,
the late due date, extensions), which decide when it shows a test marked `after_due_date` and whether it
takes an upload at all. Nothing compares the two, so the staff enter the due date twice: `carried`
reads the zip's, `settings_text` prints them beside the Gradescope settings they must match (under
`scalelabs otter`'s upload steps and before `scalelabs otter-try`'s run).
"""
from __future__ import annotations

import json
import math
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from autograder.classroom.deadlines import Deadlines, Policy
from autograder.engine.config import ConfigError, FeedbackPolicy, feedback_from_table

CONFIG = "otter_config.json"
PLUGIN = "autograder.doors.otter.EngineOverride"


class NotAnAutograderZip(ValueError):
    """The file is not a zip `scalelabs otter` built: the message says why."""


def carried(zip_path: Path) -> dict:
    """The zip's scalelabs plugin settings: {"assignment", "grading", "feedback", "deadlines", ...}."""
    try:
        with zipfile.ZipFile(zip_path) as zf:
            config = json.loads(zf.read(CONFIG))
    except (OSError, zipfile.BadZipFile) as error:
        raise NotAnAutograderZip(f"{zip_path} is not a zip file ({error}): pass the zip `scalelabs otter` built "
                                 "(dist/<lab>-autograder.zip)") from None
    except KeyError:
        raise NotAnAutograderZip(f"{zip_path} holds no {CONFIG}: it is not an otter autograder zip (pass the zip "
                                 "`scalelabs otter` built, not a student's upload)") from None
    except ValueError as error:
        raise NotAnAutograderZip(f"{zip_path}: its {CONFIG} is not JSON ({error})") from None
    for plugin in config.get("plugins", []) if isinstance(config, dict) else []:
        if isinstance(plugin, dict) and isinstance(plugin.get(PLUGIN), dict):
            return plugin[PLUGIN]
    raise NotAnAutograderZip(f"{zip_path}: its {CONFIG} names no scalelabs plugin ({PLUGIN}): not a zip "
                             "`scalelabs otter` built")


def deadlines_of(settings: dict) -> Deadlines:
    lab = settings.get("assignment", "")
    return Deadlines.from_settings(lab, settings.get("deadlines", {}), f"the zip's {CONFIG} [deadlines]")


def feedback_of(settings: dict) -> FeedbackPolicy:
    return feedback_from_table(settings.get("feedback", {}), f"the zip's {CONFIG} [feedback]")


def shown(moment: datetime, deadlines: Deadlines) -> str:
    """A date-time as staff type it into Gradescope: in the course's zone (named), and in UTC."""
    local = deadlines.local(moment)
    zone = f" {deadlines.zone}" if deadlines.zone else local.strftime(" UTC%z")
    utc = moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"{local.strftime('%Y-%m-%d %H:%M')}{zone} ({utc})"


def _late_due_advice(policy: Policy) -> str:
    if policy.policy == "zero":
        return "the zip scores a late upload 0: set a late due date only to record late uploads"
    if policy.policy == "none":
        return "the zip records lateness and takes nothing: set one as late as you take work"
    unit = policy.policy[4:]
    if policy.penalty_percent <= 0:
        return "the zip takes no penalty: set one as late as you take work"
    to_cap = math.ceil(policy.max_penalty_percent / policy.penalty_percent)
    return (f"as late as you take work; the zip's penalty reaches its cap of {policy.max_penalty_percent:g} % at "
            f"{to_cap} {unit}{'' if to_cap == 1 else 's'} late")


def settings_text(settings: dict) -> str:
    """The deadlines and feedback the zip carries, and the Gradescope settings that must match them."""
    deadlines, feedback = deadlines_of(settings), feedback_of(settings)
    lab = settings.get("assignment", "")
    deadline = deadlines.of(lab)
    lines = ["The zip carries (from scalelabs.toml when it was built; rebuild and upload it again after changing "
             "[deadlines] or [feedback]):"]
    if deadline is None:
        lines += [f"  due date: none ([deadlines.{lab}] due is not set): no lateness is recorded, no penalty taken.",
                  "Gradescope's settings:",
                  "  Due date: any; with [feedback] gradescope = \"due_date\" it is when students see the full feedback."]
        return "\n".join(lines)
    extensions = {s: due for (s, l), due in sorted(deadlines.extensions.items()) if l == lab}
    lines += [f"  due date: {shown(deadline.due, deadlines)}",
              f"  late work: {deadline.policy.describe()}",
              f"  extensions ({len(extensions)})" + (": " + ", ".join(f"{s} to {shown(d, deadlines)}"
                                                                   for s, d in extensions.items()) if extensions else ""),
              f"  feedback: [feedback] gradescope = \"{feedback.gradescope}\"",
              "Gradescope's settings must match (Gradescope applies no penalty of its own; it decides when "
              "students see the rest of the feedback and whether it takes an upload):",
              f"  Due date: {shown(deadline.due, deadlines)}" + (
                  ", in the course's time zone on Gradescope" if deadlines.zone else ""),
              f"  Late due date: {_late_due_advice(deadline.policy)}; without one Gradescope refuses uploads after "
              "the due date",
              "  Extensions: " + ("none" if not extensions else
                                  "the same students and dates under the assignment's Extensions ("
                                  + ", ".join(extensions) + "): else Gradescope refuses their late uploads")]
    if feedback.gradescope == "due_date":
        lines.append("  (the full feedback, tests marked \"(in full)\", appears after Gradescope's due date, or its "
                     "late due date if set, not the zip's: keep them the same)")
    return "\n".join(lines)


def check_settings(settings: dict) -> str | None:
    """Why the zip's settings cannot be read (a zip built by hand, a bad date), or None."""
    try:
        deadlines_of(settings)
        feedback_of(settings)
    except (ConfigError, ValueError) as error:
        return str(error)
    return None
