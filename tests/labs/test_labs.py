"""Every declared lab, one suite: declaration invariants, the notebook (linted, executed as a student's
kernel would), grading power through the engine, and the sample class of a lab folder.

Per-lab data: the implementations in tests/labs/<lab>/impls/ (wrong_a, wrong_b: every function
wrong; alt_correct: correct in other algebra), the sample class in labs/<lab>/samples.toml, and the
small EXPECTED table below. Each lab's reference anchors stay in tests/labs/<lab>/.
"""
from __future__ import annotations

import ast
import contextlib
import inspect
import io
import math
import re
import shutil
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import physics_doc  # noqa: E402
from autograder.build.leakscan import declaration_lines, declaration_paths, scan_text, secrets_for  # noqa: E402
from autograder.build.notebook import build_notebook, prompt_markdown  # noqa: E402
from autograder.build.release import build_source, copy_student_files, write_stub  # noqa: E402
from autograder.classroom import samples  # noqa: E402
from autograder.engine.grade import grade_submission  # noqa: E402
from autograder.engine.spec import Code  # noqa: E402
from labs import all_assignments, lab_folder, load  # noqa: E402
from labs.authoring import names_used_before_defined  # noqa: E402

HERE = Path(__file__).parent


def declared_labs() -> list[str]:
    """Every lab under labs/ (an import error in a declaration fails collection, never hides a lab)."""
    return sorted(all_assignments())


LABS = declared_labs()
FOLDER_LABS = [lab for lab in LABS if samples.sample_class(lab) is not None]

# Lab-specific expectations as data: what the notebook prints when run on the reference with wrong
# answers (a number from the student's own functions, the failure state).
# at_most_half: a wrong function keeps at most half of its item's points.
EXPECTED = {
    # collateral: a function a sample does not redefine but that calls one it gets wrong (partly_wrong's
    # cheapest_option prices on-prem with its own wrong on_prem_cost: it loses the hidden share only);
    # challenges: the share of each design challenge's points each sample's answer earns
    "lab01_scale": {"printed": ["313x on 1,000 GPUs", "OVER BUDGET: on-demand running continuously"],
                    "collateral": {"partly_wrong": {"cheapest_option": 0.5}},
                    "challenges": {"lab01_whatif": {"correct": 1, "partly_wrong": 1 / 3, "wrong_predictions": 0,
                                                    "broken": 0, "untouched": 0}}},
    "lab02_interconnect": {"challenges": {"lab02_pipeline": {"correct": 1, "partly_wrong": 1 / 3, "wrong_predictions": 0,
                                                             "broken": 0, "untouched": 0}}},
    "lab05_parallelism": {"challenges": {"lab05_layout": {"correct": 1, "partly_wrong": 2 / 3, "wrong_predictions": 0,
                                                          "broken": 0, "untouched": 0}}},
    "lab06_collectives": {"printed": ["128.00x", "FAILURE: communication over half the step"], "at_most_half": True},
    "lab09_performance": {"printed": ["cuts the step time by 8.0%", "Your best_fix: pipeline_bubble", "(OVER BUDGET)"],
                          "challenges": {"lab09_plan": {"correct": 1, "partly_wrong": 1 / 2, "wrong_predictions": 0,
                                                        "broken": 0, "untouched": 0}}},
}


def _assignment(lab: str):
    return all_assignments()[lab]


# --- declaration invariants --------------------------------------------------------------------------

@pytest.mark.parametrize("lab", LABS)
def test_load_names_the_declared_assignment(lab):
    a = _assignment(lab)
    assert load(lab) is a and a.id == lab
    assert a.reference.__name__ == f"reference.{a.module}"


@pytest.mark.parametrize("lab", LABS)
def test_documented_functions_are_graded_in_order_with_their_signatures(lab):
    a = _assignment(lab)
    required = {f.name: list(f.params) for f in physics_doc.functions() if f.module == a.module}
    graded = [f.name for f in a.functions]
    assert required and [name for name in graded if name in required] == list(required)
    for name, params in required.items():
        assert list(inspect.signature(getattr(a.reference, name)).parameters) == params, name


