"""Any file tree: links are never followed (a linked module or notebook counts as missing), sparse
huge files, 1,500 nested folders, FIFOs and device nodes get that student a clear reason in bounded
time, the class is graded, and a resumed batch fingerprints without reading whole files."""
import os
import stat

import pytest

import toy
from attack import FULL, TOY, children_cpu_s, function_score, grade_class, honest, outputs, run
from autograder.classroom.batch import fingerprint
from autograder.engine.sandbox.client import walk_submission

REF = toy.reference_source()
NOTEBOOK = f"{toy.ASSIGNMENT_ID}.ipynb"


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


def test_resume_is_fast_and_skips_everyone(graded):
    root, out, results, _ = graded
    start = children_cpu_s()
    proc = run("grade-batch", TOY, root, "--jobs", "2", "--out", out, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
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
