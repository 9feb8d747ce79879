"""Hidden inputs nobody can predict (issue 26): a course secret keys every check's seed.

The attack (offline_table.py): from the released files and the engine's open source, a student
computes every call the grader will make under their id and hands in a table with no formula. Before
the course secret it earned 21 of Lab 06's 23 function points (0 under any other id). Now:
- under a course secret the table earns nothing, while the same table built by an insider who holds
  the secret and the declarations earns nearly everything (the attack is real; only the secret stops it);
- without a secret (a course that never released: public seeds, reported as such) the hidden domains,
  which are not the released strategies, still leave the table nothing;
- the same files regraded under the same secret give byte-identical results; two courses' secrets
  draw different inputs for the same student.
"""
import hashlib
import hmac
import inspect
import json
import shutil
from functools import partial
from pathlib import Path

import pytest

from autograder.engine import scoring
from autograder.engine.checks import seed_for
from autograder.engine.config import GradingConfig
from autograder.engine.draw import sample_inputs
from autograder.engine.grade import grade_submission
from autograder.engine import secret as secret_module
from autograder.engine.sandbox.modes import user_mode_problem
from autograder.engine.secret import NO_SECRET_NOTE, CourseSecret
from autograder.course import find_course
from labs import all_assignments, load
import attack
import toy
from offline_table import CHECK_EXAMPLES, released_properties, table_module

LAB = "lab06_collectives"
RELEASE = find_course(Path(__file__)) / "release" / LAB
COURSE = CourseSecret(bytes.fromhex("c0ffee00" * 8))
OTHER_COURSE = CourseSecret(bytes.fromhex("00decade" * 8))
CONFIG = GradingConfig(call_timeout_s=2.0, property_examples=5)     # the attacker draws 20: a superset


def function_points(result, assignment) -> float:
    names = {f.name for f in assignment.functions}
    return scoring.total(t.score for t in result.tests if t.item in names)


def handed_in(tmp_path: Path, name: str, source: str, module: str, release: Path = RELEASE) -> Path:
    """A released folder (Lab 06's by default) with this module in place of the stub."""
    folder = tmp_path / name
    shutil.copytree(release, folder)
    (folder / f"{module}.py").write_text(source)
    return folder


@pytest.fixture(scope="module")
def lab():
    return load(LAB)


@pytest.fixture(scope="module")
def outsider_table(lab):
    """The attack from the released files and public seeds, built once (7 s)."""
    return table_module(lab, RELEASE, "mallory")


def test_the_offline_table_earns_nothing_under_a_course_secret(tmp_path, lab, outsider_table):
    total = sum(f.points for f in lab.functions)
    outsider = handed_in(tmp_path, "outsider", outsider_table, lab.module)
    insider = handed_in(tmp_path, "insider", table_module(lab, RELEASE, "mallory", partial(_keyed, COURSE), True),
                        lab.module)
    honest = handed_in(tmp_path, "honest", _reference_source(lab), lab.module)
    assert function_points(grade_submission(lab, outsider, "mallory", config=CONFIG, secret=COURSE), lab) == 0
    # the control: the same attack with the secret and the declarations in hand earns nearly all of it
    assert function_points(grade_submission(lab, insider, "mallory", config=CONFIG, secret=COURSE), lab) \
        >= 0.9 * total
    assert function_points(grade_submission(lab, honest, "honest", config=CONFIG, secret=COURSE), lab) == total


def test_without_a_secret_the_hidden_domains_still_leave_the_table_nothing(tmp_path, lab, outsider_table):
    """A course that never released grades with public seeds and says so; the hidden inputs then come
    from domains the released files do not ship, so the table still misses them."""
    outsider = handed_in(tmp_path, "outsider", outsider_table, lab.module)
    result = grade_submission(lab, outsider, "mallory", config=CONFIG, secret=None)
    assert function_points(result, lab) <= 0.05 * sum(f.points for f in lab.functions)
    assert NO_SECRET_NOTE in result.output
    keyed = grade_submission(lab, handed_in(tmp_path, "honest", _reference_source(lab), lab.module), "honest",
                             config=CONFIG, secret=COURSE)
    assert NO_SECRET_NOTE not in keyed.output and "course secret" not in keyed.output


