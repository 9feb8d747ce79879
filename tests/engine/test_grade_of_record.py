"""One grade of record (issue 27), through `scalelabs grade-batch` as a TA types it, on the toy assignment:
a batch regrades exactly when the grader changed and says why, the gradebook is the record (a manual
override is what grades.csv and the report show, the engine's score beside it), the summary names who
needs a person and the exit status says so, `--student` grades only those, `scalelabs forget` removes a
student, and no CSV cell is a formula. The real course's version of these is tests/test_course_week.py."""
from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

import toy
from autograder.course import current_course_id

HERE = Path(__file__).parent
SCALELABS = [sys.executable, "-c", "from autograder.cli import main; main()"]
TOY = "toy:ASSIGNMENT"


def run(*args, cwd=HERE):
    """The CLI as a TA runs it, in `cwd` (the toy declaration importable from anywhere)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([*SCALELABS, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600, env=env)


def results_bytes(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "results").glob("*.json"))}


def class_of(root: Path, **students: tuple) -> Path:
    """students: name -> (module source or None, answer letter or None)."""
    for name, (source, answer) in students.items():
        toy.make_submission(root / name, source, answer)
    return root


def two_students(root: Path) -> Path:
    ref = toy.reference_source()
    return class_of(root, alice=(ref, toy.key), bob=(toy.with_function(
        ref, "comm_fraction", "def comm_fraction(comm_s, compute_s):\n    return comm_s / compute_s\n"), toy.key))


def rows(out: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader((out / "grades.csv").open())}


# --- a changed grader regrades, an unchanged one skips byte for byte --------------------------------

def test_a_changed_setting_regrades_everyone_and_says_why_unchanged_stays_byte_identical(tmp_path):
    """Before: after a TA changed scalelabs.toml the batch said "graded 0, skipped 2 already graded" and kept
    the old scores and feedback."""
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("")
    root, out = two_students(course / "class"), course / "out"
    first = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, cwd=course)
    assert first.returncode == 0 and "graded 2, skipped 0" in first.stdout, first.stdout + first.stderr[-2000:]
    graded = results_bytes(out)

    again = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, cwd=course)
    assert "graded 0, skipped 2 already graded" in again.stdout and "regraded" not in again.stdout
    assert results_bytes(out) == graded

    (course / "scalelabs.toml").write_text("[grading]\nshow_expected = false\n")
    changed = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, cwd=course)
    assert "graded 2, skipped 0 already graded" in changed.stdout, changed.stdout
    assert "regraded 2: the grader changed: scalelabs.toml show_expected (alice, bob)" in changed.stdout
    assert results_bytes(out) != graded
    settled = results_bytes(out)

    forced = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, "--force", cwd=course)
    assert "regraded 2: --force" in forced.stdout, forced.stdout
    assert results_bytes(out) == settled, "a regrade of the same files by the same grader is byte-identical"


def test_a_changed_check_or_key_regrades_naming_the_declaration(tmp_path):
    """A staff fix to the declaration (here the question's key) regrades the class, names the file, and
    the new key is what counts (graded for correctness: under the default, commitment, a recorded
    prediction earns its points whatever the key)."""
    shutil.copyfile(HERE / "toy.py", tmp_path / "toy_decl.py")
    (tmp_path / "scalelabs.toml").write_text('[grading]\npredictions = "correctness"\n')
    root, out = two_students(tmp_path / "class"), tmp_path / "out"
    decl = "toy_decl:ASSIGNMENT"
    assert run("grade-batch", decl, root, "--jobs", "1", "--out", out, cwd=tmp_path).returncode == 0
    before = {s: float(r["act1_prediction"]) for s, r in rows(out).items()}
    assert before == {"alice": 1.0, "bob": 1.0}
    source = (tmp_path / "toy_decl.py").read_text()
    assert source.count("], key_index=0, offset=1)") == 1
    (tmp_path / "toy_decl.py").write_text(source.replace("], key_index=0, offset=1)", "], key_index=1, offset=1)"))
    proc = run("grade-batch", decl, root, "--jobs", "1", "--out", out, cwd=tmp_path)
    assert "regraded 2: the grader changed: toy_decl.py (alice, bob)" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert {s: float(r["act1_prediction"]) for s, r in rows(out).items()} == {"alice": 0.0, "bob": 0.0}


def test_the_grader_fingerprint_names_exactly_what_changed_and_only_for_the_lab_it_grades(tmp_path):
    """In a copy of the package: Lab 09's reference module, Lab 06's key file and Lab 01's checks change.
    Each lab's grader names exactly the change that grades it, and nothing else."""
    repo = HERE.parent.parent
    for package in ("autograder", "labs", "reference"):
        shutil.copytree(repo / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "samples"))
    script = ("import json, sys; from autograder.classroom.fingerprints import grader_fingerprint; "
              "from autograder.engine.config import GradingConfig; from labs import load; "
              "print(json.dumps({lab: grader_fingerprint(lab, load(lab), GradingConfig(), 'bubblewrap') "
              "for lab in sys.argv[1:]}))")

    def prints():
        done = subprocess.run([sys.executable, "-c", script, "lab06_collectives", "lab09_performance"], cwd=tmp_path,
                              env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout)

    before = prints()
    assert before["lab06_collectives"]["reference"].keys() >= {"reference/collectives.py", "reference/_domain.py"}
    for path, marker in (("reference/performance.py", "\n# a corrected docstring\n"),
                         ("labs/lab06_collectives/questions.py", "\n# a corrected key\n"),
                         ("labs/lab01_scale/items.py", "\n# another lab's check\n")):
        (tmp_path / path).write_text((tmp_path / path).read_text() + marker)
    after = prints()
    from autograder.classroom.fingerprints import grader_changes
    assert grader_changes(before["lab06_collectives"], after["lab06_collectives"]) == [
        "labs/lab06_collectives/questions.py"]
    assert grader_changes(before["lab09_performance"], after["lab09_performance"]) == ["reference/performance.py"]
    secret = dict(before["lab06_collectives"], seeds="another")
    assert grader_changes(secret, before["lab06_collectives"]) == ["the hidden inputs' seeds (the course secret)"]
    assert grader_changes({"settings": {}}, before["lab06_collectives"])[:1] == ["scalelabs.toml budget_s"]
    assert grader_changes(None, before["lab06_collectives"]) == [
        "the result records no grader (graded by an older scalelabs)"]


