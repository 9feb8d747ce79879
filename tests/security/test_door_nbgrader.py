"""nbgrader door under attack (issue 12): one class, autograded once, holds two honest classmates
(ada correct, bob buggy), cheaters whose untouched stub's notebook carries one added cell, and
saboteurs. Every student's gradebook scores must equal the engine's scores of the files they
submitted, graded before `nbgrader autograde` ran; no submitted file and no course file may change.
"""
from __future__ import annotations

import math
import os
import shutil
import subprocess

import pytest
from nbgrader.api import Gradebook

import door_attacks as attacks
from attack import children_cpu_s
from door_attacks import BIN

from autograder.engine.grade import grade_submission

CHEATERS = {
    "copy_ref": attacks.COPY_REFERENCE,            # (a)
    "keys": attacks.WRITE_KEYS,                    # (b)
    "aaa_classmates": attacks.OVERWRITE_CLASSMATES,  # (e) sorted first: graded before its victims
}
SABOTEURS = {
    "sab_loop": attacks.INFINITE_LOOP,
    "sab_kill": attacks.KILL_KERNEL,
    "sab_exit": attacks.EXIT_KERNEL,
    "sab_outside": attacks.WRITE_OUTSIDE,
}
# (g) no cell: nbgrader metadata (door_attacks.FOREIGN_METADATA) in a correct submission's notebook,
# sorted first: graded before everyone
METADATA = {"aab_versions": "versions", "aac_malformed": "malformed", "aad_copied": "copied"}
# (i) the released cells' nbgrader flags edited (door_attacks.FLIPPED_FLAGS) in a correct submission
FLIPPED = {"aae_grade_false": "grade_false", "aaf_solution_true": "solution_true", "aag_task_true": "task_true",
           "aah_locked_flipped": "locked_flipped", "aai_unknown_grade_id": "unknown_grade_id",
           "aaj_type_changed": "type_changed", "aak_grade_cells_gone": "grade_cells_gone"}
# (j) no cell of code: what costs nbgrader's passes most in a correct submission's notebook
# (door_attacks.costly_notebook): a 19 MB markdown cell, 1,500 code cells of 10,000 characters
COSTLY = {"costly_markdown": "markdown", "costly_code": "code"}
HONEST = ("ada", "bob")
SPY_ON_MARKUP = """
from autograder.doors import nbgrader as _door
_markup = _door.InertMarkup.preprocess_cell
def _seen(self, cell, resources, index, _markup=_markup):
    if cell.cell_type in ("markdown", "raw"):
        with open({log!r}, "a") as log:
            log.write(str(len(cell.source)) + chr(10))
    return _markup(self, cell, resources, index)
_door.InertMarkup.preprocess_cell = _seen
"""
# no cell: the untouched stub beside a `collectives/` package holding the reference, which Python
# would import in its place (the door grades the stub, and says what it ignored)
SHADOW = "shadow_pkg"


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """The class submitted, its pristine engine scores and file digests, then one
    `nbgrader autograde` of the whole class (timed)."""
    root = tmp_path_factory.mktemp("nbgrader-attacks")
    assignment, folders = attacks.make_course(
        root, {**CHEATERS, **SABOTEURS, **dict.fromkeys([*METADATA, *FLIPPED, *COSTLY], ""), SHADOW: ""},
        {SHADOW: {"collectives/__init__.py": attacks.reference_module()}})
    for student, kind in METADATA.items():
        attacks.foreign_metadata(folders[student], kind)
    for student, kind in FLIPPED.items():
        attacks.flipped_flags(folders[student], kind)
    for student, kind in COSTLY.items():
        attacks.costly_notebook(folders[student], kind)
    # what bleach's pass (InertMarkup) is given, cell by cell, logged outside the course root
    markup_seen = root.parent / f"{root.name}-markup-seen.log"
    with open(root / "nbgrader_config.py", "a") as config:
        config.write(SPY_ON_MARKUP.format(log=str(markup_seen)))
    attacks.add_markup(folders["copy_ref"] / f"{assignment.id}.ipynb")
    pristine = {s: grade_submission(assignment, f, s).item_scores() for s, f in folders.items()}
    submitted = attacks.digest(root / "submitted")
    course_files = {p.name for p in root.iterdir()}
    start = children_cpu_s()
    done = subprocess.run([str(BIN / "nbgrader"), "autograde", assignment.id, "--force"], cwd=root,
                          capture_output=True, text=True, env=attacks.run.__globals__["env"](), timeout=900)
    elapsed_s = children_cpu_s() - start  # CPU seconds: the work done, whatever the load
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", course_id="scalelabs") as gb:
        book = {}
        for student in folders:
            try:
                nb = gb.find_submission_notebook(assignment.id, assignment.id, student)
            except Exception:  # noqa: BLE001  (a student nbgrader failed on has no submission row)
                continue
            book[student] = {g.name: (g.auto_score, g.max_score) for g in nb.grades}  # None: not graded
    return dict(root=root, assignment=assignment, pristine=pristine, book=book, done=done, markup_seen=markup_seen,
                elapsed_s=elapsed_s, submitted=submitted, course_files=course_files)