def _call_key(reference, kwargs) -> str | None:
    """A call as the table module keys it (every parameter, defaults applied); None if it is not one."""
    try:
        bound = inspect.signature(reference).bind(**kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    return json.dumps(sorted(bound.arguments.items()), default=repr)


@pytest.mark.parametrize("lab_id", sorted(all_assignments()))
def test_no_labs_hidden_inputs_come_from_its_released_strategies(lab_id):
    """Every lab (found, never listed), public seeds (no secret): drawing each strategy the released
    _properties.py ships for a function with the hidden check's own seed, as the grader draws (edges
    too), plus its worked examples, predicts under half of that check's valid inputs, for every
    function; the gate asks at least half, so the offline table earns none of them (Lab 06's earned
    21 of 23 points when its hidden domains were the shipped strategies). Measured: at most 0.28
    (tp_crosses_node's few-valued edges), 0.00 for Lab 07's."""
    assignment = load(lab_id)
    shipped = released_properties(find_course(Path(__file__)) / "release" / lab_id)
    hidden_n = GradingConfig().hidden_examples
    predicted = {}
    for item in assignment.functions:
        reference = getattr(assignment.reference, item.name)
        seed = seed_for(assignment.id, "mallory", item.name, "hidden")
        drawn = []
        for kwargs in sample_inputs(item.domain, seed, item.hidden_examples or hidden_n, edges=True):
            try:
                reference(**kwargs)
            except (ValueError, ArithmeticError):
                continue
            drawn.append(_call_key(reference, kwargs))
        guessed = {_call_key(reference, dict(ex.kwargs)) for ex in item.examples}
        for strategy in {id(p["strategy"]): p["strategy"] for p in shipped if p["item"] == item.name}.values():
            guessed |= {_call_key(reference, kw) for kw in sample_inputs(strategy, seed, CHECK_EXAMPLES, edges=True)
                        if isinstance(kw, dict)} - {None}
        predicted[item.name] = sum(key in guessed for key in drawn) / len(drawn)
    assert drawn and max(predicted.values()) < 0.5, {name: round(share, 2) for name, share in predicted.items()}


def test_a_regrade_under_the_same_secret_is_byte_identical(tmp_path, lab):
    """A module wrong in places (failures shrunk, misconceptions named) graded twice: the same JSON."""
    source = _reference_source(lab) + (
        "\ndef tree_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
        "    import math\n    return 2 * int(math.log2(n)) * (alpha_s + message_bytes / bandwidth)\n"
        "\ndef comm_fraction(comm_s, compute_s):\n    return comm_s / compute_s\n")
    folder = handed_in(tmp_path, "carol", source, lab.module)
    first, second = (json.dumps(grade_submission(lab, folder, "carol", config=CONFIG, secret=COURSE).to_gradescope())
                     for _ in range(2))
    assert first == second
    assert '"score": 0.0' in first


def test_two_courses_secrets_draw_different_inputs_for_the_same_student(lab):
    item = lab.function("ring_allreduce_time")
    draw = lambda secret, student="alice": sample_inputs(  # noqa: E731
        item.domain, seed_for(lab.id, student, item.name, "hidden", secret), 30)
    assert draw(COURSE) != draw(OTHER_COURSE)
    assert draw(COURSE) != draw(None)
    assert draw(COURSE) == draw(CourseSecret(bytes(COURSE.key)))   # the key, not the object
    assert draw(COURSE, "alice") != draw(COURSE, "bob")
    # the documented construction, so a regrade next year draws what this one drew: the first 8 bytes
    # of HMAC-SHA256 under the key of "assignment\0student\0item\0check" (without a key, its sha256)
    message = b"lab\0alice\0f\0hidden"
    assert seed_for("lab", "alice", "f", "hidden", COURSE) == int.from_bytes(
        hmac.new(COURSE.key, message, hashlib.sha256).digest()[:8], "big")
    assert seed_for("lab", "alice", "f", "hidden") == int.from_bytes(hashlib.sha256(message).digest()[:8], "big")


def test_the_records_grader_fingerprint_follows_the_course_secret():
    """What grade-batch records of its grader (autograder.classroom.fingerprints) hashes the seeds the
    class is drawn under: another course's secret (or none) is another grader, the same key the same
    one, and neither the key nor a seed is kept in clear."""
    from autograder.classroom.fingerprints import grader_changes, grader_fingerprint
    toy_lab = toy.ASSIGNMENT
    ours, again, theirs, none = (grader_fingerprint(attack.TOY, toy_lab, GradingConfig(), "bubblewrap", secret)
                                 for secret in (COURSE, CourseSecret(bytes(COURSE.key)), OTHER_COURSE, None))
    assert ours == again
    assert grader_changes(ours, theirs) == grader_changes(ours, none) == ["the hidden inputs' seeds (the course secret)"]
    kept = json.dumps(ours)
    assert COURSE.key.hex() not in kept and str(seed_for(toy_lab.id, "scalelabs-probe", "comm_fraction", "hidden",
                                                         COURSE)) not in kept


def _keyed(secret, *args):
    return seed_for(*args, secret)


def _reference_source(lab) -> str:
    from autograder.classroom.samples import solved_module
    return solved_module(Path(lab.reference.__file__).read_text(encoding="utf-8"))


# --- where the secret lives, and grading without one (the doors' behaviour) -----------------------

def _env(secret_file: Path | None) -> dict:
    import os
    env = {k: v for k, v in os.environ.items() if k != secret_module.ENV}
    if secret_file is not None:
        env[secret_module.ENV] = str(secret_file)
    return env


def test_a_printed_secret_shows_its_fingerprint_and_no_digit_run_of_its_key():
    """Whatever prints the secret (a config, a log line, a traceback's locals) shows its fingerprint:
    no 8 hex digits in a row of the key, from any place in it, nor its bytes as Python shows them."""
    key = COURSE.key.hex()
    windows = {key[i:i + 8] for i in range(len(key) - 7)} | {repr(COURSE.key)[2:18]}
    for text in (repr(COURSE), str(COURSE), f"{COURSE}", repr({"secret": COURSE}), repr([OTHER_COURSE, COURSE])):
        assert COURSE.fingerprint in text, text
        assert not any(window in text for window in windows), text


def test_grading_without_a_secret_says_so_and_with_one_does_not(tmp_path):
    """`scalelabs grade` with no course secret (a course that never released) grades from public seeds:
    the command warns, the result says so; under a secret neither does, and the secret never shows."""
    folder = attack.attacker(tmp_path, "carol", toy.with_function(
        toy.reference_source(), "ring_allreduce_time",
        "def ring_allreduce_time(message_bytes, n, alpha_s, bandwidth):\n"
        "    return 2 * (n - 1) * (alpha_s + message_bytes / bandwidth)\n"), toy.key)
    key_file = tmp_path / "course_secret"
    key_file.write_text(COURSE.key.hex() + "\n")
    runs = {}
    for name, where in (("none", tmp_path / "absent"), ("course", key_file)):
        done = attack.run("grade", attack.TOY, folder, "--student", "carol", "--json", env=_env(where))
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
        runs[name] = (json.loads(done.stdout), done.stderr)
    assert NO_SECRET_NOTE in runs["none"][0]["output"] and "no course secret" in runs["none"][1]
    assert NO_SECRET_NOTE not in runs["course"][0]["output"] and "no course secret" not in runs["course"][1]
    assert runs["none"][0]["score"] == runs["course"][0]["score"]      # the same verdicts
    assert COURSE.key.hex() not in json.dumps(runs["course"][0])


def test_a_damaged_secret_stops_grading_with_one_line(tmp_path):
    folder = attack.honest(tmp_path)
    bad = tmp_path / "course_secret"
    bad.write_text("not hex\n")
    for command in (["grade", attack.TOY, folder, "--student", "honest"],
                    ["grade-batch", attack.TOY, tmp_path, "--out", tmp_path / "out"]):
        done = attack.run(*command, env=_env(bad))
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-2000:]
        assert f"{bad} is not a course secret" in done.stderr
    assert not (tmp_path / "out" / "results").exists()


