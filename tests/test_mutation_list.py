"""The mutation check (bench/mutate.py, its catalogue bench/mutations.toml) stays runnable: every
break still applies to the code it names and every test it names still exists, so moving or rewriting
code cannot silently retire a break; a malformed catalogue entry is an error that names it."""
from __future__ import annotations

import importlib.util
import re
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


def test_a_held_out_catalogue_runs_in_place_of_the_main_one(tmp_path, capsys):
    """`--catalogue FILE` runs another set of breaks (a held-out set, same format) with the same
    machinery; the main catalogue's breaks are not run, and an uncaught break is exit status 1."""
    held_out = tmp_path / "held_out.toml"
    held_out.write_text("""[[mutation]]
id = 'held-out-harmless'
file = 'bench/mutate.py'
old = 'Exit status: 0 when every break is caught'
new = 'Exit status: zero when every break is caught'
breaks = 'a docstring only'
tests = ['tests/test_mutation_list.py', '-k', 'wide']
""", encoding="utf-8")
    assert mutate.main(["--catalogue", str(held_out)]) == 1
    out = capsys.readouterr().out
    assert "held-out-harmless" in out and "NOT caught" in out and "0 of 1 breaks caught" in out
    assert mutate.MUTATIONS[0].id not in out
    assert mutate.main(["--catalogue", str(tmp_path / "absent.toml")]) == 2
    assert "absent.toml" in capsys.readouterr().out
