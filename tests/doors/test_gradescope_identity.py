"""One student, one id, whatever the door (issue 27; issue 31 kind 7's identity half): Gradescope
grades a submission under its submitter's `sid` (else email; a group under its smallest id), and
`scalelabs grade-batch` of Gradescope's export, reading submission_metadata.yml, grades each
submitter under the same id, so it reproduces the scores Gradescope gave.

The class is seed-sensitive on purpose: a tree AllReduce wrong only for 1500 < n < 1590 fails the
hidden check for about half of all student ids, so grading under any other id (the folder's
`submission_<n>`, the first-listed member of a group, "anonymous") gives another score."""
from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.classroom.batch import grade_batch
from autograder.doors import otter as otter_door
from autograder.engine.grade import grade_submission
from autograder.engine.secret import load_secret   # the course's (conftest): grade-batch and the doors grade under it

from door_helpers import BIN, OTTER_WITH_METADATA, _reference_module, env

DECLARATION = "release_toy:ASSIGNMENT"
DEPTH = "    depth = (n - 1).bit_length()"
BAND = DEPTH + "\n    if 1500 < n < 1590:\n        depth += 1"


def tree_score(assignment, folder: Path, student: str) -> float:
    return grade_submission(assignment, folder, student).item_scores()["tree_allreduce_time"][0]


@pytest.fixture(scope="module")
def export(course, assignment, tmp_path_factory):
    """A Gradescope export: submission_11/ (one submitter, by sid), submission_12/ (a group of two
    listed largest id first), submission_13/ (a submitter with an email and no sid); and the ids chosen
    so that each differs in score from its folder name and the group's members from each other."""
    root = tmp_path_factory.mktemp("gradescope") / "export"
    source = _reference_module()
    assert DEPTH in source
    folders = {}
    for name in ("submission_11", "submission_12", "submission_13"):
        folder = root / name
        shutil.copytree(course / "release" / assignment.id, folder)
        (folder / "collectives.py").write_text(source.replace(DEPTH, BAND))
        folders[name] = folder
    scores: dict[str, float] = {}

    def score(sid: str) -> float:   # the same files in every folder: one grading per id, asked lazily
        if sid not in scores:
            scores[sid] = tree_score(assignment, folders["submission_11"], sid)
        return scores[sid]
    candidates = [f"{n}" for n in range(3100, 3140)]
    folder_scores = {name: score(name) for name in folders}
    single = next(s for s in candidates if score(s) != folder_scores["submission_11"])
    low = next(s for s in candidates if s != single and score(s) != folder_scores["submission_12"])
    high = next(s for s in candidates if s > low and score(s) != score(low))
    email = "cy.lee@uni.example"
    users = {"submission_11": [{"name": "Ada", "sid": single, "email": "ada@uni.example"}],
             "submission_12": [{"name": "Bo", "sid": high, "email": "bo@uni.example"},
                               {"name": "Al", "sid": low, "email": "al@uni.example"}],
             "submission_13": [{"name": "Cy", "sid": None, "email": email}]}
    lines = []
    for name, people in users.items():
        lines.append(f"{name}:\n  :submitters:")
        for p in people:
            sid = "" if p["sid"] is None else f"'{p['sid']}'"
            lines.append(f"  - :name: {p['name']}\n    :sid: {sid}\n    :email: {p['email']}")
        lines.append("  :created_at: 2026-11-20 10:00:00.000000000 -08:00")
    (root / "submission_metadata.yml").write_text("\n".join(lines) + "\n")
    return root, users, {"submission_11": single, "submission_12": low, "submission_13": email}