def test_the_demo_class_and_whether_to_grade_unsandboxed_are_not_the_grader():
    """A lab's sample class (samples.toml, samples/) grades nobody, and allow_unsandboxed chooses whether to
    grade, not how: changing either regrades no class. The lab's own files and every other setting do."""
    from dataclasses import replace

    from autograder.classroom.fingerprints import _settings, declaration_files, grader_changes
    from autograder.engine.config import GradingConfig
    from labs import lab_folder
    folder = lab_folder("lab06_collectives")
    files = {str(p.relative_to(folder)) for p in declaration_files("lab06_collectives")}
    assert (folder / "samples.toml").is_file() and any((folder / "samples").glob("*.py"))
    assert not {f for f in files if f == "samples.toml" or f.startswith("samples/")}, sorted(files)
    assert {"items.py", "questions.py"} <= files
    base = GradingConfig()
    assert _settings(replace(base, allow_unsandboxed=not base.allow_unsandboxed)) == _settings(base)
    changed = _settings(replace(base, budget_s=base.budget_s + 1))
    assert grader_changes({"settings": _settings(base)}, {"settings": changed, "declaration": {}, "reference": {},
                                                          **{k: None for k in ("sandbox", "scalelabs", "hypothesis",
                                                                               "engine", "seeds")}})[:1] == [
        "scalelabs.toml budget_s"]


def test_whatever_changes_the_seeds_changes_the_grader_and_nothing_secret_is_kept_in_clear(monkeypatch):
    """A course secret mixed into the seeds (or any other change to them) regrades; the fingerprint
    holds a hash of a probe's seeds, and a setting named secret only as its hash."""
    from dataclasses import dataclass

    from autograder.classroom import fingerprints
    from autograder.engine import checks
    from autograder.engine.config import GradingConfig
    before = fingerprints.grader_fingerprint(TOY, toy.ASSIGNMENT, GradingConfig(), "bubblewrap")
    real = checks.seed_for
    monkeypatch.setattr(checks, "seed_for", lambda *args: real(*args) ^ 0x5EC12E7)
    after = fingerprints.grader_fingerprint(TOY, toy.ASSIGNMENT, GradingConfig(), "bubblewrap")
    assert fingerprints.grader_changes(before, after) == ["the hidden inputs' seeds (the course secret)"]
    assert str(real(toy.ASSIGNMENT_ID, "scalelabs-probe", "comm_fraction", "hidden")) not in json.dumps(before)

    @dataclass(frozen=True)
    class WithSecret(GradingConfig):
        course_secret: str = "hunter2-do-not-print"
    kept = fingerprints.grader_fingerprint(TOY, toy.ASSIGNMENT, WithSecret(), "bubblewrap")
    assert "hunter2" not in json.dumps(kept) and kept["settings"]["course_secret"].startswith("sha256:")



def test_a_changed_before_view_regrades_and_names_the_feedback_setting():
    """A course that turns on a knob of [feedback.before] (here keys) and runs grade-batch again: the
    before view is written while grading, so every student is regraded, and the summary says why."""
    from dataclasses import replace

    from autograder.classroom import fingerprints
    from autograder.engine.config import BeforeView, FeedbackPolicy, GradingConfig
    old = fingerprints.grader_fingerprint(TOY, toy.ASSIGNMENT, GradingConfig(), "bubblewrap")
    for policy in (FeedbackPolicy(before=BeforeView(keys=True)), FeedbackPolicy(native="before")):
        new = fingerprints.grader_fingerprint(TOY, toy.ASSIGNMENT, replace(GradingConfig(), feedback=policy), "bubblewrap")
        assert fingerprints.grader_changes(old, new) == ["scalelabs.toml feedback"], policy