def test_a_class_graded_under_one_secret_is_not_resumed_under_another(tmp_path):
    """grade-batch records the secret's fingerprint; a machine holding another secret (or none) refuses
    to add to those results, which would mix two draws of hidden inputs, and changes nothing."""
    root = tmp_path / "class"
    attack.honest(root, "alice")
    out = tmp_path / "out"
    key_file, other_file = tmp_path / "k1", tmp_path / "k2"
    key_file.write_text(COURSE.key.hex())
    other_file.write_text(OTHER_COURSE.key.hex())
    batch = lambda env: attack.run("grade-batch", attack.TOY, root, "--jobs", "1", "--out", out, env=env)  # noqa: E731
    assert batch(_env(key_file)).returncode == 0
    results = {p.stem: json.loads(p.read_text()) for p in (out / "results").glob("*.json")}
    assert results["alice"]["scalelabs"]["course_secret"] == COURSE.fingerprint
    before = (out / "results" / "alice.json").read_bytes()
    attack.honest(root, "bob")
    for env in (_env(other_file), _env(tmp_path / "absent")):
        done = batch(env)
        assert done.returncode == 2 and "graded under course secret" in done.stderr, done.stderr[-2000:]
    assert (out / "results" / "alice.json").read_bytes() == before and not (out / "results" / "bob.json").exists()
    assert batch(_env(key_file)).returncode == 0
    assert sorted(p.stem for p in (out / "results").glob("*.json")) == ["alice", "bob"]


