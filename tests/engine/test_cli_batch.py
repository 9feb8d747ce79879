"""The scalelabs CLI: grade --json (the Gradescope contract), clear errors, and a class batch that
survives kill -9 without losing or double-counting a grade."""
import csv
import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import gradescope_results
import toy
from autograder.engine.grade import grade_submission
from labs import all_assignments

HERE = Path(__file__).parent
REPO = HERE.parent.parent
SCALELABS = [sys.executable, "-c", "from autograder.cli import main; main()"]
TOY = "toy:ASSIGNMENT"


def run(*args, cwd=HERE, **kw):
    return subprocess.run([*SCALELABS, *map(str, args)], cwd=cwd, capture_output=True, text=True, **kw)


def test_grade_json_is_gradescope_shaped(tmp_path):
    folder = toy.make_submission(tmp_path / "s", toy.reference_source(), toy.key)
    proc = run("grade", TOY, folder, "--student", "alice", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["score"] == toy.ASSIGNMENT.total_points
    assert all(set(t) >= {"name", "score", "max_score", "output"} for t in data["tests"])
    assert {t["name"].split(":")[0] for t in data["tests"]} == set(toy.ASSIGNMENT.item_ids)
    table = run("grade", TOY, folder, "--student", "alice")
    assert table.returncode == 0 and "total 12.00 / 12.00" in table.stdout


def test_grade_asks_which_student_rather_than_grading_as_anonymous(tmp_path):
    """`scalelabs grade` graded as 'anonymous' without --student: hidden inputs no door gives that student."""
    folder = toy.make_submission(tmp_path / "s", toy.reference_source(), toy.key)
    proc = run("grade", TOY, folder)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "pass --student ID" in " ".join(proc.stderr.split()) and not proc.stdout


@pytest.mark.parametrize("args, message", [
    (["grade", "no_such_lab", "."], "unknown assignment 'no_such_lab'"),
    (["grade", TOY, "/no/such/folder"], "submission folder /no/such/folder does not exist"),
    (["grade-batch", TOY, "/no/such/root"], "submissions root /no/such/root does not exist"),
    (["grade", "nomodule:X", "."], "cannot load assignment 'nomodule:X'"),
    (["grade-batch", TOY, ".", "--db", "gradebook.db"], "--db gradebook.db is not a database URL: for a file "
                                                         "write sqlite:///gradebook.db"),
])
def test_bad_arguments_are_one_clear_line(args, message):
    proc = run(*args)
    assert proc.returncode == 2
    assert message in " ".join(proc.stderr.split()) and "Traceback" not in proc.stderr


def reference_submission(dest: Path, module: str) -> Path:
    """Every reference module, flattened like release/: the lab's module imports its siblings."""
    dest.mkdir(parents=True)
    for path in toy.REFERENCE_DIR.glob("*.py"):
        if path.name != "__init__.py":
            (dest / path.name).write_text(toy.flat_imports(path.read_text()))
    return dest


@pytest.mark.parametrize("lab", sorted(all_assignments()))
def test_every_declared_lab_reference_gives_valid_gradescope_results(tmp_path, lab):
    from labs import load
    spec = load(lab)
    folder = reference_submission(tmp_path / lab, spec.module)
    data = grade_submission(spec, folder, "reference").to_gradescope()
    functions = {f.name for f in spec.functions}
    not_full = [t["name"] for t in data["tests"] if t["name"].split(":")[0] in functions and t["score"] < t["max_score"]]
    assert not not_full, not_full
    assert gradescope_results.problems(data, spec.module) == []


def make_class(root: Path, n: int) -> dict[str, float]:
    """n students cycling through reference / stub / wrong / hostile; returns the expected scores."""
    ref = toy.reference_source()
    kinds = [
        (ref, toy.key),
        (toy.stub_source(), None),
        (toy.with_function(ref, "comm_fraction", "def comm_fraction(comm_s, compute_s):\n    return comm_s / compute_s\n"),
         toy.WRONG_LETTER),
        (toy.with_function(ref, "comm_fraction",
                           "def comm_fraction(comm_s, compute_s):\n    raise ValueError('<script>alert(1)</script>')\n"),
         toy.key),
    ]
    for i in range(n):
        source, answer = kinds[i % len(kinds)]
        toy.make_submission(root / f"s{i:02d}", source, answer)


# Kills its own process group (itself and the pool) right after the second student is finished:
# a crash mid-class at a known point, whatever the machine's load.
KILL_AFTER_SECOND = """
import os, signal, sys
from autograder.classroom.batch import grade_batch
finished = []
def on_done(student):
    finished.append(student)
    if len(finished) == 2:
        os.killpg(0, signal.SIGKILL)
grade_batch(sys.argv[1], sys.argv[2], sys.argv[3], jobs=1, on_done=on_done)
"""


def test_batch_resumes_after_sigkill_regrading_only_missing_and_changed_students(tmp_path, gradebook_matches_results):
    root, out = tmp_path / "class", tmp_path / "out"
    n = 12
    make_class(root, n)
    killed = subprocess.run([sys.executable, "-c", KILL_AFTER_SECOND, TOY, str(root), str(out)], cwd=HERE,
                            capture_output=True, text=True, start_new_session=True, timeout=900)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    results = out / "results"
    done_before = {p.name: p.stat().st_mtime_ns for p in results.glob("*.json")}
    assert 2 <= len(done_before) < n, "the kill lands mid-batch"
    for path in results.glob("*.json"):  # every finished file is whole: written via tmp + os.replace
        json.loads(path.read_text())

    # s00 (full marks) was finished before the kill; now the student changes an answer
    assert "s00.json" in done_before
    toy.make_submission(root / "s00", toy.reference_source(), toy.WRONG_LETTER, recorded=False)
    second = run("grade-batch", TOY, root, "--jobs", "2", "--out", out)
    assert second.returncode == 0, second.stderr
    unchanged = {name: mtime for name, mtime in done_before.items() if name != "s00.json"}
    assert f"graded {n - len(unchanged)}, skipped {len(unchanged)} already graded" in second.stdout, second.stdout
    assert {p.name: p.stat().st_mtime_ns for p in results.glob("*.json") if p.name in unchanged} == unchanged
    assert (results / "s00.json").stat().st_mtime_ns != done_before["s00.json"]

    rows = list(csv.DictReader((out / "grades.csv").open()))
    assert sorted(r["student"] for r in rows) == [f"s{i:02d}" for i in range(n)]
    by_student = {r["student"]: float(r["raw_score"]) for r in rows}
    assert by_student["s00"] == 11.0 and by_student["s04"] == 12.0 and by_student["s01"] == 0.0
    assert 0 < by_student["s02"] < 12
    for r in rows:  # the CSV's item columns are each student's per-item scores
        data = json.loads((results / f"{r['student']}.json").read_text())
        assert {i: float(r[i]) for i in toy.ASSIGNMENT.item_ids} == pytest.approx(
            gradebook_matches_results.per_item(data, toy.ASSIGNMENT))
    gradebook_matches_results(f"sqlite:///{out / 'gradebook.db'}", toy.ASSIGNMENT, results)

    page = (out / "feedback" / "s03.html").read_text()
    assert "&lt;script&gt;" in page and "<script>" not in page
    for student_page in (out / "feedback").glob("*.html"):
        text = student_page.read_text()
        assert "### BEGIN SOLUTION" not in text and "ring <= tree" not in text

    third = run("grade-batch", TOY, root, "--jobs", "2", "--out", out)
    assert f"graded 0, skipped {n} already graded" in third.stdout
    assert len(list(csv.DictReader((out / "grades.csv").open()))) == n


# Ctrl-C as the TA's terminal delivers it, in the main thread, right after the first student is finished
STOP_AFTER_FIRST = """
import sys
from autograder.classroom.batch import grade_batch
def on_done(student):
    raise KeyboardInterrupt
try:
    grade_batch(sys.argv[1], sys.argv[2], sys.argv[3], jobs=1, on_done=on_done)
except KeyboardInterrupt:
    print("stopped")
"""


def test_ctrl_c_stops_a_one_job_batch_after_the_student_in_hand(tmp_path):
    """With one job the class is graded on a thread of the CLI's process: Ctrl-C must drop the students
    not yet started (a thread pool would otherwise grade the whole class before letting go)."""
    root, out = tmp_path / "class", tmp_path / "out"
    make_class(root, 8)
    stopped = subprocess.run([sys.executable, "-c", STOP_AFTER_FIRST, TOY, str(root), str(out)], cwd=HERE,
                             capture_output=True, text=True, timeout=600)
    assert stopped.stdout.strip() == "stopped", stopped.stderr[-2000:]
    assert 1 <= len(list((out / "results").glob("*.json"))) <= 2   # the first, and the one already started


STOP_AFTER_FIRST_OF_TWO_JOBS = STOP_AFTER_FIRST.replace("jobs=1", "jobs=2")


def test_ctrl_c_stops_a_two_job_batch_after_the_students_in_hand(tmp_path):
    """With a process pool, Ctrl-C must drop the students not yet handed to a grader: shutting the pool
    down a second time reset its cancel_futures, and the whole class was graded on at exit while the
    TA's terminal showed the frozen bar."""
    root, out = tmp_path / "class", tmp_path / "out"
    make_class(root, 24)
    stopped = subprocess.run([sys.executable, "-c", STOP_AFTER_FIRST_OF_TWO_JOBS, TOY, str(root), str(out)],
                             cwd=HERE, capture_output=True, text=True, timeout=600)
    assert stopped.stdout.strip() == "stopped", stopped.stderr[-2000:]
    # the first, and those the pool had already handed out: two graders and one queued call each side
    assert 1 <= len(list((out / "results").glob("*.json"))) <= 6


def test_ctrl_c_in_the_terminal_stops_grade_batch_with_a_message_and_the_rerun_finishes(tmp_path):
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it, mid-class with two jobs: the
    command stops at once with one line saying what is kept and what to do, and the same command again
    grades only the rest."""
    import os
    import time
    root, out = tmp_path / "class", tmp_path / "out"
    n = 24
    make_class(root, n)
    proc = subprocess.Popen([*SCALELABS, "grade-batch", TOY, str(root), "--jobs", "2", "--out", str(out)], cwd=HERE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for _ in range(15_000):   # at most about 300 s: until the first student is finished
        if list((out / "results").glob("*.json")) or proc.poll() is not None:
            break
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=300)
    message = " ".join(stderr.split())
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr[-3000:]
    assert "interrupted: every student graded so far is kept in" in message and "run the same command again" in message
    kept = len(list((out / "results").glob("*.json")))
    assert 1 <= kept <= 8, f"{kept} of {n} graded after Ctrl-C"
    again = run("grade-batch", TOY, root, "--jobs", "2", "--out", out)
    assert again.returncode == 0, again.stderr
    assert f"graded {n - kept}, skipped {kept} already graded" in again.stdout, again.stdout
    assert len(list(csv.DictReader((out / "grades.csv").open()))) == n


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc: no psutil, no pgrep needed)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_ctrl_c_while_the_grading_processes_start_is_the_same_one_line(tmp_path):
    """A TA who sees the wrong class go by presses Ctrl-C at once, while the two grading processes are
    still importing: the terminal's SIGINT reaches them too, and they must not print a traceback each."""
    import os
    import time
    make_class(tmp_path / "class", 6)
    proc = subprocess.Popen([*SCALELABS, "grade-batch", TOY, str(tmp_path / "class"), "--jobs", "2", "--out",
                             str(tmp_path / "out")], cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for _ in range(6_000):   # at most about 60 s: until both grading processes exist
        if len(_children(proc.pid)) >= 2 or proc.poll() is not None:
            break
        time.sleep(0.01)
    time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr[-3000:]
    assert "interrupted: every student graded so far is kept in" in " ".join(stderr.split())


def _wrong_folder(tmp_path: Path, case: str) -> tuple[list, str]:
    """A tired TA's grade-batch arguments for `case` (a class of two under tmp_path/course/class) and the
    words the one-line error must hold."""
    import shutil
    course = tmp_path / "course"
    make_class(course / "class", 2)
    if case == "the folder above the class":
        return [course], "no student folder in"
    if case == "one student's folder":
        return [course / "class" / "s00"], "it looks like one submission; grade it with `scalelabs grade"
    if case == "a flat download":
        flat = tmp_path / "flat"
        flat.mkdir()
        for f in (course / "class" / "s00").iterdir():
            shutil.copy(f, flat / f"s00_{f.name}")
        return [flat], "put each student's files in a folder of their own"
    if case == "only the students' own files":
        for provided in (course / "class").glob("*/*.py"):
            if provided.name != "collectives.py":
                provided.unlink()
        return [course / "class"], "holds _domain.py, constants.py beside collectives.py, so no module can import them"
    if case == "one student's folder in nbgrader's layout":
        (course / "submitted" / "s00").mkdir(parents=True)
        (course / "class" / "s00").rename(course / "submitted" / "s00" / toy.ASSIGNMENT_ID)
        return [course / "submitted" / "s00"], "is one student's folder in nbgrader's layout"
    if case == "the course folder":
        (course / "nbgrader_config.py").write_text("")
        (course / "submitted").mkdir()
        return [course], "is the course folder, not a class: pass the folder that holds one folder per student"
    if case == "a folder of labs, like release/":
        (course / "class" / "s00").rename(course / "class" / toy.ASSIGNMENT_ID)
        return [course / "class"], "holds the labs' own folders"
    if case == "a class beside a folder that is not a student's":
        (course / "class" / "notes").mkdir()
        (course / "class" / "notes" / "todo.txt").write_text("grade on friday")
        return [course / "class"], "1 of 3 folders in"
    if case == "a zip of the class":
        return [shutil.make_archive(str(tmp_path / "class"), "zip", course / "class")], "unzip it first"
    if case == "an output folder inside a file":
        (tmp_path / "notes.txt").write_text("")
        return [course / "class", "--out", tmp_path / "notes.txt" / "grades"], "cannot write the grades to"
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["the folder above the class", "one student's folder", "a flat download",
                                  "only the students' own files", "a zip of the class",
                                  "an output folder inside a file", "one student's folder in nbgrader's layout",
                                  "the course folder", "a folder of labs, like release/",
                                  "a class beside a folder that is not a student's"])
def test_a_wrong_folder_is_one_line_saying_what_to_pass_and_grades_nobody(tmp_path, case):
    """Before: the folder above the class graded each folder of students as one student with 0 and exit 0,
    as did a class of students' own files only (no module imported: 'No module named _domain' in each
    result); an output folder that cannot be written was a traceback."""
    args, words = _wrong_folder(tmp_path, case)
    out = [] if "--out" in args else ["--out", tmp_path / "out"]
    proc = run("grade-batch", TOY, *args, "--jobs", "1", *out)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr[-3000:]
    assert words in " ".join(proc.stderr.split()), proc.stderr
    assert not (tmp_path / "out").exists()


def test_one_student_without_the_provided_modules_does_not_stop_the_class(tmp_path):
    root, out = tmp_path / "class", tmp_path / "out"
    make_class(root, 2)
    (root / "s00" / "_domain.py").unlink()
    proc = run("grade-batch", TOY, root, "--jobs", "1", "--out", out)
    assert "graded 2" in proc.stdout, proc.stderr[-3000:]
    s00 = json.loads((out / "results" / "s00.json").read_text())
    assert "No module named '_domain'" in s00["tests"][0]["output"]
    # the class is graded, and the summary names the student a person must look at
    lines = proc.stdout.splitlines()
    assert any(line.startswith("s00: ") and "does not import" in line and "_domain" in line for line in lines), lines
    assert lines[-1] == "needs attention: 1 (s00)" and proc.returncode == 1


def test_a_second_assignment_into_the_same_output_folder_is_refused_and_overwrites_nothing(tmp_path):
    """Before: grading another lab with the same --out replaced each student's results of the first lab."""
    root, out = tmp_path / "class", tmp_path / "out"
    make_class(root, 2)
    assert run("grade-batch", TOY, root, "--jobs", "1", "--out", out).returncode == 0
    before = {p.name: p.read_bytes() for p in (out / "results").glob("*.json")}
    second = run("grade-batch", "lab06_collectives", root, "--jobs", "1", "--out", out)
    message = " ".join(second.stderr.split())
    assert second.returncode == 2 and "Traceback" not in second.stderr, second.stderr[-3000:]
    assert f"{out} holds results of {toy.ASSIGNMENT_ID}" in message, message
    assert "grade lab06_collectives into a folder of its own" in message
    assert {p.name: p.read_bytes() for p in (out / "results").glob("*.json")} == before


def test_check_runs_a_released_folder_and_refuses_any_other(tmp_path):
    """`scalelabs check` (a student's offline check) ran pytest on whatever folder it was given: in the
    course folder, the project's whole test suite."""
    import shutil
    released = tmp_path / "lab06_collectives"
    shutil.copytree(REPO / "release" / "lab06_collectives", released)
    (released / "collectives.py").write_text(toy.reference_source())
    ok = run("check", released)
    assert ok.returncode == 0 and " passed" in ok.stdout and "failed" not in ok.stdout, ok.stdout[-2000:]
    # a failing check is a failing exit status (issue 31: a student's script or CI must see it)
    (released / "collectives.py").write_text(toy.with_function(toy.reference_source(), "ring_allreduce_time",
                                             "def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
                                             "    return 1.0\n"))
    failing = run("check", released)
    assert failing.returncode == 1 and " failed" in failing.stdout, failing.stdout[-2000:]
    # a module that does not even import is no pass either: pytest's collection error is the exit status
    (released / "collectives.py").write_text("def ring_allreduce_time(message_bytes, n:\n")
    broken = run("check", released)
    assert broken.returncode == 2 and "SyntaxError" in broken.stdout and " passed" not in broken.stdout, broken.stdout[-2000:]
    other = tmp_path / "other"
    other.mkdir()
    (other / "test_anything.py").write_text("def test_anything():\n    pass\n")
    refused = run("check", other)
    assert refused.returncode == 2 and "is not a released assignment folder" in " ".join(refused.stderr.split())
    assert "passed" not in refused.stdout


@pytest.mark.parametrize("setting, message", [
    ("call_timeout = 3", "unknown [grading] keys ['call_timeout']; known: show_expected, call_timeout_s"),
    ('show_expected = "yes"', "[grading] show_expected = 'yes': must be true or false"),
    ("memory_mb = -5", "[grading] memory_mb = -5: must be more than 0"),
    ('sandbox = "bwrap"', "[grading] sandbox = 'bwrap': expected auto, bubblewrap, user, unsandboxed"),
    ('predictions = "first"', "[grading] predictions = 'first': must be one of"),
    ("[grading", "scalelabs.toml is not valid TOML"),
])
def test_a_bad_course_setting_is_one_line_naming_the_file_key_and_value(tmp_path, setting, message):
    """Before: a traceback for each (in grade, grade-batch and otter), or (memory_mb = -5) 'bubblewrap is
    not usable here', and show_expected = "yes" was taken as on."""
    import shutil
    make_class(tmp_path / "class", 1)
    (tmp_path / "scalelabs.toml").write_text(f"[grading]\n{setting}\n")
    (tmp_path / "nbgrader_config.py").write_text("")      # tmp_path is the course: otter reads its settings
    shutil.copytree(REPO / "release" / "lab06_collectives", tmp_path / "release" / "lab06_collectives")
    for args in (("grade", "lab06_collectives", tmp_path / "class" / "s00", "--student", "s00"),
                 ("grade-batch", "lab06_collectives", tmp_path / "class", "--out", tmp_path / "out"),
                 ("otter", "lab06_collectives")):
        proc = run(*args, cwd=tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        assert f"{tmp_path / 'scalelabs.toml'}" in " ".join(proc.stderr.split()), proc.stderr
        assert message in " ".join(proc.stderr.split()), proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "dist" / "lab06_collectives-autograder.zip").exists()


@pytest.mark.parametrize("setting, wanted", [("memory_mb = true", "an integer"), ("hidden_examples = false", "an integer"),
                                             ("call_timeout_s = true", "a number")])
def test_a_number_setting_written_true_or_false_is_refused(tmp_path, setting, wanted):
    """TOML's true is not 1 MB of memory and false is not 0 hidden examples (Python's bool is an int):
    the course is told which key wants a number, in one line naming the file."""
    from autograder.engine.config import ConfigError, load_config
    toml = tmp_path / "scalelabs.toml"
    toml.write_text(f"[grading]\n{setting}\n")
    key, value = (part.strip() for part in setting.split("="))
    with pytest.raises(ConfigError) as refused:
        load_config(toml)
    assert str(refused.value) == f"{toml}: [grading] {key} = {value.title()}: must be {wanted}"


def test_grade_reads_a_students_folder_of_nbgraders_submitted_layout(tmp_path):
    """`scalelabs grade LAB submitted/alice` graded the empty top folder: 0 points, 'collectives.py is
    not in the submission', for a student who submitted everything."""
    toy.make_submission(tmp_path / "submitted" / "alice" / toy.ASSIGNMENT_ID, toy.reference_source(), toy.key)
    proc = run("grade", TOY, tmp_path / "submitted" / "alice", "--json")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["score"] == toy.ASSIGNMENT.total_points


def test_batch_reads_nbgraders_submitted_layout(tmp_path):
    """`submitted/<student>/<assignment>/` (nbgrader's collect layout) grades like a flat class."""
    flat, nested = tmp_path / "flat", tmp_path / "submitted"
    make_class(flat, 2)
    for student in ("s00", "s01"):
        (nested / student).mkdir(parents=True)
        (flat / student).rename(nested / student / toy.ASSIGNMENT_ID)
    proc = run("grade-batch", TOY, nested, "--jobs", "1", "--out", tmp_path / "out")
    assert proc.returncode == 0, proc.stderr
    rows = {r["student"]: float(r["raw_score"]) for r in csv.DictReader((tmp_path / "out" / "grades.csv").open())}
    assert rows == {"s00": 12.0, "s01": 0.0}


def test_a_gradebook_that_cannot_open_is_one_clear_line_and_loses_no_result(tmp_path, gradebook_matches_results):
    """The gradebook opens while the class is graded; a bad --db URL is reported after it, naming the URL
    and the reason, with every result and the CSV kept; the rerun with a working URL grades nobody again."""
    root, out = tmp_path / "class", tmp_path / "out"
    make_class(root, 2)
    bad = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, "--db", "nosuchdb://gradebook")
    message = " ".join(bad.stderr.split())
    assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr
    assert "the gradebook nosuchdb://gradebook could not be written" in message and "nosuchdb" in message
    assert sorted(p.name for p in (out / "results").glob("*.json")) == ["s00.json", "s01.json"]
    assert len(list(csv.DictReader((out / "grades.csv").open()))) == 2
    good = run("grade-batch", TOY, root, "--jobs", "1", "--out", out)
    assert good.returncode == 0 and "graded 0, skipped 2 already graded" in good.stdout, good.stdout + good.stderr
    gradebook_matches_results(f"sqlite:///{out / 'gradebook.db'}", toy.ASSIGNMENT, out / "results")


def test_grade_refuses_a_student_id_other_than_the_layouts(tmp_path):
    """`scalelabs grade LAB submitted/alice --student ALICE` would grade alice under another id (other
    hidden inputs, another record): refused, naming the id the layout gives; the same id is graded."""
    toy.make_submission(tmp_path / "submitted" / "alice" / toy.ASSIGNMENT_ID, toy.reference_source(), toy.key)
    for other in ("ALICE", "bob"):
        proc = run("grade", TOY, tmp_path / "submitted" / "alice", "--student", other, "--json")
        message = " ".join(proc.stderr.split())
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert f"--student {other}, but" in message and "is alice's submission by its layout" in message, message
    same = run("grade", TOY, tmp_path / "submitted" / "alice", "--student", "alice", "--json")
    assert same.returncode == 0 and json.loads(same.stdout)["score"] == toy.ASSIGNMENT.total_points, same.stderr[-2000:]
