"""The mutation check (bench/mutate.py, its catalogue bench/mutations.toml) stays runnable: every
break still applies to the code it names and every test it names still exists, so moving or rewriting
code cannot silently retire a break; a malformed catalogue entry is an error that names it."""
from __future__ import annotations

import importlib.util
import inspect
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("mutate", REPO / "bench" / "mutate.py")
mutate = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("mutate", mutate)   # dataclasses look their module up while the class is built
_spec.loader.exec_module(mutate)


@pytest.mark.parametrize("m", mutate.MUTATIONS, ids=lambda m: m.id)
def test_break_applies_and_its_tests_exist(m):
    text = (REPO / m.file).read_text(encoding="utf-8")
    assert text.count(m.old) == 1, f"{m.id}: the snippet to break is not in {m.file} exactly once"
    assert m.new != m.old
    paths = [a.split("::")[0] for a in m.tests if a.startswith("tests/")]
    assert paths, f"{m.id} names no test file"
    missing = [p for p in paths if not (REPO / p).exists()]
    assert not missing, f"{m.id}: {missing} do not exist"


def _named_text(paths: list[str]) -> str:
    files = [REPO / p for p in paths]
    return "".join(f.read_text(encoding="utf-8") if f.is_file() else
                   "".join(g.read_text(encoding="utf-8") for g in sorted(f.rglob("*.py"))) for f in files)


@pytest.mark.parametrize("m", [m for m in mutate.MUTATIONS if "-k" in m.tests], ids=lambda m: m.id)
def test_every_word_of_a_k_selection_still_names_a_test(m):
    """A `-k a or b` selection whose `b` test was renamed still selects `a`, so the control passes and
    the break is reported NOT caught (or worse, caught by the wrong test): every word of the
    expression must occur in the named test files, or be a lab id's prefix (a parametrize id)."""
    import labs
    expression = m.tests[m.tests.index("-k") + 1]
    words = [w for w in re.split(r"[\s()]+", expression) if w and w not in ("or", "and", "not")]
    text = _named_text([a.split("::")[0] for a in m.tests if a.startswith("tests/")]).lower()
    lab_ids = list(labs.all_assignments())
    stale = [w for w in words if w.lower() not in text and not any(lab.startswith(w) for lab in lab_ids)]
    assert not stale, f"{m.id}: -k {expression!r}: {stale} name no test in {m.tests}"


def test_the_list_is_wide():
    assert len(mutate.MUTATIONS) >= 15
    assert len({m.id for m in mutate.MUTATIONS}) == len(mutate.MUTATIONS)
    touched = {m.file.split("/")[1] if m.file.startswith("autograder/") else m.file.split("/")[0]
               for m in mutate.MUTATIONS}
    assert {"engine", "doors", "build", "classroom", "reference"} <= touched, touched


GOOD = """[[mutation]]
id = 'good'
file = 'bench/mutate.py'
old = 'a "quoted" \\0 snippet'
new = '''two
lines'''
breaks = 'nothing'
tests = ['tests/test_mutation_list.py', '-k', 'wide']
"""


def test_the_catalogue_reads_its_strings_byte_for_byte(tmp_path):
    (tmp_path / "m.toml").write_text(GOOD, encoding="utf-8")
    [m] = mutate.load(tmp_path / "m.toml")
    assert m == mutate.Mutation("good", "bench/mutate.py", 'a "quoted" \\0 snippet', "two\nlines", "nothing",
                                ("tests/test_mutation_list.py", "-k", "wide"))


