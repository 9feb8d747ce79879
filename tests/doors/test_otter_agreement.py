"""otter door: `otter run` (no Docker) of the built zip on the sample class gives the engine's
per-item scores; a recorded wrong prediction earns its commitment points; a failed property shows its
counterexample."""
from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import zipfile

import pytest

from autograder.doors import otter as otter_door
from autograder.engine.grade import grade_submission

from autograder.engine.secret import load_secret
from door_helpers import BIN, env, sample_class


@pytest.fixture(scope="module")
def autograder_zip(course, assignment, tmp_path_factory):
    dest = tmp_path_factory.mktemp("otter") / "autograder.zip"
    return otter_door.build_zip(assignment.id, dest, assignment=assignment,
                                release_dir=course / "release" / assignment.id, declaration="release_toy:ASSIGNMENT")


@pytest.fixture(scope="module")
def otter_results(autograder_zip, submissions, tmp_path_factory):
    """student -> results.json of `otter run`, the four runs in parallel. No kernel can start (the
    python3 kernelspec runs /bin/false): the plugin grades without one, so every run must succeed."""
    work = tmp_path_factory.mktemp("otter-runs")
    no_kernel = work / "jupyter" / "kernels" / "python3"
    no_kernel.mkdir(parents=True)
    (no_kernel / "kernel.json").write_text(json.dumps({"argv": ["/bin/false", "{connection_file}"],
                                                       "display_name": "no kernel", "language": "python"}))
    running = {}
    for student, folder in submissions.items():
        archive = shutil.make_archive(str(work / student), "zip", folder)
        out = work / f"{student}-out"
        out.mkdir()
        running[student] = (out, subprocess.Popen(
            [str(BIN / "otter"), "run", "-a", str(autograder_zip), "-o", str(out), "--no-logo", archive],
            cwd=work, env=env() | {"JUPYTER_PATH": str(work / "jupyter")}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    results = {}
    for student, (out, process) in running.items():
        log, _ = process.communicate(timeout=600)
        assert process.returncode == 0, log
        results[student] = json.loads((out / "results.json").read_text())
    return results


@pytest.fixture(scope="module")
def anonymous_engine_scores(submissions, assignment):
    """`otter run` has no submission metadata, so the plugin grades as student "anonymous"."""
    return {s: grade_submission(assignment, folder, "anonymous", secret=load_secret())
            for s, folder in submissions.items()}


def test_zip_layout(autograder_zip, assignment):
    names = zipfile.ZipFile(autograder_zip).namelist()
    assert {f"tests/{item}.py" for item in assignment.item_ids} <= set(names)
    assert "scalelabs_provided/_domain.py" in names and "scalelabs_provided/constants.py" in names
    # one support file, otter's pick where the upload is a zipped folder; the student's module is the student's
    assert [n for n in names if n.startswith("files/")] == [f"files/{otter_door.UPLOAD_ENTRY}"]
    assert "scalelabs/autograder/engine/grade.py" in names and "scalelabs/pyproject.toml" in names
    config = json.loads(zipfile.ZipFile(autograder_zip).read("otter_config.json"))
    assert config["plugins"][0][otter_door.PLUGIN]["assignment"] == assignment.id
    # the course secret (the tests' one: conftest) rides in the zip, outside the otter config
    course_secret = load_secret().key.hex()
    assert zipfile.ZipFile(autograder_zip).read("course_secret").decode().strip() == course_secret
    assert course_secret not in json.dumps(config)


def test_otter_grades_under_the_zips_course_secret(otter_results):
    for student, results in otter_results.items():
        assert "student code ran in" in results["output"] and "has no course secret" not in results["output"], student


@pytest.mark.parametrize("student", sorted(sample_class()))
def test_otter_run_item_scores_equal_engine(otter_results, anonymous_engine_scores, assignment, student):
    tests = {t["name"]: t for t in otter_results[student]["tests"] if "score" in t}
    engine = anonymous_engine_scores[student].item_scores()
    assert set(tests) == set(assignment.item_ids)
    for item, (score, max_score) in engine.items():
        assert math.isclose(tests[item]["score"], score, abs_tol=1e-4), (item, tests[item], score)
        assert math.isclose(tests[item]["max_score"], max_score, abs_tol=1e-4)


def test_a_recorded_wrong_prediction_earns_its_commitment_points_and_says_so(otter_results, assignment):
    """By default (commitment) bob's recorded wrong prediction earns its points; the output says it was
    not the best answer."""
    bob = {t["name"]: t for t in otter_results["bob"]["tests"] if "score" in t}
    assert bob["act1_prediction"]["score"] == assignment.question("act1_prediction").points
    assert "it was not the best answer" in bob["act1_prediction"]["output"]


def test_failed_property_shows_counterexample(otter_results):
    bob = {t["name"]: t for t in otter_results["bob"]["tests"]}
    output = bob["ring_allreduce_time"]["output"]
    assert "zero for a single rank" in output and "Counterexample" in output and "n=1" in output


def test_otter_output_leaks_nothing(otter_results, assignment):
    import release_toy as toy
    from pathlib import Path
    from autograder.build import leakscan
    secrets = leakscan.secrets_for([assignment], {assignment.id: Path(toy.__file__)})
    for student, results in otter_results.items():
        assert leakscan.scan_text(student, json.dumps(results, indent=1), secrets, keys=False) == []


@pytest.mark.parametrize("student", sorted(sample_class()))
def test_each_check_line_is_the_engines(otter_results, anonymous_engine_scores, student):
    """Each item's test lists every check of the item with the engine's score for it, in order, each
    check's name in bold as Gradescope renders the test's markdown."""
    from html import escape

    from markdown_it import MarkdownIt
    outputs = {t["name"]: t.get("output", "") for t in otter_results[student]["tests"] if "score" in t}
    assert outputs
    for item, output in outputs.items():
        checks = [t for t in anonymous_engine_scores[student].tests if t.item == item]
        shown = re.findall(r"<strong>(.*?)</strong>: (\S+) / (\S+)</p>", MarkdownIt("commonmark").render(output))
        named = [escape(t.check, quote=False).replace('"', "&quot;") for t in checks]   # as markdown-it escapes
        assert shown == [(name, f"{t.score:g}", f"{t.max_score:g}") for name, t in zip(named, checks)], (item, output)


@pytest.mark.parametrize("student", sorted(sample_class()))
def test_otters_own_results_fail_a_case_exactly_where_the_engine_did(anonymous_engine_scores, assignment, student):
    """otter's own GradingResults (its results.pkl and printed summary; results.json is the plugin's):
    a case is failed exactly when the engine gave that check less than full points, in the engine's order."""
    from otter.test_files import GradingResults
    result = anonymous_engine_scores[student]
    otters = object.__new__(GradingResults)          # engine_results rebuilds it in place, as in the plugin
    otter_door.engine_results(otters, assignment, result)
    assert list(otters.results) == list(assignment.item_ids)
    for test_file in otters.results.values():
        checks = [t for t in result.tests if t.item == test_file.name]
        assert [(c.test_case.name, c.passed) for c in test_file.test_case_results] == \
            [(t.name, t.score >= t.max_score) for t in checks], test_file.name
