"""Every declared lab, one suite: the lab's own rules (`scalelabs lint`: the contract, items, sampler,
keys, properties, notebook, misconceptions, give-aways, leaks, sample modules), the notebook executed as a
student's kernel would, grading power through the engine, and the sample class graded.

Per-lab data: the implementations in tests/labs/<lab>/impls/ (wrong_a, wrong_b: every function
wrong; alt_correct: correct in other algebra), the sample class in labs/<lab>/samples.toml (with each
student's challenge shares), and tests/labs/<lab>/expected.toml. Nothing here names a lab.
"""
from __future__ import annotations

import json
import re
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from autograder.author import guard, lint
from autograder.author.kernel import run_notebook
from autograder.build.leakscan import declaration_lines, declaration_paths, scan_text, secrets_for
from autograder.build.notebook import build_notebook
from autograder.build.release import build_source
from autograder.classroom import samples
from autograder.engine.grade import grade_submission
from autograder.engine.spec import Code
from labs import all_assignments, load

HERE = Path(__file__).parent


def declared_labs() -> list[str]:
    """Every lab under labs/ (an import error in a declaration fails collection, never hides a lab)."""
    return sorted(all_assignments())


LABS = declared_labs()
FOLDER_LABS = [lab for lab in LABS if samples.sample_class(lab) is not None]


def expected(lab: str) -> dict:
    """What this suite expects of one lab beyond the rest: tests/labs/<lab>/expected.toml (optional;
    Lab 06's explains its keys). A sample student's challenge shares and collateral losses are in the
    lab's own samples.toml."""
    import tomllib

    path = HERE / lab / "expected.toml"
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _assignment(lab: str):
    return all_assignments()[lab]


# --- the lab's own rules: scalelabs lint (autograder/author/lint.py; tests/author/test_lint.py breaks each) ----
# import-time is a speed budget: bench/bench_lint.py measures it, and test_lint.py breaks it on purpose.

@pytest.mark.parametrize("rule", [rule for rule in lint.RULES if rule != "import-time"])
@pytest.mark.parametrize("lab", LABS)
def test_the_lab_keeps_its_rules(lab, rule):
    problems = lint.run_rule(lint.Lab(lab, _assignment(lab)), rule)
    assert problems == [], "\n".join(map(str, problems))


# --- declaration invariants --------------------------------------------------------------------------

@pytest.mark.parametrize("lab", LABS)
def test_load_names_the_declared_assignment(lab):
    a = _assignment(lab)
    assert load(lab) is a and a.id == lab
    assert a.reference.__name__ == f"reference.{a.module}"


@pytest.mark.parametrize("lab", LABS)
def test_shipped_public_properties_import_alone_and_declare_what_the_lab_grades(lab, tmp_path):
    """Student side: the shipped `_properties.py` + `_property_kit.py` import in a fresh interpreter where
    labs, autograder and reference cannot be imported, and declare the very (item, name, meaning) rows the
    lab grades as public properties, in order; each row's item is a graded function."""
    import json
    import subprocess

    from autograder.build.publictests import PROPERTIES_FILE, write_public_tests

    a = _assignment(lab)
    write_public_tests(a, tmp_path)
    code = ("import json, sys\n"
            "sys.modules.update(labs=None, autograder=None, reference=None)\n"
            f"sys.path.insert(0, {str(tmp_path)!r})\n"
            f"from {Path(PROPERTIES_FILE).stem} import PROPERTIES\n"
            "print(json.dumps([[p['item'], p['name'], p['meaning']] for p in PROPERTIES]))\n")
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shipped = json.loads(done.stdout)
    graded = [[item.name, p.name, p.meaning] for item in a.functions for p in item.properties if p.public]
    assert {row[0] for row in shipped} <= {item.name for item in a.functions}, shipped
    assert sorted(shipped) == sorted(graded)
    order = {name: i for i, name in enumerate(item.name for item in a.functions)}
    assert sorted(shipped, key=lambda row: order[row[0]]) == graded


