"""Each persona's page, followed command by command in a fresh clone and a fresh venv (issue 41): every
command of the page's ```bash blocks runs, in the page's order, as the reader would type it in a shell at
the course's root, and exits as the page says (0, unless the expectations below say otherwise).

What is fresh, and why. The clone: the repository's tracked files copied into an empty folder, made a
git repository of its own (what `git clone` gives; `git status` shows what a course would commit). The
venv: created by the README's own first command with the machine's `python3`, and every install is the
page's own line (`pip install -e .`, then staff.md's `'.[otter]'`, adding-a-lab.md's `'.[test]'`), so a
page that leaves out the extra its commands need fails here. It is one venv for every page, grown in
the pages' order (README, staff, TAs, students, authors) as one course's would be: installing is most
of the cost (pip's cache makes it a local unpack, about two minutes of CPU), so it is done once. The
student's venv is a second one, in the student's own folder, holding only what students.md installs
(no scalelabs: a released folder that imported it would fail here).

What the test does between the page's commands is what others do in the meantime, never a command of
the reader's: students fetch, do the lab and submit (nbgrader's exchange, a Canvas download); the
course's scalelabs.toml is the page's own ```toml blocks (the exchange moved into the test's folder,
the only setting changed), its roster and extensions CSVs written. Two commands stand in for the page's:
`jupyter lab NOTEBOOK` (a server a person clicks "Run All" in) runs the notebook headless with nbconvert,
and the README's `pytest` (this very suite, which CI runs) only collects it (`pytest --collect-only`).

One module fixture walks the pages; the tests then read what it saw. Where the package index cannot be
reached the walk skips, saying so (it fails under CI=true)."""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from repo_copy import REPO, copy_tracked

LAB, MODULE = "lab06_collectives", "collectives"
NEW_LAB = "lab08_inference"
# the staff's class on nbgrader (submitted/), and the Canvas class a TA sorts: id -> sample student
NBGRADER_CLASS = {"s001": "correct", "s002": "partly_wrong", "s003": "untouched"}
CANVAS_CLASS = {"s101": "correct", "s102": "wrong_predictions"}
STUDENT = "s004"     # students.md's reader
UNREACHABLE = ("NewConnectionError", "Could not fetch URL", "Failed to establish a new connection",
               "Temporary failure in name resolution", "Network is unreachable")
FENCE = re.compile(r"^(\s*)```(\w*)\s*$")
COMMENT = re.compile(r"\s{2,}#[^\n]*$")    # a page's comment after a command (two spaces at least)


def blocks(page: Path, language: str) -> list[str]:
    """The page's fenced blocks of `language`, each dedented to its fence."""
    found, current, indent = [], None, ""
    for line in page.read_text(encoding="utf-8").splitlines():
        fence = FENCE.match(line)
        if fence and current is None:
            current, indent = ([] if fence.group(2) == language else None), fence.group(1)
            if current is None:
                current = False          # a block of another language: skip to its end
            continue
        if fence and current is not None:
            if current is not False:
                found.append("\n".join(current))
            current = None
            continue
        if current:
            current.append(line[len(indent):] if line.startswith(indent) else line)
        elif current == []:
            current.append(line[len(indent):] if line.startswith(indent) else line)
    return found


def commands(page: Path) -> list[str]:
    """The shell commands of the page's ```bash blocks, in order: a line ending in `\\` or an indented
    line continues the command before it; blank lines and whole-line comments are not commands."""
    found: list[str] = []
    for block in blocks(page, "bash"):
        joined = False
        for line in block.splitlines():
            if not line.strip() or line.lstrip().startswith("#"):
                joined = False
                continue
            if found and (joined or line[:1].isspace()):
                found[-1] += "\n" + line
            else:
                found.append(line)
            joined = line.rstrip().endswith("\\")
    return found


