"""otter door: a Gradescope autograder zip (otter-grader 7) whose scores are the engine's.

`build_zip(assignment_id)`:
1. grades a staff-only reference submission with the engine, which gives every test's name and
   max score (and proves the reference earns full marks);
2. writes one exception-based otter test file per item, one `test_case` per engine test with its
   points (questions are `all_or_nothing`, a single case: no format-check share);
3. runs `otter generate` with one support file, `scalelabs_upload.py` (see "A zipped folder"), and
   an otter_config.json naming the `EngineOverride` plugin with the course's `[grading]` and
   `[feedback]` tables;
4. appends the provided modules under `scalelabs_provided/` (the plugin puts them beside the
   student's module; the student's module is never in the zip, so the student's version is graded),
   the scalelabs source (autograder/, reference/, pyproject) under `scalelabs/`, and replaces otter's
   requirements with the grader's (`image_requirements`: scalelabs without its test extra, and
   otter-grader's own requirements without the webpdf extra that pulls playwright; `otter run` uses
   the current environment), and extends otter's setup.sh and run_autograder (see `harden_zip`):
   otter-grader itself installed without its dependencies, no browser, bubblewrap installed for the
   sandbox, and the lockdown script that makes the engine, reference, tests and config readable by
   root only (where bwrap cannot run, the engine's worker runs as another, unprivileged uid);
5. adds the course secret as `course_secret` (made now if the course has none): Gradescope draws each
   student's hidden inputs under it, and the lockdown makes it root-only with the rest of the zip.

What students see is `autograder.doors.gradescope.results_json` (scores at once, details per the
feedback policy and Gradescope's `visibility`), written through `EngineResults`, which replaces
otter's own results.json; over the course's submission limit a submission is not graded.

A zipped folder: students often zip their assignment folder, so the upload holds
`lab06_collectives/...` instead of the files. otter picks the file to grade before any plugin runs,
from the top of the submission (one notebook, else exactly one .py), and stopped with "More than one
Python file found in submission" where the provided modules were its support files. The zip's only
support file is `scalelabs_upload.py`: with the notebook at the top otter takes the notebook; with a
folder it takes this file, and the plugin grades the folder holding the assignment (`graded_folder`).

Trust: otter executes the notebook in a kernel as the grading user and unpickles what that kernel
dumps (its results, its log records) in otter's own process, so anything the student's code runs
there can forge a score or take over otter. The `EngineOverride` plugin therefore lets no student
code into the kernel and reads no verdict from it:
- `before_grading` (the first hook; nothing of the student's has run) grades the submission folder
  with the engine and keeps the result in memory; then it removes every student file from that
  folder (a submitted `json.py` would otherwise be imported by the kernel) and blanks the notebook;
- then it stops otter from starting a kernel at all (`skip_kernel`: otter would execute the blanked
  notebook only to have its results discarded, ~3 s per submission); were that ever to miss,
  `before_execution` hands otter an empty notebook, so the kernel runs only otter's own cells and
  the generated test files, whose cases always fail (without the plugin a submission earns 0);
- `after_grading` rebuilds every test file's results from the engine's in-memory result,
  discarding whatever came back from the kernel.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from otter.plugins import AbstractOtterPlugin

from autograder.classroom.deadlines import Deadlines, course_deadlines, known_labs
from autograder.classroom.submitted_at import from_gradescope
from autograder.course import course_root, package_dirs
from autograder.classroom.upload import graded_folder, no_lab_line, put_provided
from autograder.engine.config import config_from_table, course_document, feedback_from_table
from autograder.engine.sandbox import SandboxUnavailable, check_jail_soon, jail_beside_the_check
from autograder.engine.secret import ZIP_NAME as SECRET_IN_ZIP, CourseSecret, create_secret, read_secret

if TYPE_CHECKING:   # the plugin imports hypothesis and the lab only once the sandbox's start check runs
    from autograder.engine.spec import Assignment

PLUGIN = "autograder.doors.otter.EngineOverride"
AUTOGRADER_DIR = "/autograder"  # otter's default autograder_dir, where Gradescope unpacks the zip
INSTALL_DIR = f"{AUTOGRADER_DIR}/source/scalelabs"
LOCKDOWN = "scalelabs_lockdown.sh"
LOCKDOWN_SCRIPT = Path(__file__).with_name(LOCKDOWN)

PROVIDED_DIR = "scalelabs_provided"   # the provided modules in the zip (source/ on Gradescope)
UPLOAD_ENTRY = "scalelabs_upload.py"  # the zip's one support file (module docstring: "A zipped folder")
UPLOAD_ENTRY_TEXT = ('"""Put here by the scalelabs autograder so that otter grades an upload holding the assignment\'s '
                     'folder; never graded."""\n')
