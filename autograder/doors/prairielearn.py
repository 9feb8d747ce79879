"""PrairieLearn door: a question whose external grader is the scalelabs engine.

`scalelabs prairielearn LAB --out DIR` (`build_question`) writes, laid out as a PrairieLearn course:

    DIR/questions/<lab>/info.json          v3, gradingMethod External, singleVariant (the student keeps one
                                           variant, hence one scalelabs id), externalGradingOptions: the
                                           grader image, `python -m autograder.doors.prairielearn`,
                                           serverFilesCourse scalelabs/, a timeout from [grading], no network
    DIR/questions/<lab>/question.html      the student's scalelabs id, the upload of the module and the
                                           notebook, the grader's results
    DIR/questions/<lab>/server.py          generate(): params.scalelabs_student from the variant seed
                                           (`student_id`, its source copied: one derivation, two places)
    DIR/questions/<lab>/tests/scalelabs.json   the lab and the course's [grading] and [feedback] tables
    DIR/questions/<lab>/tests/provided/    the modules the release provides beside the student's module
    DIR/serverFilesCourse/scalelabs/course_secret   the course secret (made now if the course has none)

In the grading container PrairieLearn mounts /grade: data/data.json (the variant's `variant_seed`, no
student id), student/ (the uploaded files), tests/ and serverFilesCourse/ (the above), and reads back
results/results.json (which it does not create). The entrypoint (`main`, root `SCALELABS_GRADE_ROOT`,
default /grade) grades student/ with the engine in its sandbox (in a container, the unprivileged-user
sandbox: docs/ARCHITECTURE.md) under the id `student_id(variant_seed)`, hidden inputs keyed by that id and
the course secret, and writes `results_json`: score in [0, 1] (the engine's total over the lab's points),
one test per graded item with its points, each item's text in the view `[feedback] prairielearn` names
("before" by default: students resubmit and see results at once), never the other view. A submission
that cannot be graded (neither file uploaded, no variant seed) and a fault of the grader's own (no
sandbox, a broken question folder) get `gradable: false` with a message: PrairieLearn then counts no
attempt and takes no points. Whatever happens, results.json is written and stays under 1 MB.
"""
from __future__ import annotations

import inspect
import json
import os
import shutil
import sys
import traceback
import uuid
from dataclasses import replace
from pathlib import Path

from autograder.engine.results import Result

ROOT_ENV = "SCALELABS_GRADE_ROOT"
DEFAULT_ROOT = "/grade"
CONFIG = "scalelabs.json"                # in the question's tests/ (/grade/tests/)
PROVIDED = "provided"                    # tests/provided/<module>.py
SERVER_FILES = "scalelabs"               # serverFilesCourse/scalelabs/ (/grade/serverFilesCourse/scalelabs/)
SECRET_FILE = "course_secret"
IMAGE_PYTHON = "/opt/scalelabs/.venv/bin/python"   # where the Containerfile installs scalelabs
ENTRYPOINT = [IMAGE_PYTHON, "-m", "autograder.doors.prairielearn"]
DEFAULT_IMAGE = "scalelabs-grader"
MAX_TIMEOUT_S = 600                      # PrairieLearn's ceiling on externalGradingOptions.timeout
RESULTS_CAP_BYTES = 1_000_000            # PrairieLearn's limit on results.json
STAFF = "tell the course staff"


def student_id(variant_seed) -> str:
    """The scalelabs student id of a PrairieLearn variant: `pl-` and its seed, kept as it is when it is
    1-64 letters and digits (a safe id, autograder.classroom.identity), else as 16 hex digits of its
    sha256. PrairieLearn gives no student id to a grader; the seed names the student's variant, so it
    keys their hidden inputs (with the course secret) and their story. ValueError for an empty seed.
    (Standalone: copied verbatim into the question's server.py.)"""
    import hashlib
    import re

    seed = str(variant_seed if variant_seed is not None else "").strip()
    if not seed:
        raise ValueError("PrairieLearn gave no variant seed")
    if re.fullmatch(r"[A-Za-z0-9]{1,64}", seed):
        return "pl-" + seed
    return "pl-" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:16]