@pytest.mark.parametrize("change, error", [
    (("breaks = 'nothing'\n", ""), r"m.toml: mutation 2 \('bad'\): missing breaks$"),
    (("breaks = 'nothing'\n", "breaks = 'nothing'\nbreak = 'typo'\n"),
     r"mutation 2 \('bad'\): unknown break \(the keys"),
    (("id = 'bad'\n", ""), r"mutation 2 \('no id'\): missing id$"),
    (("old = 'a", "old = 3 #"), r"mutation 2 \('bad'\): old must be a non-empty string, got 3$"),
    (("file = 'bench/mutate.py'", "file = ''"), r"mutation 2 \('bad'\): file must be a non-empty string, got ''"),
    (("tests = ['tests/test_mutation_list.py', '-k', 'wide']", "tests = 'tests/test_mutation_list.py'"),
     r"mutation 2 \('bad'\): tests must be a non-empty list of pytest arguments"),
    (("tests = ['tests/test_mutation_list.py', '-k', 'wide']", "tests = ['tests/x.py', 2]"),
     r"mutation 2 \('bad'\): tests must be a non-empty list"),
    (("[[mutation]]", "[mutations]"), r"m.toml: expected \[\[mutation\]\] tables and nothing else"),
    (("old = 'a", "old = 'a'"), r"m.toml: not valid TOML"),
])
def test_a_malformed_entry_is_an_error_naming_it(tmp_path, change, error):
    bad = GOOD.replace("'good'", "'bad'").replace(*change)
    (tmp_path / "m.toml").write_text(GOOD + "\n" + bad, encoding="utf-8")
    with pytest.raises(ValueError, match=error):
        mutate.load(tmp_path / "m.toml")


# A held-out catalogue of four breaks, run by bench/mutate.py itself (two of them break this file's own tests)
HELD_OUT = """[[mutation]]
id = 'held-out-two-copies'
file = 'tests/test_mutation_list.py'
old = '''{wide}'''
new = '''{wide}
    import os, subprocess
    code = "from autograder.cli import main; import autograder; print(autograder.__file__)"
    done = subprocess.run([sys.executable, "-c", code], cwd="/", capture_output=True, text=True,
                          env={{**os.environ, "PYTHONPATH": os.path.dirname(os.__file__)}})
    scalelabs = subprocess.run(["scalelabs", "--help"], cwd="/", capture_output=True, text=True)
    assert Path(done.stdout.strip()).is_relative_to(REPO) and scalelabs.returncode == 0, (done.stdout, REPO)'''
breaks = 'nothing: a subprocess with a PYTHONPATH of its own, from another folder, imports the copy'
tests = ['tests/test_mutation_list.py', '-k', 'wide']

[[mutation]]
id = 'held-out-outside'
file = 'tests/test_mutation_list.py'
old = '''{wide}'''
new = '''{wide}
    import subprocess
    subprocess.run([sys.executable, "-c", "import autograder"], env={{"PYTHONPATH": {outside!r}}}, cwd="/",
                   check=True)
    assert False, "fails, but the subprocess imported another tree"'''
breaks = 'a test whose subprocess imports the packages from outside the copy'
tests = ['tests/test_mutation_list.py', '-k', 'wide']

[[mutation]]
id = 'held-out-suite-only'
file = 'bench/mutate.py'
old = 'return Mutation(**{{**entry, "tests": tuple(tests)}})'
new = 'return Mutation(**{{**entry, "tests": tuple(reversed(tests))}})'
breaks = 'the catalogue reads its pytest arguments backwards'
tests = ['tests/test_mutation_list.py', '-k', 'wide']

[[mutation]]
id = 'held-out-caught'
file = 'bench/mutate.py'
old = 'return Mutation(**{{**entry, "tests": tuple(tests)}})'
new = 'return Mutation(**{{**entry, "tests": tuple(reversed(tests))}})'
breaks = 'the same, with a selection that catches it'
tests = ['tests/test_mutation_list.py', '-k', 'byte_for_byte']
"""


