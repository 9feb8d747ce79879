"""otter door under attack (issue 12): `otter run -a <zip> <submission.zip>` (the local run of what
Gradescope runs) of cheaters whose untouched stub's notebook carries one added cell, then of an
honest classmate on the same machine. Each results.json must hold the engine's scores of the
files submitted; the classmate's must not move. The zip's setup installs the sandbox and locks the
secrets away from other users. `otter run` runs here as on Gradescope, where the zip's setup.sh
has uninstalled rfc3987-syntax (door_helpers.env).
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

import door_attacks as attacks
from door_attacks import BIN

from autograder.doors import otter as otter_door
from autograder.engine.grade import grade_submission

CHEATERS = {
    "copy_ref": attacks.COPY_REFERENCE,     # (a)
    "keys": attacks.WRITE_KEYS,             # (b)
    "verdicts": attacks.FORGE_VERDICTS,     # (c)
    "pickle": attacks.PICKLE_PAYLOAD,       # (d)
    "shadow": "",                           # (f) no cell: a submitted otter/ package
    "shadow_module": "",                    # no cell: a collectives/ package (the reference) beside the stub
}
# no cell of code: what costs the most to read, in a correct submission's notebook (door_attacks.costly_notebook)
COSTLY = {"costly_markdown": "markdown", "costly_code": "code"}
CHEATER_FILES = {"shadow": attacks.SHADOW_OTTER,
                 "shadow_module": {"collectives/__init__.py": attacks.reference_module()}}


def _otter_run(zip_path, folder, work, student):
    archive = shutil.make_archive(str(work / student), "zip", folder)
    out = work / f"{student}-out"
    out.mkdir()
    return out, subprocess.Popen(
        [str(BIN / "otter"), "run", "-a", str(zip_path), "-o", str(out), "--no-logo", archive],
        cwd=work, env=attacks.run.__globals__["env"](without_rfc3987=True), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.fixture(scope="module")
def course_zip(tmp_path_factory):
    """The class submitted and the zip, built once: (root, assignment, folders, zip path)."""
    root = tmp_path_factory.mktemp("otter-attacks")
    assignment, folders = attacks.make_course(root, {**CHEATERS, **dict.fromkeys(COSTLY, "")}, CHEATER_FILES)
    for student, kind in COSTLY.items():
        attacks.costly_notebook(folders[student], kind)
    zip_path = otter_door.build_zip(assignment.id, root / "autograder.zip", assignment=assignment,
                                    release_dir=root / "release" / assignment.id, declaration="release_toy:ASSIGNMENT")
    return root, assignment, folders, zip_path


@pytest.fixture(scope="module")
def otter_class(course_zip):
    """The cheaters run (two at a time), then an honest classmate."""
    root, assignment, folders, zip_path = course_zip
    pristine = {s: grade_submission(assignment, f, "anonymous").item_scores() for s, f in folders.items()}
    work = root / "runs"
    work.mkdir()
    at_once = max(1, (os.cpu_count() or 1) // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    results, logs = {}, {}
    for wave in (sorted([*CHEATERS, *COSTLY]), ["ada"]):  # one honest classmate, graded after every cheater
        for start in range(0, len(wave), at_once):
            running = {s: _otter_run(zip_path, folders[s], work, s) for s in wave[start:start + at_once]}
            for student, (out, process) in running.items():
                logs[student], _ = process.communicate(timeout=600)
                if (out / "results.json").exists():
                    results[student] = json.loads((out / "results.json").read_text())
    return dict(assignment=assignment, pristine=pristine, results=results, logs=logs)


def _assert_engine_scores(otter_class, student):
    assert student in otter_class["results"], otter_class["logs"][student][-3000:]
    results, pristine = otter_class["results"][student], otter_class["pristine"][student]
    tests = {t["name"]: t for t in results["tests"] if "max_score" in t}
    assert set(tests) == set(pristine)
    for item, (score, max_score) in pristine.items():
        assert math.isclose(tests[item]["score"], score, abs_tol=1e-4), (student, item, tests[item], score)
        assert math.isclose(tests[item]["max_score"], max_score, abs_tol=1e-4)
    if "score" in results:
        assert math.isclose(results["score"], sum(s for s, _ in pristine.values()), abs_tol=1e-3)


@pytest.mark.parametrize("student", sorted(COSTLY))
def test_a_costly_notebook_is_graded_from_its_files_with_full_marks(otter_class, student):
    """A 19 MB markdown cell, or 1,500 code cells of 10,000 characters naming the question: the engine
    reads the notebook once within its budget and otter never opens a kernel on it."""
    _assert_engine_scores(otter_class, student)
    scored = sum(t["score"] for t in otter_class["results"][student]["tests"] if "max_score" in t)
    assert math.isclose(scored, otter_class["assignment"].total_points, abs_tol=1e-4), scored


@pytest.mark.parametrize("student", sorted(CHEATERS))
def test_cheater_earns_only_the_submitted_stub(otter_class, student):
    _assert_engine_scores(otter_class, student)
    assert sum(s for s, _ in otter_class["pristine"][student].values()) == 0


def test_a_package_shadowing_the_module_is_named_in_the_results(otter_class):
    """Python would import collectives/ instead of the stub's collectives.py: the door grades the
    stub (test_cheater_earns_only_the_submitted_stub) and results.json's output says why."""
    assert "collectives/ (a package folder)" in otter_class["results"]["shadow_module"]["output"]