# --- the question folder ---

def question_uuid(course_id: str, assignment_id: str) -> str:
    """The question's uuid: the same for the same course and lab whenever the folder is built again
    (PrairieLearn keys a question's history by it)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"scalelabs:{course_id}:{assignment_id}"))


def info_json(assignment, course_id: str, image: str, timeout_s: int) -> dict:
    return {
        "uuid": question_uuid(course_id, assignment.id),
        "type": "v3",
        "title": assignment.title,
        "topic": "scalelabs",
        "tags": ["scalelabs", assignment.id],
        "gradingMethod": "External",
        "singleVariant": True,
        "partialCredit": True,
        "externalGradingOptions": {
            "enabled": True,
            "image": image,
            "entrypoint": ENTRYPOINT,
            "serverFilesCourse": [f"{SERVER_FILES}/"],
            "timeout": timeout_s,
            "enableNetworking": False,
        },
    }


def timeout_for(config) -> int:
    """The grading job's timeout: the engine's budget for one submission, its module's import and a
    minute for the rest (the container's start, the notebook), at most PrairieLearn's 600 s."""
    return min(MAX_TIMEOUT_S, int(config.budget_s + config.import_timeout_s) + 60)


def question_files(assignment) -> str:
    """pl-file-upload's file-names: the student's module and notebook."""
    return f"{assignment.module}.py, {assignment.id}.ipynb"


def build_question(assignment, out_dir: Path, course: Path, image: str = DEFAULT_IMAGE) -> Path:
    """Write the question folder and the course files under `out_dir` (module docstring); returns the
    question folder. The course's release/<lab>/ must exist (the provided modules come from it);
    ConfigError for a bad scalelabs.toml, FileNotFoundError for a lab not released."""
    from autograder.build.publictests import CODE_TEMPLATES
    from autograder.classroom.feedback import VIEW_NOTES
    from autograder.course import course_settings
    from autograder.engine.config import config_from_table, course_document, feedback_from_table
    from autograder.engine.secret import create_secret

    course = Path(course)
    release_dir = course / "release" / assignment.id
    missing = [n for n in assignment.provided if not (release_dir / f"{n}.py").is_file()]
    if missing:
        raise FileNotFoundError(f"{release_dir} has no {', '.join(n + '.py' for n in missing)}: run "
                                f"`scalelabs release {assignment.id}` first")
    document, where = course_document(course / "scalelabs.toml")
    grading, feedback = document.get("grading", {}), document.get("feedback", {})
    config = config_from_table(grading, where)     # a bad setting stops the build, not every student's grading
    policy = feedback_from_table(feedback, where)
    question = Path(out_dir) / "questions" / assignment.id
    tests = question / "tests"
    if tests.exists():
        shutil.rmtree(tests)
    (tests / PROVIDED).mkdir(parents=True)
    for name in assignment.provided:
        shutil.copyfile(release_dir / f"{name}.py", tests / PROVIDED / f"{name}.py")
    (tests / CONFIG).write_text(json.dumps({"assignment": assignment.id, "grading": grading, "feedback": feedback},
                                           indent=1, sort_keys=True) + "\n")
    info = info_json(assignment, course_settings(course).id, image, timeout_for(config))
    (question / "info.json").write_text(json.dumps(info, indent=2) + "\n")
    (question / "question.html").write_text(CODE_TEMPLATES.get_template("prairielearn_question.html.j2").render(
        assignment_id=assignment.id, title=assignment.title, module=assignment.module,
        files=question_files(assignment), view_note=VIEW_NOTES[policy.prairielearn]))
    (question / "server.py").write_text(CODE_TEMPLATES.get_template("prairielearn_server.py.j2").render(
        assignment_id=assignment.id, student_id_source=inspect.getsource(student_id)))
    secret, _ = create_secret(course)
    shared = Path(out_dir) / "serverFilesCourse" / SERVER_FILES
    shared.mkdir(parents=True, exist_ok=True)
    target = shared / SECRET_FILE
    target.unlink(missing_ok=True)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secret.key.hex() + "\n")
    return question


def steps(assignment, out_dir: Path, image: str, policy_view: str) -> str:
    """What `scalelabs prairielearn` prints: where the files go in the PrairieLearn course, and then."""
    return "\n".join([
        f"total: {assignment.total_points:g} points (PrairieLearn gets the score as a fraction of them)",
        "In your PrairieLearn course repository (private: it now holds the course secret):",
        f"  1. Copy {Path(out_dir) / 'questions' / assignment.id} to questions/{assignment.id} and "
        f"{Path(out_dir) / 'serverFilesCourse' / SERVER_FILES} to serverFilesCourse/{SERVER_FILES}.",
        f"  2. Build the grader image from the Containerfile, push it as {image} to a registry your grader "
        "hosts pull from (a private one: the image holds the reference solutions), or pass --image NAME.",
        f"  3. Add the question \"{assignment.id}\" to an assessment, sync, and submit the sample files as a test student.",
        f"Feedback ([feedback] prairielearn = \"{policy_view}\"): "
        + ("what failed, without answers or hidden inputs; set \"after\" and copy the question again to show everything."
           if policy_view == "before" else "everything, at once."),
    ])


# --- grading: the /grade layout in, results.json out ---

def not_gradable(message: str) -> dict:
    """The results of a submission PrairieLearn should count as invalid: no attempt used, no points."""
    return {"gradable": False, "message": message, "format_errors": [message], "tests": []}


def results_json(assignment, result: Result, view: str) -> dict:
    """PrairieLearn's results.json of an engine result, in `view` ("before" or "after"): a test per item
    (points, max_points, its checks' text), the score as a fraction of the lab's points."""
    from autograder.engine.views import item_feedback

    shown = result.view(view)
    scores = shown.item_scores()
    possible = float(assignment.total_points)
    kinds = {f.name: f"function {f.name} in {assignment.module}.py" for f in assignment.functions}
    kinds |= {q.id: f"{q.kind} {q.id} in the notebook" for q in assignment.questions}
    kinds |= {c.id: f"design challenge {c.id} in the notebook" for c in assignment.challenges}
    tests = []
    for item in assignment.item_ids:
        score, max_score = scores.get(item, (0.0, float(assignment.item_points[item])))
        checks = [t for t in shown.tests if t.item == item]
        failed = [t.check for t in checks if t.score < t.max_score - 1e-9]
        tests.append({"name": item, "description": kinds.get(item, item), "points": score, "max_points": max_score,
                      "message": ("every check passed" if not failed else "not passed: " + "; ".join(failed))[:500],
                      "output": item_feedback(shown, item, notes=False) if checks else "not graded"})
    total = shown.score
    lines = [f"Score: {total:g} / {possible:g}, graded as {result.student_id} (the id this question shows you)"]
    if view == "before" and any(t.brief is not None for t in result.tests):
        from autograder.classroom.feedback import VIEW_NOTES
        lines.append(VIEW_NOTES["before"])
    return {"gradable": True, "score": round(min(1.0, max(0.0, total / possible if possible else 0.0)), 6),
            "message": "\n".join(lines), "output": shown.output, "tests": tests}


def fit(results: dict, cap_bytes: int = RESULTS_CAP_BYTES) -> dict:
    """`results` cut to fit in `cap_bytes` of JSON: every text halved until it fits, then the outputs
    dropped (the scores always stay). The engine caps what it writes far below PrairieLearn's 1 MB; this
    holds whatever it wrote."""
    from autograder.engine.grade import cap_output

    def size() -> int:
        return len(json.dumps(results).encode("utf-8"))

    cap = 4096
    while size() > cap_bytes and cap >= 64:
        for holder in [results, *results.get("tests", [])]:
            for key in ("output", "message"):
                if isinstance(holder.get(key), str):
                    holder[key] = cap_output(holder[key], cap)
        cap //= 2
    if size() > cap_bytes:
        for test in results.get("tests", []):
            test["output"] = ""
        results["output"] = "(the feedback was too long for PrairieLearn's 1 MB and was left out)"
    return results


def write_results(root: Path, results: dict) -> Path:
    """results/results.json under `root`, made whole (tmp + rename) and under PrairieLearn's 1 MB."""
    folder = Path(root) / "results"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "results.json"
    tmp = folder / f".results.json.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(fit(results), indent=1), encoding="utf-8")
    os.replace(tmp, target)
    return target


def _config(root: Path):
    """(assignment, GradingConfig with the feedback policy) from tests/scalelabs.json."""
    from autograder.engine.config import config_from_table, feedback_from_table
    from labs import load

    where = root / "tests" / CONFIG
    data = json.loads(where.read_text(encoding="utf-8"))
    assignment = load(data["assignment"])
    config = config_from_table(data.get("grading", {}), f"{where} [grading]")
    return assignment, replace(config, feedback=feedback_from_table(data.get("feedback", {}), f"{where} [feedback]"))


def _variant_seed(root: Path):
    """PrairieLearn's variant_seed from data/data.json; ValueError when there is none to read."""
    from autograder.engine.filetree import read_regular

    try:
        data = json.loads(read_regular(root / "data" / "data.json", 64 << 20))
    except (OSError, ValueError) as exc:
        raise ValueError(f"PrairieLearn's data.json cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    if not isinstance(data, dict):
        raise ValueError("PrairieLearn's data.json is not an object")
    return data.get("variant_seed")


def grade_job(root: Path) -> dict:
    """The results.json of the grading job in `root` (module docstring). Never raises: a fault is a
    `gradable: false` result whose message says whose it is."""
    from autograder.classroom.upload import holds_submission, put_provided
    from autograder.engine.grade import grade_submission
    from autograder.engine.sandbox import SandboxUnavailable
    from autograder.engine.secret import read_secret

    root = Path(root)
    try:
        assignment, config = _config(root)
    except Exception as exc:  # noqa: BLE001  (the question folder is the staff's: say so, count nothing)
        return not_gradable(f"The grader is not set up for this question ({type(exc).__name__}: {str(exc)[:300]}): "
                            f"{STAFF}. This submission was not counted.")
    try:
        student = student_id(_variant_seed(root))
    except ValueError as exc:
        return not_gradable(f"{exc}: {STAFF}. This submission was not counted.")
    folder = root / "student"
    if not holds_submission(folder, assignment):
        return not_gradable(f"Neither {assignment.module}.py nor {assignment.id}.ipynb was uploaded: upload those "
                            f"files of your {assignment.id} folder. This submission was not counted.")
    try:
        secret = read_secret(root / "serverFilesCourse" / SERVER_FILES / SECRET_FILE)
        put_provided(folder, root / "tests" / PROVIDED, assignment.provided)
        # what the student's code must not read (the unprivileged-user sandbox checks) or write
        secrets = [p for p in (root / "serverFilesCourse", root / "tests", root / "data") if p.exists()]
        (root / "results").mkdir(parents=True, exist_ok=True)
        result = grade_submission(assignment, folder, student, config=config, secrets=secrets,
                                  outputs=[root / "results"], secret=secret)
    except SandboxUnavailable as exc:
        return not_gradable(f"The grader cannot run student code safely here ({str(exc)[:300]}): {STAFF}. This "
                            "submission was not counted.")
    except Exception as exc:  # noqa: BLE001  (the grader never crashes on a submission)
        return not_gradable(f"The grader failed on this submission ({type(exc).__name__}: {str(exc)[:300]}): "
                            f"{STAFF}. This submission was not counted.")
    return results_json(assignment, result, config.feedback.prairielearn)


def main() -> None:
    """The grading container's entrypoint: grade the job under $SCALELABS_GRADE_ROOT (default /grade)
    and write its results.json, whatever happens; exit 0 once it is written."""
    root = Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT)
    try:
        results = grade_job(root)
    except BaseException as exc:   # noqa: BLE001  (even then PrairieLearn gets results it can show)
        traceback.print_exc()
        results = not_gradable(f"The grader failed ({type(exc).__name__}): {STAFF}. This submission was not counted.")
    path = write_results(root, results)
    print(f"scalelabs: {path} (gradable: {results.get('gradable', True)}, score {results.get('score', 0):g})",
          file=sys.stderr)


if __name__ == "__main__":
    main()