def base_env() -> dict:
    """This machine's environment without the test run's own venv, paths and course secret: a new shell."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "SCALELABS_COURSE_SECRET_FILE", "PYTEST_ADDOPTS",
                        "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST")}
    ours = Path(sys.prefix).resolve()
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if p and not Path(p).resolve().is_relative_to(ours))
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # pip's own step of compiling every installed module to bytecode (a third of an install's CPU here);
    # Python compiles what the commands import when they import it: the venv is as fresh
    env["PIP_NO_COMPILE"] = "1"
    env["COLUMNS"] = "80"        # the terminal the README's table must fit
    return env


@dataclass
class Shell:
    """A reader at a terminal: a working folder and, once a line activated one, a venv."""
    cwd: Path
    venv: Path | None = None
    seen: list = field(default_factory=list)       # (command, completed process)

    def env(self) -> dict:
        env = base_env()
        if self.venv is not None:
            env["VIRTUAL_ENV"] = str(self.venv)
            env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env['PATH']}"
        return env

    def run(self, command: str, expect: int | None = 0) -> subprocess.CompletedProcess:
        if re.fullmatch(r"cd [\w./-]+", command):
            self.cwd = (self.cwd / command[3:]).resolve()
            assert self.cwd.is_dir(), f"{command}: no such folder"
            done = subprocess.CompletedProcess(command, 0, "", "")
        else:
            done = subprocess.run(["bash", "-c", command], cwd=self.cwd, env=self.env(), capture_output=True,
                                  text=True, timeout=3600)
            if ". .venv/bin/activate" in command:
                self.venv = self.cwd / ".venv"
        self.seen.append((command, done))
        if done.returncode != 0 and "pip install" in command and any(u in done.stderr for u in UNREACHABLE):
            if os.environ.get("CI") == "true":
                raise AssertionError(f"pip cannot reach the package index:\n{done.stderr[-2000:]}")
            pytest.skip(f"the package index cannot be reached: {done.stderr.strip().splitlines()[-1]}")
        if expect is not None:
            assert done.returncode == expect, (f"`{command}` in {self.cwd} exited {done.returncode}, the page says "
                                               f"{expect}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")
        return done

    def python(self, code: str, *args) -> subprocess.CompletedProcess:
        """Python of this shell's venv: what others do (a student's work), not a command of the page."""
        done = subprocess.run([str(self.venv / "bin" / "python"), "-c", code, *map(str, args)], cwd=self.cwd,
                              env=self.env(), capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done


def follow(shell: Shell, page: Path, before: dict | None = None, expect: dict | None = None,
           instead: dict | None = None, only: slice = slice(None)) -> dict[str, subprocess.CompletedProcess]:
    """Run the page's commands in order. before: {command pattern: what others do first}; expect:
    {pattern: exit status}; instead: {pattern: the command the test runs for it}. A pattern is a
    regular expression the whole command (its comment left out) matches; each must match a command of
    the page (else the page changed under the test)."""
    before, expect, instead = before or {}, expect or {}, instead or {}
    ran, used = {}, set()

    def match(table, command):
        said = COMMENT.sub("", command)
        for pattern, value in table.items():
            if re.fullmatch(pattern, said, re.S):
                used.add((id(table), pattern))
                return value
        return None

    for command in commands(page)[only]:
        hook = match(before, command)
        if hook is not None:
            hook()
        code = match(expect, command)
        ran[command] = shell.run(match(instead, command) or command, 0 if code is None else code)
    unused = [p for t in (before, expect, instead) for p in t if (id(t), p) not in used]
    assert not unused, f"{page.name} no longer has a command starting {unused}: {commands(page)}"
    return ran


# --- what others do between the reader's commands ------------------------------------------------------

# argv: course, lab, sample, folder, the id the student is graded under (their version of the lab: the
# sample's answers are written in it and the id typed in the notebook, as the student's own notebook has them)
MATERIALISE = """
import sys
from pathlib import Path
from autograder.classroom.samples import materialise
course = Path(sys.argv[1])
materialise(sys.argv[2], sys.argv[3], Path(sys.argv[4]), release_dir=course / "release" / sys.argv[2],
            samples_dir=course / "samples" / sys.argv[2], graded_as=sys.argv[5])