@pytest.mark.parametrize("lab", LABS)
def test_every_staff_only_file_is_scanned_for(lab):
    """A code line copied out of any staff-only file of the lab (items.py, scenario.py too) is a leak."""
    from autograder.build.publictests import properties_path

    a = _assignment(lab)
    secrets = secrets_for([a])
    public = properties_path(a).read_text(encoding="utf-8")
    paths = declaration_paths(a)
    if lab in FOLDER_LABS:
        assert {p.name for p in paths} >= {"__init__.py", "scenario.py", "questions.py", "items.py"}
    for path in paths:
        lines = declaration_lines(path.read_text(encoding="utf-8"), public)
        assert lines and lines <= secrets.declaration_lines, path
        assert scan_text("leak.py", f"x = 1\n    {sorted(lines)[0]}\n", secrets), path


# --- the notebook ------------------------------------------------------------------------------------

@pytest.mark.parametrize("lab", LABS)
def test_notebook_locks_its_reveals_until_answered(lab, tmp_path):
    a = _assignment(lab)
    printed = run_notebook(a, tmp_path, {q.id: None for q in a.questions})
    for qid in {qid for cell in a.notebook if isinstance(cell, Code) for qid in cell.requires}:
        assert f"Answer {qid} above first" in printed


@pytest.mark.parametrize("lab", LABS)
def test_notebook_runs_and_echoes_the_students_choice_not_the_key(lab, tmp_path):
    a = _assignment(lab)
    wrong = {q.id: samples.wrong_letter(q.options, q.key) for q in a.questions}
    printed = run_notebook(a, tmp_path, wrong)
    for q in a.questions:
        assert not re.search(rf"{q.id}\s*=\s*['\"]{q.key}['\"]", printed)
    for text in expected(lab).get("printed", ()):
        assert text in printed


@pytest.mark.parametrize("lab", FOLDER_LABS)
def test_the_notebook_opens_on_the_lab_and_hides_its_machinery(lab):
    """The title first, the setup right after the story (collapsed), reveals and instruments
    collapsed, every grade cell under the collapsed Grades heading (none between the questions), and
    nothing telling the student that running a cell does nothing."""
    a = _assignment(lab)
    cells = build_notebook(a).cells
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith("# ") and cells[1].id == "setup"
    hidden = {c.id for c in cells if c.metadata.get("jupyter", {}).get("source_hidden")}
    reveals = {f"code-{i:03d}" for i, c in enumerate(a.notebook) if isinstance(c, Code) and c.requires}
    instruments = {f"code-{i:03d}" for i, c in enumerate(a.notebook) if isinstance(c, Code) and c.hidden}
    element = {"measurements-compare"}           # the model-vs-measurement cell (generated code, its output shown)
    assert reveals and hidden == reveals | instruments | set(a.item_ids) | {"setup"} | element
    ids = [c.id for c in cells]
    heading = ids.index("grades-heading")
    assert cells[heading].metadata["jp-MarkdownHeadingCollapsed"] is True
    assert ids[heading + 1:heading + 1 + len(a.item_ids)] == \
        [i for i in ids if i.endswith("-answer") for i in [i.removesuffix("-answer")]] + [f.name for f in a.functions]
    assert ids[-1] == "before-you-submit"
    assert not any("running it here does nothing" in c.source or "Grade cell" in c.source for c in cells)
    # one cell of imports and the scenario's numbers (one line each; 16 to 31 lines across the labs), no
    # machinery: what the reveals need is one import of the shipped _reveal.py (it was 60 lines of a def)
    setup = cells[1].source
    assert len(setup.splitlines()) <= 32 and "def " not in setup and setup.count("from _reveal import") == 1


# --- grading power -----------------------------------------------------------------------------------

def _grade(lab: str, folder: Path, name: str) -> dict:
    return grade_submission(load(lab), folder, student_id=f"power-{name}").item_scores()


