"""nbgrader door: the engine scores the files the student submitted; no kernel ever runs.

`EngineScores` is an nbgrader preprocessor in `Autograde.autograde_preprocessors`, which holds no
`Execute` (see nbgrader_config.py): `nbgrader autograde` never runs a student's notebook, so no
student code runs as the grading user, beside the course, the gradebook or a classmate's folder.
It grades the student's `submitted/<student>/<assignment>/` folder (nbgrader's own record of the
submission, which nothing in the autograde run can write) with
`autograder.engine.grade.grade_submission`, whose sandbox runs the student's module on a read-only copy,
then replaces every grade cell's outputs with the item's feedback (stdout; the first graded item's
also carries the engine's notes on the whole submission: the sandbox, what in the folder was not
graded or was ignored) and its score as a float `execute_result`, which nbgrader's
`determine_grade` reads as partial credit. The feedback is the view `[feedback] nbgrader` of
scalelabs.toml names (default "after": staff release nbgrader's feedback after grading; "before"
leaves out keys, explanations, reference values and student text, autograder.engine.views). The student's other
cells keep the outputs they saved (the sanitizing pass does not clear them), for the feedback page.

Late work is the course's policy (autograder.classroom.deadlines), as in every door: the submission
time is the same reading of `submitted/<student>/<lab>/timestamp.txt` grade-batch makes
(`read_timestamps_as_scalelabs` puts it in place of nbgrader's own, which fails the student on a time it
cannot parse), the first graded item's feedback says how late and what the penalty is, and
`CourseLatePenalties` (nbgrader's AssignLatePenalties) records it in nbgrader's model: the lab's due
date, the time, an extension and `late_submission_penalty`, which nbgrader's feedback subtracts, and the
Lateness beside them (autograder.classroom.gradebook), from which `nbgrader export` takes the penalty as a
rule on the score of record at export time (autograder.doors.nbgrader_export).
"""
from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from pathlib import Path

from bleach import ALLOWED_TAGS
from nbconvert.preprocessors.sanitize import SanitizeHTML
from nbformat.v4 import new_code_cell, new_markdown_cell, new_output
from nbformat.v4.nbbase import random_cell_id
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import AssignLatePenalties, DeduplicateIds, NbGraderPreprocessor
from traitlets import Bool, Int, List, Unicode

from autograder.engine.views import item_feedback
from labs import load


def score_outputs(feedback: str, score: float, max_score: float, points: float) -> list:
    """The outputs of a grade cell: feedback on stdout, then the score scaled to the cell's points."""
    scaled = 0.0 if max_score == 0 else min(points, max(0.0, score * points / max_score))
    return [new_output("stream", name="stdout", text=feedback),
            new_output("execute_result", data={"text/plain": repr(float(scaled))}, execution_count=None)]


def course_setting(read):
    """`read()` of the course's settings (scalelabs.toml), or a stop of the whole run with one line: a bad
    table is the course's to fix, not a failure to record against every student in turn."""
    from autograder.engine.config import ConfigError

    try:
        return read()
    except ConfigError as exc:
        raise SystemExit(f"scalelabs: {exc}") from None


def door_lateness(assignment_id: str, student: str, folder: Path, labs=()):
    """The student's Lateness for the submission in `folder` (nbgrader's submitted/<student>/<lab>/), or
    None when the lab has no due date: the course's deadlines, their extension, timestamp.txt. An
    extension row for a student not on the course's roster (or, without one, not in submitted/) stops
    the run in one line naming the file, the line and the student."""
    from autograder.classroom.deadlines import course_deadlines, course_roster, known_labs
    from autograder.classroom.roster import students
    from autograder.classroom.submitted_at import from_timestamp_file

    deadlines = course_setting(lambda: course_deadlines(labs=known_labs(assignment_id, *labs)))
    if deadlines.of(assignment_id) is None:
        return None
    submitted = Path(folder).parent.parent
    if course_roster(deadlines.where) is None and submitted.is_dir():
        course_setting(lambda: deadlines.check_students(students(submitted), f"in {submitted}", assignment_id))
    return deadlines.assess(assignment_id, student, from_timestamp_file(folder, deadlines.zone))


