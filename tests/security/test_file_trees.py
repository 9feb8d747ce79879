"""Any file tree: links are never followed (a linked module or notebook counts as missing), sparse
huge files, 1,500 nested folders, FIFOs and device nodes get that student a clear reason in bounded
time, the class is graded, and a resumed batch fingerprints without reading whole files. Nothing
beside a graded or provided module's .py (a package folder, an extension module, bytecode) runs in
its place, and a submission's .pth, sitecustomize.py and usercustomize.py never run."""
import importlib.util
import os
import py_compile
import shutil
import stat
import subprocess
import sysconfig
from importlib.machinery import EXTENSION_SUFFIXES

import pytest

import toy
from attack import (FULL, TOY, children_cpu_s, constant_module, function_score, grade_class, grade_json, honest,
                    outputs, run)
from autograder.classroom.batch import fingerprint
from autograder.engine.config import GradingConfig
from autograder.engine.sandbox import Sandbox
from autograder.engine.filetree import walk_submission

REF = toy.reference_source()
WRONG = constant_module(body="return -1.0")      # imports, and earns nothing
NOTEBOOK = f"{toy.ASSIGNMENT_ID}.ipynb"
IGNORED = "Ignored, because Python would import it instead of the .py file of the same name"
DIE = "import os; os._exit(7)\n"                # a startup hook that ran would kill the worker
C_EXTENSION = """#include <Python.h>
static const unsigned char SOURCE[] = {%s, 0};
PyMODINIT_FUNC PyInit_%s(void) {
    PyObject *module = PyModule_New("%s");
    if (!module) return NULL;
    PyObject *names = PyModule_GetDict(module);
    PyDict_SetItemString(names, "__builtins__", PyEval_GetBuiltins());
    PyObject *done = PyRun_String((const char *)SOURCE, Py_file_input, names, names);
    if (!done) { Py_DECREF(module); return NULL; }
    Py_DECREF(done);
    return module;
}
"""