METADATA = "submission_metadata.json"   # Gradescope's, beside source/ and submission/

UNSCORED = f"not scored: the scalelabs engine did not run (otter plugin {PLUGIN} missing from otter_config.json)"


def test_file_source(assignment: Assignment, item: str, tests: list) -> str:
    """The otter test file of one item (build/templates/otter_test.py.j2): a case per engine test."""
    from autograder.build.publictests import CODE_TEMPLATES
    return CODE_TEMPLATES.get_template("otter_test.py.j2").render(item=item, points=f"{sum(t.max_score for t in tests):g}", plugin=PLUGIN,
                                 all_or_nothing=item in {q.id for q in assignment.questions},
                                 tests=tests, unscored=UNSCORED)


def reference_result(assignment: Assignment, release_dir: Path, work: Path):
    """The engine's result on the reference submission; it must be full marks."""
    from autograder.engine.grade import grade_submission
    from autograder.classroom.samples import reference_submission
    folder = reference_submission(assignment, work / "reference-submission", release_dir, student="reference")
    result = grade_submission(assignment, folder, "reference")   # in that student's version of the lab
    lost = [t.name for t in result.tests if t.score < t.max_score]
    if lost:
        raise RuntimeError(f"{assignment.id}: the reference loses points on {lost}")
    return result


def write_tests(assignment: Assignment, result, tests_dir: Path) -> None:
    tests_dir.mkdir(parents=True)
    for item in assignment.item_ids:
        tests = [t for t in result.tests if t.item == item]
        (tests_dir / f"{item}.py").write_text(test_file_source(assignment, item, tests))


def otter_config(assignment_id: str, declaration: str = "", grading: dict | None = None,
                 feedback: dict | None = None, deadlines: dict | None = None) -> dict:
    """otter's config: the plugin names the assignment and carries the course's `[grading]` and
    `[feedback]` tables (scalelabs.toml is not in the zip), so Gradescope grades and shows feedback
    with the course's settings, and what of `[deadlines]` applies to the lab (its due date, policy and
    extensions: Deadlines.settings). Visibility is the plugin's (EngineResults), not otter's show_hidden."""
    plugin_config = {"assignment": assignment_id, "grading": dict(grading or {}), "feedback": dict(feedback or {}),
                     "deadlines": dict(deadlines or {})}
    if declaration:
        plugin_config["declaration"] = declaration
    return {"lang": "python", "plugins": [{PLUGIN: plugin_config}]}


OTTER = "otter-grader"
# Of otter-grader's extras, the image needs "grading" (the kernel's client, were a kernel ever
# started); "plugins" (Google Sheets) is not used. Of its dependencies' extras, "webpdf" (PDF
# export through playwright and a chromium download, ~165 MB and the browser) is never used: the
# zip exports no PDF.
OTTER_IMAGE_EXTRAS = ("grading",)
UNUSED_EXTRAS = frozenset({"webpdf"})


def image_requirements() -> list[str]:
    """The Gradescope image's pip requirements (otter's environment.yml, overwritten): scalelabs from
    the zip (its dependencies, not its test extra), then otter-grader's own requirements as this
    environment's otter-grader declares them, for the extras the image uses, each without the
    UNUSED_EXTRAS. otter-grader itself is installed after them without dependencies (setup.sh,
    `harden_scripts`): pip cannot drop an extra of a dependency's requirement any other way."""
    from importlib.metadata import requires
    from packaging.requirements import Requirement

    lines = [INSTALL_DIR]
    for text in requires(OTTER) or []:
        requirement = Requirement(text)
        marker = requirement.marker
        if marker is not None and not any(marker.evaluate({"extra": e}) for e in ("", *OTTER_IMAGE_EXTRAS)):
            continue
        requirement.marker = None
        requirement.extras = set(requirement.extras) - UNUSED_EXTRAS
        lines.append(str(requirement))
    return lines