@pytest.fixture(scope="module", params=LABS)
def lab(request):
    return request.param


@pytest.fixture(scope="module")
def power(lab, tmp_path_factory):
    """Scores of the reference (answered with the keys) and of impls/ (unanswered), graded in
    folders shaped like release/<lab>/, one process each."""
    a = _assignment(lab)
    root = tmp_path_factory.mktemp(f"power-{lab}")
    source = build_source(a, root / "course")
    modules = {name: (HERE / lab / "impls" / f"{name}.py").read_text(encoding="utf-8")
               for name in ("alt_correct", "wrong_a", "wrong_b")}
    folders = {"stub": shutil.copytree(source, root / "stub")}
    for name in ("reference", *modules):
        folder = shutil.copytree(source, root / name)
        samples.flat_reference_modules(folder)    # the reference's own imports (Lab 01 uses Lab 06's)
        if name in modules:
            (folder / f"{a.module}.py").write_text(modules[name], encoding="utf-8")
        else:
            mine = samples.version(a, "power-reference")   # the version it is graded in (_grade's id)
            samples.write_answers(mine, folder / f"{lab}.ipynb", samples.reference_answers(mine),   # keys, valid designs,
                                  record=True, student="power-reference")                      # the reveals run
        folders[name] = folder
    with ProcessPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(_grade, lab, folder, name) for name, folder in folders.items()}
        return {name: future.result() for name, future in futures.items()}


def test_reference_gets_full_marks_on_every_item(lab, power):
    a = _assignment(lab)
    assert set(power["reference"]) == set(a.item_ids)
    lost = {item: s for item, s in power["reference"].items() if s[0] != s[1]}
    assert not lost, lost


def test_alt_correct_gets_full_marks_on_every_function(lab, power):
    lost = {f.name: power["alt_correct"][f.name] for f in _assignment(lab).functions
            if power["alt_correct"][f.name][0] != power["alt_correct"][f.name][1]}
    assert not lost, lost


@pytest.mark.parametrize("impl", ["wrong_a", "wrong_b"])
def test_every_wrong_function_loses_points(lab, power, impl):
    kept = {f.name: power[impl][f.name] for f in _assignment(lab).functions
            if power[impl][f.name][0] >= power[impl][f.name][1]}
    assert not kept, f"{impl} kept full marks on {kept}"


def test_unanswered_questions_score_zero_at_their_points(lab, power):
    for q in _assignment(lab).questions:
        assert power["alt_correct"][q.id] == (0.0, q.points)


def test_every_grading_covers_every_item_at_its_points(lab, power):
    a = _assignment(lab)
    points = ({f.name: f.points for f in a.functions} | {q.id: q.points for q in a.questions}
              | {c.id: c.points for c in a.challenges})
    assert points == pytest.approx(a.item_points)
    for who, per_item in power.items():
        assert {item: top for item, (_, top) in per_item.items()} == pytest.approx(points), who


def test_untouched_stub_scores_zero(lab, power):
    assert all(score == 0 for score, _ in power["stub"].values()), power["stub"]


@pytest.mark.parametrize("impl", ["wrong_a", "wrong_b"])
def test_wrong_functions_keep_at_most_half_where_expected(lab, power, impl):
    if not expected(lab).get("at_most_half"):
        pytest.skip(f"{lab}: no at_most_half expectation")
    generous = {f.name: power[impl][f.name] for f in _assignment(lab).functions
                if power[impl][f.name][0] > 0.5 * power[impl][f.name][1]}
    assert not generous, f"{impl} keeps more than half of {generous}"


# --- the sample class of a lab folder ----------------------------------------------------------------


@pytest.fixture(scope="module", params=FOLDER_LABS)
def folder_lab(request):
    return request.param


@pytest.fixture(scope="module")
def sample_class(folder_lab, tmp_path_factory):
    a = _assignment(folder_lab)
    return a, samples.sample_class(folder_lab), samples.grade_class(a, tmp_path_factory.mktemp(folder_lab))