"""


def course_settings(course: Path, exchange: Path, staff: Path) -> None:
    """The course's scalelabs.toml as staff.md's toml blocks give it (the exchange moved into the test's
    folder), and the files those blocks name: the roster, the extensions."""
    text = "\n".join(blocks(staff, "toml"))
    assert text.count('exchange = "/srv/nbgrader/exchange"') == 1, "staff.md's [course] block changed"
    (course / "scalelabs.toml").write_text(text.replace('"/srv/nbgrader/exchange"', json.dumps(str(exchange))))
    (course / "roster.csv").write_text("id,first_name,last_name,email\n" + "".join(
        f"{s},Student,{s.upper()},{s}@example.edu\n" for s in (*NBGRADER_CLASS, *CANVAS_CLASS, STUDENT)))
    (course / "extensions.csv").write_text(f"student,lab,due\ns002,{LAB},2026-12-06T23:59:00\n")


def students_submit(shell: Shell, course: Path, exchange: Path, homes: Path) -> None:
    """The class fetches the lab from the exchange, does it and submits (nbgrader's own commands)."""
    course_id = "mlsys-fall26"
    at = f"--Exchange.root={exchange}"
    for student, sample in NBGRADER_CLASS.items():
        home = homes / student
        home.mkdir(parents=True)
        for step in (["fetch_assignment", LAB, "--course", course_id, at],):
            done = subprocess.run([str(shell.venv / "bin" / "nbgrader"), *step], cwd=home, env=shell.env(),
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stdout + done.stderr
        shell.python(MATERIALISE, course, LAB, sample, home / LAB, student)
        done = subprocess.run([str(shell.venv / "bin" / "nbgrader"), "submit", LAB, "--course", course_id,
                               "--student", student, at], cwd=home, env=shell.env(), capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr


def canvas_download(shell: Shell, course: Path, work: Path) -> None:
    """Canvas' "Download submissions" of two students (flat, renamed, one file resubmitted) as
    submissions.zip in the course, and times.csv: when each submitted, from the platform's record."""
    zip_path = course / "submissions.zip"
    with zipfile.ZipFile(zip_path, "w") as zf:
        for number, (student, sample) in enumerate(CANVAS_CLASS.items()):
            folder = work / "canvas" / student
            shell.python(MATERIALISE, course, LAB, sample, folder, student)
            resubmitted = "-1" if number else ""
            zf.write(folder / f"{MODULE}.py", f"{student}_{4100 + number}_{9900 + number}_{MODULE}{resubmitted}.py")
            zf.write(folder / f"{LAB}.ipynb", f"{student}_{4100 + number}_{9900 + number}_{LAB}.ipynb")
    when = datetime.now(timezone.utc) - timedelta(hours=3)
    (course / "times.csv").write_text("student,submitted_at\n" + "".join(
        f"{s},{when.isoformat()}\n" for s in CANVAS_CLASS))


# --- the walk ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    work = tmp_path_factory.mktemp("pages")
    course = copy_tracked(work / "course")
    for git in (["init", "-q"], ["add", "-A"], ["-c", "user.name=staff", "-c", "user.email=staff@example.edu",
                                                 "commit", "-qm", "the course, as cloned"]):
        subprocess.run(["git", *git], cwd=course, check=True, capture_output=True)
    shell = Shell(course)
    seen: dict = {"course": course, "work": work}

    # README: the quick start's first command (creates the venv every later page uses), its table at 80 columns
    readme = commands(course / "README.md")
    assert readme[0].startswith("python3 -m venv .venv && . .venv/bin/activate && pip install -e . && scalelabs demo")
    seen["README"] = {readme[0]: shell.run(readme[0])}

    # staff.md, with the class submitting between release_assignment and collect
    exchange = work / "exchange"
    exchange.mkdir(mode=0o777)
    course_settings(course, exchange, course / "docs" / "staff.md")
    seen["staff"] = follow(shell, course / "docs" / "staff.md",
                           before={r"nbgrader collect .*": lambda: students_submit(shell, course, exchange, work / "homes")})
    seen["git status"] = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=course, capture_output=True,
                                        text=True, check=True).stdout

    # tas.md, with a Canvas download waiting in the course
    seen["tas"] = follow(shell, course / "docs" / "tas.md",
                         before={r"unzip -q submissions\.zip .*": lambda: canvas_download(shell, course, work)})

    # students.md, in the student's own folder with the lab as fetched, a venv of their own
    home = work / "student"
    shutil.copytree(course / "release" / LAB, home / LAB)
    seen["student folder"] = sorted(p.name for p in (home / LAB).iterdir())
    student = Shell(home)
    course_python = shell.venv / "bin" / "python"

    def does_the_lab():
        subprocess.run([str(course_python), "-c", MATERIALISE, course, LAB, "correct", home / LAB, STUDENT], check=True,
                       capture_output=True, env=shell.env())

    seen["students"] = follow(student, course / "docs" / "students.md", before={"pytest": does_the_lab}, expect={"pytest -k p2p_time": 1},
                              instead={r"jupyter lab .*": f"jupyter nbconvert --to notebook --execute --inplace {LAB}.ipynb"})
    seen["handed in"] = shell.run(f"scalelabs otter-try dist/{LAB}-autograder.zip {home / LAB / (LAB + '.ipynb')} "
                                  f"{home / LAB / (MODULE + '.py')} --student {STUDENT}")
    seen["student notebook"] = json.loads((home / LAB / f"{LAB}.ipynb").read_text())

    # adding-a-lab.md, then the README's test command
    seen["authors"] = follow(shell, course / "docs" / "adding-a-lab.md")
    assert readme[1].endswith("&& pytest"), readme[1]
    seen["README tests"] = shell.run(readme[1] + " --collect-only -q")
    seen["shell"] = shell
    return seen


def output(done) -> str:
    return " ".join((done.stdout + done.stderr).split())


def test_the_readme_quick_start_runs_the_demo_and_its_table_reads_at_80_columns(walk):
    done = next(iter(walk["README"].values()))
    table = done.stdout[done.stdout.index("scalelabs demo: the sample class"):done.stdout.index("gradebook:")]
    assert "…" not in table and max(map(len, table.splitlines())) <= 80, table
    assert "synthetic" in " ".join(table.split()), table


def test_staff_build_the_zip_see_its_dates_and_try_a_late_upload(walk):
    staff = {COMMENT.sub("", c).split()[1]: done for c, done in walk["staff"].items() if c.startswith("scalelabs otter")}
    built, tried = output(staff["otter"]), output(staff["otter-try"])
    assert "Due date: 2026-12-04 23:59 America/Los_Angeles" in built and "extensions (1): s002" in built, built
    # s001 (every item right) uploads 2026-12-06 09:30, a day and 9.5 hours after the due date: 20 % taken
    assert "1 d 9 h 31 min late" in tried and "What the student sees at the upload: score 24 / 30" in tried, tried
    assert "What only the staff see" in tried and "Autograder Output" in tried


def test_the_courses_private_files_are_ignored_by_git(walk):
    status = walk["git status"]
    for name in ("roster.csv", "extensions.csv", "grades.csv"):
        assert (walk["course"] / name).is_file(), name
        assert f"!! {name}" in status.splitlines() and f"?? {name}" not in status, status


def test_nbgrader_feedback_names_each_row_by_its_item(walk):
    page = (walk["course"] / "feedback" / "s002" / LAB / f"{LAB}.html").read_text()
    toc = page[page.index('<div id="toc">'):page.index("</ol>")]
    assert "Test cell" not in toc
    for item in ("ring_allreduce_time", "act1_prediction", "measurement_reflection"):
        assert f'<a href="#{item}"><code>{item}</code></a> (Score: ' in toc, item


def test_a_ta_grades_the_class_and_a_canvas_download_and_reports(walk):
    grades = walk["course"] / "grades" / LAB
    assert {f"{s}.json" for s in (*NBGRADER_CLASS, *CANVAS_CLASS)} <= {p.name for p in (grades / "results").iterdir()}
    assert (grades / "report.html").is_file()
    batch = next(done for c, done in walk["tas"].items() if "class --jobs 2" in c)
    assert batch.stdout.strip().splitlines()[-1] == "needs attention: 0", batch.stdout


def test_a_student_follows_their_page_with_their_folder_and_nothing_of_scalelabs(walk):
    assert "README.md" in walk["student folder"]
    readme = (walk["course"] / "release" / LAB / "README.md").read_text()
    for words in (f"`{MODULE}.py`", f"`{LAB}.ipynb`", "`pytest`", "hand in", "Run All"):
        assert words in readme, words
    failing = next(done for c, done in walk["students"].items() if c.startswith("pytest -k p2p_time"))
    assert "collectives.p2p_time is not written yet" in output(failing)
    errors = [o for c in walk["student notebook"]["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    assert "What the student sees at the upload: score 30 / 30" in output(walk["handed in"])


def test_a_student_venv_holds_no_scalelabs(walk):
    home = walk["work"] / "student"
    done = subprocess.run([str(home / ".venv" / "bin" / "python"), "-c", "import autograder"], cwd=home / LAB,
                          env=base_env(), capture_output=True, text=True)
    assert done.returncode == 1 and "No module named 'autograder'" in done.stderr


def test_an_author_scaffolds_lints_tests_and_releases_a_lab_in_the_course(walk):
    course = walk["course"]
    assert (course / "labs" / NEW_LAB / "__init__.py").is_file() and (course / "release" / NEW_LAB).is_dir()
    lint = next(done for c, done in walk["authors"].items() if c.startswith("scalelabs lint"))
    assert f"{NEW_LAB}: 0 problem(s)" in lint.stdout
    assert NEW_LAB in (course / "README.md").read_text()      # new-lab ran scalelabs docs in the course


def test_the_readme_test_command_collects_the_suite_in_the_fresh_venv(walk):
    done = walk["README tests"]
    assert re.search(r"\b\d{4,} tests? collected", done.stdout), done.stdout[-2000:]
