"""Feedback that teaches without handing out the answers (issue 26): a student reads what a door shows
before the due date, resubmits with what they read, and gains nothing; a module that packs the
inputs it sees into what it raises, prints or returns recovers none of them from that view. Each
door: `scalelabs grade-batch` (its feedback pages, a course with `[feedback] native = "before"`),
`otter run` of the Gradescope zip (the default: the before view until the due date), `nbgrader
autograde` (a course with `[feedback] nbgrader = "before"`); an honest classmate beside, whose score
must not move.

Every attack is shown to work on what the after view shows (everything, as staff and, after the due
date, the student see it): the same reader recovers the keys, the reference's numbers and the packed
inputs there, so a reader that finds nothing is not a reader that cannot read.
"""
from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import nbformat
import pytest

import door_attacks as attacks
import toy
from attack import ENGINE, SCALELABS, forge
from door_attacks import BIN
from door_helpers import env as door_env
from autograder.classroom import samples
from autograder.doors import otter as otter_door
from autograder.engine.grade import grade_submission
from autograder.engine.secret import load_secret   # the course's (conftest), which grade-batch and the zip grade under
from labs import load

# --- the attackers' modules: every ring_allreduce_time call writes out the inputs it has seen --------

SIG = "def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
TOKEN = re.compile(r"<\d+\|[^|<>\s]+\|[^|<>\s]+\|[^|<>\s]+>|E_\d+_\d+|LEAK\d+")   # what the modules write
PACKERS = {
    # the issue's: the inputs seen so far, packed into the message it raises (and printed)
    "packer": SIG + ("    _SEEN.append(f'<{n}|{message_bytes!r}|{alpha_s!r}|{bandwidth!r}>')\n"
                     "    print(''.join(_SEEN[-12:]))\n"
                     "    raise ValueError(''.join(_SEEN[-12:]))\n"),
    # the input in the name of an exception class made up on the spot
    "classname": SIG + "    raise type(f'E_{n}_{int(message_bytes)}', (ValueError,), {})()\n",
    # the input as the line an exception claims to come from (a line of the file only where n is small)
    "liner": SIG + "    exec(compile('\\n' * (n - 1) + 'raise ValueError(n)', __file__, 'exec'))\n",
    # the same, in a file padded so that every n is a line of it: a line number of any hidden input
    "padded": SIG + "    exec(compile('\\n' * (n - 1) + 'raise ValueError(n)', __file__, 'exec'))\n",
    # the input in the exit code
    "exiter": SIG + "    import sys\n    sys.exit(f'LEAK{n}')\n",
}
# the input in the exit code of a worker stopped on a hidden input: ring_allreduce_time behaves until
# tree_allreduce_time has been called, i.e. once every public check has run (they all run first); the
# grader then retries the hidden batch live in a fresh worker, whose first call is a hidden input
STOPPER = """
_ring, _tree, _PUBLIC_DONE, _CALLS = ring_allreduce_time, tree_allreduce_time, [], []


def tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    _PUBLIC_DONE.append(1)
    return _tree(message_bytes, n, alpha_s, bandwidth)


def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):
    _CALLS.append(1)
    if _PUBLIC_DONE or (len(_CALLS) == 1 and message_bytes != 140e9):
        import os
        os._exit(n % 256)
    return _ring(message_bytes, n, alpha_s, bandwidth)
"""
# a worker that answers for the module: any kind, type, place, message and parameter names it likes
FORGED = forge('''_LEAKS = []
def _handle(self, r, orig):
    if r.get("name") == "ring_allreduce_time" and r.get("op") in ("call", "call_many"):
        def err(kw):
            _LEAKS.append("LEAK%d" % kw["n"])
            return {"ok": False, "output": "LEAK%d" % kw["n"],
                    "error": {"kind": "exception", "message": "LEAK%d" % kw["n"], "type": "LEAK%d" % kw["n"],
                              "where": ["collectives.py", kw["n"]]}}
        if r["op"] == "call":
            return err(r["kwargs"])
        return {"ok": True, "replies": [err(kw) for kw in r["kwargs_list"]]}
    if r.get("op") == "signature" and r.get("name") == "tree_allreduce_time" and _LEAKS:
        return {"ok": True, "params": [[leak, "POSITIONAL_OR_KEYWORD"] for leak in _LEAKS[-4:]]}
    return orig(self, r)
''')