@pytest.mark.parametrize("student", ["ada"])
def test_honest_classmate_graded_after_the_cheaters_does_not_move(otter_class, student):
    _assert_engine_scores(otter_class, student)
    assert sum(s for s, _ in otter_class["pristine"][student].values()) > 0


def test_setup_installs_bubblewrap_and_locks_the_secrets(course_zip):
    zf = zipfile.ZipFile(course_zip[3])
    setup = zf.read("setup.sh").decode()
    assert "apt-get install -y bubblewrap" in setup
    assert setup.index("apt-get install -y bubblewrap") < setup.index("mamba env create")
    lockdown = f"bash /autograder/source/{otter_door.LOCKDOWN}"
    assert setup.rstrip().endswith(lockdown)  # after the environment (and scalelabs) is installed
    assert setup.index("mamba env create") < setup.index("pip uninstall -y rfc3987-syntax") < setup.index(lockdown)
    run_autograder = zf.read("run_autograder").decode()
    assert run_autograder.index(lockdown) < run_autograder.index("run_otter.py")


def test_the_image_installs_the_grader_and_otter_without_a_browser(course_zip):
    """The environment holds scalelabs (not its test extra) and otter-grader's own requirements
    without webpdf; otter-grader comes after them without dependencies (with them, pip would pull
    nbconvert[webpdf], hence playwright), and no browser is downloaded. tests/test_grader_install.py
    resolves these requirements in a fresh venv."""
    zf = zipfile.ZipFile(course_zip[3])
    setup = zf.read("setup.sh").decode()
    pip = [line.strip()[2:] for line in zf.read("environment.yml").decode().split("- pip:")[1].splitlines()
           if line.strip().startswith("- ")]
    assert pip == otter_door.image_requirements() and pip[0] == otter_door.INSTALL_DIR
    assert not [r for r in pip if "otter" in r or "webpdf" in r or "[test" in r], pip
    assert "playwright" not in setup
    otter_itself = "pip install --no-deps otter-grader==7.0.0"
    assert setup.index("mamba env create") < setup.index(otter_itself) < setup.index(f"bash /autograder/source/{otter_door.LOCKDOWN}")