def harden_scripts(setup_sh: str, run_autograder: str) -> tuple[str, str]:
    """otter's generated setup.sh and run_autograder, extended (otter 7 has no option for it):
    setup.sh installs bubblewrap with its first apt-get, installs no browser (otter's playwright line
    goes: nothing here exports a PDF), installs otter-grader without its dependencies once the
    environment holds `image_requirements`, removes a slow optional import from the environment and
    ends with the lockdown (after the environment, hence scalelabs, is installed); run_autograder
    runs the lockdown again before grading, in case the image was built from another setup."""
    from importlib.metadata import version
    lockdown = f"bash {AUTOGRADER_DIR}/source/{LOCKDOWN}"
    lines = setup_sh.splitlines()
    first_apt = next((line for line in lines if line.startswith("apt-get install -y ")), None)
    browser = [line for line in lines if "playwright install" in line]
    activate = next((line for line in run_autograder.splitlines() if line.startswith("mamba activate ")), None)
    if first_apt is None or activate is None or len(browser) != 1:
        raise RuntimeError("otter's setup.sh/run_autograder changed shape: cannot add bubblewrap and the "
                           "lockdown or leave out the browser (expected an 'apt-get install -y' line, one "
                           "'playwright install' line and a 'mamba activate' line)")
    from otter.generate import OTTER_ENV_NAME
    setup_sh = setup_sh.replace(browser[0] + "\n", "", 1)
    otter_itself = (f"# scalelabs: otter-grader without its dependencies (image_requirements installed them, "
                    f"and no browser driver)\nmamba run -n {OTTER_ENV_NAME} pip install --no-deps {OTTER}=={version(OTTER)}\n")
    # jsonschema imports rfc3987-syntax when installed (jupyter-events asks for it) and compiles ~40
    # grammars at import: 2 s of every `otter run` for IRI format checks nothing here makes.
    slow_import_removal = ("# scalelabs: 2 s less per submission (jsonschema's optional IRI grammars, unused)\n"
                           f"mamba run -n {OTTER_ENV_NAME} pip uninstall -y rfc3987-syntax\n")
    setup_sh = setup_sh.replace(first_apt, f"{first_apt}\n# scalelabs: the sandbox's boundary\n"
                                           f"apt-get install -y bubblewrap", 1)
    setup_sh = (setup_sh.rstrip("\n") + "\n\n" + otter_itself + slow_import_removal
                + "\n# scalelabs: engine, reference, tests and config readable by root only\n"
                f"mamba run -n {OTTER_ENV_NAME} {lockdown}\n")
    run_autograder = run_autograder.replace(activate, f"{activate}\n{lockdown}", 1)
    return setup_sh, run_autograder