def test_a_changed_file_anywhere_in_the_engine_regrades_its_sandbox_package_too(tmp_path, monkeypatch):
    """An upgrade that changes only the engine's sandbox package (how a student's code is jailed and
    called), or only a module beside it, regrades the class as "scalelabs' grading engine"."""
    from autograder.classroom import fingerprints
    from autograder.engine.config import GradingConfig
    engine = tmp_path / "engine"
    shutil.copytree(fingerprints.ENGINE_DIR, engine, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(fingerprints, "ENGINE_DIR", engine)
    old = fingerprints.grader_fingerprint(TOY, toy.ASSIGNMENT, GradingConfig(), "bubblewrap")
    for changed in (next(iter(sorted((engine / "sandbox").glob("*.py")))), engine / "checks.py"):
        changed.write_text(changed.read_text() + "\n# changed\n")
        new = fingerprints.grader_fingerprint(TOY, toy.ASSIGNMENT, GradingConfig(), "bubblewrap")
        assert fingerprints.grader_changes(old, new) == ["scalelabs' grading engine"], changed
        old = new


# --- the record: the gradebook, a manual override, grades.csv and the report ------------------------

def override(db_url: str, student: str, item: str, score: float) -> None:
    """What formgrader does when a TA sets a score by hand (nbgrader's GradeHandler.put)."""
    from nbgrader.api import Gradebook
    with Gradebook(db_url, course_id=current_course_id()) as gb:
        grade = gb.find_grade(item, toy.ASSIGNMENT_ID, toy.ASSIGNMENT_ID, student)
        grade.manual_score = score
        grade.needs_manual_grade = False
        gb.db.commit()


def test_a_manual_override_is_the_grade_in_the_csv_and_the_report_with_the_engines_beside(tmp_path):
    """Before: formgrader kept the override, but grades.csv and the report still showed the engine's score
    after the next batch. Also: every engine score was flagged 'needs manual grade' in formgrader."""
    root, out = two_students(tmp_path / "class"), tmp_path / "out"
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    assert run("grade-batch", TOY, root, "--jobs", "1", "--out", out, "--db", db).returncode == 0
    engine = rows(out)["bob"]
    assert float(engine["comm_fraction"]) < 2.0 and engine["raw_score"] == engine["engine_score"]
    from nbgrader.api import Gradebook
    with Gradebook(db, course_id=current_course_id()) as gb:
        flagged = [g for s in ("alice", "bob") for g in gb.find_submission_notebook(
            toy.ASSIGNMENT_ID, toy.ASSIGNMENT_ID, s).grades if g.needs_manual_grade]
    assert not flagged, "engine scores need no manual grading in formgrader"

    override(db, "bob", "comm_fraction", 2.0)
    again = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, "--db", db)
    assert "skipped 2 already graded" in again.stdout, again.stdout
    bob = rows(out)["bob"]
    assert float(bob["comm_fraction"]) == 2.0 and bob["overridden"] == "comm_fraction"
    assert float(bob["raw_score"]) == pytest.approx(float(engine["raw_score"]) - float(engine["comm_fraction"]) + 2.0)
    assert float(bob["engine_score"]) == float(engine["raw_score"])

    report = run("report", TOY, out)
    assert report.returncode == 0, report.stderr
    data = json.loads((out / "report.json").read_text())
    assert data["scores"]["bob"] == float(bob["raw_score"]) and data["engine_scores"]["bob"] == float(engine["raw_score"])
    assert data["overridden"] == {"bob": ["comm_fraction"]} and data["gradebook"] == db
    page = (out / "report.html").read_text()
    assert f"{float(bob['raw_score']):.2f}" in page and f"{float(engine['raw_score']):.2f}" in page

    # bob's files change under the override: the override stands, formgrader flags it, the summary says so
    toy.make_submission(root / "bob", toy.reference_source(), toy.key)   # comm_fraction fixed
    changed = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, "--db", db)
    assert "regraded 1: their files changed (bob)" in changed.stdout, changed.stdout
    assert "bob: a manual score stands on comm_fraction while the engine's score changed" in changed.stdout
    assert changed.returncode == 1 and changed.stdout.splitlines()[-1] == "needs attention: 1 (bob)"
    assert float(rows(out)["bob"]["comm_fraction"]) == 2.0


def test_grades_csv_holds_every_student_of_the_lab_graded_into_the_record(tmp_path):
    """Before: grades.csv listed only the folder graded last (two sections into one --out), and never a
    student only nbgrader autograded."""
    out = tmp_path / "out"
    ref = toy.reference_source()
    class_of(tmp_path / "section1", alice=(ref, toy.key), bob=(ref, None))
    class_of(tmp_path / "section2", carol=(toy.stub_source(), toy.key), dave=(ref, toy.key))
    for section in ("section1", "section2"):
        assert run("grade-batch", TOY, tmp_path / section, "--jobs", "1", "--out", out).returncode == 0
    assert sorted(rows(out)) == ["alice", "bob", "carol", "dave"]
    # a student the gradebook holds and no batch graded (nbgrader autograde wrote them): in the record too
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}", course_id=current_course_id()) as gb:
        gb.add_student("erin")
        gb.add_submission(toy.ASSIGNMENT_ID, "erin")
        grade = gb.find_grade("ring_allreduce_time", toy.ASSIGNMENT_ID, toy.ASSIGNMENT_ID, "erin")
        grade.auto_score = 4.0
        gb.db.commit()
    assert run("grade-batch", TOY, tmp_path / "section2", "--jobs", "1", "--out", out).returncode == 0
    erin = rows(out)["erin"]
    assert float(erin["raw_score"]) == 4.0 and float(erin["ring_allreduce_time"]) == 4.0 and erin["engine_score"] == "4.0"


# --- the summary names who needs a person; the exit status says so ----------------------------------