def _existing_timestamp(coursedir, dest_path: str):
    """CourseDirectory.get_existing_timestamp as every door reads timestamp.txt: a time it can use (naive
    UTC, nbgrader's way), else None, where nbgrader's own fails the student (its `self.fail` does not
    exist) on a timestamp it cannot parse and reads one without a zone as UTC, whatever zone it was
    written in; a time after the moment of grading (a clock set ahead, or an edited file) is none too.
    CourseLatePenalties records why a time could not be used."""
    from datetime import datetime, timezone

    from autograder.classroom.submitted_at import from_timestamp_file

    from autograder.classroom.deadlines import FUTURE_SKEW_S

    found = from_timestamp_file(Path(dest_path), _course_zone())
    if found.when is not None and (found.when - datetime.now(timezone.utc)).total_seconds() > FUTURE_SKEW_S:
        found = replace(found, when=None, problem=f"{found.when.isoformat()} is after the time of grading")
    if found.when is None:
        if "no timestamp.txt" not in found.problem:
            coursedir.log.warning("%s: %s; no submission time recorded", dest_path, found.problem)
        return None
    return found.when.astimezone(timezone.utc).replace(tzinfo=None)


def _course_zone() -> str:
    """The course's [deadlines] timezone (the zone of a timestamp written with its abbreviation)."""
    from autograder.classroom.deadlines import course_document

    table = course_setting(lambda: course_document()[0]).get("deadlines", {})
    zone = table.get("timezone", "") if isinstance(table, dict) else ""
    return zone if isinstance(zone, str) else ""


def read_timestamps_as_scalelabs() -> None:
    """From here on nbgrader reads timestamp.txt as every door does (`_existing_timestamp`); called by
    nbgrader_config.py."""
    CourseDirectory.get_existing_timestamp = _existing_timestamp


class CourseLatePenalties(AssignLatePenalties):
    """nbgrader's late penalty preprocessor with the course's policy ([deadlines]): the penalty, a share of
    the notebook's score, goes to `late_submission_penalty` with the due date, time and extension
    (autograder.classroom.gradebook.record_lateness); a lab without a due date gets none, as in
    nbgrader. A time that cannot be used gets no penalty and one warning line naming the student."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        from autograder.classroom.deadlines import late_attention
        from autograder.classroom.gradebook import record_lateness

        info = resources["nbgrader"]
        engine = EngineScores(config=self.config)   # the same declaration and folder as the scores'
        folder = engine.submitted_folder(info["student"], info["assignment"])
        late = door_lateness(info["assignment"], info["student"], folder, [engine.assignment(info["assignment"]).id])
        with Gradebook(info["db_url"]) as gb:
            notebook = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            record_lateness(gb, info["assignment"], info["student"], late, notebook.score, info["notebook"])
            if late is not None:
                if line := late_attention(late):
                    self.log.warning("scalelabs: %s needs a person: %s", info["student"], line)
                elif late.status == "late":
                    self.log.warning("scalelabs: %s is %.1f h late: penalty %g %% (%s)", info["student"],
                                     late.late_by_s / 3600, late.penalty_percent, late.policy)
            gb.db.commit()
        return nb, resources


class EngineScores(NbGraderPreprocessor):
    """Write the engine's per-item scores into the grade cells (runs outside the kernel)."""

    declaration = Unicode("", help="'module:ATTRIBUTE' naming the Assignment to grade instead of "
                                   "the declared one (test-only assignments)").tag(config=True)

    def assignment(self, assignment_id: str):
        return load(self.declaration or assignment_id)

    def submitted_folder(self, student: str, assignment_id: str) -> Path:
        """`submitted/<student>/<assignment>/` of the course this autograde runs in."""
        course = CourseDirectory(config=self.config)
        return Path(course.format_path(course.submitted_directory, student, assignment_id))

    def check_nothing_executes(self) -> None:
        """Refuse to grade where this autograde also executes notebooks: a kernel run as the
        grading user, beside the course, reopens every attack the door closes."""
        from nbconvert.preprocessors import ExecutePreprocessor
        from traitlets.utils.importstring import import_item
        listed = self.config.get("Autograde", {}).get("autograde_preprocessors", [])
        executing = [p for p in listed
                     if isinstance(p, type) and issubclass(p, ExecutePreprocessor)
                     or isinstance(p, str) and issubclass(import_item(p), ExecutePreprocessor)]
        if executing:
            raise ValueError(f"scalelabs will not grade while Autograde.autograde_preprocessors executes "
                             f"student notebooks ({executing}); remove it from nbgrader_config.py: "
                             f"scores come from the engine, a kernel would run the student's code as the grader")

    def preprocess(self, nb, resources):
        from autograder.engine.config import load_config
        from autograder.engine.grade import grade_submission
        from autograder.engine.sandbox import SandboxUnavailable
        from autograder.engine.secret import NO_SECRET_NOTE, load_secret

        self.check_nothing_executes()
        info = resources["nbgrader"]
        from autograder.classroom.identity import id_problem
        if why := id_problem(info["student"], "nbgrader student id"):
            # nbgrader records the failure for this student and grades the rest of the class
            raise ValueError(f"{why}: rename submitted/{info['student']}/ (the id) and autograde again")
        folder = self.submitted_folder(info["student"], info["assignment"])
        # The whole course (classmates' submissions, the gradebook, release/) is out of the worker's
        # reach; the sandbox grades its own copy of the folder.
        course = Path(CourseDirectory(config=self.config).root).resolve()
        secret = load_secret(course)    # this course's, wherever autograde was started from
        if secret is None:
            self.log.warning("%s: %s", info["student"], NO_SECRET_NOTE)
        config = load_config()
        assignment = self.assignment(info["assignment"])
        try:
            result = grade_submission(assignment, folder, info["student"], config=config, secrets=[course],
                                      secret=secret)
        except SandboxUnavailable as exc:
            # the grader's fault, the same for every student: stop the run (SystemExit passes nbgrader's
            # per-notebook `except Exception`), one line, before anyone else is graded without a sandbox
            raise SystemExit(f"scalelabs: {exc}") from None
        scores = result.item_scores()
        self.log.info("%s: %g/%g points", info["student"], result.score, result.max_score)   # the student's line
        result = result.view(config.feedback.nbgrader)
        late = door_lateness(info["assignment"], info["student"], folder, [assignment.id])
        if late is not None:   # said with the notes on the whole submission, under the first graded item
            result.output = "\n".join(filter(None, [result.output, late.line(result.score, result.max_score)]))
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or not meta.get("grade"):
                continue
            item = meta.get("grade_id")
            if item not in scores:  # never leave the kernel's output: it would count as full credit
                self.log.warning("grade cell %s is not a graded item of %s", item, info["assignment"])
                cell.outputs = score_outputs(f"{item}: not a graded item of {info['assignment']}\n", 0, 1, 1)
                continue
            score, max_score = scores[item]
            cell.outputs = score_outputs(item_feedback(result, item), score, max_score, float(meta["points"]))
        return nb, resources