@pytest.mark.parametrize("lab", LABS)
def test_items_have_points_examples_and_two_public_properties(lab):
    a = _assignment(lab)
    for item in a.functions:
        assert item.points > 0 and item.examples, item.name
        assert sum(p.public for p in item.properties) >= 2, item.name
        for example in item.examples:
            value = getattr(a.reference, item.name)(**example.kwargs)   # a valid call, a JSON scalar
            assert isinstance(value, (int, float, str, bool)), (item.name, example)


@pytest.mark.parametrize("lab", LABS)
def test_hidden_domains_are_valid_json_calls_of_the_reference(lab):
    """Every input the grader draws for a hidden check, its edges and anchors included, under several
    seeds, is drawn without error and is a JSON call the reference accepts (an input it rejected would
    be skipped, a draw that raised is a grader fault)."""
    import json

    from autograder.engine import draw

    a = _assignment(lab)
    for item in a.functions:
        for seed in range(6):
            for kwargs in draw.sample_inputs(item.domain, seed, 30, edges=True):
                json.dumps(kwargs)
                getattr(a.reference, item.name)(**kwargs)


@pytest.mark.parametrize("lab", LABS)
def test_every_input_the_grader_samples_replays_in_hypothesis_so_its_failure_shrinks(lab):
    """The grader samples inputs itself and hands a failing one to hypothesis' shrinker by its choice
    sequence: for every hidden domain and property of the lab, hypothesis replays each sampled input's
    sequence to that very input, unless the sampler marked it as one hypothesis must find again (a
    list, whose length hypothesis draws as it goes)."""
    from autograder.engine import draw

    a = _assignment(lab)
    strategies = [(item.name, "hidden", item.domain) for item in a.functions]
    strategies += [(item.name, p.name, p.strategy) for item in a.functions for p in item.properties]
    replayed = 0
    with draw.seed_only():
        for item, check, strategy in strategies:
            values, _, choices = draw._sample(strategy, 7, 10, edges=check == "hidden")
            for c, v in zip(choices, values):
                marked = any(x is draw.UNRECORDED for x in c)
                assert marked or draw._replays_to(strategy, c, v), (item, check, v)
                replayed += not marked
    assert replayed > 0


@pytest.mark.parametrize("lab", LABS)
def test_keys_are_computed_spread_and_never_named(lab):
    a = _assignment(lab)
    keys = [q.key for q in a.questions]
    assert len(set(keys)) > 1, keys
    for q in a.questions:
        assert q.key in q.options and q.hint, q.id
        for text in (q.hint, q.prompt):
            assert not re.search(rf'\b(option|answer|choice) {q.key}\b|"{q.key}"', text), (q.id, text)


def _top_level_imports(source: str) -> set[str]:
    tree = ast.parse(source)
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return imported | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                       and node.module and node.level == 0}


@pytest.mark.parametrize("lab", LABS)
def test_public_properties_module_is_standalone(lab):
    """Staff side: stdlib, hypothesis and the shared property kit only (the kit itself stdlib + hypothesis)."""
    from autograder.build.publictests import KIT, properties_path

    standalone = set(sys.stdlib_module_names) | {"hypothesis"}
    imported = _top_level_imports(properties_path(_assignment(lab)).read_text(encoding="utf-8"))
    assert {m.split(".")[0] for m in imported - {"labs.property_kit"}} <= standalone, imported
    assert {m.split(".")[0] for m in _top_level_imports(KIT.read_text(encoding="utf-8"))} <= standalone