def test_the_summary_names_each_incomplete_submission_with_its_reason_and_the_count_last(tmp_path):
    """Before: with one student missing the notebook and another the module the summary said
    "graded 6, skipped 0, failed 0", exit 0; the reasons were only inside each result."""
    ref = toy.reference_source()
    loop = toy.with_function(ref, "comm_fraction", "def comm_fraction(comm_s, compute_s):\n    while True:\n        pass\n")
    root = class_of(tmp_path / "class", honest=(ref, toy.key), no_module=(None, toy.key),
                    no_notebook=(ref, toy.key), bad_notebook=(ref, toy.key), loops=(loop, toy.key),
                    no_import=(ref + "\nimport no_such_module\n", toy.key))
    (root / "no_notebook" / f"{toy.ASSIGNMENT_ID}.ipynb").unlink()
    (root / "bad_notebook" / f"{toy.ASSIGNMENT_ID}.ipynb").write_text('{"cells": [')
    (tmp_path / "scalelabs.toml").write_text("[grading]\ncall_timeout_s = 0.5\n")
    (tmp_path / "nbgrader_config.py").write_text("")
    out = tmp_path / "out"
    proc = run("grade-batch", TOY, root, "--jobs", "2", "--out", out, cwd=tmp_path)
    lines = proc.stdout.splitlines()
    said = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in lines
            if line.split(": ", 1)[0] in ("honest", "no_module", "no_notebook", "bad_notebook", "loops", "no_import")}
    assert said.keys() == {"no_module", "no_notebook", "bad_notebook", "loops", "no_import"}, proc.stdout
    assert said["no_module"] == "collectives.py is not in the submission"
    assert said["no_notebook"].startswith(f"the notebook {toy.ASSIGNMENT_ID}.ipynb is not in the submission")
    assert said["bad_notebook"] == f"{toy.ASSIGNMENT_ID}.ipynb is not valid notebook JSON"
    assert said["loops"].startswith("timeout: comm_fraction did not finish within 0.5 s")
    assert said["no_import"].startswith("collectives.py does not import:") and "no_such_module" in said["no_import"]
    assert lines[-1] == "needs attention: 5 (bad_notebook, loops, no_import, no_module, no_notebook)"
    assert proc.returncode == 1
    table = rows(out)
    assert table["honest"]["needs_attention"] == "" and table["loops"]["needs_attention"] == said["loops"]
    # a rerun grades nobody and still names them
    again = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, cwd=tmp_path)
    assert "skipped 6 already graded" in again.stdout and again.stdout.splitlines()[-1] == lines[-1]
    assert again.returncode == 1


def test_a_regrade_reads_the_course_secret_where_the_class_was_graded(tmp_path):
    """The course folder keeps a secret and SCALELABS_COURSE_SECRET_FILE names another (kept outside it):
    grade-batch in the course grades under the named one (its fingerprint in every result). A rerun
    without the variable reads the course's, which draws other hidden inputs: it refuses and changes
    nothing; with the variable set again it resumes and skips the class byte for byte."""
    from autograder.engine.secret import ENV, RELATIVE, read_secret
    course = tmp_path / "course"
    root = two_students(course / "class")
    (course / "nbgrader_config.py").write_text("")
    (course / RELATIVE).parent.mkdir()
    (course / RELATIVE).write_text("c0ffee00" * 8 + "\n")
    named = tmp_path / "kept_secret"
    named.write_text("00decade" * 8 + "\n")
    out = course / "out"
    base = {k: v for k, v in os.environ.items() if k != ENV}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))

    def batch(env):
        return subprocess.run([*SCALELABS, "grade-batch", TOY, str(root), "--jobs", "1", "--out", str(out)], cwd=course,
                              env=env, capture_output=True, text=True, timeout=600)
    assert batch({**base, ENV: str(named)}).returncode == 0
    graded = results_bytes(out)
    assert {json.loads(data)["scalelabs"]["course_secret"] for data in graded.values()} == {read_secret(named).fingerprint}
    refused = batch(base)
    assert refused.returncode == 2 and "graded under course secret" in refused.stderr, refused.stderr[-2000:]
    assert read_secret(course / RELATIVE).fingerprint in refused.stderr and results_bytes(out) == graded
    again = batch({**base, ENV: str(named)})
    assert again.returncode == 0 and "skipped 2 already graded" in again.stdout and results_bytes(out) == graded


def test_a_complete_class_exits_zero_with_a_zero_count(tmp_path):
    proc = run("grade-batch", TOY, two_students(tmp_path / "class"), "--jobs", "1", "--out", tmp_path / "out")
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1] == "needs attention: 0", proc.stdout
    # results another machine graded under another course secret (other hidden inputs) are not resumed
    out = tmp_path / "out"
    alice = json.loads((out / "results" / "alice.json").read_text())
    alice["scalelabs"]["course_secret"] = "0123abcd"
    (out / "results" / "alice.json").write_text(json.dumps(alice))
    graded = results_bytes(out)
    refused = run("grade-batch", TOY, tmp_path / "class", "--jobs", "1", "--out", out)
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 2 and "holds results graded under course secret 0123abcd (alice.json)" in said, said
    assert results_bytes(out) == graded and "graded" not in refused.stdout