class SubmittedMetadata(DeduplicateIds):
    """nbgrader's DeduplicateIds (the first sanitizing pass), made safe for the nbgrader metadata a
    student edited: each cell's is rebuilt from the gradebook (the source notebook's record) for a
    grade_id the gradebook knows, and dropped otherwise. What nbgrader does with edited metadata:
    it stops the whole autograde run (every later classmate ungraded) on a `schema_version` not its
    own, including the `{}` DeduplicateIds leaves on a copied cell; it fails the student (no grade
    at all) on metadata its schema refuses, a grade cell's `grade`/`solution` flag flipped
    (OverwriteCells restores only cell type, `locked`, `points` and the checksum, so the checksum of
    the locked cell no longer matches) or a grade_id it does not know; and a grade cell that no
    longer validates (turned markdown, marked a task) or is gone loses its grade. Here no such
    metadata is left: known cells get the gradebook's flags, points, checksum and cell type, unknown
    ones and the copies DeduplicateIds blanks become ordinary cells, and a missing grade cell comes
    back at the end. The scores are the engine's in any case."""

    def known_cells(self, resources) -> dict[str, tuple[dict, str]]:
        """grade_id -> (the nbgrader metadata `generate_assignment` gave that cell, its source), from
        the gradebook."""
        from nbgrader.api import Gradebook, MissingEntry
        from nbgrader.nbgraderformat import SCHEMA_VERSION

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            try:
                notebook = gradebook.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                return {}
            graded = {c.name: c for c in [*notebook.grade_cells, *notebook.task_cells]}
            grade = {c.name for c in notebook.grade_cells}
            solution = {c.name for c in notebook.solution_cells}
            task = {c.name for c in notebook.task_cells}
            known = {}
            for source in notebook.source_cells:
                meta = {"grade_id": source.name, "grade": source.name in grade, "solution": source.name in solution,
                        "task": source.name in task, "locked": source.locked, "cell_type": source.cell_type,
                        "checksum": source.checksum, "schema_version": SCHEMA_VERSION}
                if source.name in graded:
                    meta["points"] = float(graded[source.name].max_score)
                known[source.name] = (meta, source.source)
        return known

    def preprocess(self, nb, resources):
        known = self.known_cells(resources)
        for index, cell in enumerate(nb.cells):
            meta = cell.metadata.get("nbgrader")
            if meta is None:
                continue
            grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
            if not isinstance(grade_id, str) or grade_id not in known:
                self.log.warning("cell %d: nbgrader metadata of a cell the gradebook does not know was removed", index)
                del cell.metadata["nbgrader"]
                continue
            restored = known[grade_id][0]
            if meta != restored:
                self.log.warning("cell %d (%s): nbgrader metadata restored from the gradebook", index, grade_id)
            cell.metadata["nbgrader"] = dict(restored)
            if cell.cell_type != restored["cell_type"]:
                # a fresh cell of the source's type: OverwriteCells's own conversion fails the student
                # on what the other type carries (a markdown cell's attachments)
                nb.cells[index] = _fresh_cell(restored["cell_type"], cell.source, cell.metadata, cell.get("id"))
        nb, resources = super().preprocess(nb, resources)
        for cell in nb.cells:
            if cell.metadata.get("nbgrader") == {}:     # a duplicate, blanked by DeduplicateIds
                del cell.metadata["nbgrader"]
        # A graded cell deleted (or stripped of its metadata) comes back at the end, or its item
        # would have no grade. nbgrader's add_missing_cells fails the student instead wherever the
        # cell before it in the source is neither a grade nor an answer cell (a KeyError).
        present = {cell.metadata["nbgrader"]["grade_id"] for cell in nb.cells if "nbgrader" in cell.metadata}
        for grade_id, (meta, source) in known.items():
            if (meta["grade"] or meta["task"]) and grade_id not in present:
                self.log.warning("graded cell %s is missing: added back from the gradebook", grade_id)
                cell_id = random_cell_id() if nb.cells and "id" in nb.cells[0] else None
                nb.cells.append(_fresh_cell(meta["cell_type"], source, {"nbgrader": dict(meta)}, cell_id))
        return nb, resources