def packer_module(base: str, name: str) -> str:
    if name == "forged":
        return base + "\n" + FORGED
    if name == "stopper":
        return base + "\n" + STOPPER
    padding = "".join(f"_pad{i} = {i}\n" for i in range(5000)) if name == "padded" else ""
    return toy.with_function(base, "ring_allreduce_time", PACKERS[name]) + "\n_SEEN = []\n" + padding


ATTACKERS = [*PACKERS, "forged", "stopper"]


def page_text(page: str) -> str:
    """A feedback page as a student reads it: the text, tags gone."""
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def own_lines_are_the_files(text: str, module: str) -> None:
    """Every "(collectives.py, line L: ...)" a view shows quotes line L of the file as submitted."""
    lines = module.splitlines()
    for number, quoted in re.findall(r"\(collectives\.py, line (\d+): (.*)\)", text):
        assert 0 < int(number) <= len(lines) and " ".join(lines[int(number) - 1].split()).startswith(
            quoted.removesuffix("...")), (number, quoted)


# --- scalelabs grade-batch: the pages of a course that shows the before view -------------------------

@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """A class graded once by `grade-batch` in a course whose scalelabs.toml shows the before view:
    ada (correct), bob (a wrong answer), and one attacker per module."""
    course = tmp_path_factory.mktemp("policy-course")
    (course / "scalelabs.toml").write_text('[feedback]\nnative = "before"\n')
    root, out = course / "class", course / "grades"
    toy.make_submission(root / "ada", toy.reference_source(), toy.key)
    toy.make_submission(root / "bob", toy.reference_source(), toy.WRONG_LETTER)
    modules = {name: packer_module(toy.reference_source(), name) for name in ATTACKERS}
    for name, module in modules.items():
        toy.make_submission(root / name, module, toy.key)
    import os
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ENGINE), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([*SCALELABS, "grade-batch", "toy:EXPLAINED", str(root), "--jobs", "2", "--out", str(out)],
                          cwd=course, capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    results = {p.stem: json.loads(p.read_text()) for p in (out / "results").glob("*.json")}
    pages = {p.stem: page_text(p.read_text()) for p in (out / "feedback").glob("*.html")}
    return dict(results=results, pages=pages, modules=modules, root=root, out=out, course=course, env=env)


@pytest.mark.parametrize("attacker", ATTACKERS)
def test_a_packing_module_recovers_nothing_from_its_page(batch, attacker):
    from autograder.engine.results import Result
    record = Result.from_gradescope(batch["results"][attacker])
    after = "\n".join(t.output for t in record.tests)
    if attacker == "stopper":   # the exit code is its channel: after the due date it is there to read
        assert re.search(r"ring_allreduce_time stopped the worker process \(exit code \d+", after), after[:3000]
    elif attacker not in ("liner", "padded"):   # line numbers are their channel: the after view shows what they raised
        assert len(set(TOKEN.findall(after))) >= 3, after[:2000]   # the attack works on the full record
    page = batch["pages"][attacker]
    assert TOKEN.findall(page) == [], page[:3000]
    own_lines_are_the_files(page, batch["modules"][attacker])
    if attacker == "stopper":   # (another item's public check, calling ring_allreduce_time, shows its exit code)
        hidden = next(t for t in record.view("before").tests if t.item == "ring_allreduce_time" and t.kind == "hidden")
        assert hidden.output == "stopped the worker process (how: shown after the due date)", hidden.output
        assert re.search(r"ring_allreduce_time: hidden checks 0\.00 / [\d.]+ stopped the worker process \(how: shown "
                         r"after the due date\)", " ".join(page.split())), page[:3000]
    if attacker == "padded":   # a hidden input's error names only a line a public check showed (or none)
        shown = {"hidden": set(), "public": set()}
        for t in record.view("before").tests:
            for text in t.output.splitlines():
                phase = "hidden" if t.kind == "hidden" or text.startswith("On one of its inputs") else "public"
                shown[phase] |= set(re.findall(r"collectives\.py, line (\d+)", text))
        assert "(on a line no public check reached: shown after the due date)" in page
        assert shown["public"] and shown["hidden"] <= shown["public"], shown
    if attacker == "classname":   # a class made up on the spot is named by its builtin base, at the raising line
        line = next(n for n, text in enumerate(batch["modules"][attacker].splitlines(), 1) if "raise type(" in text)
        assert f"raised ValueError (collectives.py, line {line}: raise type(" in page


def test_a_course_that_shows_student_text_still_hides_how_a_hidden_input_stopped_the_worker(tmp_path):
    """`[feedback.before] student_text = true` alone shows what a student's code printed and raised, not
    how a worker stopped on a hidden input: the stopper's exit code there is the input (n % 256); only
    hidden_inputs (or the after view) shows it."""
    import dataclasses

    from autograder.engine.config import BeforeView, FeedbackPolicy

    folder = toy.make_submission(tmp_path / "stopper", packer_module(toy.reference_source(), "stopper"), toy.key)
    config = dataclasses.replace(toy.FAST, feedback=FeedbackPolicy(before=BeforeView(student_text=True)))
    record = grade_submission(toy.EXPLAINED, folder, "stopper", secret=load_secret(), config=config)
    hidden = [next(t for t in record.view(view).tests if t.item == "ring_allreduce_time" and t.kind == "hidden")
              for view in ("before", "after")]
    assert hidden[0].output == "stopped the worker process (how: shown after the due date)", hidden[0].output
    assert re.search(r"stopped the worker process \(exit code \d+", hidden[1].output), hidden[1].output


def test_the_class_scores_are_the_engines_whatever_the_view(batch):
    for student, data in batch["results"].items():
        alone = grade_submission(toy.EXPLAINED, batch["root"] / student, student, secret=load_secret())
        assert data["score"] == alone.score, student
    assert batch["results"]["ada"]["score"] == toy.ASSIGNMENT.total_points


def test_a_wrong_answer_on_the_page_names_no_key_and_resubmitting_gains_nothing(batch, tmp_path):
    page = batch["pages"]["bob"]
    read = re.findall(r"best answer is ([A-Z])", page)
    assert read == [] and f"answered {toy.WRONG_LETTER} (recorded at its reveal): a committed prediction earns its " \
        "points; it was not the best answer" in " ".join(page.split())
    assert not any(why in page for why in toy.EXPLAINED.questions[0].why.values())
    # what bob would read after the due date: the record's after view names the key
    record = "\n".join(t["output"] for t in batch["results"]["bob"]["tests"])
    assert re.findall(r"best answer is ([A-Z])", record) == [toy.key]
    again = toy.make_submission(tmp_path / "bob", toy.reference_source(), read[0] if read else toy.WRONG_LETTER)
    assert grade_submission(toy.EXPLAINED, again, "bob").score == batch["results"]["bob"]["score"]


def test_a_lost_page_is_written_again_in_the_view_it_was_given(batch):
    """grade-batch makes a missing page whole from the student's result: in the result's view, never
    the after view by default."""
    (batch["out"] / "feedback" / "bob.html").unlink()
    done = subprocess.run([*SCALELABS, "grade-batch", "toy:EXPLAINED", str(batch["root"]), "--jobs", "1", "--out",
                           str(batch["out"])], cwd=batch["course"], capture_output=True, text=True, env=batch["env"],
                          timeout=900)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-3000:]
    bob = page_text((batch["out"] / "feedback" / "bob.html").read_text())
    assert bob == batch["pages"]["bob"] and "best answer is" not in bob