@pytest.mark.parametrize("lab", LABS)
def test_every_check_in_the_properties_module_is_declared_or_used(lab):
    """A function of the properties module that no declaration names and nothing calls is a check whose
    @public_property was dropped: the property would vanish from grading and the public tests alike."""
    from autograder.build.publictests import properties_path

    source = properties_path(_assignment(lab)).read_text(encoding="utf-8")
    names = Counter(re.findall(r"\b\w+\b", source))
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and not node.decorator_list:
            assert names[node.name] > 1, f"{lab}: {node.name} is neither declared a property nor used"


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
def test_built_notebook_leaks_nothing(lab):
    a = _assignment(lab)
    text = "\n".join(cell.source for cell in build_notebook(a).cells)
    assert scan_text(f"{lab}.ipynb", text, secrets_for([a])) == []


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

@contextlib.contextmanager
def _student_kernel(a, tmp: Path):
    """A namespace like a student's kernel: the flat reference modules importable from `tmp` as the
    student's module next to the shipped helpers (the instrument toolkit), `tmp` the working folder
    (reveals write their record file there), plt.show closing figures."""
    tmp.mkdir(parents=True, exist_ok=True)
    samples.flat_reference_modules(tmp)
    copy_student_files(tmp)   # the instrument toolkit, as released
    names = {p.stem for p in tmp.glob("*.py")}
    saved = {n: sys.modules.pop(n) for n in list(sys.modules) if n in names}
    sys.path.insert(0, str(tmp))
    show = plt.show
    plt.show = lambda *args, **kwargs: plt.close("all")
    try:
        yield
    finally:
        plt.show = show
        sys.path.remove(str(tmp))
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)
        plt.close("all")


def run_notebook(a, tmp: Path, answers: dict) -> str:
    """Execute the built notebook's code cells in order with these answer cell values; the output."""
    out, namespace = io.StringIO(), {}
    with _student_kernel(a, tmp), contextlib.chdir(tmp), contextlib.redirect_stdout(out):
        for cell in build_notebook(a).cells:
            if cell.cell_type != "code":
                continue
            qid = cell.metadata["nbgrader"]["grade_id"].removesuffix("-answer")
            source = f"{qid} = {answers[qid]!r}" if qid in answers else cell.source
            exec(compile(source, cell.id, "exec"), namespace)
    return out.getvalue()


@pytest.mark.parametrize("lab", LABS)
def test_notebook_locks_its_reveals_until_answered(lab, tmp_path):
    a = _assignment(lab)
    printed = run_notebook(a, tmp_path, {q.id: None for q in a.questions})
    for qid in {qid for cell in a.notebook if isinstance(cell, Code) for qid in cell.requires}:
        assert f"answer {qid} above first" in printed


@pytest.mark.parametrize("lab", LABS)
def test_a_cell_reading_an_answer_is_locked_behind_it(lab):
    """A readout that echoes a prediction shows nothing until that prediction is given."""
    a = _assignment(lab)
    qids = {q.id for q in a.questions}
    for cell in a.notebook:
        if isinstance(cell, Code):
            read = {n.id for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Name)} & qids
            assert read <= set(cell.requires), (read, cell.source[:80])


@pytest.mark.parametrize("lab", LABS)
def test_notebook_runs_and_echoes_the_students_choice_not_the_key(lab, tmp_path):
    a = _assignment(lab)
    wrong = {q.id: samples.wrong_letter(q.options, q.key) for q in a.questions}
    printed = run_notebook(a, tmp_path, wrong)
    for q in a.questions:
        assert not re.search(rf"{q.id}\s*=\s*['\"]{q.key}['\"]", printed)
    for expected in EXPECTED.get(lab, {}).get("printed", ()):
        assert expected in printed