def harden_zip(zip_path: Path) -> None:
    """Harden otter's scripts in the zip (`harden_scripts`) and add the lockdown script. A zip
    entry cannot be replaced in place, so the zip is rewritten."""
    with zipfile.ZipFile(zip_path) as zf:
        entries = [(info, zf.read(info)) for info in zf.infolist()]
    scripts = {info.filename: data.decode() for info, data in entries if info.filename in ("setup.sh", "run_autograder")}
    setup_sh, run_autograder = harden_scripts(scripts["setup.sh"], scripts["run_autograder"])
    replaced = {"setup.sh": setup_sh, "run_autograder": run_autograder}
    with zipfile.ZipFile(zip_path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for info, data in entries:
            zf.writestr(info, replaced.get(info.filename, data))
        zf.write(LOCKDOWN_SCRIPT, LOCKDOWN)


def add_provided(zip_path: Path, release_dir: Path, assignment: Assignment) -> None:
    """The provided modules (`Assignment.provided`, as released) under PROVIDED_DIR/ of the zip."""
    with zipfile.ZipFile(zip_path, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in assignment.provided:
            zf.write(release_dir / f"{name}.py", f"{PROVIDED_DIR}/{name}.py")


def add_scalelabs_source(zip_path: Path, course: Path | None = None) -> None:
    """The engine's source under scalelabs/ (staff-only zip), installable with pip: the installed
    packages, with the course's pyproject.toml and README.md (the course is a clone of scalelabs)."""
    course = course_root(course)
    if not (course / "pyproject.toml").is_file():
        raise FileNotFoundError(f"{course / 'pyproject.toml'} is missing: the zip installs scalelabs from it")
    with zipfile.ZipFile(zip_path, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        for package in package_dirs():
            for path in sorted(package.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                    zf.write(path, f"scalelabs/{path.relative_to(package.parent)}")
        for name in ("pyproject.toml", "README.md"):
            if (course / name).exists():
                zf.write(course / name, f"scalelabs/{name}")


def build_zip(assignment_id: str, dest: Path | None = None, *, assignment: Assignment | None = None,
              release_dir: Path | None = None, declaration: str = "", course: Path | None = None) -> Path:
    """Build the Gradescope autograder zip of an assignment; returns its path (default: the
    course's dist/<id>-autograder.zip, from the course's release/<id>/)."""
    from autograder.build.release import tool_env
    if assignment is None:
        from labs import load
        assignment = load(assignment_id)
    course = course_root(course)
    document, where = course_document(course / "scalelabs.toml")
    grading, feedback = document.get("grading", {}), document.get("feedback", {})
    config_from_table(grading, where)  # a bad setting stops the build, not every student's run
    feedback_from_table(feedback, where)
    deadlines = course_deadlines(course / "scalelabs.toml", known_labs(assignment_id, assignment.id)).settings(assignment.id)
    release_dir = Path(release_dir or course / "release" / assignment_id)
    dest = Path(dest or course / "dist" / f"{assignment_id}-autograder.zip").resolve()
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="scalelabs-otter-") as tmp:
        work = Path(tmp)
        write_tests(assignment, reference_result(assignment, release_dir, work), work / "tests")
        (work / "otter_config.json").write_text(json.dumps(otter_config(assignment_id, declaration, grading, feedback,
                                                                        deadlines),
                                                           indent=2))
        (work / "requirements.txt").write_text("\n".join(image_requirements()) + "\n")
        (work / UPLOAD_ENTRY).write_text(UPLOAD_ENTRY_TEXT)
        files = [UPLOAD_ENTRY]
        otter = str(Path(tool_env()["PATH"].split(":")[0]) / "otter")
        done = subprocess.run([otter, "generate", "-t", "tests", "-o", str(dest), "-c", "otter_config.json",
                               "-r", "requirements.txt", "--overwrite-requirements", "--no-environment", "--python-version", "3.11", *files],
                              cwd=work, capture_output=True, text=True, env=tool_env())
        if done.returncode != 0:
            raise RuntimeError(f"otter generate failed:\n{done.stdout}\n{done.stderr}")
    add_provided(dest, release_dir, assignment)
    add_scalelabs_source(dest, course)
    add_course_secret(dest, create_secret(course)[0])
    harden_zip(dest)
    return dest


def add_course_secret(zip_path: Path, secret: CourseSecret) -> None:
    """The course secret at the zip's top (/autograder/source/course_secret on Gradescope, under the
    lockdown), as the course keeps it."""
    with zipfile.ZipFile(zip_path, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(SECRET_IN_ZIP, secret.key.hex() + "\n")


def student_of(submission_metadata: dict) -> str:
    """The id this submission is graded (seeded) under (autograder.classroom.identity.group_id: a
    submitter's `sid`, else email; a group's smallest), as grade-batch grades Gradescope's export;
    "anonymous" without metadata (a local `otter run`). Whose due date applies is each member's own
    (`members_of`), never this id's."""
    from autograder.classroom.identity import gradescope_ids, group_id
    ids = gradescope_ids(submission_metadata)
    return group_id(ids) if ids else "anonymous"


def members_of(submission_metadata: dict) -> list[str]:
    """Every submitter's id (a group's members), each assessed on their own due date; ["anonymous"]
    without metadata."""
    from autograder.classroom.identity import gradescope_ids
    return gradescope_ids(submission_metadata) or ["anonymous"]


class EngineOverride(AbstractOtterPlugin):
    """Grade with the scalelabs engine in the otter process before any student code runs; keep
    every student file and notebook cell out of the kernel; results only from the engine."""

    def _assignment(self):
        from labs import load
        return load(self.plugin_config.get("declaration") or self.plugin_config["assignment"])

    def _secrets(self) -> list[Path]:
        """The zip's contents (tests, this engine, the reference) and Gradescope's metadata (earlier
        results, in full): secrets the unprivileged-user sandbox verifies out of the worker's reach."""
        autograder_dir = Path(self.submission_path).parent.parent       # /autograder on Gradescope
        return [p for p in (autograder_dir / "source", autograder_dir / METADATA, Path(AUTOGRADER_DIR) / "source")
                if p.exists()]

    def before_grading(self, config):
        try:    # the sandbox's start check runs while the engine and the lab load (a bad table: said below)
            check_jail_soon(config_from_table(self.plugin_config.get("grading", {}), "otter_config.json [grading]"),
                            self._secrets())
        except ValueError:
            pass
        from autograder.engine.grade import grade_submission
        from autograder.doors.gradescope import kept_submission, platform_dates
        self.assignment = self._assignment()
        # Everything of Gradescope's (who, when, the dates, earlier submissions) is read here, once, before
        # anything of the student's runs: nothing the submission does later can change it.
        metadata = self.submission_metadata or {}
        self.student = student_of(metadata)
        self.members = members_of(metadata)
        top = Path(self.submission_path).parent          # otter's submission/ folder
        autograder_dir = top.parent                      # /autograder on Gradescope
        self.result, self.error, self.limited, self.late = None, "", None, {}
        secret = None
        try:
            # the zip's course secret (a zip built without one grades with public seeds, and says so)
            secret = read_secret(autograder_dir / "source" / SECRET_IN_ZIP)
            config = config_from_table(self.plugin_config.get("grading", {}), "otter_config.json [grading]")
            deadlines = Deadlines.from_settings(self.assignment.id, self.plugin_config.get("deadlines", {}),
                                                "otter_config.json [deadlines]")
            # Gradescope's own time of the upload (the platform's clock, not the student's) and its due dates
            # (each member's own: an extension set in Gradescope's interface), under the zip's policy
            platform = platform_dates(metadata)
            when = from_gradescope(metadata.get("created_at"))
            self.late = {m: deadlines.assess(self.assignment.id, m, when, platform=platform) for m in self.members}
            for said in sorted({v.disagreement for v in self.late.values() if v is not None and v.disagreement}):
                print(f"scalelabs: {said}")   # the autograder's output, which only staff see (the student's: the late test)
            self.policy = feedback_from_table(self.plugin_config.get("feedback", {}), "otter_config.json [feedback]")
            config = replace(config, feedback=self.policy)
        except ValueError as error:   # a zip built by hand: say so in every result rather than crash
            from autograder.engine.config import FeedbackPolicy
            self.policy, self.error = FeedbackPolicy(), f"the autograder's settings are invalid: {error}"
        else:
            kept = kept_submission(metadata, self.policy)
            if kept is not None:
                self.limited = self.kept_results(kept, deadlines, platform)
        folder = graded_folder(top, self.assignment)
        if self.limited is None and not self.error:
            # The zip's contents and Gradescope's metadata are secrets (_secrets); no sandbox at all stops
            # the run (SandboxUnavailable propagates): zeros for the whole class would hide a setup fault
            # from the staff.
            secrets = self._secrets()
            if folder is None:
                self.error = no_lab_line(top, self.assignment)
            else:
                put_provided(folder, autograder_dir / "source" / PROVIDED_DIR, self.assignment.provided)
                if folder == top:   # otter's copy of the support file is not the student's
                    (top / UPLOAD_ENTRY).unlink(missing_ok=True)
                try:
                    self.result = grade_submission(self.assignment, folder, self.student, config=config, secrets=secrets,
                                                   secret=secret, ahead=jail_beside_the_check(self.assignment.module, config))
                except SandboxUnavailable:
                    raise
                except Exception as error:  # noqa: BLE001  (the grader never crashes on a submission)
                    self.error = f"the scalelabs engine could not grade this submission: {error}"
        strip_submission(top, Path(self.submission_path), keep=set())
        skip_kernel()

    def kept_results(self, kept: dict, deadlines: Deadlines, platform) -> dict:
        """The results of an upload over the submission limit: the kept submission's engine record, its
        lateness assessed again at the time that submission was made under Gradescope's dates of today (an
        extension granted since counts: the penalty is a rule), with the line saying the limit was reached.
        Results that are not the door's are kept as they were."""
        from autograder.doors.gradescope import kept_time, limit_reached, results_json
        from autograder.engine.results import Result
        try:
            record = Result.from_gradescope(kept["results"])
        except ValueError:
            return limit_reached(kept["results"], kept, self.policy)
        when = from_gradescope(kept_time(kept))
        members = {m: deadlines.assess(self.assignment.id, m, when, platform=platform) for m in self.members}
        return limit_reached(results_json(self.assignment, record, self.policy, self.student, members=members),
                             kept, self.policy)

    def before_execution(self, submission):
        import nbformat
        return nbformat.v4.new_notebook()

    def after_grading(self, results):
        from autograder.doors.gradescope import results_json
        engine_results(results, self.assignment, self.result, self.error)
        results.__class__ = EngineResults
        results.scalelabs_json = self.limited or results_json(self.assignment, self.result, self.policy,
                                                              self.student, self.error, members=self.late)




try:
    from otter.test_files import GradingResults as _GradingResults
except ImportError:   # otter is the door's dependency, not the engine's
    _GradingResults = object


class EngineResults(_GradingResults):
    """otter's results object whose results.json is ours (`scalelabs_json`, set by after_grading):
    per-item scores visible at once, the detail per the feedback policy (autograder.doors.gradescope)."""

    def to_gradescope_dict(self, ag_config) -> dict:
        return self.scalelabs_json


def skip_kernel() -> None:
    """From here on, this otter run grades without a kernel: otter's runner calls `grade_notebook`,
    which starts a kernel (about 3 s) to execute the blanked notebook and test files whose cases
    always fail, then hands its results to `after_grading`, which discards them. The engine has graded
    already, so the runner's `grade_notebook` becomes `_without_kernel`. Should otter's runner change
    shape, the patch misses harmlessly: the kernel runs the empty notebook as before."""
    from otter.run.run_autograder.runners import python_runner
    python_runner.grade_notebook = _without_kernel


def _without_kernel(submission_path, *, plugin_collection=None, **_otter_options):
    """otter's `grade_notebook` minus the kernel: empty results, rebuilt by the plugins' after_grading."""
    from otter.test_files import GradingResults
    results = GradingResults([])
    if plugin_collection is not None:
        plugin_collection.run("after_grading", results)
    return results


def strip_submission(folder: Path, notebook: Path, keep: set[str]) -> None:
    """Remove every student file from the submission folder otter executes in (the kernel's cwd is
    first on its sys.path), keeping otter's tests/ and __init__.py (and `keep`); the notebook (or the
    script otter took for one) becomes empty: otter reads it again before executing."""
    import nbformat
    keep = keep | {"tests", "__init__.py", notebook.name}
    for entry in folder.iterdir():
        if entry.name in keep and not entry.is_symlink():
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (folder / "__init__.py").write_text("")  # otter only appends to it: a student's would stay
    notebook.unlink(missing_ok=True)
    if notebook.suffix == ".ipynb":
        nbformat.write(nbformat.v4.new_notebook(), notebook)
    else:  # otter grades a lone .py as a script
        notebook.write_text("")


def engine_results(results, assignment: Assignment, result, error: str = "") -> None:
    """Rebuild otter's results in place from the engine's `result` alone: one test file per item,
    one case per engine test; whatever the kernel reported is discarded. No result (the engine
    failed): every item 0, with `error` as the reason."""
    from otter.test_files import GradingResults
    from otter.test_files.abstract_test import TestCase, TestCaseResult
    from otter.test_files.exception_test import ExceptionTestFile
    questions = {q.id for q in assignment.questions}
    points = assignment.item_points
    engine = result.tests if result is not None else []
    scores = result.item_scores() if result is not None else {}
    test_files = []
    for item in assignment.item_ids:
        tests = [t for t in engine if t.item == item]
        # a passing case's text goes in as its success message: otter prints a passed test file as
        # "All test cases passed!" plus those messages (e.g. "you changed act1_prediction ... counts")
        cases = [TestCaseResult(TestCase(t.name, None, False, t.max_score,
                                         str(t.output) if t.score >= t.max_score else None, None),
                                ("✅ " if t.score >= t.max_score else "❌ ") + str(t.output),
                                t.score >= t.max_score) for t in tests]
        if not tests:
            cases = [TestCaseResult(TestCase(item, None, False, points[item], None, None),
                                    "❌ " + (error or "the engine reported no result for this item"), False)]
        test_file = ExceptionTestFile(item, f"tests/{item}.py", [c.test_case for c in cases], item in questions)
        test_file.test_case_results = cases
        test_file.update_score(scores.get(item, (0.0, 0.0))[0])
        test_files.append(test_file)
    # otter keeps using this object (results.json, results.pkl): reset its class and state
    results.__class__ = GradingResults
    results.__dict__.clear()
    GradingResults.__init__(results, test_files)
    results.set_output(result.output if result is not None else error)