def test_grade_batch_with_course_from_outside_grades_under_that_courses_settings_into_its_record(tmp_path):
    """`--course DIR` from elsewhere (like `git -C`): the class path is read where it was typed, the course's
    scalelabs.toml grades (here predictions graded for correctness), and the record is the course's:
    DIR/grades/<lab>/ and DIR/gradebook.db."""
    course = tmp_path / "mlsys"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("")
    (course / "scalelabs.toml").write_text('[grading]\npredictions = "correctness"\n')
    class_of(tmp_path / "elsewhere" / "class", ann=(toy.reference_source(), toy.WRONG_LETTER))
    proc = run("grade-batch", TOY, "class", "--jobs", "1", "--course", "../mlsys", cwd=tmp_path / "elsewhere")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    out = course / "grades" / toy.ASSIGNMENT_ID
    assert float(rows(out)["ann"]["act1_prediction"]) == 0.0      # the wrong letter, graded for correctness
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", course_id="mlsys") as gb:
        assert gb.find_submission(toy.ASSIGNMENT_ID, "ann").student.id == "ann"
    assert not (tmp_path / "elsewhere" / "grades").exists()


def test_a_due_date_needs_each_students_time_and_a_tas_csv_gives_it(tmp_path):
    """A plain class folder of a lab with a due date says nothing of when anyone submitted: one line saying
    to pass --timestamps, nothing graded; with the CSV the class is graded, late work counted in the summary
    and priced in grades.csv (10 % per started day of the grade of record)."""
    from datetime import datetime, timedelta, timezone
    due = (datetime.now(timezone.utc) - timedelta(days=10)).replace(microsecond=0)
    (tmp_path / "scalelabs.toml").write_text(f'[deadlines]\npolicy = "per_day"\npenalty_percent = 10\n\n'
                                             f'[deadlines.{toy.ASSIGNMENT_ID}]\ndue = {due.isoformat()}\n')
    root, out = two_students(tmp_path / "class"), tmp_path / "out"
    refused = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, cwd=tmp_path)
    said = " ".join(refused.stderr.split())
    assert refused.returncode == 2 and "says nothing of when each student submitted" in said and "--timestamps" in said
    assert not out.exists()
    (tmp_path / "times.csv").write_text(f"student,submitted_at\nalice,{(due - timedelta(hours=1)).isoformat()}\n"
                                        f"bob,{(due + timedelta(hours=26)).isoformat()}\n")
    proc = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, "--timestamps", "times.csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert ("late work: 1 on time, 1 late (bob), 0 with an extension, 0 with no usable submission time"
            in proc.stdout), proc.stdout
    bob, alice = rows(out)["bob"], rows(out)["alice"]
    assert float(bob["late_by_hours"]) == 26.0 and float(bob["late_penalty"]) == pytest.approx(float(bob["raw_score"]) * 0.2)
    assert float(bob["final_score"]) == pytest.approx(float(bob["raw_score"]) * 0.8)
    assert float(alice["late_penalty"]) == 0 and alice["final_score"] == alice["raw_score"]


def test_a_student_whose_grading_raises_makes_the_batch_exit_nonzero_and_the_class_is_graded(tmp_path):
    """Issue 31, exit codes: a grader error for one student (here their feedback page cannot be written)
    must not exit 0."""
    root, out = two_students(tmp_path / "class"), tmp_path / "out"
    (out / "feedback" / "bob.html").mkdir(parents=True)
    proc = run("grade-batch", TOY, root, "--jobs", "1", "--out", out)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-2000:]
    assert "failed 1" in proc.stdout and "bob: grader error" in " ".join(proc.stderr.split())
    assert proc.stdout.splitlines()[-1] == "needs attention: 1 (bob)"
    assert (out / "results" / "alice.json").is_file() and not (out / "results" / "bob.json").exists()


# --- --student, forget ------------------------------------------------------------------------------

def test_student_option_grades_only_those_and_refuses_an_unknown_id(tmp_path):
    root, out = two_students(tmp_path / "class"), tmp_path / "out"
    class_of(root, carol=(toy.reference_source(), None))
    proc = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, "--student", "bob", "--student", "carol")
    assert proc.returncode == 0 and "graded 2, skipped 0" in proc.stdout, proc.stdout + proc.stderr[-2000:]
    assert sorted(p.stem for p in (out / "results").glob("*.json")) == ["bob", "carol"]
    unknown = run("grade-batch", TOY, root, "--jobs", "1", "--out", tmp_path / "out2", "--student", "zed")
    assert unknown.returncode == 2 and "--student zed: no such student in" in " ".join(unknown.stderr.split())
    assert not (tmp_path / "out2").exists()


def test_forget_removes_a_students_results_feedback_and_gradebook_rows_saying_what(tmp_path):
    root, out = two_students(tmp_path / "class"), tmp_path / "out"
    assert run("grade-batch", TOY, root, "--jobs", "1", "--out", out).returncode == 0
    proc = run("forget", TOY, "bob", "--out", out)
    said = " ".join(proc.stdout.split())
    assert proc.returncode == 0, proc.stderr
    assert f"forgot bob: removed {out / 'results' / 'bob.json'}; {out / 'feedback' / 'bob.html'}" in said
    assert "bob's toy_collectives submission and its grades in the gradebook" in said
    assert "the student bob, who has no other submission, from the gradebook" in said
    assert sorted(rows(out)) == ["alice"]
    from autograder.classroom.gradebook import read_record
    assert sorted(read_record(f"sqlite:///{out / 'gradebook.db'}", toy.ASSIGNMENT_ID)) == ["alice"]
    nothing = run("forget", TOY, "bob", "--out", out)
    assert "bob: nothing of theirs" in " ".join(nothing.stderr.split())