@pytest.mark.parametrize("lab", FOLDER_LABS)
def test_notebook_file_is_linted_python(lab):
    """notebook.py: every code cell compiles, every name it reads is defined by the setup, an earlier
    cell or an answer; the released setup imports no staff package."""
    path = lab_folder(lab) / "notebook.py"
    import jupytext

    for cell in jupytext.reads(path.read_text(encoding="utf-8"), fmt="py:percent").cells:
        if cell.cell_type == "code":
            compile(cell.source, str(path), "exec")
    assert names_used_before_defined(path) == []
    setup = build_notebook(_assignment(lab)).cells[0].source
    imported = {n.module or "" for n in ast.walk(ast.parse(setup)) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(ast.parse(setup)) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if m.split(".")[0] in ("labs", "reference", "autograder")}, imported


@pytest.mark.parametrize("lab", FOLDER_LABS)
def test_reveals_and_function_grade_cells_open_collapsed(lab):
    a = _assignment(lab)
    cells = build_notebook(a).cells
    hidden = {c.id for c in cells if c.metadata.get("jupyter", {}).get("source_hidden")}
    reveals = {f"code-{i:03d}" for i, c in enumerate(a.notebook) if isinstance(c, Code) and c.requires}
    functions = {f.name for f in a.functions}
    assert reveals and hidden == reveals | functions
    ids = [c.id for c in cells]
    heading = ids.index("grades-heading")
    assert set(ids[heading + 1:heading + 1 + len(functions)]) == functions


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
            samples.write_answers(a, folder / f"{lab}.ipynb", samples.reference_answers(a))   # keys, valid designs
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
    if not EXPECTED.get(lab, {}).get("at_most_half"):
        pytest.skip(f"{lab}: no at_most_half expectation")
    generous = {f.name: power[impl][f.name] for f in _assignment(lab).functions
                if power[impl][f.name][0] > 0.5 * power[impl][f.name][1]}
    assert not generous, f"{impl} keeps more than half of {generous}"


# --- the sample class of a lab folder ----------------------------------------------------------------

def _differing(a, module_text: str, tmp: Path) -> set[str]:
    """Function items whose worked examples disagree with the reference, for this module text."""
    with _student_kernel(a, tmp):
        namespace: dict = {}
        exec(compile(module_text, f"{a.module}.py", "exec"), namespace)
    out = set()
    for item in a.functions:
        for example in item.examples:
            want = getattr(a.reference, item.name)(**example.kwargs)
            got = namespace[item.name](**example.kwargs)
            if isinstance(want, str) and got != want or not isinstance(want, str) and not math.isclose(
                    got, want, rel_tol=item.rel_tol, abs_tol=item.abs_tol):
                out.add(item.name)
    return out


@pytest.mark.parametrize("lab", FOLDER_LABS)
def test_sample_modules_differ_from_the_reference_exactly_where_declared(lab, tmp_path):
    a = _assignment(lab)
    declared = samples.sample_class(lab)
    assert sorted(declared) == ["broken", "correct", "partly_wrong", "untouched", "wrong_predictions"]
    for student, entry in declared.items():
        text = samples.sample_module(a, student)
        if entry.get("module") == "stub":
            assert text is None
        elif entry.get("compiles", True):
            assert _differing(a, text, tmp_path / student) == set(entry.get("wrong", ())), student
        else:
            with pytest.raises(SyntaxError):
                compile(text, f"{student}/{a.module}.py", "exec")


@pytest.mark.parametrize("lab", FOLDER_LABS)
def test_sample_diffs_hold_only_functions_of_the_lab(lab):
    """samples/<student>.py redefines graded functions and nothing else (no copied module)."""
    names = {f.name for f in _assignment(lab).functions}
    for path in (lab_folder(lab) / "samples").glob("*.py"):
        if samples.sample_class(lab)[path.stem].get("compiles", True):
            defined = {n.name for n in ast.parse(path.read_text()).body if isinstance(n, ast.FunctionDef)}
            assert defined and defined <= names, (path, defined - names)
            # a function built on a redefined one may be wrong without being redefined (Lab 05's
            # peak memory inherits the wrong model states); the test above pins `wrong` exactly
            assert defined <= set(samples.sample_class(lab)[path.stem].get("wrong", ())), path