def compiled_pyc(source: str, target) -> None:
    """`source` compiled to an unchecked hash-based .pyc at `target`: CPython runs it without
    looking at any .py (PEP 552), so it is what would run if it were copied in."""
    work = target.parent / "_src.py"
    work.write_text(source)
    py_compile.compile(str(work), cfile=str(target), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    work.unlink()


def compiled_extension(source: str, module: str, target) -> bool:
    """A real extension module `module` whose init runs `source`, built with the C compiler at
    `target`; False where no compiler or Python.h is at hand."""
    include = sysconfig.get_paths()["include"]
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not compiler or not os.path.isfile(os.path.join(include, "Python.h")):
        return False
    c_file = target.parent / "_ext.c"
    c_file.write_text(C_EXTENSION % (", ".join(str(b) for b in source.encode()), module, module))
    done = subprocess.run([compiler, "-shared", "-fPIC", "-O0", f"-I{include}", "-o", str(target), str(c_file)],
                          capture_output=True, text=True, timeout=120)
    c_file.unlink()
    assert done.returncode == 0, done.stderr[-2000:]
    return True


def pycache_name(module: str) -> str:
    return os.path.basename(importlib.util.cache_from_source(f"{module}.py"))


# name -> (what to write beside a correct collectives.py, the entry the feedback names)
SHADOWS_OF_CORRECT = {
    "shadow-package": ({"collectives/__init__.py": WRONG}, "collectives/ (a package folder)"),
    **{f"shadow-ext{i}": ({f"collectives{suffix}": b"\x7fELF not a real library"}, f"collectives{suffix}")
       for i, suffix in enumerate(EXTENSION_SUFFIXES)},
    "shadow-pyc-beside": ({"collectives.pyc": None}, "collectives.pyc (compiled bytecode)"),
    "shadow-provided-package": ({"_domain/__init__.py": "raise ImportError('not the provided _domain')\n"},
                                "_domain/ (a package folder)"),
    # a helper module of the student's own: its .py is what the TA reads, so it is what runs
    "shadow-own-helper": ({"collectives.py": REF + "\nfrom helper import *  # noqa: E402,F401,F403\n",
                           "helper.py": "# the helper a TA reads: nothing to add\n", "helper/__init__.py": WRONG},
                          "helper/ (a package folder)"),
    "shadow-provided-ext": ({f"_domain{EXTENSION_SUFFIXES[-1]}": b"junk"}, f"_domain{EXTENSION_SUFFIXES[-1]}"),
}
# name -> what, beside the untouched stub, would earn full marks if it ran
CORRECT_SHADOWS_OF_STUB = {"stub-package": "collectives/__init__.py",
                           "stub-pycache": f"__pycache__/{pycache_name('collectives')}",
                           "stub-ext": f"collectives{EXTENSION_SUFFIXES[0]}"}


def nest(folder, depth):
    """depth folders, one inside the other (os.makedirs recurses and fails at this depth)."""
    path = str(folder)
    for _ in range(depth):
        path += "/d"
        os.mkdir(path)


def unnest(folder):
    """Remove what nest() made, deepest first: shutil.rmtree (and pytest's tmp cleanup) recurse."""
    path = str(folder)
    while os.path.isdir(path + "/d"):
        path += "/d"
    while path != str(folder):
        os.rmdir(path)
        path = os.path.dirname(path)


def build_class(root):
    classmate = honest(root)
    sub = lambda name, module=REF: toy.make_submission(root / name, module, toy.key)  # noqa: E731
    with open(sub("sparse") / "huge.bin", "wb") as f:                        # 64 GiB, sparse
        f.truncate(64 << 30)
    deep = sub("deep")
    nest(deep, 1500)
    os.mkfifo(sub("fifo") / "pipe.fifo")
    fifo_module = sub("fifo-module", None)
    os.mkfifo(fifo_module / "collectives.py")
    device = sub("device-module", None)
    os.mknod(device / "collectives.py", stat.S_IFCHR | 0o644, os.makedev(1, 5))  # /dev/zero: endless
    linked = sub("linked-module", None)
    (linked / "collectives.py").symlink_to(classmate / "collectives.py")
    linked_nb = sub("linked-notebook")
    (linked_nb / NOTEBOOK).unlink()
    (linked_nb / NOTEBOOK).symlink_to(classmate / NOTEBOOK)
    (root / "linked-folder").symlink_to(classmate)
    for name, (shadow, _) in SHADOWS_OF_CORRECT.items():
        folder = sub(name)
        for rel, content in shadow.items():
            (folder / rel).parent.mkdir(exist_ok=True)
            if content is None:
                compiled_pyc(WRONG, folder / rel)
            elif isinstance(content, bytes):
                (folder / rel).write_bytes(content)
            else:
                (folder / rel).write_text(content)
    for name, rel in CORRECT_SHADOWS_OF_STUB.items():
        folder = sub(name, toy.stub_source())
        (folder / rel).parent.mkdir(exist_ok=True)
        if rel.endswith(".py"):
            (folder / rel).write_text(REF)
        elif rel.endswith(".pyc"):
            compiled_pyc(REF, folder / rel)
        elif not compiled_extension(REF, "collectives", folder / rel):
            shutil.rmtree(folder)
    handed = sub("provided-as-package")   # the provided _domain.py handed in as a package of the same code
    (handed / "_domain").mkdir()
    (handed / "_domain.py").rename(handed / "_domain" / "__init__.py")
    only = sub("pycache-only")
    (only / "collectives.py").unlink()
    (only / "__pycache__").mkdir()
    compiled_pyc(REF, only / "__pycache__" / pycache_name("collectives"))
    ran = sub("ran-pytest")     # an honest student who ran the public tests and has a helper module
    (ran / "helper.py").write_text("# a helper of the student's own\n")
    (ran / "__pycache__").mkdir()
    for name in ("collectives", "helper", "test_collectives", "_properties"):
        compiled_pyc(REF, ran / "__pycache__" / pycache_name(name))
    hooks = sub("site-hooks")
    for rel in ("sitecustomize.py", "usercustomize.py", "zz.pth"):
        (hooks / rel).write_text(DIE)
    return classmate


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    out = tmp_path_factory.mktemp("out")
    build_class(root)
    try:
        results, seconds = grade_class(root, out, timeout=900)
        yield root, out, results, seconds
    finally:
        unnest(root / "deep")


def test_the_class_is_graded_and_the_honest_student_keeps_full_marks(graded):
    root, out, results, seconds = graded
    assert set(results) == {p.name for p in root.iterdir()}
    assert results["honest"]["score"] == FULL
    for name in ("sparse", "deep", "fifo"):  # junk next to correct code costs nothing
        assert results[name]["score"] == FULL, (name, outputs(results[name])[:500])


@pytest.mark.parametrize("name, reason", [
    ("fifo-module", "not a regular file"), ("device-module", "not a regular file"),
    ("linked-module", "symbolic link"), ("linked-folder", "not in the submission")])
def test_a_module_that_is_not_a_regular_file_counts_as_missing(graded, name, reason):
    data = graded[2][name]
    assert function_score(data) == 0
    text = outputs(data)
    assert "collectives.py is not in the submission" in text and reason in text, text[:1500]


def test_a_linked_notebook_does_not_earn_the_classmates_answers(graded):
    data = graded[2]["linked-notebook"]
    q = next(t for t in data["tests"] if t["name"].startswith("act1_prediction"))
    assert q["score"] == 0 and "not in the submission" in q["output"]
    assert function_score(data) == FULL - 1


def test_skipped_entries_are_named(graded):
    text = {n: graded[2][n]["output"] for n in ("sparse", "deep", "fifo")}
    assert "huge.bin is larger than" in text["sparse"]
    assert "nested deeper than" in text["deep"]
    assert "pipe.fifo is not a regular file" in text["fifo"]


@pytest.mark.parametrize("name", SHADOWS_OF_CORRECT)
def test_what_python_would_import_instead_of_a_module_is_ignored_and_named(graded, name):
    """A correct collectives.py keeps its marks beside a package, an extension module or bytecode
    of its own name or a provided module's (each would fail or score nothing if imported), and the
    feedback names what was ignored."""
    data = graded[2][name]
    assert data["score"] == FULL, outputs(data)[:1500]
    note = next((line for line in data["output"].splitlines() if line.startswith(IGNORED)), "")
    assert SHADOWS_OF_CORRECT[name][1] in note, data["output"]


def test_one_grade_ignores_a_provided_modules_shadow_too(graded):
    """`scalelabs grade` (a jail of its own, not one started ahead, like the nbgrader and otter
    doors) leaves out a package that would replace _domain.py."""
    data = grade_json(graded[0] / "shadow-provided-package")
    assert data["score"] == FULL, outputs(data)[:1500]
    assert "_domain/ (a package folder)" in data["output"], data["output"]


@pytest.mark.parametrize("name", CORRECT_SHADOWS_OF_STUB)
def test_a_correct_shadow_beside_the_stub_earns_nothing(graded, name):
    results = graded[2]
    if name not in results:
        pytest.skip("no C compiler or Python.h here to build an extension module")
    assert function_score(results[name]) == 0, outputs(results[name])[:1500]
    # a __pycache__ is never copied, and beside its .py not named (most honest folders have one)
    assert (IGNORED in results[name]["output"]) is (name != "stub-pycache"), results[name]["output"]


def test_a_provided_module_handed_in_as_a_package_is_not_imported(graded):
    """The provided _domain.py is what runs under its name, whether the folder holds it or not: a
    `_domain/` package of the very same code is left out and named (the module then cannot import
    it), as it would be beside the file; the grading process must know the provided names."""
    data = graded[2]["provided-as-package"]
    assert function_score(data) == 0, outputs(data)[:1500]
    assert "_domain/ (a package folder)" in data["output"], data["output"]


def test_bytecode_without_its_module_is_named_and_earns_nothing(graded):
    """Only a __pycache__ .pyc of the module, no collectives.py: the module is missing, and the note
    says the bytecode was not graded and to hand in the .py."""
    data = graded[2]["pycache-only"]
    assert function_score(data) == 0, outputs(data)[:1500]
    note = next((line for line in data["output"].splitlines() if line.startswith(IGNORED)), "")
    assert f"__pycache__/{pycache_name('collectives')} (compiled bytecode)" in note and "Hand in the .py" in note, \
        data["output"]


def test_an_honest_folder_gets_no_ignored_line(graded):
    """Neither a plain folder nor one where the student ran pytest and keeps a helper module: the
    bytecode cached for anything but the lab's own modules is not worth a line."""
    for name in ("honest", "ran-pytest"):
        assert graded[2][name]["score"] == FULL and IGNORED not in graded[2][name]["output"], graded[2][name]["output"]


@pytest.mark.parametrize("door", ["grade", "grade-batch"])
def test_startup_hooks_in_a_submission_never_run(graded, door):
    """sitecustomize.py, usercustomize.py and a .pth that end the process would cost every point
    if Python ran them at the worker's start: `-I -S`, and the submission joins sys.path only
    after startup. `scalelabs grade` copies the folder in before its worker starts; a batch's
    jail started ahead starts before it."""
    data = grade_json(graded[0] / "site-hooks") if door == "grade" else graded[2]["site-hooks"]
    assert data["score"] == FULL, outputs(data)[:1500]


@pytest.mark.parametrize("mode", ["bubblewrap", "user", "unsandboxed"])
def test_the_worker_starts_isolated_and_without_site(mode):
    """Every boundary starts the worker's Python with -I (no PYTHON* variables, no user site, no
    script folder on sys.path) and -S (no site module: no .pth, sitecustomize or usercustomize)."""
    with Sandbox(None, "collectives", GradingConfig(), mode=mode) as box:
        box._make_root()
        command, _ = box._command()
    worker = max(i for i, arg in enumerate(command) if arg.endswith("worker.py"))   # the script, after the binds
    assert command[worker - 2:worker] == ["-I", "-S"], command


def test_resume_is_fast_and_skips_everyone(graded):
    root, out, results, _ = graded
    start = children_cpu_s()
    proc = run("grade-batch", TOY, root, "--jobs", "2", "--out", out, timeout=300)
    assert proc.returncode in (0, 1) and ", failed 0" in proc.stdout, proc.stderr[-2000:]   # 1: needs a person
    assert f"graded 0, skipped {len(results)}" in proc.stdout
    assert children_cpu_s() - start < 30  # CPU seconds: no student is graded again


def test_fingerprint_and_walk_are_bounded(tmp_path):
    folder = toy.make_submission(tmp_path / "s", REF, toy.key)
    with open(folder / "huge.bin", "wb") as f:
        f.truncate(64 << 30)
    nest(folder, 1500)
    for i in range(3000):
        (folder / f"f{i}.txt").write_text("x")
    start = os.times()
    try:
        tree = walk_submission(folder)
        sha = fingerprint(folder)
    finally:
        unnest(folder)
    end = os.times()
    assert (end.user + end.system) - (start.user + start.system) < 10  # CPU seconds: bounded work
    assert len(tree.files) <= 2000 and any("more than" in s for s in tree.skipped)
    (folder / "collectives.py").write_text(REF + "\n# changed\n")
    assert fingerprint(folder) != sha  # a change to what is graded is seen


def test_the_tree_caps_hold_at_their_documented_values(tmp_path):
    """Depth 16 and 2,000 entries (docs/ARCHITECTURE.md, "submission tree"; the numbers written here):
    a file 16 deep (15 folders down) is taken, the 16th folder is not entered and is named; a folder
    of exactly 2,000 entries is taken whole, one of 2,001 loses one and says so."""
    folder = tmp_path / "deep"
    inner = folder.joinpath(*(f"d{i}" for i in range(15)))
    (inner / "d15").mkdir(parents=True)
    (inner / "kept.py").write_text("x = 1\n")
    (inner / "d15" / "lost.py").write_text("x = 2\n")
    tree = walk_submission(folder)
    assert [f.rel for f in tree.files] == ["/".join(f"d{i}" for i in range(15)) + "/kept.py"]
    assert tree.skipped == ["/".join(f"d{i}" for i in range(16)) + ": folders nested deeper than 16 are ignored"]
    wide = tmp_path / "wide"
    wide.mkdir()
    for i in range(2000):
        (wide / f"f{i:04d}.txt").write_text("x")
    tree = walk_submission(wide)
    assert len(tree.files) == 2000 and tree.skipped == []
    (wide / "f2000.txt").write_text("x")
    tree = walk_submission(wide)
    assert len(tree.files) == 2000 and tree.skipped == ["more than 2000 entries: the rest is ignored"]