# --- student ids and CSV cells (issue 26) ------------------------------------------------------------

UNSAFE_IDS = ["=HYPERLINK(\"evil.example\";\"y\")", "+1 555", "-x", "@SUM(1)", "has space", "dés", "a" * 200]


def test_a_student_id_outside_the_safe_alphabet_is_refused_in_one_line_before_anything_is_written(tmp_path):
    """Issue 26: an id `=HYPERLINK(...)` was a live formula in grades.csv and report.csv."""
    from autograder.classroom.roster import NotAClass, class_roster
    root, out = two_students(tmp_path / "class"), tmp_path / "out"
    for name in UNSAFE_IDS:
        folder = class_of(tmp_path / "one", **{name: (toy.reference_source(), toy.key)}) / name
        with pytest.raises(NotAClass, match="is not a safe student id: ids use ASCII letters, digits and "):
            class_roster(tmp_path / "one", toy.ASSIGNMENT)
        shutil.rmtree(folder)
    class_of(root, **{UNSAFE_IDS[0]: (toy.reference_source(), toy.key)})
    proc = run("grade-batch", TOY, root, "--jobs", "1", "--out", out)
    message = " ".join(proc.stderr.split())
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert "is not a safe student id: ids use ASCII letters, digits and . _ - @ +" in message, message
    assert not out.exists()
    one = run("grade", TOY, root / "alice", "--student", UNSAFE_IDS[0])
    assert one.returncode == 2 and "is not a safe student id" in " ".join(one.stderr.split())


def test_the_nbgrader_door_refuses_an_unsafe_student_id_before_grading():
    """nbgrader takes any folder name in submitted/ as an id; its autograde records the error for that
    student alone and goes on with the class."""
    import nbformat

    from autograder.doors.nbgrader import EngineScores
    with pytest.raises(ValueError, match=r"nbgrader student id '=HYPERLINK\(1\)' is not a safe student id"):
        EngineScores().preprocess(nbformat.v4.new_notebook(), {"nbgrader": {"student": "=HYPERLINK(1)",
                                                                             "assignment": "lab06_collectives"}})


def test_no_csv_cell_starts_a_formula():
    from autograder.classroom.csvcells import csv_text, spreadsheet_safe
    from autograder.classroom.record import Row, grades_csv
    assert [spreadsheet_safe(v) for v in ("=1+1", "+1", "-1", "@A1", "\t=1", "\r=1", "ok", -2.5, 3)] == [
        "'=1+1", "'+1", "'-1", "'@A1", "'\t=1", "'\r=1", "ok", -2.5, 3]
    row = Row("alice", {i: 0.0 for i in toy.ASSIGNMENT.item_ids}, {i: 0.0 for i in toy.ASSIGNMENT.item_ids}, 12.0,
              attention=['=HYPERLINK("http://evil";"click")'])
    cells = [cell for line in csv.reader(grades_csv(toy.ASSIGNMENT, [row]).splitlines()) for cell in line]
    assert "'=HYPERLINK(\"http://evil\";\"click\")" in cells
    assert not [c for c in cells if c[:1] in ("=", "+", "@")] and "-" not in {c[:1] for c in cells}
    assert csv_text(["a"], [["-3"]]).splitlines()[1] == "'-3"


@contextmanager
def _stamped_gradebook(tmp_path: Path):
    """An empty course gradebook, open: stamped in-process (nbgrader would stamp it through a 4 s
    alembic subprocess)."""
    from nbgrader.api import Gradebook

    from autograder.classroom.gradebook import stamp_new_gradebook
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    stamp_new_gradebook(db)
    with Gradebook(db, course_id=current_course_id()) as gb:
        yield gb


def test_nbgrader_export_writes_quoted_cells_no_spreadsheet_runs(tmp_path):
    """`nbgrader export` (the course's SafeCsvExport): names from a roster cannot become formulas, and
    a comma in a name no longer shifts the columns."""
    from autograder.doors.nbgrader_export import KEYS, SafeCsvExport
    with _stamped_gradebook(tmp_path) as gb:
        gb.add_assignment("lab")
        gb.add_student("s1", first_name='=HYPERLINK("http://evil";"x")', last_name="Smith, Jr.", email="@me")
        gb.add_submission("lab", "s1")
        exporter = SafeCsvExport(to=str(tmp_path / "grades.csv"))
        exporter.export(gb)
    table = list(csv.DictReader((tmp_path / "grades.csv").open()))
    assert list(table[0]) == KEYS and len(table) == 1
    assert table[0]["first_name"] == "'=HYPERLINK(\"http://evil\";\"x\")" and table[0]["last_name"] == "Smith, Jr."
    assert table[0]["email"] == "'@me" and table[0]["student_id"] == "s1"