@pytest.fixture(scope="module", params=FOLDER_LABS)
def folder_lab(request):
    return request.param


@pytest.fixture(scope="module")
def sample_class(folder_lab, tmp_path_factory):
    a = _assignment(folder_lab)
    return a, samples.sample_class(folder_lab), samples.grade_class(a, tmp_path_factory.mktemp(folder_lab))


def test_each_sample_scores_as_declared(sample_class):
    """Functions: full marks unless declared wrong; none for a broken or untouched module.
    Questions: the points exactly where the declared answer is the key."""
    a, declared, graded = sample_class
    assert sorted(graded) == sorted(declared)
    collateral = EXPECTED.get(a.id, {}).get("collateral", {})
    for student, entry in declared.items():
        no_module = entry.get("module") == "stub" or not entry.get("compiles", True)
        for f in a.functions:
            score, top = graded[student][f.name]
            if no_module:
                assert score == 0, (student, f.name)
            else:
                kept = collateral.get(student, {}).get(f.name)   # the least share it keeps
                assert (score < top) == (f.name in entry.get("wrong", ()) or kept is not None), (student, f.name, score)
                assert kept is None or score >= kept * top, (student, f.name, score)
        for q in a.questions:
            score, top = graded[student][q.id]
            assert score == (top if entry.get("answers", {}).get(q.id) == "key" else 0), (student, q.id)
        for c in a.challenges:
            share = EXPECTED.get(a.id, {}).get("challenges", {}).get(c.id, {}).get(student, 0)
            assert graded[student][c.id] == pytest.approx((share * c.points, c.points)), (student, c.id)


# --- the give-away guard (issue 14: honest predictions) -----------------------------------------------
# Every lab with a notebook.py. A question must not be answerable by reading: no text a student can read
# before it (the stub, markdown above it, every other question's prompt and options, code, and what
# earlier cells print once answered) states its keyed figure (the lab's questions.KEYED_FIGURES) or its keyed option's
# own words; its own prompt neither. Its options are of comparable
# length (the key is not the conspicuously careful one) and each says why it is right or wrong.

NOTEBOOK_LABS = [lab for lab in LABS if (lab_folder(lab) / "notebook.py").exists()]
LONGEST_OVER_SHORTEST = 1.6    # option lengths of one question
CLOSE = 1.25                   # below this ratio the key may be the longest option
RUN_WORDS = 6                  # a run of this many words of the key's own text, quoted, gives it away


def _normal(text: str) -> str:
    return " ".join(text.lower().replace("×", "x").replace("−", "-").replace("–", "-").split())


def _own_runs(q) -> set[str]:
    """Runs of RUN_WORDS words of the keyed option that no other option of the question shares."""
    def runs(text):
        words = re.findall(r"[\w.·/()-]+", _normal(text))
        return {" ".join(words[i:i + RUN_WORDS]) for i in range(len(words) - RUN_WORDS + 1)}
    others = set().union(*(runs(t) for letter, t in q.options.items() if letter != q.key))
    return runs(q.options[q.key]) - others