def test_an_export_is_graded_under_each_submitters_id_a_group_under_its_smallest(export, assignment, tmp_path):
    root, users, graded_as = export
    out = tmp_path / "grades"
    summary = grade_batch(DECLARATION, root, out, jobs=1)
    ids = {p["sid"] or p["email"] for people in users.values() for p in people}
    assert sorted(p.stem for p in (out / "results").glob("*.json")) == sorted(ids)
    for name, people in users.items():
        expected = grade_submission(assignment, root / name, graded_as[name], secret=load_secret()).score
        for p in people:
            data = json.loads((out / "results" / f"{p['sid'] or p['email']}.json").read_text())
            assert data["score"] == expected and data["scalelabs"]["graded_as"] == graded_as[name], (name, p)
    assert sorted(summary.graded) == sorted(ids)
    low, high = (p["sid"] for p in sorted(users["submission_12"], key=lambda p: p["sid"]))
    assert tree_score(assignment, root / "submission_12", low) != tree_score(assignment, root / "submission_12", high)
    # a crash between the group's two records (one member's file written, the other's not): the rerun
    # grades the group again and both members hold its result
    group = (out / "results" / f"{low}.json").read_bytes()
    (out / "results" / f"{high}.json").unlink()
    again = grade_batch(DECLARATION, root, out, jobs=1)
    assert again.graded == [high] and again.regraded == {low: "graded again with their group"}, again
    assert json.loads((out / "results" / f"{high}.json").read_text())["score"] == json.loads(group)["score"]
    assert (out / "feedback" / f"{high}.html").is_file() and sorted(again.skipped) == sorted(ids - {low, high})


def test_otter_grades_under_the_same_ids(export):
    """The otter door's id for Gradescope's runtime metadata (users: sid, email)."""
    _, users, graded_as = export
    for name, people in users.items():
        assert otter_door.student_of({"users": people}) == graded_as[name]
        assert otter_door.student_of({"users": list(reversed(people))}) == graded_as[name]
    assert otter_door.student_of({}) == "anonymous"


@pytest.fixture(scope="module")
def autograder_zip(course, assignment, tmp_path_factory):
    dest = tmp_path_factory.mktemp("otter-identity") / "autograder.zip"
    return otter_door.build_zip(assignment.id, dest, assignment=assignment,
                                release_dir=course / "release" / assignment.id, declaration=DECLARATION)


def test_grade_batch_of_the_export_reproduces_the_scores_gradescope_gave(export, autograder_zip, tmp_path):
    """Each submission through the otter zip as Gradescope runs it (its metadata, its submitters),
    then the export through grade-batch: the same total for every student."""
    root, users, _ = export
    runs = {}
    for name in ("submission_11", "submission_12"):
        archive = shutil.make_archive(str(tmp_path / name), "zip", root / name)
        out = tmp_path / f"{name}-out"
        out.mkdir()
        runs[name] = (out, subprocess.Popen(
            [sys.executable, "-c", OTTER_WITH_METADATA, json.dumps({"users": users[name]}), str(autograder_zip),
             archive, str(out)], cwd=tmp_path, env=env(without_rfc3987=True), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True))
    gradescope = {}
    for name, (out, process) in runs.items():
        log, _ = process.communicate(timeout=600)
        assert process.returncode == 0, log[-3000:]
        # Gradescope's total: the sum of the tests' scores (results.json gives no top-level score)
        gradescope[name] = sum(t["score"] for t in json.loads((out / "results.json").read_text())["tests"]
                               if "score" in t)
    grades = tmp_path / "grades"
    grade_batch(DECLARATION, root, grades, jobs=1)
    for name, score in gradescope.items():
        for p in users[name]:
            assert json.loads((grades / "results" / f"{p['sid']}.json").read_text())["score"] == pytest.approx(score), name