def _fresh_cell(cell_type: str, source: str, metadata: dict, cell_id: str | None):
    """A new code or markdown cell; cell_id None: no id (a notebook older than nbformat 4.5 has none)."""
    cell = (new_code_cell if cell_type == "code" else new_markdown_cell)(source, metadata=metadata)
    if cell_id is None:
        del cell["id"]
    else:
        cell["id"] = cell_id
    return cell


class CappedNotebook(NbGraderPreprocessor):
    """The first pass over a submitted notebook, before nbgrader's and bleach's: every cell and output
    cut to a size a TA can read and the passes after it can afford. What nbgrader makes of the notebook
    is its feedback copy (formgrader, generate_feedback); the scores come from the submitted files
    through EngineScores, which this does not touch. Without it one 19 MB markdown cell cost 60-70
    CPU s of nbgrader's and bleach's passes in the class's one autograde process (issue 26).

    Kept: the first `cells` cells; of each cell's source `cell_chars` characters, and of all markdown
    and raw cells together `markup_chars` (bleach's work, ~5 CPU s per MB of tags), of all cells'
    sources `source_chars`; per code cell the first `outputs` outputs, each text cut at `cell_chars`,
    images of at most `image_chars` base64 characters; markdown attachments of `image_chars` in all.
    Each cut says so where it was made. The released cells a student may not edit are restored from
    the gradebook by OverwriteCells after it; a grade cell it leaves out is added back by SubmittedMetadata."""

    cells = Int(2000, help="cells kept").tag(config=True)
    cell_chars = Int(20_000, help="characters kept of one cell's source or one output's text").tag(config=True)
    markup_chars = Int(100_000, help="characters kept of all markdown and raw cells").tag(config=True)
    source_chars = Int(400_000, help="characters kept of all cells' sources").tag(config=True)
    outputs = Int(100, help="outputs kept of one code cell").tag(config=True)
    image_chars = Int(1_000_000, help="base64 characters of one image output, or of a cell's attachments").tag(config=True)

    def preprocess(self, nb, resources):
        if len(nb.cells) > self.cells:
            left = len(nb.cells) - self.cells
            nb.cells = nb.cells[:self.cells] + [new_markdown_cell(
                f"[{left} more cells are not shown: the grader keeps the first {self.cells} cells of a notebook]")]
        budget = {"markup": self.markup_chars, "source": self.source_chars}
        for cell in nb.cells:
            markup = cell.cell_type in ("markdown", "raw")
            room = min(self.cell_chars, budget["source"], budget["markup"] if markup else budget["source"])
            cell.source = self._cut(_text(cell.get("source", "")), room, "of this cell")
            budget["source"] -= len(cell.source)
            if markup:
                budget["markup"] -= len(cell.source)
                attachments = cell.get("attachments")
                if attachments and len(json.dumps(attachments)) > self.image_chars:
                    cell.attachments = {}
            if cell.cell_type == "code":
                cell.outputs = [self._output(o) for o in cell.get("outputs", [])[:self.outputs]]
        return nb, resources

    def _cut(self, text: str, room: int, what: str) -> str:
        if len(text) <= room:
            return text
        return text[:max(room, 0)] + f"\n[{len(text) - max(room, 0)} more characters {what} are not shown]"

    def _output(self, output):
        if "text" in output:
            output["text"] = self._cut(_text(output["text"]), self.cell_chars, "of this output")
        data = output.get("data")
        if isinstance(data, dict):
            for mime, value in list(data.items()):
                value = _text(value) if isinstance(value, (str, list)) else json.dumps(value)
                if mime.startswith("image/") and len(value) > self.image_chars:
                    del data[mime]
                elif not mime.startswith("image/"):
                    data[mime] = self._cut(value, self.cell_chars, "of this output")
        return output