def _assert_graded_pristine(graded_class, student):
    book, pristine = graded_class["book"], graded_class["pristine"][student]
    assert student in book, f"{student} was not graded:\n{graded_class['done'].stdout[-3000:]}"
    assert set(book[student]) == set(pristine)
    ungraded = sorted(item for item, (score, _) in book[student].items() if score is None)
    assert not ungraded, f"{student} has no grade for {ungraded}:\n{graded_class['done'].stdout[-3000:]}"
    for item, (score, max_score) in pristine.items():
        assert math.isclose(book[student][item][0], score, abs_tol=1e-6), (student, item, book[student][item], score)
        assert math.isclose(book[student][item][1], max_score, abs_tol=1e-9)


def test_autograde_of_the_class_succeeds(graded_class):
    done = graded_class["done"]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.parametrize("student", sorted(CHEATERS))
def test_cheater_earns_only_the_submitted_stub(graded_class, student):
    _assert_graded_pristine(graded_class, student)
    assert sum(s for s, _ in graded_class["book"][student].values()) == 0  # an untouched stub, no answers


@pytest.mark.parametrize("student", sorted(SABOTEURS))
def test_saboteur_is_graded_from_the_submitted_files(graded_class, student):
    _assert_graded_pristine(graded_class, student)


@pytest.mark.parametrize("student", sorted(METADATA))
def test_foreign_nbgrader_metadata_neither_stops_the_class_nor_costs_the_student(graded_class, student):
    """nbgrader aborts a whole autograde on a cell of another metadata schema version, and fails a
    student whose metadata its schema refuses: the door drops what does not validate, so this
    (correct) student keeps the engine's full marks, and everyone after is graded."""
    _assert_graded_pristine(graded_class, student)
    assert sum(s for s, _ in graded_class["book"][student].values()) == graded_class["assignment"].total_points


@pytest.mark.parametrize("student", sorted(FLIPPED))
def test_edited_nbgrader_flags_leave_the_student_graded_by_the_engine(graded_class, student):
    """nbgrader fails a student whose grade cell's flags were flipped or who added a cell with a
    grade_id it does not know, and drops the grades of a grade cell turned markdown, marked a task,
    deleted or stripped of its metadata: the door restores every known cell's metadata from the
    gradebook (a missing grade cell added back) and drops the rest, so this (correct) student gets
    exactly the engine's scores, full marks."""
    _assert_graded_pristine(graded_class, student)
    assert sum(s for s, _ in graded_class["book"][student].values()) == graded_class["assignment"].total_points


def test_restoring_metadata_leaves_a_released_notebook_as_it_is(graded_class):
    """The gradebook's record rebuilds exactly the metadata `generate_assignment` released: an
    untouched notebook comes out of SubmittedMetadata unchanged, cell for cell."""
    import copy

    import nbformat

    from autograder.doors.nbgrader import SubmittedMetadata

    root, assignment = graded_class["root"], graded_class["assignment"]
    released = nbformat.read(root / "release" / assignment.id / f"{assignment.id}.ipynb", as_version=4)
    resources = {"nbgrader": {"notebook": assignment.id, "assignment": assignment.id, "student": "ada",
                              "db_url": f"sqlite:///{root / 'gradebook.db'}"}}
    sanitized, _ = SubmittedMetadata().preprocess(copy.deepcopy(released), resources)
    assert sum("nbgrader" in cell.metadata for cell in released.cells) >= 4
    assert sanitized == released