def test_each_sample_scores_as_declared(sample_class):
    """Functions: full marks unless declared wrong; none for a broken or untouched module.
    Predictions (commitment, the default): the points exactly where an option was recorded at the
    reveal (the answer cell's value, key or wrong, unless the student is declared `recorded = false`);
    reflections: the points exactly where the declared answer is the key."""
    a, declared, graded = sample_class
    assert sorted(graded) == sorted(declared)
    for student, entry in declared.items():
        no_module = entry.get("module") == "stub" or not entry.get("compiles", True)
        for f in a.functions:
            score, top = graded[student][f.name]
            if no_module:
                assert score == 0, (student, f.name)
            else:
                kept = entry.get("collateral", {}).get(f.name)   # the least share it keeps
                assert (score < top) == (f.name in entry.get("wrong", ()) or kept is not None), (student, f.name, score)
                assert kept is None or score >= kept * top, (student, f.name, score)
        for q in a.questions:
            score, top = graded[student][q.id]
            answer = entry.get("answers", {}).get(q.id)
            if q.kind == "prediction":
                word = samples._ANSWER_WORDS.get(answer, answer) if isinstance(answer, str) else answer
                value = samples.kernel_value(samples.answer_source(a, q.id, word), q.id) if answer else None
                committed = entry.get("recorded", True) and isinstance(value, str) and value.strip().upper() in q.options
                assert score == (top if committed else 0), (student, q.id)
            else:
                assert score == (top if answer == "key" else 0), (student, q.id)
        for c in a.challenges:
            share = samples.expected_challenge_share(entry, c)
            assert graded[student][c.id] == pytest.approx((share * c.points, c.points)), (student, c.id)


# --- the released notebooks, as a student scrolls them (issue 29) -------------------------------------

REPO = HERE.parents[1]


@pytest.mark.parametrize("lab", FOLDER_LABS)
def test_no_released_notebook_states_a_key_around_its_question(lab):
    """Every released notebook's text a student can read before answering a question (every markdown
    cell and code cell's comments and strings, above and below it, and what an earlier prediction's
    reveal shows) holds no sentence that states the question's key in its own words
    (autograder/author/guard.py); the lab's story words (`questions.STORY_WORDS`) excepted. Lint's
    giveaways rule reads the built notebook the same way."""
    assert guard.stated_in_notebook(_assignment(lab), REPO / "release" / lab / f"{lab}.ipynb") == []


def test_the_giveaway_reader_sees_a_takeaway_that_states_the_key(tmp_path):
    """The check itself: issue 29's two takeaways (Lab 06's, below its reflections) state their keys;
    a planted one is found, with the sentence."""
    a = _assignment("lab06_collectives")
    q = a.question("act1_reflection")
    released = REPO / "release" / a.id / f"{a.id}.ipynb"
    notebook = json.loads(released.read_text(encoding="utf-8"))
    notebook["cells"].append({"cell_type": "markdown", "id": "planted", "metadata": {}, "source":
                              "**Takeaway (Act I).** Naive AllReduce funnels every byte through one link; ring keeps "
                              "every link busy and sends the least any AllReduce can, about 2M per rank."})
    found = guard.stated_in_notebook(a, notebook)   # read by the student of each version the notebook carries
    assert len(found) == guard.released_versions(notebook) and "ring keeps" in found[0]
    assert all(f.removeprefix(f"version {i}: ").startswith("act1_reflection: planted states its key")
               for i, f in enumerate(found, 1))
    assert not guard.stated(q, guard.readable_released(released, q.id))
    q2 = a.question("act2_reflection")
    said = "No AllReduce is always fastest: ring for messages above the ring–tree crossover, a tree below it, " \
           "and the crossover is a property of α, B and n together."
    assert guard.stated(q2, [("takeaway", said)])