def _text(value) -> str:
    """A notebook string field (a string or a list of lines) as one string."""
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return value if isinstance(value, str) else ""


INERT_MIME = ("text/plain", "image/png", "image/jpeg")


class InertOutputs(NbGraderPreprocessor):
    """Keep only inert outputs in the student's cells: streams, errors and the text/plain, PNG and
    JPEG of results. The outputs a student saved are not from a grading run, and HTML or
    JavaScript in them would run in the TA's browser (formgrader) or on the feedback page."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        kept = []
        for output in cell.get("outputs", []):
            if output.get("output_type") in ("execute_result", "display_data"):
                output["data"] = {k: v for k, v in output.get("data", {}).items() if k in INERT_MIME}
                output["metadata"] = {}
                if not output["data"]:
                    continue
            kept.append(output)
        cell.outputs = kept
        return cell, resources


# a markdown link's or image's destination, inline `](dest` or a reference definition `[id]: dest`
_LINK_DESTINATION = re.compile(r"(\]\(\s*<?|^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*<?)([^\s)>]+)", re.M)
_SAFE_SCHEMES = ("http:", "https:", "mailto:", "attachment:")


def _inert_destination(match: re.Match) -> str:
    """`#` for a destination with a scheme a browser would run (javascript:, vbscript:, data:, ...),
    read as the browser reads it: entities decoded, backslashes and control characters dropped."""
    target = re.sub(r"[\x00-\x20\\]", "", html.unescape(match.group(2))).lower()
    if re.match(r"[a-z][a-z0-9+.-]*:", target) and not target.startswith(_SAFE_SCHEMES):
        return match.group(1) + "#"
    return match.group(0)


class InertMarkup(SanitizeHTML):
    """The student's markdown and raw cells as inert text for the TA's browser (formgrader) and the
    feedback page, which render them as HTML: nbconvert's SanitizeHTML (bleach) escapes every tag
    but bleach's safe ones and the released notebooks' `<details>`/`<summary>`, and a markdown link
    or image whose destination would run script leads to `#`. Blockquote markers bleach escaped
    (`&gt;`) are put back: a `>` at a line's start opens no tag."""

    enabled = Bool(True).tag(config=True)      # nbconvert's preprocessors are off by default
    tags = List(Unicode(), default_value=[*ALLOWED_TAGS, "details", "summary"],
                help="HTML tags kept in markdown and raw cells").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type not in ("markdown", "raw"):
            return cell, resources
        cell, resources = super().preprocess_cell(cell, resources, index)
        if cell.cell_type == "markdown":
            source = re.sub(r"(?m)^((?:[ \t]*&gt;)+)", lambda m: m.group(1).replace("&gt;", ">"), cell.source)
            cell.source = _LINK_DESTINATION.sub(_inert_destination, source)
        return cell, resources