def test_staff_release_the_after_view_without_regrading(batch):
    done = subprocess.run([*SCALELABS, "feedback", "toy:EXPLAINED", str(batch["out"]), "--view", "after"],
                          cwd=batch["course"], capture_output=True, text=True, env=batch["env"], timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{len(batch['results'])} feedback pages (after the due date)" in " ".join(done.stdout.split())
    bob = page_text((batch["out"] / "feedback" / "bob.html").read_text())
    assert re.findall(r"best answer is ([A-Z])", bob) == [toy.key]
    packer = page_text((batch["out"] / "feedback" / "packer.html").read_text())
    assert TOKEN.findall(packer)
    # the results now name the view released: a later batch run keeps it
    assert json.loads((batch["out"] / "results" / "bob.json").read_text())["scalelabs"]["view"] == "after"


def test_staff_who_released_too_early_write_the_before_view_again(batch):
    """`scalelabs feedback LAB --view before` (after the after view was released by mistake, or not):
    every page is the before view again, as grade-batch wrote it: no key, no packed input, and the
    results name the before view, so a later batch run keeps it."""
    done = subprocess.run([*SCALELABS, "feedback", "toy:EXPLAINED", str(batch["out"]), "--view", "before"],
                          cwd=batch["course"], capture_output=True, text=True, env=batch["env"], timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"{len(batch['results'])} feedback pages (before the due date)" in " ".join(done.stdout.split())
    pages = {p.stem: page_text(p.read_text()) for p in (batch["out"] / "feedback").glob("*.html")}
    assert pages == batch["pages"]
    assert not any(re.search(r"best answer is [A-Z]", page) or TOKEN.findall(page) for page in pages.values())
    assert {json.loads(p.read_text())["scalelabs"]["view"] for p in (batch["out"] / "results").glob("*.json")} == {"before"}


# --- Gradescope: the issue's figures, a student's second try ----------------------------------------

def _otter_run(zip_path: Path, folder: Path, work: Path, name: str) -> dict:
    archive = shutil.make_archive(str(work / name), "zip", folder)
    out = work / f"{name}-out"
    out.mkdir()
    done = subprocess.run([str(BIN / "otter"), "run", "-a", str(zip_path), "-o", str(out), "--no-logo", archive],
                          cwd=work, env=door_env(without_rfc3987=True), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((out / "results.json").read_text())


def visible(results: dict) -> str:
    """What a student reads on Gradescope before the due date: the top output and the visible tests, each
    under its name as Gradescope heads it."""
    return "\n".join([results.get("output", "")] + [f"{t['name']}\n{t.get('output', '')}" for t in results["tests"]
                                                    if t.get("visibility", "visible") == "visible"])


def in_full(results: dict) -> str:
    return "\n".join(f"{t['name']}\n{t.get('output', '')}" for t in results["tests"])


def read_keys(text: str, lab) -> dict[str, str]:
    """An attacker's reader: each question's test (its name, then its check in bold, then the text of
    the check), and the letter after "best answer is"."""
    keys = {}
    for q in lab.questions:
        for block in re.finditer(rf"^{q.id}(?: \(in full\))?\n\*\*{q.kind}\*\*: .*\n\n((?:.+\n?)*)", text, re.M):
            if found := re.search(r"best answer is ([A-Z])", block[1]):
                keys[q.id] = found[1]
    return keys


# the id `otter run` grades a zip under without Gradescope's metadata: each submission here is written in
# that id's own version of the lab (its letters and targets), as a student's notebook shows it
OTTER_ID = "anonymous"


def with_answers(lab, folder: Path, answers: dict) -> Path:
    samples.write_answers(lab, folder / f"{lab.id}.ipynb", answers, record=True,   # as run: the reveals recorded
                          student=OTTER_ID)
    return folder


def question_points(results: dict, lab) -> float:
    """The points of the questions graded for correctness: the reflections (a prediction earns its points
    when recorded, `predictions = "commitment"` the default, so a key read from feedback adds nothing)."""
    return sum(t["score"] for t in results["tests"]
               if "score" in t and t["name"] in {q.id for q in lab.questions if q.kind == "reflection"})


@pytest.fixture(scope="module")
def gradescope(tmp_path_factory):
    work = tmp_path_factory.mktemp("gradescope-policy")
    labs = {lab_id: load(lab_id) for lab_id in ("lab06_collectives", "lab01_scale")}
    zips = {lab_id: otter_door.build_zip(lab_id, work / f"{lab_id}.zip") for lab_id in labs}
    return dict(work=work, labs=labs, zips=zips)


@pytest.fixture(scope="module")
def lab06_first_try(gradescope):
    """Lab 06 on Gradescope, a first try: every answer wrong, the packing module beside them."""
    lab, work = gradescope["labs"]["lab06_collectives"], gradescope["work"]
    first = samples.materialise(lab.id, "correct", work / "try1", graded_as=OTTER_ID)
    (first / "collectives.py").write_text(packer_module((first / "collectives.py").read_text(), "packer"))
    with_answers(lab, first, {q.id: "@wrong" for q in lab.questions})
    return first, _otter_run(gradescope["zips"][lab.id], first, work, "try1")


def test_gradescope_questions_stay_at_zero_on_the_second_try(gradescope, lab06_first_try):
    """Lab 06: every answer wrong (its reflections at 0; its predictions earn theirs once recorded, the
    commitment default); the student reads the visible feedback and resubmits: the reflections still
    at 0, and nothing the module packed is readable. The same reader, given what shows after the due
    date, finds every key (6/6 on the engine) and the packed inputs."""
    lab, work = gradescope["labs"]["lab06_collectives"], gradescope["work"]
    first, results = lab06_first_try
    assert question_points(results, lab) == 0
    shown = visible(results)
    assert read_keys(shown, lab) == {} and TOKEN.findall(shown) == []
    assert all(t["visibility"] in ("visible", "after_due_date") for t in results["tests"])
    assert all("score" in t for t in results["tests"] if t["visibility"] == "visible")
    second = with_answers(lab, shutil.copytree(first, work / "try2"),
                          {qid: {"source": f"{qid} = {letter!r}"} for qid, letter in read_keys(shown, lab).items()})
    assert question_points(_otter_run(gradescope["zips"][lab.id], second, work, "try2"), lab) == 0
    # after the due date the "(in full)" tests name every key: the reader works
    keys = read_keys(in_full(results), lab)
    assert keys == {q.id: q.key for q in samples.version(lab, OTTER_ID).questions} and TOKEN.findall(in_full(results))
    control = with_answers(lab, shutil.copytree(first, work / "control"),
                           {qid: {"source": f"{qid} = {letter!r}"} for qid, letter in keys.items()})
    assert sum(s for i, (s, _) in grade_submission(lab, control, "anonymous").item_scores().items()
               if i in keys) == sum(q.points for q in lab.questions)


def test_a_gradescope_export_gives_back_the_engines_record(gradescope, lab06_first_try):
    """Result.from_gradescope of the results.json Gradescope keeps (a class report's input) is the
    engine's record: every check, its score, both views, the answers graded."""
    from autograder.engine.results import Result
    lab = gradescope["labs"]["lab06_collectives"]
    first, results = lab06_first_try
    back = Result.from_gradescope(json.loads(json.dumps(results)))
    engine = grade_submission(lab, first, "anonymous", secret=load_secret())   # the zip's (the tests' secret)
    assert back.assignment_id == lab.id and back.student_id == "anonymous" and back.score == engine.score
    assert [(t.name, t.kind, t.score, t.max_score, t.answer, t.misconception) for t in back.tests] == \
        [(t.name, t.kind, t.score, t.max_score, t.answer, t.misconception) for t in engine.tests]
    for view in ("before", "after"):
        assert [t.output for t in back.view(view).tests] == [t.output for t in engine.view(view).tests], view


def _whatif(breakeven: float) -> dict:
    return {"lab01_whatif": {"source": "lab01_whatif = dict(years=4, usd_per_gpu_hour=2.5, reserved_discount=0.3, "
                                       f"capex_per_gpu=35000, breakeven_utilization={breakeven!r})"}}


def test_gradescope_design_challenge_stays_at_two_thirds_on_the_second_try(gradescope):
    """Lab 01: a what-if where on-prem wins but the breakeven written is wrong (1.33/2); the visible
    feedback does not give the reference's breakeven, so the second try scores the same. After the
    due date it does, and writing it scores 2/2."""
    lab, work = gradescope["labs"]["lab01_scale"], gradescope["work"]
    first = with_answers(lab, samples.materialise(lab.id, "correct", work / "what1", graded_as=OTTER_ID), _whatif(0.4))
    results = _otter_run(gradescope["zips"][lab.id], first, work, "what1")
    challenge = next(t for t in results["tests"] if t["name"] == "lab01_whatif")
    assert challenge["score"] == pytest.approx(4 / 3, abs=1e-4)
    reader = re.compile(r"the reference gives ([0-9.]+) at your what-if")
    assert reader.findall(visible(results)) == []
    full = reader.findall(in_full(results))
    assert len(full) == 1
    again = with_answers(lab, shutil.copytree(first, work / "what2"), _whatif(0.4))   # nothing new to write
    assert next(t for t in _otter_run(gradescope["zips"][lab.id], again, work, "what2")["tests"]
                if t["name"] == "lab01_whatif")["score"] == challenge["score"]
    control = with_answers(lab, shutil.copytree(first, work / "what3"), _whatif(float(full[0])))
    assert grade_submission(lab, control, "anonymous").item_scores()["lab01_whatif"] == (2.0, 2.0)


def test_gradescope_honest_classmate_in_a_zipped_folder_scores_in_full(gradescope):
    """ada zips her lab06_collectives/ folder (a macOS zip, without _domain.py): graded like the flat
    files, every point, nothing withheld, the total in the output."""
    lab, work = gradescope["labs"]["lab06_collectives"], gradescope["work"]
    nest = work / "nest"
    folder = samples.materialise(lab.id, "correct", nest / lab.id, graded_as=OTTER_ID)
    (folder / "_domain.py").unlink()
    (nest / "__MACOSX" / lab.id).mkdir(parents=True)
    (nest / "__MACOSX" / lab.id / "._collectives.py").write_bytes(b"\x00\x05\x16\x07")
    results = _otter_run(gradescope["zips"][lab.id], nest, work, "ada")
    assert results["score"] == lab.total_points
    assert [t["name"] for t in results["tests"]] == lab.item_ids   # no "(in full)" test: nothing withheld
    assert f"Score: {lab.total_points:g} / {lab.total_points:g}" in results["output"]


# --- nbgrader: the grade cells of a course that shows the before view --------------------------------

@pytest.fixture(scope="module")
def nbgrader_class(tmp_path_factory):
    root = tmp_path_factory.mktemp("policy-nbgrader")
    assignment, folders = attacks.make_course(root, {"packer": ""}, {})
    (folders["packer"] / "collectives.py").write_text(packer_module(attacks.reference_module(), "packer"))
    (root / "scalelabs.toml").write_text('[feedback]\nnbgrader = "before"\n')
    pristine = {s: grade_submission(assignment, f, s) for s, f in folders.items()}
    done = subprocess.run([str(BIN / "nbgrader"), "autograde", assignment.id, "--force"], cwd=root,
                          capture_output=True, text=True, env=door_env(), timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cells = {}
    for student in folders:
        nb = nbformat.read(root / "autograded" / student / assignment.id / f"{assignment.id}.ipynb", as_version=4)
        cells[student] = {c.metadata.nbgrader["grade_id"]: "".join(o.get("text", "") for o in c.outputs)
                          for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}
    return dict(assignment=assignment, pristine=pristine, cells=cells)


def test_nbgrader_grade_cells_show_the_before_view(nbgrader_class):
    assignment, cells, pristine = nbgrader_class["assignment"], nbgrader_class["cells"], nbgrader_class["pristine"]
    q = assignment.questions[0]
    bob = cells["bob"][q.id]
    wrong = samples.wrong_letter(q.options, q.key)
    assert bob == (f"{q.id}: {q.kind}  [{q.points:g}/{q.points:g}]\n    answered {wrong} (recorded at its reveal): a "
                   f"committed prediction earns its points; it was not the best answer. Hint: {q.hint}\n")
    assert not any(why in bob for why in q.why.values())
    assert f"The best answer is {q.key}" in next(t.output for t in pristine["bob"].tests if t.item == q.id)
    packer = "\n".join(cells["packer"].values())
    assert TOKEN.findall(packer) == [] and TOKEN.findall("\n".join(t.output for t in pristine["packer"].tests))
    assert pristine["ada"].score == assignment.total_points and "it was the best answer" in cells["ada"][q.id]


# --- every lab: the before view of its sample class passes the leak scan ----------------------------

# every lab folder with a demo class (found, never listed: adding a lab adds it here)
LABS = sorted(p.name for p in Path(__import__("labs").__file__).parent.iterdir() if (p / "samples.toml").is_file())


@pytest.mark.parametrize("lab_id", LABS)
def test_the_before_view_of_each_labs_sample_class_holds_no_answer(lab_id, tmp_path):
    """The students of each lab who get things wrong (answers, functions, the design): their before
    view holds no key, no explanation but a right pick's own, no reference design, no reference value
    of a hidden check, no design number; the leak scan (keys on) finds nothing. Their after view does
    show keys and reference values (the scan has something to find). In both views every line reads
    as the lab declares it (`reads_as_declared`)."""
    from autograder.build import leakscan
    from autograder.engine.results import Result
    lab = load(lab_id)
    secrets = leakscan.secrets_for([lab])
    reference_values = re.compile(r"^expected .*\(tolerance|the reference gives|; the reference's", re.M)
    found_after = 0
    declared = samples.sample_class(lab_id)
    for student in ("partly_wrong", "wrong_predictions"):
        folder = samples.materialise(lab_id, student, tmp_path / student)
        record = grade_submission(lab, folder, student)
        own = samples.version(lab, student)   # its letters, keys and design targets are the student's version's
        for view in ("before", "after"):
            reads_as_declared(own, record.view(view), view, declared[student].get("wrong", []))
        right = {t.item: t.answer for t in record.tests if t.kind in ("prediction", "reflection") and t.score > 0}
        allowed = {_ws(own.question(qid).why[letter]) for qid, letter in right.items() if letter in own.question(qid).why}
        before = "\n".join(t.output for t in record.view("before").tests)
        mine = leakscan.Secrets(secrets.solution_lines, secrets.declaration_lines, secrets.keys,
                                secrets.explanations - allowed, secrets.designs)
        # the student's own lines it quotes are theirs (own): a reference-based module holds solution lines
        assert leakscan.scan_text(f"{lab_id}/{student}", before, mine, keys=True, own=leakscan.own_text([folder])) == []
        assert "best answer is" not in before and not reference_values.search(before), before
        after = "\n".join(t.output for t in record.view("after").tests)
        found_after += len(re.findall("best answer is", after)) + len(reference_values.findall(after))
    assert found_after > 0


# --- every lab: each line a student reads, as the lab declares it (issue 31, kind 3) -----------------

HIDDEN_LINE = re.compile(r"(?P<all>\d+) hidden inputs match the reference|does not match the reference on "
                         r"(?P<wrong>\d+) of (?P<of>\d+) hidden inputs(; on one it raised \w+ \(.+\))?")
NO_CREDIT = re.compile(r"\(no credit: the function matches the reference on \d+ of \d+ hidden inputs[ ,].*\)")


def reads_as_declared(lab, record, view: str, wrong: list[str]) -> None:
    """Every line of every check as the student reads it in `view`, against the lab's declaration: a
    property's own statement (its `meaning`, word for word) and, before the due date, nothing of a
    hidden property but that statement and an error's type; a hidden check's one count (the sample's
    wrong functions differ on some inputs); a worked example's call; a question's verdict and hint,
    the key and explanations only after the due date; a design's constraints, word for word, with
    their numbers only after the due date."""
    before = view == "before"
    for t in record.tests:
        lines = t.output.split("\n")
        where = f"{view}: {t.item}: {t.check}: {lines}"
        if lines[-1].startswith("(no credit"):
            assert NO_CREDIT.fullmatch(lines.pop()), where
        if t.kind == "property":
            prop = next(p for p in lab.function(t.item).properties if p.name == t.check)
            if lines == ["holds"]:
                assert t.score == t.max_score or t.score == 0, where
                continue
            assert t.score == 0 and lines[0] == f"Property failed: {prop.meaning}", where
            if before and not prop.public:
                assert all(line.startswith("On one of its inputs your function raised ") for line in lines[1:]), where
            elif len(lines) > 1:
                assert lines[1] == "Counterexample:" and lines[2].startswith(f"  {t.item}("), where
        elif t.kind == "hidden":
            counted = HIDDEN_LINE.fullmatch(lines[0]) if before else None
            assert (counted or not before) and len(lines) <= 2, where
            if t.item in wrong:
                assert t.score == 0, where
                assert not before or int(counted["wrong"]) > 0, where
                assert before or re.match(rf"{t.item}\(.*\) (returned|raised) ", lines[0]), where
            elif before and counted["all"]:
                assert t.score == t.max_score, where
        elif t.kind == "example":
            assert lines[0].startswith(f"{t.item}("), where
        elif t.kind in ("prediction", "reflection"):
            q = lab.question(t.item)
            said = dict(line.split(": ", 1) for line in lines if line.startswith(("Why ", "The best answer is ")))
            notes = ("your answer cell for ", "you changed ")   # a change after the reveal, reported, not counted
            while len(lines) > 1 and lines[0].startswith(notes):
                lines = lines[1:]
            answered = rf"answered {t.answer}( \(recorded at its reveal\))?: "
            committed = "a committed prediction earns its points; "
            if t.score > 0 and "not the best answer" not in lines[0]:
                assert re.match(answered + f"(correct|{committed}it was the best answer)$", lines[0]), where
            elif re.match(r"answered [A-Z].*not the best answer", lines[0]):
                assert re.fullmatch(answered + f"({committed}it was )?not the best answer. Hint: {re.escape(q.hint)}",
                                    lines[0]), where
                if before:
                    assert said == {}, where
                else:
                    assert said[f"The best answer is {q.key}"] == q.why.get(q.key, said[f"The best answer is {q.key}"]), where
                    assert t.answer not in q.why or said[f"Why {t.answer}"] == q.why[t.answer], where
        elif t.kind == "challenge" and " constraints met" in lines[0]:
            challenge = next(c for c in lab.challenges if c.id == t.item)
            verdicts = [line for line in lines if line.startswith(("  met: ", "  MISSED: "))]
            assert len(verdicts) == len(challenge.constraints), where
            for line, constraint in zip(verdicts, challenge.constraints):
                text = line.split(": ", 1)[1]
                assert text == constraint if before else text.startswith(constraint), where
            assert not before or lines[-1] == "(the numbers your design gives are shown after the due date)", where


def _ws(text: str) -> str:
    return re.sub(r"\s+", "", text)