@pytest.mark.parametrize("student", HONEST)
def test_honest_classmate_score_does_not_move(graded_class, student):
    _assert_graded_pristine(graded_class, student)
    total = sum(s for s, _ in graded_class["book"][student].values())
    assert total > 0


def test_a_package_shadowing_the_module_is_ignored_and_named_in_the_feedback(graded_class):
    import nbformat
    _assert_graded_pristine(graded_class, SHADOW)
    assert sum(s for s, _ in graded_class["book"][SHADOW].values()) == 0
    assignment = graded_class["assignment"]
    nb = nbformat.read(graded_class["root"] / "autograded" / SHADOW / assignment.id / f"{assignment.id}.ipynb",
                       as_version=4)
    texts = [o.get("text", "") for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade") for o in c.outputs]
    assert sum("collectives/ (a package folder)" in t for t in texts) == 1, texts


def test_no_submitted_or_course_file_changes(graded_class):
    root = graded_class["root"]
    assert attacks.digest(root / "submitted") == graded_class["submitted"]
    new = {p.name for p in root.iterdir()} - graded_class["course_files"]
    # the grader's own: nbgrader's output and gradebook, hypothesis's example database
    assert new <= {"autograded", "gradebook.db", ".nbgrader.log", ".hypothesis"}, new


@pytest.mark.parametrize("student", COSTLY)
def test_a_costly_notebook_is_capped_before_nbgraders_passes(graded_class, student):
    """CappedNotebook, the first pass: the 19 MB markdown cell reaches nbgrader and bleach as 20,000
    characters and a note (the whole class's autograde stays in its bound below, where this one cell
    alone cost 60-70 CPU s), the 1,500 code cells as 400,000 characters in all; the student is graded
    from the files submitted, with full marks."""
    import nbformat
    _assert_graded_pristine(graded_class, student)
    assignment = graded_class["assignment"]
    submitted = graded_class["root"] / "submitted" / student / assignment.id / f"{assignment.id}.ipynb"
    assert 18 << 20 < submitted.stat().st_size < 20 << 20        # as big as the engine reads
    assert sum(s for s, _ in graded_class["book"][student].values()) == assignment.total_points
    nb = nbformat.read(graded_class["root"] / "autograded" / student / assignment.id / f"{assignment.id}.ipynb",
                       as_version=4)
    sources = [c.source for c in nb.cells]
    notes = 80 * len(sources)          # a cut cell says so in a line
    assert max(map(len, sources)) <= 20_000 + 80 and sum(map(len, sources)) <= 400_000 + notes, (
        max(map(len, sources)), sum(map(len, sources)))
    assert any("more characters of this cell are not shown" in s for s in sources)
    seen = [int(n) for n in graded_class["markup_seen"].read_text().split()]
    assert seen and max(seen) <= 20_000 + 80, max(seen)     # bleach saw the cut cell, never the 19 MB


def test_class_is_graded_in_bounded_time(graded_class):
    """An infinite loop in one notebook costs the class nothing (no kernel waits it out)."""
    assert graded_class["elapsed_s"] < 100, graded_class["elapsed_s"]  # CPU seconds of autograde


def test_feedback_notebook_keeps_the_students_own_outputs(graded_class):
    """Grade cells hold the engine's verdicts; the student's other cells keep what they saved,
    inert: no HTML or JavaScript reaches the TA's browser."""
    import nbformat
    assignment = graded_class["assignment"]
    nb = nbformat.read(graded_class["root"] / "autograded" / "copy_ref" / assignment.id / f"{assignment.id}.ipynb",
                       as_version=4)
    texts = [o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert any("copy_ref saved this output" in t for t in texts)
    mimes = {m for c in nb.cells if c.cell_type == "code" for o in c.outputs for m in o.get("data", {})}
    assert "text/plain" in mimes and not mimes & {"text/html", "application/javascript"}, mimes


def test_student_markup_is_inert_where_formgrader_and_feedback_render_it(graded_class):
    """The autograded notebook (what formgrader shows a TA and generate_feedback turns into the
    feedback page), rendered to HTML as nbconvert does: no tag, event handler or script link of the
    student's is live; their text, a blockquote, a details block and a web link still are."""
    import nbformat
    from nbconvert import HTMLExporter

    assignment = graded_class["assignment"]
    nb = nbformat.read(graded_class["root"] / "autograded" / "copy_ref" / assignment.id / f"{assignment.id}.ipynb",
                       as_version=4)
    page, _ = HTMLExporter().from_notebook_node(nb)
    import re
    handler = re.search(r"<[a-z][^<>]*\son[a-z]+\s*=", page)   # a live tag with an event handler
    assert handler is None, page[handler.start() - 200:handler.end() + 100]
    for live in ("<script>alert", "<iframe", 'href="javascript:', 'href="jav&', 'src="data:text/html'):
        assert live not in page, (live, page[page.find(live) - 200:page.find(live) + 100])
    for kept in ('&lt;script&gt;alert("md-script")', "<blockquote>", "<details><summary>more</summary>",
                 'href="https://example.org"'):
        assert kept in page, kept


def test_engine_scores_refuses_a_config_that_executes_notebooks():
    """A course config that puts nbgrader's Execute back would run every student's notebook as
    the grader: EngineScores refuses, naming the fix, instead of grading beside it."""
    from nbgrader.preprocessors import Execute
    from traitlets.config import Config

    from autograder.doors.nbgrader import EngineScores

    for listed in ([Execute, EngineScores], ["nbgrader.preprocessors.Execute"]):
        config = Config()
        config.Autograde.autograde_preprocessors = listed
        with pytest.raises(ValueError, match="remove it from nbgrader_config.py"):
            EngineScores(config=config).preprocess(None, {})
    config = Config()
    config.Autograde.autograde_preprocessors = [EngineScores]
    EngineScores(config=config).check_nothing_executes()


@pytest.fixture(scope="module")
def broken_install(tmp_path_factory):
    """A course of the honest class, and a PYTHONPATH folder whose `labs` raises ImportError (a
    broken install of the course's package)."""
    root = tmp_path_factory.mktemp("broken-install")
    assignment, folders = attacks.make_course(root / "course", {})
    broken = root / "broken" / "labs"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text('raise ImportError("simulated broken install of labs")\n')
    return root / "course", broken, assignment, folders


@pytest.mark.parametrize("where", ["course root", "another folder, --CourseDirectory.root"])
def test_a_course_config_that_fails_to_load_stops_autograde_before_any_grade(broken_install, where):
    """traitlets logs an exception raised while nbgrader_config.py loads and goes on with nbgrader's
    defaults, which execute the students' notebooks and score what they print. A broken install
    must instead stop `nbgrader autograde`, non-zero, with one line naming the cause and the fix,
    and leave no grade, whether nbgrader runs in the course root or elsewhere."""
    from nbgrader.api import Gradebook, MissingEntry

    from door_helpers import env

    root, broken, assignment, folders = broken_install
    environment = env()
    environment["PYTHONPATH"] = os.pathsep.join([str(broken.parent), environment["PYTHONPATH"]])
    command = [str(BIN / "nbgrader"), "autograde", assignment.id, "--force"]
    cwd = root
    if where != "course root":
        cwd = root / "submitted"
        command.append(f"--CourseDirectory.root={root}")
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=environment, timeout=600)

    assert done.returncode != 0, done.stdout[-3000:] + done.stderr[-3000:]
    said = [line for line in done.stderr.splitlines() if "failed to load" in line]
    assert len(said) == 1, done.stderr[-3000:]
    for part in (str(root / "nbgrader_config.py"), "ImportError: simulated broken install of labs",
                 str(broken / "__init__.py"), "pip install -e ."):
        assert part in said[0], (part, said[0])
    assert not (root / "autograded").exists()
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", course_id="scalelabs") as gb:
        for student in folders:
            with pytest.raises(MissingEntry):
                gb.find_submission(assignment.id, student)


def test_a_sandbox_that_cannot_run_stops_autograde_before_any_grade(broken_install):
    """A jail that cannot run is the grader's fault and the same for every student: `nbgrader autograde`
    stops, non-zero, with one line naming the cause and the fix, and no student is scored (nbgrader
    would otherwise log it per student and go on). Here the course (the honest class of
    broken_install, its install intact) asks for bubblewrap, which is not on PATH."""
    from nbgrader.api import Gradebook, MissingEntry

    from door_helpers import env

    root, _, assignment, folders = broken_install
    environment = env()
    environment["PATH"] = str(BIN)          # this venv's nbgrader and python, no bwrap
    (root / "scalelabs.toml").write_text('[grading]\nsandbox = "bubblewrap"\n')
    try:
        done = subprocess.run([str(BIN / "nbgrader"), "autograde", assignment.id, "--force"], cwd=root,
                              capture_output=True, text=True, env=environment, timeout=600)
    finally:
        (root / "scalelabs.toml").unlink()
    assert done.returncode != 0, done.stdout[-3000:] + done.stderr[-3000:]
    said = [line for line in done.stderr.splitlines() if line.startswith("scalelabs:")]
    assert len(said) == 1 and "apt-get install bubblewrap" in said[0], done.stderr[-3000:]
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", course_id="scalelabs") as gb:
        graded = []
        for student in folders:
            try:
                graded += [g.auto_score for g in gb.find_submission_notebook(assignment.id, assignment.id, student).grades
                           if g.auto_score is not None]
            except MissingEntry:
                pass
    assert graded == [], graded
    # the course is broken_install's: leave it as that fixture's other tests expect it (nothing autograded)
    shutil.rmtree(root / "autograded", ignore_errors=True)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", course_id="scalelabs") as gb:
        for student in folders:
            try:
                gb.remove_submission(assignment.id, student)
            except MissingEntry:
                pass


# --- the sanitizing passes, run directly on one notebook (no class, no autograde) -----------------------

def test_a_cell_exactly_at_the_cap_is_kept_whole_and_one_character_more_is_cut():
    """CappedNotebook's cap is inclusive: a cell or output of exactly `cell_chars` reaches formgrader
    as it is, with no note; one character more is cut there, with a note saying how much."""
    import nbformat

    from autograder.doors.nbgrader import CappedNotebook

    code = nbformat.v4.new_code_cell("x = 1")
    code.outputs = [nbformat.v4.new_output("stream", name="stdout", text="o" * 100),
                    nbformat.v4.new_output("stream", name="stdout", text="p" * 101)]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("a" * 100),
                                         nbformat.v4.new_markdown_cell("b" * 101), code])
    nb, _ = CappedNotebook(cell_chars=100).preprocess(nb, {})
    assert nb.cells[0].source == "a" * 100
    assert nb.cells[1].source == "b" * 100 + "\n[1 more characters of this cell are not shown]"
    assert [o.text for o in nb.cells[2].outputs] == ["o" * 100, "p" * 100 + "\n[1 more characters of this output are not shown]"]