def test_otter_runs_here_as_on_gradescope_without_rfc3987_syntax():
    """The otter runs of these tests (env(without_rfc3987=True)) emulate what setup.sh leaves: the
    package cannot be imported, so jsonschema has no IRI format check; the default environment of
    the door tests still has it installed (the toy-course door tests run there)."""
    env_of = attacks.run.__globals__["env"]
    probe = ("import importlib.util, jsonschema\n"
             "print(importlib.util.find_spec('rfc3987_syntax').origin, 'iri' in jsonschema.FormatChecker().checkers)")
    done = subprocess.run([sys.executable, "-c", probe], env=env_of(without_rfc3987=True), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    origin, iri = done.stdout.split()
    assert Path(origin).parent.name == "without_rfc3987" and iri == "False"
    here = subprocess.run([sys.executable, "-c", "import importlib.util; print(importlib.util.find_spec('rfc3987_syntax').origin)"],
                          env=env_of(), capture_output=True, text=True)
    assert here.returncode == 0 and "site-packages" in here.stdout, here.stdout + here.stderr

def _read_as_nobody(path, gid: int = 65534):
    return subprocess.run(["setpriv", "--reuid=65534", f"--regid={gid}", "--clear-groups",
                           "cat" if path.is_file() else "ls", str(path)], capture_output=True, text=True)


def test_lockdown_makes_the_secrets_unreadable_to_other_users(course_zip):
    """The lockdown script on a fake /autograder: the zip's source (engine, reference, tests,
    config) and the installed scalelabs packages are root-only; a non-root uid cannot read them,
    while it still reads the student's submission (the control: the tree is traversable)."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to read as another uid")
    base = Path(tempfile.mkdtemp(prefix="scalelabs-lockdown-"))  # pytest's tmp dirs are 0700
    try:
        base.chmod(0o755)
        ag = base / "autograder"
        zipfile.ZipFile(course_zip[3]).extractall(ag / "source")
        (ag / "submission").mkdir()
        (ag / "submission" / "collectives.py").write_text("x = 1\n")
        site = base / "site"
        for package in ("autograder", "labs", "reference"):
            (site / package).mkdir(parents=True)
            (site / package / "__init__.py").write_text("SECRET = 1\n")
        for path in [*base.rglob("*"), base]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        secrets = [ag / "source" / "scalelabs" / "reference" / "collectives.py", ag / "source" / "tests",
                   ag / "source" / "otter_config.json", ag / "source" / "course_secret", site / "reference" / "__init__.py",
                   ag / "source" / "scalelabs" / "autograder" / "engine" / "grade.py",
                   ag / "source" / "scalelabs" / "labs" / "lab06_collectives" / "__init__.py", site / "labs" / "__init__.py"]
        assert all(_read_as_nobody(path).returncode == 0 for path in secrets)  # readable before
        done = subprocess.run(["bash", str(ag / "source" / otter_door.LOCKDOWN), str(ag), str(site / "autograder"),
                               str(site / "labs"), str(site / "reference")], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        for path in secrets:
            for gid in (65534, 0):     # "root only": a uid in root's group reads nothing either
                read = _read_as_nobody(path, gid)
                assert read.returncode != 0 and "Permission denied" in read.stderr, (path, gid, read.stdout[:200])
        assert _read_as_nobody(ag / "submission" / "collectives.py").stdout == "x = 1\n"
    finally:
        shutil.rmtree(base)


def test_in_kernel_cases_never_pass_without_the_plugin(tmp_path):
    """A zip whose plugin did not run scores 0 from the kernel, never full marks."""
    from types import SimpleNamespace

    from otter.test_files.exception_test import ExceptionTestFile

    assignment = attacks.toy.make()
    source = otter_door.test_file_source(assignment, "ring_allreduce_time",
                                         [SimpleNamespace(name="ring_allreduce_time: examples", max_score=2.0)])
    path = tmp_path / "ring_allreduce_time.py"
    path.write_text(source)
    test_file = ExceptionTestFile.from_file(str(path))
    test_file.run({})
    assert (test_file.score, test_file.possible) == (0, 2.0)
    assert otter_door.PLUGIN in test_file.test_case_results[0].message


def test_engine_failure_scores_every_item_zero_with_its_reason():
    """Results come from the engine alone: with no engine result, whatever the kernel reported
    (here: full marks) is discarded, every item scores 0 and says why."""
    from otter.test_files import GradingResults
    from otter.test_files.abstract_test import TestCase, TestCaseResult
    from otter.test_files.exception_test import ExceptionTestFile

    assignment = attacks.toy.make()
    forged = ExceptionTestFile("ring_allreduce_time", "x", [TestCase("c", None, False, 4.0, None, None)])
    forged.test_case_results = [TestCaseResult(forged.test_cases[0], "", True)]
    results = GradingResults([forged])
    otter_door.engine_results(results, assignment, None, "the scalelabs engine could not grade this submission: boom")
    assert set(results.results) == set(assignment.item_ids)
    assert results.total == 0 and results.possible == assignment.total_points
    assert "boom" in results.output and "boom" in results.results["ring_allreduce_time"].summary()


def test_gradescopes_metadata_is_out_of_student_codes_reach_in_the_user_mode(tmp_path):
    """Gradescope's submission_metadata.json (every earlier submission's results in full, the group's
    members) sits beside the submission, readable by all. Where bubblewrap cannot run, the plugin's
    worker runs as another uid: that uid must not read it. A module that reads it and says what it
    read in a raised message (its audit hook cleared first: the hook is a courtesy, the uid the boundary)
    finds it readable before grading (the control) and gets nothing during."""
    from attack import UNHOOK
    from autograder.classroom import samples
    from labs import load

    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("the user mode needs root and setpriv")
    lab = load("lab06_collectives")
    base = Path(tempfile.mkdtemp(prefix="scalelabs-gradescope-"))   # pytest's tmp dirs are 0700
    try:
        base.chmod(0o755)
        autograder_dir = base / "autograder"
        (autograder_dir / "source").mkdir(parents=True)
        metadata_path = autograder_dir / otter_door.METADATA
        metadata = {"users": [{"sid": "sid-7"}], "previous_submissions": [{"results": {"output": "classmate-token"}}]}
        metadata_path.write_text(json.dumps(metadata))
        folder = samples.materialise(lab.id, "correct", autograder_dir / "submission")
        module = folder / f"{lab.module}.py"
        module.write_text(module.read_text() + UNHOOK + f"\n\ntry:\n    _SEEN = open({str(metadata_path)!r}).read()[:200]\n"
                          "except Exception as _error:\n    _SEEN = type(_error).__name__\n\n\n"
                          "def p2p_time(message_bytes, alpha_s, bandwidth):\n    raise ValueError('read: ' + _SEEN)\n")
        for path in [*base.rglob("*"), base]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        assert "classmate-token" in _read_as_nobody(metadata_path).stdout      # readable before
        config = otter_door.otter_config(lab.id, grading={"sandbox": "user"})["plugins"][0][otter_door.PLUGIN]
        plugin = otter_door.EngineOverride(str(folder / f"{lab.id}.ipynb"), metadata, config)
        plugin.before_grading(None)
        assert plugin.result is not None and plugin.result.sandbox_mode == "user", plugin.error
        said = json.dumps(plugin.result.to_gradescope())
        assert "read: PermissionError" in said and "classmate-token" not in said
    finally:
        shutil.rmtree(base)


def test_an_upload_s_provided_modules_are_replaced_by_the_released_ones(tmp_path):
    """A student uploads an edited `_domain.py` (and a `constants.py` that is a link to a file of the
    grader's): the folder graded holds the zip's released modules, as every other door grades, and
    the link is replaced, never written through."""
    provided, upload, elsewhere = tmp_path / "scalelabs_provided", tmp_path / "upload", tmp_path / "grader_file.py"
    provided.mkdir()
    upload.mkdir()
    (provided / "_domain.py").write_text("HIDDEN_N = (2, 4, 8)\n")
    (provided / "constants.py").write_text("GPU_HBM_BYTES = 80e9\n")
    (upload / "_domain.py").write_text("HIDDEN_N = (2,)  # the student's edit\n")
    elsewhere.write_text("kept\n")
    (upload / "constants.py").symlink_to(elsewhere)
    otter_door.put_provided(upload, provided, ["_domain", "constants"])
    assert (upload / "_domain.py").read_text() == "HIDDEN_N = (2, 4, 8)\n"
    assert not (upload / "constants.py").is_symlink() and (upload / "constants.py").read_text() == "GPU_HBM_BYTES = 80e9\n"
    assert elsewhere.read_text() == "kept\n"