def test_scalelabs_secret_makes_one_only_once_and_shows_its_fingerprint(tmp_path):
    course = tmp_path / "course"
    course.mkdir()
    (course / "nbgrader_config.py").write_text("")
    env = _env(None)
    done = attack.run("secret", "--course", course, env=env)
    assert done.returncode == 1 and "no course secret" in done.stderr
    made = attack.run("secret", "--create", "--course", course, env=env)
    path = course / ".scalelabs" / "course_secret"
    first = secret_module.read_secret(path)
    assert made.returncode == 0 and first.fingerprint in made.stdout
    assert oct(path.stat().st_mode & 0o777) == "0o600" and oct(path.parent.stat().st_mode & 0o777) == "0o700"
    attack.run("secret", "--create", "--course", course, env=env)
    assert secret_module.read_secret(path) == first          # never replaced
    shown = attack.run("secret", "--course", course, env=env)
    assert shown.returncode == 0 and first.fingerprint in shown.stdout and first.key.hex() not in shown.stdout


def test_the_secret_is_read_from_the_file_the_environment_names_before_the_course_folder(tmp_path, monkeypatch):
    """Where the secret is read from. The course folder keeps one (.scalelabs/course_secret) and
    SCALELABS_COURSE_SECRET_FILE names another, kept outside a shared course folder: the named one is the
    secret, in the course and in any folder below it, for the engine and for `scalelabs secret`; with the
    variable unset or empty, the course's; a course that makes its secret with the variable set makes it
    where the variable says and writes nothing into the course folder."""
    course = tmp_path / "course"
    (course / "sub").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("")
    in_course = course / secret_module.RELATIVE
    in_course.parent.mkdir()
    in_course.write_text(COURSE.key.hex() + "\n")
    named = tmp_path / "kept" / "course_secret"
    named.parent.mkdir()
    named.write_text(OTHER_COURSE.key.hex() + "\n")
    for cwd in (course, course / "sub"):
        monkeypatch.chdir(cwd)
        monkeypatch.setenv(secret_module.ENV, str(named))
        assert secret_module.secret_path() == named and secret_module.load_secret().key == OTHER_COURSE.key
        assert secret_module.load_secret(course).key == OTHER_COURSE.key
        for unset in (lambda: monkeypatch.setenv(secret_module.ENV, ""), lambda: monkeypatch.delenv(secret_module.ENV)):
            unset()
            assert secret_module.secret_path() == in_course and secret_module.load_secret().key == COURSE.key
    shown = {name: attack.run("secret", "--course", course, env=_env(where))
             for name, where in (("named", named), ("course", None))}
    assert OTHER_COURSE.fingerprint in shown["named"].stdout and COURSE.fingerprint not in shown["named"].stdout
    assert COURSE.fingerprint in shown["course"].stdout and OTHER_COURSE.fingerprint not in shown["course"].stdout
    new_course, new_file = tmp_path / "new", tmp_path / "kept" / "new_secret"
    new_course.mkdir()
    (new_course / "nbgrader_config.py").write_text("")
    monkeypatch.setenv(secret_module.ENV, str(new_file))
    made, created = secret_module.create_secret(new_course)
    assert created and made.path == new_file and secret_module.read_secret(new_file).key == made.key
    assert not (new_course / ".scalelabs").exists()