def test_a_notebook_of_exactly_the_cell_cap_keeps_every_cell_and_one_more_is_cut():
    """CappedNotebook's cell count is inclusive too: a notebook of exactly `cells` cells reaches
    formgrader whole, with no note; one cell more is left out, with a note saying how many."""
    import nbformat

    from autograder.doors.nbgrader import CappedNotebook

    def capped(count: int) -> list[str]:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"cell {i}") for i in range(count)])
        return [c.source for c in CappedNotebook(cells=3).preprocess(nb, {})[0].cells]

    assert capped(3) == ["cell 0", "cell 1", "cell 2"]
    assert capped(4) == ["cell 0", "cell 1", "cell 2",
                         "[1 more cells are not shown: the grader keeps the first 3 cells of a notebook]"]


def test_a_script_link_is_dead_however_its_scheme_is_spelled():
    """Browsers read a link's scheme case-blind: `JavaScript:` and `VBSCRIPT:` run as `javascript:`
    does, so InertMarkup leads them to `#`; a web link in capitals still leads where it says."""
    import nbformat

    from autograder.doors.nbgrader import InertMarkup

    cell = nbformat.v4.new_markdown_cell("[a](JavaScript:alert(1)) ![b](DATA:text/html,x) [c](vbSCRIPT:msgbox)\n\n"
                                         "[d]: JAVASCRIPT:alert(2)\n\n[web](HTTPS://example.org)")
    cell, _ = InertMarkup().preprocess_cell(cell, {}, 0)
    live = [scheme for scheme in ("javascript:", "data:", "vbscript:") if scheme in cell.source.lower()]
    assert not live, (live, cell.source)
    assert "[web](HTTPS://example.org)" in cell.source