def test_nbgrader_export_subtracts_the_late_penalty_from_the_score(tmp_path):
    """`nbgrader export`'s score column is the grade of record: the raw score less the late penalty
    nbgrader holds (CourseLatePenalties records it), never below 0; raw_score and the penalty beside it."""
    from autograder.doors.nbgrader_export import SafeCsvExport
    with _stamped_gradebook(tmp_path) as gb:
        gb.add_assignment("lab")
        gb.add_notebook("lab", "lab")
        gb.add_grade_cell("q1", "lab", "lab", max_score=10.0, cell_type="code")
        for student, earned, penalty in (("late", 8.0, 2.0), ("on_time", 7.0, None)):
            gb.add_student(student)
            gb.add_submission("lab", student)
            gb.find_grade("q1", "lab", "lab", student).auto_score = earned
            gb.find_submission_notebook("lab", "lab", student).late_submission_penalty = penalty
        gb.db.commit()
        SafeCsvExport(to=str(tmp_path / "grades.csv")).export(gb)
    table = {row["student_id"]: row for row in csv.DictReader((tmp_path / "grades.csv").open())}
    assert {k: float(table["late"][k]) for k in ("raw_score", "late_submission_penalty", "final_score", "max_score")} == \
        {"raw_score": 8.0, "late_submission_penalty": 2.0, "final_score": 6.0, "max_score": 10.0}
    assert float(table["on_time"]["final_score"]) == 7.0 and float(table["on_time"]["late_submission_penalty"] or 0) == 0.0


def test_nbgrader_export_of_one_assignment_or_student_holds_only_their_rows(tmp_path):
    """`nbgrader export --assignment lab06` (or `--student`): every row of that assignment (student),
    whatever else the gradebook holds before or after it, and no other row."""
    from autograder.doors.nbgrader_export import SafeCsvExport
    with _stamped_gradebook(tmp_path) as gb:
        for lab in ("lab01", "lab06", "lab09"):
            gb.add_assignment(lab)
        for student in ("s1", "s2", "s3"):
            gb.add_student(student)
        SafeCsvExport(to=str(tmp_path / "lab06.csv"), assignment=["lab06"]).export(gb)
        SafeCsvExport(to=str(tmp_path / "s2.csv"), student=["s2"]).export(gb)
    rows = {name: sorted((r["assignment"], r["student_id"]) for r in csv.DictReader((tmp_path / name).open()))
            for name in ("lab06.csv", "s2.csv")}
    assert rows["lab06.csv"] == [("lab06", "s1"), ("lab06", "s2"), ("lab06", "s3")]
    assert rows["s2.csv"] == [("lab01", "s2"), ("lab06", "s2"), ("lab09", "s2")]


# --- resume and crash consistency with real sizes (issue 31, kind 5) --------------------------------

