"""The user sandbox's files are the kernel's to guard (issue 37): with bubblewrap unusable and the grader
root, student code opens nothing outside its submission copy, its scratch folder, the interpreter, its
stdlib and numpy, however it spells the path (tests/security/escapes.py: absolute, relative after
chdir, dir_fd, a `..` walk, openat2, /proc/self/root, /proc/self/cwd, /proc/self/fd, another
process's /proc entries, inherited fds, links) -- on a plain host and in a container-like grader
(tests/security/container.py: Docker's default capabilities and syscall refusals, no user namespace).

The targets are what file modes alone left open on main: an earlier classmate's results in a
`grade-batch --out` folder outside the course (world-readable, as grade-batch writes it), and a
world-readable copy of the course (a TA's clone) whose reference/ an untouched stub imports. One class
per setting, graded twice (the honest classmate first, so that their results exist; then the
attackers): the honest classmate keeps full marks, every attack reads and scores nothing.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import container
import escapes
import toy
from attack import ENGINE, FULL, REPO, SCALELABS, TOY, env_with_only, function_score, honest
from autograder.engine.sandbox.modes import user_mode_problem

pytestmark = pytest.mark.skipif(user_mode_problem() is not None, reason="the user sandbox needs root")
SETTINGS = ["host", pytest.param("container", marks=pytest.mark.skipif(not container.applies(),
                                                                        reason="the container filter is x86_64's"))]
STOLEN_ITEMS = ["ring_allreduce_time", "tree_allreduce_time", "best_allreduce_algorithm"]


def grade_batch(root: Path, out: Path, setting: str, env: dict) -> subprocess.CompletedProcess:
    """`scalelabs grade-batch` of the toy class in the user mode: on the host with bwrap off PATH (as
    the other user-mode tests), in the container-like setting with it on PATH and unusable."""
    args = [*SCALELABS, "grade-batch", TOY, str(root), "--jobs", "2", "--out", str(out)]
    if setting == "host":
        return subprocess.run(args, cwd=ENGINE, env=env, capture_output=True,
                              text=True, timeout=900)
    return subprocess.run([*container.prefix(), *args], cwd=ENGINE, preexec_fn=container.installer(),
                          capture_output=True, text=True, timeout=900)


def world_readable(base: Path) -> None:
    for path in [base, *base.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture(scope="module", params=SETTINGS)
def graded(request):
    """({student: results.json}, the folders) of one class graded in `request.param`'s setting."""
    base = Path(tempfile.mkdtemp(prefix="scalelabs-escapes-"))      # pytest's tmp folders are 0700
    try:
        root, out, clone = base / "class", base / "out", base / "ta-clone" / "scalelabs"
        honest(root)
        shutil.copytree(REPO / "reference", clone / "reference", ignore=shutil.ignore_patterns("__pycache__"))
        world_readable(base)
        (base / "tools").mkdir()
        env = env_with_only(base / "tools", "setpriv", "unshare")
        first = grade_batch(root, out, request.param, env)
        assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-3000:]
        victim = out / "results" / "honest.json"
        assert victim.stat().st_mode & 0o004, "grade-batch's results are world-readable: the target is real"
        target, marker = str(victim), b'"score"'
        assert marker in victim.read_bytes()
        toy.make_submission(root / "reader", toy.reference_source() + escapes.reader(target, marker), toy.key)
        toy.make_submission(root / "walker", toy.reference_source() + escapes.hooked_walk(target, marker), toy.key)
        toy.make_submission(root / "cloner", toy.stub_source() + escapes.cloner(str(clone), STOLEN_ITEMS), toy.key)
        world_readable(root)
        second = grade_batch(root, out, request.param, env)
        assert second.returncode in (0, 1) and ", failed 0" in second.stdout, second.stdout[-2000:] + second.stderr[-3000:]
        results = {p.stem: json.loads(p.read_text()) for p in (out / "results").glob("*.json")}
        yield results, {"base": base, "clone": clone, "victim": victim, "log": second.stdout + second.stderr}
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_every_spelling_of_a_path_reads_nothing_outside_the_jail(graded):
    """The reader tries each spelling of escapes.READS on the earlier classmate's results."""
    results, _ = graded
    data = results["reader"]
    assert data["scalelabs"]["sandbox"] == "user"
    mask = escapes.returned(data, "comm_fraction")
    read = escapes.spellings(mask & 0xFFFF, escapes.READS)
    assert read == [], f"student code read an earlier classmate's results by: {', '.join(read)}"
    assert "absolute" in escapes.spellings(mask >> 16, escapes.READS), "the attempts never ran: nothing read its own copy"
    assert results["walker"]["scalelabs"]["sandbox"] == "user"
    assert escapes.returned(results["walker"], "comm_fraction") == 0, "the audit hook's dir_fd walk read it"


def test_a_world_readable_copy_of_the_course_gives_no_function_point(graded):
    """An untouched stub that imports a TA clone's reference: 0 function points however it spells the clone."""
    results, folders = graded
    data = results["cloner"]
    imported = escapes.spellings(escapes.returned(data, "comm_fraction"), escapes.IMPORTS)
    assert imported == [], f"student code imported the TA clone's reference by: {', '.join(imported)}"
    assert function_score(data) == 0, [t["name"] for t in data["tests"] if t["score"]]
    assert (folders["clone"] / "reference" / "collectives.py").is_file()    # it was there to take


def test_the_honest_classmate_keeps_full_marks_and_their_results(graded):
    results, folders = graded
    assert results["honest"]["score"] == FULL
    assert results["honest"]["scalelabs"]["sandbox"] == "user"
    assert json.loads(folders["victim"].read_text())["score"] == FULL