def test_scalelabs_grade_reads_the_id_from_the_export_and_refuses_another(export, assignment, tmp_path):
    root, users, graded_as = export
    scalelabs = [str(BIN / "scalelabs")]
    done = subprocess.run([*scalelabs, "grade", DECLARATION, str(root / "submission_12"), "--json"], cwd=tmp_path,
                          env=env(without_rfc3987=True), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    expected = grade_submission(assignment, root / "submission_12", graded_as["submission_12"],
                                secret=load_secret()).score   # the course's (conftest), as `scalelabs grade` loads it
    assert json.loads(done.stdout)["score"] == expected
    other = subprocess.run([*scalelabs, "grade", DECLARATION, str(root / "submission_12"), "--student", "someone"],
                           cwd=tmp_path, env=env(without_rfc3987=True), capture_output=True, text=True)
    assert other.returncode == 2
    assert f"is {graded_as['submission_12']}'s submission by its layout" in " ".join(other.stderr.split())


# --- an export graded student by student (issue 37): ids no file can be named by, uploads of every shape ---

MARY = {"name": "Mary", "sid": None, "email": "mary.o'brien@uni.example"}    # no sid: her email, apostrophe and all
ODD_EXPORT = {   # folder -> (its submitter, where the upload holds the lab: "" its top, a folder, or a zip of it)
    "submission_31": ({"name": "Ada", "sid": "3101", "email": "ada@uni.example"}, ""),
    "submission_32": (MARY, "Downloads/{lab}"),                                   # zipped from Downloads/
    "submission_33": ({"name": "Zed", "sid": '=HYPERLINK("http://x")', "email": "zed@uni.example"}, "my lab (1)"),
    "submission_34": ({"name": "Lu", "sid": "12 34/5", "email": "lu@uni.example"}, "lab06.zip"),   # a zip inside
    "submission_35": ({"name": "Ola", "sid": "3501", "email": "ola@uni.example"}, ""),   # her own provided modules
}
OWN_PROVIDED = "submission_35"    # her module beside her own _domain.py (broken) and no constants.py
OWN_DOMAIN = "raise ImportError('my own _domain.py, not the one released')\n"


@pytest.fixture(scope="module")
def odd_export(course, assignment, tmp_path_factory):
    """A Gradescope export (Downloads/ zipped, a folder renamed, a zip inside an upload) of students with
    odd ids beside Ada, an honest classmate; then `scalelabs grade-batch` of it, as a TA runs it."""
    import zipfile

    import yaml

    work = tmp_path_factory.mktemp("odd-export")
    root = work / "export"
    module = _reference_module().replace(DEPTH, BAND)      # seed-sensitive: the id it is graded under shows
    metadata = {}
    for name, (user, where) in ODD_EXPORT.items():
        lab = work / "made" / name
        shutil.copytree(course / "release" / assignment.id, lab)
        (lab / "collectives.py").write_text(module)
        if name == OWN_PROVIDED:
            (lab / "_domain.py").write_text(OWN_DOMAIN)
            (lab / "constants.py").unlink()
        if where.endswith(".zip"):
            (root / name).mkdir(parents=True)
            with zipfile.ZipFile(root / name / where, "w") as zf:
                for f in sorted(lab.iterdir()):
                    zf.write(f, f"{assignment.id}/{f.name}")
        else:
            shutil.copytree(lab, root / name / where.format(lab=assignment.id))
        metadata[name] = {":submitters": [{f":{k}": v for k, v in user.items()}],
                          ":created_at": "2026-11-20 10:00:00.000000000 -08:00"}
    (root / "submission_metadata.yml").write_text(yaml.safe_dump(metadata))
    out = work / "grades"
    done = subprocess.run([str(BIN / "scalelabs"), "grade-batch", DECLARATION, str(root), "--jobs", "1", "--out", str(out),
                           "--no-course"],
                          cwd=work, env=env(without_rfc3987=True), capture_output=True, text=True, timeout=1200)
    return root, out, done


def _odd_ids() -> dict[str, str]:
    from autograder.classroom.identity import safe_id
    return {name: safe_id(user["sid"] or user["email"]) for name, (user, _) in ODD_EXPORT.items()}


def test_an_export_with_odd_ids_and_misshaped_uploads_is_graded_student_by_student(odd_export, assignment):
    """Mary (no sid, `mary.o'brien@...`) and a `=HYPERLINK(...)` sid made grade-batch refuse the whole export
    (exit 2, "rename the folder"), and so did Downloads/ zipped. Each is graded under its safe id, named in
    the summary; Lu's zip inside the upload is one line for a person; Ada is graded as she would be alone."""
    root, out, done = odd_export
    said = " ".join(done.stdout.split())
    assert done.returncode == 1, (done.returncode, done.stdout[-3000:], done.stderr[-3000:])   # Lu needs a person
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "rename the folder" not in done.stderr + done.stdout
    ids = _odd_ids()
    assert f"\"mary.o'brien@uni.example\" is graded as {ids['submission_32']}" in said, said
    assert f"is graded as {ids['submission_33']}: Gradescope's id cannot be a file name or a safe CSV cell" in said
    assert f"{ids['submission_34']}: the upload holds neither collectives.py nor" in said
    assert "it holds lab06.zip: a zip inside the upload is not opened" in said
    assert "needs attention: 1" in said
    folders = {"submission_31": root / "submission_31", "submission_32": root / "submission_32" / "Downloads" / assignment.id,
               "submission_33": root / "submission_33" / "my lab (1)"}
    for name, folder in folders.items():
        expected = grade_submission(assignment, folder, ids[name], secret=load_secret())
        data = json.loads((out / "results" / f"{ids[name]}.json").read_text())
        assert data["score"] == expected.score > 0, name
    lu = json.loads((out / "results" / f"{ids['submission_34']}.json").read_text())
    assert lu["score"] == 0
    rows = list(csv.reader((out / "grades.csv").read_text().splitlines()))
    assert sorted(r[0] for r in rows[1:]) == sorted(ids.values())
    assert not [c for r in rows for c in r if c[:1] in ("=", "+", "@")], rows


def test_an_uploads_own_provided_modules_grade_as_the_released_ones_as_on_gradescope(odd_export, course, assignment,
                                                                                    tmp_path):
    """Ola uploaded her module beside her own (broken) _domain.py and no constants.py. The otter door grades
    her upload with the zip's provided modules put over hers (upload.put_provided), and so does the
    PrairieLearn door; grade-batch of the export graded her own copies (0: her module could not import).
    Now it scores her as Gradescope did, and her upload in the export is left as it was."""
    from autograder.classroom.upload import put_provided

    root, out, _ = odd_export
    student = _odd_ids()[OWN_PROVIDED]
    as_on_gradescope = tmp_path / "upload"
    shutil.copytree(root / OWN_PROVIDED, as_on_gradescope)
    put_provided(as_on_gradescope, course / "release" / assignment.id, assignment.provided)   # the zip's, as released
    expected = grade_submission(assignment, as_on_gradescope, student, secret=load_secret())
    data = json.loads((out / "results" / f"{student}.json").read_text())
    assert data["score"] == expected.score > 0
    assert (root / OWN_PROVIDED / "_domain.py").read_text() == OWN_DOMAIN
    assert not (root / OWN_PROVIDED / "constants.py").exists()


def test_otter_grades_an_odd_id_and_a_misshaped_upload_as_grade_batch_does(odd_export, autograder_zip, tmp_path):
    """Mary's upload, zipped from Downloads/, through the otter zip as Gradescope runs it: graded under
    the same safe id (her hidden inputs agree) from the same folder, so with the same score."""
    root, out, _ = odd_export
    ids = _odd_ids()
    archive = shutil.make_archive(str(tmp_path / "mary"), "zip", root / "submission_32")
    ran = tmp_path / "ran"
    ran.mkdir()
    done = subprocess.run([sys.executable, "-c", OTTER_WITH_METADATA, json.dumps({"users": [MARY]}), str(autograder_zip),
                           archive, str(ran)], cwd=tmp_path, env=env(without_rfc3987=True), capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    gradescope = json.loads((ran / "results.json").read_text())
    assert gradescope["extra_data"]["scalelabs"]["student"] == ids["submission_32"] == otter_door.student_of({"users": [MARY]})
    batch = json.loads((out / "results" / f"{ids['submission_32']}.json").read_text())
    assert sum(t["score"] for t in gradescope["tests"] if "score" in t) == pytest.approx(batch["score"])