def test_a_held_out_catalogue_runs_with_its_verdicts_resting_on_the_copy_alone(tmp_path, capsys):
    """`--catalogue FILE` runs another set of breaks (a held-out set, same format) with the same machinery
    (the main catalogue's breaks are not run). A test whose subprocess has a PYTHONPATH of its own and
    another folder (or runs the `scalelabs` command) imports the copy, so a break that only makes a test
    compare the two is NOT caught (under the old runner the test failed: "caught", because two copies
    disagreed); a failing test whose subprocess imported the packages from outside the copy is invalid,
    never caught; a break its own tests miss is tried against `--survivors-with` (the whole suite with
    `--survivors-full`), where it is caught by the suite; an uncaught break is exit status 1."""
    held_out = tmp_path / "held_out.toml"
    wide = inspect.getsource(test_the_list_is_wide).splitlines()[0]   # its text is once in this file
    held_out.write_text(HELD_OUT.format(outside=str(REPO), wide=wide), encoding="utf-8")
    assert mutate.main(["--catalogue", str(held_out), "--survivors-with",
                        "tests/test_mutation_list.py -n 0 -k 'wide or byte_for_byte'"]) == 1
    out = capsys.readouterr().out
    verdicts = {}
    for line in out.splitlines():
        if line.startswith("held-out-"):
            name, rest = line.split(None, 1)
            verdicts.setdefault(name, []).append(re.split(r"\s+\d+ s ", rest)[0].strip())
    assert verdicts == {"held-out-two-copies": ["NOT caught", "NOT caught"],
                        "held-out-outside": ["invalid"],
                        "held-out-suite-only": ["NOT caught", "caught by the suite"],
                        "held-out-caught": ["caught"]}, out
    assert f"autograder from {REPO}" in out, out
    assert "1 of 4 breaks caught by their own tests; 1 more by `tests/test_mutation_list.py" in out, out
    assert "; 1 invalid" in out and mutate.MUTATIONS[0].id not in out
    assert mutate.main(["--catalogue", str(tmp_path / "absent.toml")]) == 2
    assert "absent.toml" in capsys.readouterr().out


def test_every_process_of_a_run_imports_the_copy_and_the_probe_sees_any_other(tmp_path):
    """The run's interpreter imports the copy from any folder, with any PYTHONPATH, through its
    console scripts; the probe records each import, and one from the repository, from an installed
    package or from a copy without the placed break is what `outside` reports."""
    run = mutate.RunEnv(tmp_path).create()
    run.place(None)
    mutate.check_isolation(run)          # raises IsolationError otherwise
    snippet = '"""Reference physics'
    assert run.place(mutate.Mutation("m", "reference/__init__.py", snippet, '"""BROKEN physics', "x", ("t",)))
    with_break, without = tmp_path / "with", tmp_path / "without"
    shutil.copytree(run.tree / "reference", with_break / "reference")
    shutil.copytree(REPO / "reference", without / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    seen = {}
    for name, folder in (("with", with_break), ("without", without), ("repository", REPO), ("none", Path("/nowhere"))):
        run.clear_log()
        done = subprocess.run([str(run.python), "-c", "import reference, autograder"], cwd="/",
                              env={**run.env(), "PYTHONPATH": str(folder)}, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        records = run.imports()
        assert {r["name"] for r in records} == {"reference", "autograder"}
        seen[name] = sorted(r["name"] for r in run.outside(records))
    assert seen == {"with": [], "without": ["reference"], "repository": ["autograder", "reference"], "none": []}


def test_a_wider_control_finds_every_failure_so_none_passes_for_a_catch(capsys):
    """`--survivors-full` on a suite where two tests fail without any break: its control runs to the end
    (not stopping at the first failure) and both are deselected from the break's run, so a break that
    changes nothing there is NOT caught; a control that stopped at the first failure left the second to
    fail in the break's run, and fail again alone: "caught by the suite" for a break the suite missed."""
    failing_anyway = ("tests/a.py::test_one", "tests/b.py::test_two")
    runs = []

    class Run:   # RunEnv's interface; the suite: the two tests above fail whatever the tree holds
        def place(self, m):
            pass

        def run(self, args, *, workers=0, timeout=None, exitfirst=True):
            runs.append(args)
            deselected = {args[i + 1] for i, a in enumerate(args[:-1]) if a == "--deselect"}
            chosen = [a for a in args if "::" in a and a not in deselected] or list(failing_anyway)
            failed = [t for t in chosen if t in failing_anyway and t not in deselected][:1 if exitfirst else None]
            return mutate.Outcome(1 if failed else 0, "".join(f"FAILED {t} - boom\n" for t in failed), 0.0, False, [], [])

    m = mutate.Mutation("survivor", "f.py", "a", "b", "changes nothing the suite sees", ("tests/x.py",))
    assert mutate._run_wider(Run(), "tests", [m], {"survivor": "NOT caught"}) == [("survivor", "NOT caught")]
    assert all(node in runs[1] for node in failing_anyway), runs
    assert "deselected below" in capsys.readouterr().out
