"""PrairieLearn door: `scalelabs prairielearn` writes a question PrairieLearn accepts, and its grader,
run on a /grade layout built from Lab 06's sample class (the entrypoint as PrairieLearn runs it: a
process of its own, SCALELABS_GRADE_ROOT naming the layout), gives each student the native door's
per-item scores under the id its variant seed derives, as fractions of the lab's total, in a
results.json that validates against the schema written from PrairieLearn's documentation
(prairielearn_results.py). A module that prints megabytes and ends its interpreter at import after trying to read
the course secret (graded as in a container: the unprivileged-user sandbox), a 50 MB upload, and
submissions that cannot be graded each give a valid results.json."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from autograder.build import leakscan
from autograder.classroom import samples
from autograder.doors import prairielearn as door
from autograder.engine.grade import grade_submission
from autograder.engine.sandbox.modes import user_mode_problem
from autograder.engine.secret import load_secret
from labs import load

import prairielearn_results
from door_helpers import BIN, REPO, env

LAB = "lab06_collectives"
# PrairieLearn's variant seeds are short strings of letters and digits; one per student
SEEDS = {student: f"{index + 3}k{index * 7919:x}q" for index, student in enumerate(samples.students(LAB))}
CRASH, BIG = "crash_at_import", "fifty_megabytes"
USER_MODE = "partly_wrong"      # graded in the unprivileged-user sandbox, as in PrairieLearn's container
SECRET_PLACEHOLDER = "@SECRET@"
CRASHING_MODULE = '''
try:
    leaked = open("@SECRET@").read()
except OSError:
    leaked = ""
print("x" * 3_000_000)
if leaked:
    raise RuntimeError("leaked " + leaked)
import os
os._exit(3)                         # the worker dies mid-import, as a crashing interpreter would
'''


@pytest.fixture(scope="module")
def lab():
    return load(LAB)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """`scalelabs prairielearn` of the repository's course (its release/, the tests' course secret)."""
    out = tmp_path_factory.mktemp("pl") / "course"
    done = subprocess.run([str(BIN / "scalelabs"), "prairielearn", LAB, "--out", str(out), "--course", str(REPO)],
                          capture_output=True, text=True, env=env(), cwd=out.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == str(out / "questions" / LAB)
    return out


def layout(root: Path, built: Path, files: dict[str, Path | bytes], seed, feedback: dict | None = None,
           grading: dict | None = None) -> Path:
    """A /grade folder as PrairieLearn mounts it: data/data.json, student/, tests/, serverFilesCourse/."""
    (root / "student").mkdir(parents=True)
    for name, content in files.items():
        target = root / "student" / name
        if isinstance(content, Path):
            shutil.copyfile(content, target)
        else:
            target.write_bytes(content)
    shutil.copytree(built / "questions" / LAB / "tests", root / "tests")
    shutil.copytree(built / "serverFilesCourse", root / "serverFilesCourse")
    if feedback is not None or grading is not None:
        config = json.loads((root / "tests" / door.CONFIG).read_text())
        config["feedback"] |= feedback or {}
        config["grading"] |= grading or {}
        (root / "tests" / door.CONFIG).write_text(json.dumps(config))
    (root / "data").mkdir()
    data = {"params": {}, "correct_answers": {}, "submitted_answers": {"_files": []}, "format_errors": {},
            "partial_scores": {}, "score": 0, "feedback": {}, "options": {}, "raw_submitted_answers": {}}
    if seed is not None:
        data["variant_seed"] = seed
    (root / "data" / "data.json").write_text(json.dumps(data))
    return root


@pytest.fixture(scope="module")
def submissions(tmp_path_factory, lab) -> dict[str, Path]:
    """student -> their materialised submission folder (the release with their module and notebook), its
    answers written in the version of the id the student's seed gives (issue 45: the id PrairieLearn's page
    shows, which the student types in the notebook)."""
    work = tmp_path_factory.mktemp("pl-class")
    return {student: samples.materialise(LAB, student, work / student, graded_as=door.student_id(SEEDS[student]))
            for student in samples.students(LAB)}


def uploaded(folder: Path, lab) -> dict[str, Path]:
    """What a student uploads to the question: the module and the notebook."""
    return {name: folder / name for name in (f"{lab.module}.py", f"{lab.id}.ipynb")}


@pytest.fixture(scope="module")
def jobs(tmp_path_factory, built, submissions, lab) -> dict[str, Path]:
    """name -> its /grade folder after the entrypoint ran there, two jobs at a time, each from a working
    folder of its own."""
    work = tmp_path_factory.mktemp("pl-jobs")
    roots = {}
    for student, folder in submissions.items():
        grading = {"sandbox": "user"} if student == USER_MODE and user_mode_problem() is None else None
        roots[student] = layout(work / student, built, uploaded(folder, lab), SEEDS[student], grading=grading)
    secret_path = work / CRASH / "serverFilesCourse" / door.SERVER_FILES / door.SECRET_FILE
    crash = CRASHING_MODULE.replace(SECRET_PLACEHOLDER, str(secret_path)).encode()
    roots[CRASH] = layout(work / CRASH, built, {f"{lab.module}.py": crash,
                                                f"{lab.id}.ipynb": submissions["correct"] / f"{lab.id}.ipynb"},
                          "crash7", feedback={"prairielearn": "after"},
                          grading={"sandbox": "user"} if user_mode_problem() is None else None)
    notebook = json.loads((submissions["correct"] / f"{lab.id}.ipynb").read_text())
    notebook["cells"].append({"cell_type": "raw", "metadata": {}, "source": "z" * (50 << 20)})
    roots[BIG] = layout(work / BIG, built, {f"{lab.module}.py": submissions["correct"] / f"{lab.module}.py",
                                            f"{lab.id}.ipynb": json.dumps(notebook).encode()}, "big50")
    pending = list(roots.items())
    while pending:
        running = []
        for name, root in pending[:2]:
            cwd = work / f"cwd-{name}"
            cwd.mkdir()
            running.append((name, subprocess.Popen([sys.executable, "-m", "autograder.doors.prairielearn"], cwd=cwd,
                                                   env=env() | {door.ROOT_ENV: str(root)}, stdout=subprocess.PIPE,
                                                   stderr=subprocess.STDOUT, text=True)))
        pending = pending[2:]
        for name, process in running:
            log, _ = process.communicate(timeout=900)
            assert process.returncode == 0, (name, log[-3000:])
    return roots


def results_of(root: Path) -> dict:
    return json.loads((root / "results" / "results.json").read_text())


@pytest.fixture(scope="module")
def native(submissions, lab) -> dict:
    """student -> the native door's result of the same files under the id the student's seed gives."""
    return {student: grade_submission(lab, folder, door.student_id(SEEDS[student]), secret=load_secret())
            for student, folder in submissions.items()}


@pytest.mark.parametrize("student", samples.students(LAB))
def test_each_sample_student_gets_the_native_doors_item_scores_as_fractions_of_the_total(jobs, native, lab, student):
    results = results_of(jobs[student])
    assert prairielearn_results.problems(results, lab) == []
    engine = native[student].item_scores()
    tests = {t["name"]: t for t in results["tests"]}
    for item, (score, max_score) in engine.items():
        assert math.isclose(tests[item]["points"] / lab.total_points, score / lab.total_points, abs_tol=1e-9), item
        assert math.isclose(tests[item]["max_points"], max_score)
    assert math.isclose(results["score"], native[student].score / lab.total_points, abs_tol=1e-6)
    assert f"graded as {door.student_id(SEEDS[student])} " in results["message"]
    if student != USER_MODE:     # the same notes: the sandbox, the course secret's
        assert results["output"] == native[student].output


def test_the_sample_class_spans_full_partial_and_no_credit(jobs):
    scores = {student: results_of(jobs[student])["score"] for student in SEEDS}
    assert scores["correct"] == 1.0 and scores["untouched"] < 0.5 and 0 < scores["partly_wrong"] < 1


def test_results_show_the_before_view_and_never_the_after_views_text(jobs, native, lab):
    """[feedback] prairielearn defaults to "before": a failing item shows what failed, not what only the
    after view shows (here the explanation of a wrong reflection)."""
    results = results_of(jobs["partly_wrong"])
    before, after = native["partly_wrong"].view("before"), native["partly_wrong"].view("after")
    withheld = [t for t in after.tests if t.output not in {b.output for b in before.tests}]
    assert withheld, "partly_wrong's after view says more than its before view"
    text = json.dumps(results)
    for t in withheld:
        assert json.dumps(t.output)[1:-1] not in text, t.name
    assert "after the due date" in results["message"]
    secrets = leakscan.secrets_for([lab])
    for student in SEEDS:
        assert leakscan.scan_text(student, json.dumps(results_of(jobs[student]), indent=1), secrets, keys=False) == []


def test_a_module_that_prints_megabytes_and_crashes_gives_valid_results_without_the_secret(jobs, lab):
    """Graded as PrairieLearn's container grades (the unprivileged-user sandbox, where this machine can run
    it) with the after view, which quotes the student's messages: the module's attempt to read the course
    secret fails, its 3 MB of output and its interpreter's death cost only its functions' points."""
    root = jobs[CRASH]
    results = results_of(root)
    assert prairielearn_results.problems(results, lab) == []
    assert (root / "results" / "results.json").stat().st_size < 200_000
    tests = {t["name"]: t for t in results["tests"]}
    assert all(tests[f.name]["points"] == 0 for f in lab.functions)
    assert tests["act1_prediction"]["points"] == lab.question("act1_prediction").points
    key = (root / "serverFilesCourse" / door.SERVER_FILES / door.SECRET_FILE).read_text().strip()
    assert key == load_secret().key.hex() and key not in json.dumps(results)
    if user_mode_problem() is None:
        assert "separate unprivileged user" in results["output"]


def test_a_fifty_megabyte_upload_gives_valid_results(jobs, lab):
    results = results_of(jobs[BIG])
    assert prairielearn_results.problems(results, lab) == []
    tests = {t["name"]: t for t in results["tests"]}
    assert all(tests[f.name]["points"] == f.points for f in lab.functions)      # the module is graded
    assert tests["act1_prediction"]["points"] == 0 and "cannot be read" in tests["act1_prediction"]["output"]


def test_the_user_sandbox_of_a_container_grades_like_the_native_door(jobs):
    if user_mode_problem() is not None:
        pytest.skip(f"the unprivileged-user sandbox cannot run here: {user_mode_problem()}")
    assert "separate unprivileged user" in results_of(jobs[USER_MODE])["output"]


@pytest.mark.parametrize("case", ["nothing uploaded", "no variant seed", "data.json not JSON", "unknown lab",
                                  "no sandbox"])
def test_a_submission_that_cannot_be_graded_is_not_gradable_with_a_message(tmp_path, built, submissions, lab, case,
                                                                           monkeypatch):
    files = {} if case == "nothing uploaded" else uploaded(submissions["correct"], lab)
    root = layout(tmp_path / "grade", built, files, None if case == "no variant seed" else "abc")
    if case == "data.json not JSON":
        (root / "data" / "data.json").write_text("{not json")
    if case == "unknown lab":
        (root / "tests" / door.CONFIG).write_text(json.dumps({"assignment": "lab99_nothing"}))
    if case == "no sandbox":
        from autograder.engine import grade as grade_module
        from autograder.engine.sandbox import SandboxUnavailable

        def refuse(*args, **kwargs):
            raise SandboxUnavailable("bubblewrap is missing and the grader is not root")
        monkeypatch.setattr(grade_module, "grade_submission", refuse)
    monkeypatch.setenv(door.ROOT_ENV, str(root))
    door.main()
    results = results_of(root)
    assert prairielearn_results.schema_problems(results) == []
    assert results["gradable"] is False and "not counted" in results["message"]
    expected = {"nothing uploaded": f"{lab.module}.py nor {lab.id}.ipynb was uploaded", "no variant seed": "no variant seed",
                "data.json not JSON": "data.json cannot be read", "unknown lab": "not set up for this question",
                "no sandbox": "cannot run student code safely"}[case]
    assert expected in results["message"]


def test_results_are_cut_to_prairielearns_megabyte_keeping_every_score():
    huge = {"gradable": True, "score": 0.5, "message": "m" * 300_000, "output": "o" * 400_000,
            "tests": [{"name": f"t{i}", "points": i, "max_points": 10, "message": "x", "output": "y" * 500_000}
                      for i in range(6)]}
    fitted = door.fit(huge)
    assert len(json.dumps(fitted).encode()) < prairielearn_results.SIZE_CAP_BYTES
    assert all(t["output"].startswith("yyy") for t in fitted["tests"]), "cut, not dropped, when cutting is enough"
    assert [(t["name"], t["points"]) for t in fitted["tests"]] == [(f"t{i}", i) for i in range(6)]
    assert fitted["score"] == 0.5 and prairielearn_results.schema_problems(fitted) == []


# PrairieLearn's question schema (apps/prairielearn/src/schemas/schemas/infoQuestion.json), the part a
# generated info.json uses: what it requires, and externalGradingOptions' fields and types
INFO_SCHEMA = {
    "type": "object", "required": ["uuid", "type", "title", "topic"],
    "properties": {
        "uuid": {"type": "string", "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"},
        "type": {"enum": ["Calculation", "MultipleChoice", "Checkbox", "File", "MultipleTrueFalse", "v3"]},
        "title": {"type": "string"}, "topic": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
        "gradingMethod": {"enum": ["Internal", "External", "Manual"]}, "singleVariant": {"type": "boolean"},
        "partialCredit": {"type": "boolean"},
        "externalGradingOptions": {
            "type": "object", "additionalProperties": False, "required": ["image", "entrypoint"],
            "properties": {"enabled": {"type": "boolean"}, "image": {"type": "string"},
                           "entrypoint": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]},
                           "serverFilesCourse": {"type": "array", "items": {"type": "string"}},
                           "timeout": {"type": "integer", "maximum": 600}, "enableNetworking": {"type": "boolean"},
                           "environment": {"type": "object"}}},
    },
    "additionalProperties": False,
}


def test_the_question_folder_is_what_prairielearn_reads(built, lab):
    question = built / "questions" / LAB
    info = json.loads((question / "info.json").read_text())
    jsonschema.validate(info, INFO_SCHEMA)
    options = info["externalGradingOptions"]
    assert info["gradingMethod"] == "External" and info["singleVariant"] is True
    assert options["entrypoint"][1:] == ["-m", "autograder.doors.prairielearn"] and options["enableNetworking"] is False
    assert options["serverFilesCourse"] == ["scalelabs/"] and 0 < options["timeout"] <= 600
    assert info["uuid"] == door.question_uuid(REPO.name, LAB)   # the same question each time it is built
    html = (question / "question.html").read_text()
    assert '<pl-file-upload file-names="collectives.py, lab06_collectives.ipynb">' in html
    assert "{{params.scalelabs_student}}" in html and "<pl-external-grader-results>" in html
    config = json.loads((question / "tests" / door.CONFIG).read_text())
    assert config["assignment"] == LAB
    assert sorted(p.name for p in (question / "tests" / door.PROVIDED).iterdir()) == ["_domain.py", "constants.py"]


def test_the_course_secret_is_only_in_server_files_course(built):
    key = load_secret().key.hex()
    secret_file = built / "serverFilesCourse" / door.SERVER_FILES / door.SECRET_FILE
    assert secret_file.read_text().strip() == key and secret_file.stat().st_mode & 0o077 == 0
    others = [p for p in built.rglob("*") if p.is_file() and p != secret_file]
    assert others and not [p for p in others if key in p.read_text(errors="replace")]


@pytest.mark.parametrize("seed", ["abc123", "0", "Zq9" * 21 + "x", "seed with spaces", "é", 1234567])
def test_the_question_page_shows_the_id_the_grader_grades_under(built, seed):
    """server.py's generate() (what PrairieLearn runs for the page) and the entrypoint derive one id from
    one seed; it is a safe student id, whatever the seed."""
    from autograder.classroom.identity import id_problem

    namespace: dict = {}
    exec(compile((built / "questions" / LAB / "server.py").read_text(), "server.py", "exec"), namespace)
    data = {"params": {}, "variant_seed": seed}
    namespace["generate"](data)
    assert data["params"]["scalelabs_student"] == door.student_id(seed)
    assert id_problem(door.student_id(seed)) is None
    assert door.student_id(seed).startswith("pl-")
    if isinstance(seed, str) and seed.isalnum() and seed.isascii() and len(seed) <= 64:
        assert door.student_id(seed) == f"pl-{seed}"


def test_different_seeds_are_different_students():
    ids = {door.student_id(seed) for seed in [*SEEDS.values(), "a b", "a  b", "x" * 65, "x" * 66]}
    assert len(ids) == len(SEEDS) + 4
    with pytest.raises(ValueError, match="no variant seed"):
        door.student_id("  ")


def test_the_grade_root_defaults_to_slash_grade(monkeypatch, tmp_path):
    monkeypatch.delenv(door.ROOT_ENV, raising=False)
    assert door.DEFAULT_ROOT == "/grade"
    seen = []
    monkeypatch.setattr(door, "grade_job", lambda root: seen.append(root) or door.not_gradable("stop"))
    monkeypatch.setattr(door, "write_results", lambda root, results: tmp_path / "results.json")
    door.main()
    assert seen == [Path("/grade")]


def test_the_question_needs_the_lab_released(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("")
    done = subprocess.run([str(BIN / "scalelabs"), "prairielearn", LAB, "--course", str(course)], capture_output=True,
                          text=True, env=env(), cwd=tmp_path)
    assert done.returncode == 2 and "scalelabs release lab06_collectives" in " ".join(done.stderr.split())
    assert not (course / "dist").exists()