def readable_before(a, tmp: Path) -> dict[str, list[tuple[str, str]]]:
    """question id -> (cell id, text) a student can read before answering it: the built notebook's
    cells above its prompt (markdown, code, and the output of code run with every earlier question
    answered with its key), its own prompt without the options, every other question's prompt and
    options (they are in the notebook from the start, a reflection's below its prediction too) and
    the stub's docstrings."""
    import builtins

    texts, before, namespace = [], {}, {}
    with _student_kernel(a, tmp), contextlib.chdir(tmp):
        for cell in build_notebook(a).cells:
            grade_id = cell.metadata["nbgrader"]["grade_id"]
            qid = grade_id.removesuffix("-prompt")
            if qid != grade_id and qid in {q.id for q in a.questions}:
                before[qid] = texts + [(grade_id, a.question(qid).prompt)]
            if cell.cell_type == "markdown":
                texts.append((grade_id, cell.source))
                continue
            answered = grade_id.removesuffix("-answer")
            source = (f"{answered} = {a.question(answered).key!r}"
                      if answered != grade_id and answered in {q.id for q in a.questions} else cell.source)
            out = io.StringIO()
            with contextlib.redirect_stdout(out), mock_display(builtins):
                exec(compile(source, grade_id, "exec"), namespace)
            texts.append((grade_id, cell.source + "\n" + out.getvalue()))
    # every prompt stands in the notebook from the start: a later one is read while answering this one;
    # the stub's docstrings are read while implementing, before any question
    stub = write_stub(a, tmp / "stub")
    always = [(f"{stub.name} (the stub)", stub.read_text(encoding="utf-8"))]
    return {qid: always + readable + [(f"{q.id}-prompt", prompt_markdown(q)) for q in a.questions if q.id != qid]
            for qid, readable in before.items()}


@contextlib.contextmanager
def mock_display(builtins):
    """IPython's display outside a kernel prints whole mime bundles (PNG bytes); print only text/plain."""
    import IPython.display

    real = IPython.display.display

    def display(*objs, raw=False, **kwargs):
        for obj in objs:
            print(obj.get("text/plain", "") if raw and isinstance(obj, dict) else obj)
    IPython.display.display = display
    try:
        yield
    finally:
        IPython.display.display = real


def giveaways(a, before: dict) -> list[str]:
    """Every place a question's keyed figure or keyed option is readable before it is asked."""
    import importlib

    figures = getattr(importlib.import_module(f"labs.{a.id}.questions"), "KEYED_FIGURES", {})
    found = []
    for q in a.questions:
        tells = [(f"keyed figure {f!r}", _normal(f)) for f in figures.get(q.id, ())]
        tells += [(f"the keyed option's words {run!r}", run) for run in sorted(_own_runs(q))]
        for cell_id, text in before[q.id]:
            readable = _normal(re.sub(r"[*`_]", "", text))
            options = [_normal(option) for option in q.options.values()]
            if all(option in readable for option in options):   # all of them side by side (an echo) tell nothing
                for option in options:
                    readable = readable.replace(option, " ")
            for what, tell in tells:
                if re.search(rf"(?<![\w.]){re.escape(tell)}(?![\w])", readable):
                    found.append(f"{q.id}: {what} is readable before the question, in {cell_id}")
    return found


def option_problems(q) -> list[str]:
    """Options of comparable length, the key not the long one, every option explained."""
    problems = []
    lengths = {letter: len(text) for letter, text in q.options.items()}
    spread = max(lengths.values()) / min(lengths.values())
    if spread > LONGEST_OVER_SHORTEST:
        problems.append(f"{q.id}: its longest option is {spread:.2f}x its shortest ({lengths}); keep it "
                        f"under {LONGEST_OVER_SHORTEST}x")
    longest = max(lengths.values())
    if lengths[q.key] == longest and sum(v == longest for v in lengths.values()) == 1 and spread > CLOSE:
        problems.append(f"{q.id}: the key is the longest option by far ({lengths}); a student can guess it")
    missing = [letter for letter in q.options if not str(q.why.get(letter, "")).strip()]
    if missing:
        problems.append(f"{q.id}: no explanation (why) for option(s) {missing}; build the options with "
                        "spec.Option(text, why)")
    return problems


@pytest.mark.parametrize("lab", NOTEBOOK_LABS)
def test_no_text_before_a_question_gives_its_key_away(lab, tmp_path):
    a = _assignment(lab)
    before = readable_before(a, tmp_path)
    assert set(before) == {q.id for q in a.questions}
    assert giveaways(a, before) == []


@pytest.mark.parametrize("lab", NOTEBOOK_LABS)
def test_options_are_comparable_and_each_is_explained(lab):
    problems = [p for q in _assignment(lab).questions for p in option_problems(q)]
    assert problems == []