def padded_notebook(folder: Path, answer: str, pad_bytes: int) -> None:
    """The submission's notebook as a student hands it in after running it: a cell with a large image
    output (an instrument's figure) before the answer cell."""
    import base64
    path = folder / f"{toy.ASSIGNMENT_ID}.ipynb"
    nb = json.loads(path.read_text())
    png = base64.b64encode(bytes(range(256)) * (pad_bytes // 342)).decode()
    nb["cells"].insert(1, {"cell_type": "code", "execution_count": 1, "metadata": {}, "source": "draw()",
                           "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"image/png": png}}]})
    for cell in nb["cells"]:
        if "act1_prediction" in cell["source"]:
            cell["source"] = f'act1_prediction = "{answer}"  # your answer'
        for output in cell.get("outputs", []):     # the reveal's record of the answer, as a run leaves it
            if toy.RECORD_MIMETYPE in output.get("data", {}):
                output["data"][toy.RECORD_MIMETYPE]["answer"] = answer
    path.write_text(json.dumps(nb))


def test_a_real_size_notebook_changed_deep_inside_at_the_same_length_changes_the_fingerprint(tmp_path):
    """The released Lab 06 notebook with 6 MB of figure output before its answers, one answer changed
    near its end without a change of length: a different submission."""
    from autograder.classroom.fingerprints import submission_fingerprint
    repo = HERE.parent.parent
    folder = tmp_path / "s"
    shutil.copytree(repo / "release" / "lab06_collectives", folder)
    path = folder / "lab06_collectives.ipynb"
    nb = json.loads(path.read_text())
    nb["cells"][2].setdefault("outputs", []).append(
        {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo" * 600_000}})
    text = json.dumps(nb).replace('act2_reflection = None', 'act2_reflection = "B" ')
    path.write_text(text)
    before = submission_fingerprint(folder)
    assert len(text) > 6_000_000 and text.index('act2_reflection = "B"') > 6_000_000
    path.write_text(text.replace('act2_reflection = "B"', 'act2_reflection = "C"'))
    assert path.stat().st_size == len(text.encode())
    assert submission_fingerprint(folder) != before


def test_a_student_who_changes_an_answer_deep_in_a_large_notebook_is_regraded(tmp_path):
    """8 MB notebooks that differ in one letter deep inside: the second is regraded, and its answer counts
    (graded for correctness, so the letter shows in the score)."""
    root, out = two_students(tmp_path / "class"), tmp_path / "out"
    (tmp_path / "scalelabs.toml").write_text('[grading]\npredictions = "correctness"\n')
    padded_notebook(root / "bob", toy.key, 8 << 20)
    assert run("grade-batch", TOY, root, "--jobs", "1", "--out", out, cwd=tmp_path).returncode == 0
    assert float(rows(out)["bob"]["act1_prediction"]) == 1.0
    padded_notebook(root / "bob", toy.WRONG_LETTER, 8 << 20)
    proc = run("grade-batch", TOY, root, "--jobs", "1", "--out", out, cwd=tmp_path)
    assert "regraded 1: their files changed (bob)" in proc.stdout, proc.stdout
    assert float(rows(out)["bob"]["act1_prediction"]) == 0.0


def test_a_student_who_renames_their_module_is_regraded_from_the_missing_modules_zero(tmp_path):
    """bob hands in his module as collective.py: collectives.py is missing, his function items score 0
    and he needs a person. He renames it to collectives.py without changing a byte: the rerun regrades
    him (the same bytes under another name, or in another folder, are another submission) and his items
    score as alice's module's do."""
    from autograder.classroom.fingerprints import submission_fingerprint
    root, out = two_students(tmp_path / "class"), tmp_path / "out"
    module, misnamed = root / "bob" / "collectives.py", root / "bob" / "collective.py"
    named = submission_fingerprint(root / "bob")
    module.rename(misnamed)
    assert submission_fingerprint(root / "bob") != named
    (root / "bob" / "code").mkdir()   # code/collectives.py sorts where collectives.py did: only its folder differs
    misnamed.rename(root / "bob" / "code" / "collectives.py")
    assert submission_fingerprint(root / "bob") not in (named, submission_fingerprint(root / "alice"))
    (root / "bob" / "code" / "collectives.py").rename(misnamed)
    (root / "bob" / "code").rmdir()
    first = run("grade-batch", TOY, root, "--jobs", "1", "--out", out)
    bob = rows(out)["bob"]
    functions = [f.name for f in toy.ASSIGNMENT.functions]
    assert [float(bob[f]) for f in functions] == [0.0] * len(functions), first.stdout
    assert bob["needs_attention"] == "collectives.py is not in the submission", first.stdout
    misnamed.rename(module)
    again = run("grade-batch", TOY, root, "--jobs", "1", "--out", out)
    assert "regraded 1: their files changed (bob)" in again.stdout, again.stdout
    bob, alice = rows(out)["bob"], rows(out)["alice"]
    assert bob["needs_attention"] == "" and float(bob["raw_score"]) > float(rows(out)["bob"]["act1_prediction"])
    assert float(bob["ring_allreduce_time"]) == float(alice["ring_allreduce_time"]) > 0


# A crash (SIGKILL of the whole batch) at a chosen moment: "results" -- after the second student's feedback
# page is written, before their results file; "gradebook" -- after every results file, while the gradebook
# is written.
CRASH = """
import os, signal, sys
from autograder.classroom import batch, gradebook
moment = sys.argv[4]
real_write = batch.write_atomic
finished = []
def write(path, text):
    if moment == "results" and path.parent.name == "results":
        finished.append(path.name)
        if len(finished) == 2:
            os.killpg(0, signal.SIGKILL)
    real_write(path, text)
def book(self, *written):
    os.killpg(0, signal.SIGKILL)
batch.write_atomic = write
if moment == "gradebook":
    gradebook.GradebookWriter._write = book
batch.grade_batch(sys.argv[1], sys.argv[2], sys.argv[3], jobs=1)
"""


@pytest.mark.parametrize("moment", ["results", "gradebook"])
def test_a_crash_between_one_students_files_is_made_whole_by_the_rerun(tmp_path, moment, gradebook_matches_results):
    """Every student's feedback page is their result's, the gradebook and grades.csv hold every result,
    after a kill -9 between a student's feedback and results, or before the gradebook is written."""
    from autograder.classroom.feedback import render_feedback
    root, out = class_of(tmp_path / "class", **{f"s{i}": (toy.reference_source(), toy.key if i % 2 else None)
                                                for i in range(4)}), tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    killed = subprocess.run([sys.executable, "-c", CRASH, TOY, str(root), str(out), moment], cwd=HERE, env=env,
                            capture_output=True, text=True, start_new_session=True, timeout=600)
    assert killed.returncode == -9, killed.stderr[-2000:]
    if moment == "results":   # the second student's page is written, their result is not
        assert sorted(p.stem for p in (out / "feedback").glob("*.html")) == ["s0", "s1"]
        assert sorted(p.stem for p in (out / "results").glob("*.json")) == ["s0"]
    else:
        assert len(list((out / "results").glob("*.json"))) == 4 and not (out / "grades.csv").exists()
    (out / "feedback" / "s0.html").write_text("<p>half a page")   # and a page left torn by hand
    again = run("grade-batch", TOY, root, "--jobs", "1", "--out", out)
    assert again.returncode == 0, again.stdout + again.stderr[-2000:]
    assert "feedback pages made whole again from their results: s0" in again.stdout
    for student in ("s0", "s1", "s2", "s3"):
        data = json.loads((out / "results" / f"{student}.json").read_text())
        assert (out / "feedback" / f"{student}.html").read_text() == render_feedback(
            toy.ASSIGNMENT.title, student, data), student
    gradebook_matches_results(f"sqlite:///{out / 'gradebook.db'}", toy.ASSIGNMENT, out / "results")
    assert sorted(rows(out)) == ["s0", "s1", "s2", "s3"]