def test_the_leak_scan_finds_the_course_secret(tmp_path):
    """The course's secret (here the tests' one, which the grader loads) in any file scanned is a leak."""
    from autograder.build import leakscan
    key = secret_module.load_secret().key.hex()
    clean, leaky = tmp_path / "clean", tmp_path / "leaky"
    for folder in (clean, leaky):
        folder.mkdir()
        (folder / "notes.md").write_text("seed = 42\n")
    (leaky / "config.json").write_text('{"seed": "%s"}' % key.upper())
    lab = load(LAB)
    assert leakscan.scan([clean], [lab]) == []
    found = [p for p in leakscan.scan([leaky], [lab]) if "course secret" in p]
    assert found == [f"{leaky / 'config.json'}: course secret: the course secret's hex digits"]


def _thief(key_file: Path) -> str:
    """The toy's module whose comm_fraction answers wrong (0.5) when it can read `key_file`, right
    when it cannot; the worker's audit hook (a courtesy) cleared first, as an attacker would."""
    return toy.with_function(toy.reference_source(), "comm_fraction",
                             "def comm_fraction(comm_s, compute_s):\n"
                             "    try:\n"
                             f"        open({str(key_file)!r}).read()\n"
                             "        return 0.5\n"
                             "    except OSError:\n"
                             "        return comm_s / (comm_s + compute_s) if comm_s + compute_s else 0.0\n") + attack.UNHOOK


def test_student_code_cannot_read_the_course_secret(tmp_path):
    """A course's own secret (.scalelabs/course_secret, found from --course): a module that reads it
    (its path written in) to answer wrong gets full marks, i.e. never read it, and the class is graded
    under it."""
    course = tmp_path / "course"
    (course / ".scalelabs").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("")
    key_file = course / secret_module.RELATIVE
    key_file.write_text(COURSE.key.hex() + "\n")
    key_file.chmod(0o600)
    folder = attack.attacker(tmp_path, "mallory", _thief(key_file), toy.key)
    done = attack.run("grade", attack.TOY, folder, "--student", "mallory", "--json", "--course", course, env=_env(None))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert data["score"] == attack.FULL, [t["output"] for t in data["tests"] if t["score"] < t["max_score"]]
    assert NO_SECRET_NOTE not in data["output"] and "no course secret" not in done.stderr


@pytest.mark.skipif(user_mode_problem() is not None, reason="the unprivileged-user mode needs root")
def test_a_secret_kept_outside_the_course_is_out_of_reach_in_the_user_mode(tmp_path):
    """Root without bubblewrap (a Gradescope container) runs student code as another uid: a course
    secret kept outside the course (SCALELABS_COURSE_SECRET_FILE) in a folder anyone may enter, readable
    by all, is out of that uid's reach: the kernel's rules (Landlock) allow it none of it, and its
    mode is left as the course set it."""
    import tempfile
    shared = Path(tempfile.mkdtemp(prefix="scalelabs-secret-"))     # pytest's tmp dirs are 0700
    try:
        shared.chmod(0o755)
        key_file = shared / "course_secret"
        key_file.write_text(COURSE.key.hex() + "\n")
        key_file.chmod(0o644)
        folder = attack.attacker(tmp_path, "mallory", _thief(key_file), toy.key)
        env = attack.env_with_only(tmp_path, "setpriv", "unshare") | {secret_module.ENV: str(key_file)}  # no bwrap
        data = attack.grade_json(folder, "mallory", env=env)
        assert "separate unprivileged user" in data["output"]
        assert data["score"] == attack.FULL, [t["output"] for t in data["tests"] if t["score"] < t["max_score"]]
        assert key_file.stat().st_mode & 0o777 == 0o644
    finally:
        shutil.rmtree(shared)
