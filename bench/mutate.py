"""Mutation check: does some test fail when a behaviour breaks? (run on demand, not in CI)

Each entry of MUTATIONS is one deliberate break: (file, exact old snippet, new snippet, what it
breaks, the pytest arguments that should catch it). For each, the tracked tree (`git ls-files`) is
copied to a temporary folder, the break applied there, and the named tests run in one process
(`python -m pytest -n 0 -x -q ...`) with the copy first on PYTHONPATH, so the copy is what is
tested, never the installed package. A break is

    caught         the tests failed
    NOT caught     the tests passed: a behaviour no test guards
    stale snippet  the old snippet is not in the file exactly once: an error, never a pass

A control run (no break) of every named test comes first; if it fails, nothing below is meaningful.
Mutations run one after another (the machine is shared); keep each selection narrow.

    python bench/mutate.py                 # all
    python bench/mutate.py leak-rglob tol  # those whose id starts with one of these
Exit status: 0 when every break is caught, 1 otherwise.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Mutation:
    id: str
    file: str
    old: str
    new: str
    breaks: str
    tests: tuple[str, ...]


M = Mutation
MUTATIONS = [
    # --- the five of issue 17 ---
    M("leak-rglob", "autograder/build/leakscan.py",
      'found.extend(sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p])',
      'found.extend(sorted(f for f in p.glob("*") if f.is_file()) if p.is_dir() else [p])',
      "the leak scan stops descending into folders",
      ("tests/release/test_release_leakscan.py",)),
    M("gradebook-shifted", "autograder/classroom/gradebook.py",
      "grade.auto_score = scores.get(item, 0.0)",
      "grade.auto_score = scores.get(list(points)[(list(points).index(item) + 1) % len(points)], 0.0)",
      "the gradebook writer gives each item the next item's score",
      ("tests/engine/test_cli_batch.py", "-k", "resumes")),
    M("gradebook-shifted-demo", "autograder/classroom/gradebook.py",
      "grade.auto_score = scores.get(item, 0.0)",
      "grade.auto_score = scores.get(list(points)[(list(points).index(item) + 1) % len(points)], 0.0)",
      "the same, seen through `scalelabs demo` (all five labs)",
      ("tests/test_demo.py", "-k", "gradebook")),
    M("resume-ignores-changes", "autograder/classroom/batch.py",
      'if done and done["scalelabs"].get("fingerprint") == sha and done["scalelabs"].get("assignment") == assignment.id:',
      "if done:",
      "grade-batch skips every student with a result, even when their files changed",
      ("tests/engine/test_cli_batch.py", "-k", "resumes")),
    M("tolerance-1pc", "autograder/engine/checks.py",
      "return math.isclose(e, g, rel_tol=rel_tol, abs_tol=abs_tol)",
      "return math.isclose(e, g, rel_tol=max(rel_tol, 0.01), abs_tol=abs_tol)",
      "numbers compare with 1 % relative tolerance",
      ("tests/engine/test_grading_power.py", "-k", "half_a_percent")),
    M("no-shrinking", "autograder/engine/draw.py",
      "phases=(Phase.reuse, Phase.shrink))(test)",
      "phases=(Phase.reuse,))(test)",
      "counterexamples are not shrunk",
      ("tests/engine/test_grading_power.py", "-k", "shrunk")),
    # --- the engine ---
    M("default-tolerance", "autograder/engine/spec.py",
      "rel_tol: float = 1e-9 ", "rel_tol: float = 1e-2 ",
      "the declared default tolerance goes to 1 %",
      ("tests/engine/test_grading_power.py", "-k", "half_a_percent")),
    M("scoring-weights", "autograder/engine/scoring.py",
      'SHARES = {"example": 0.30, "hidden": 0.40, "property": 0.30}',
      'SHARES = {"example": 0.40, "hidden": 0.30, "property": 0.30}',
      "examples weigh 40 %, the hidden check 30 %",
      ("tests/engine/test_scoring.py",)),
    M("seed-ignores-student", "autograder/engine/checks.py",
      'digest = hashlib.sha256("\\0".join((assignment_id, student_id, item, check)).encode()).digest()',
      'digest = hashlib.sha256("\\0".join((assignment_id, item, check)).encode()).digest()',
      "every student gets the same hidden inputs",
      ("tests/engine/test_grading_power.py", "-k", "different_hidden_inputs")),
    M("no-memory-limit", "autograder/engine/sandbox/client.py",
      "resource.setrlimit(resource.RLIMIT_AS, (mem, mem))",
      "pass",
      "the worker has no address-space limit",
      ("tests/engine/test_bad_input.py", "-k", "memory")),
    M("no-call-timeout", "autograder/engine/sandbox/client.py",
      'return self._request({"op": "call", "name": name, "kwargs": kwargs}, self.config.call_timeout_s, name,',
      'return self._request({"op": "call", "name": name, "kwargs": kwargs}, 30 * self.config.call_timeout_s, name,',
      "a call may run 30 times its time limit",
      ("tests/engine/test_bad_input.py", "-k", "budget_exhaustion or timeout_inside")),
    M("answer-any-expression", "autograder/engine/questions.py",
      "if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):",
      "if not isinstance(value, (ast.Constant, ast.Call, ast.Name, ast.BinOp)):",
      "a non-literal answer cell (a call, a name, an expression) is accepted",
      ("tests/engine/test_questions.py",)),
    M("answer-wrong-letter-scores", "autograder/engine/questions.py",
      "right = letter == question.key", "right = letter in question.options",
      "any listed letter scores as the key",
      ("tests/engine/test_questions.py",)),
    M("feedback-unescaped", "autograder/classroom/feedback.py",
      'autoescape=select_autoescape(["html", "j2"])', "autoescape=False",
      "a student's output reaches the feedback page as live HTML",
      ("tests/engine/test_cli_batch.py", "-k", "resumes")),
    # --- the doors ---
    M("nbgrader-unscaled", "autograder/doors/nbgrader.py",
      "scaled = 0.0 if max_score == 0 else min(points, max(0.0, score * points / max_score))",
      "scaled = 0.0 if max_score == 0 else max(0.0, score)",
      "EngineScores writes the raw score, not scaled to the cell's points",
      ("tests/doors/test_nbgrader_agreement.py", "-k", "engine_scores_overwrite")),
    M("nbgrader-full-credit", "autograder/doors/nbgrader.py",
      "cell.outputs = score_outputs(item_feedback(result, item), score, max_score, float(meta[\"points\"]))",
      "cell.outputs = score_outputs(item_feedback(result, item), max_score, max_score, float(meta[\"points\"]))",
      "every nbgrader grade cell gets full credit",
      ("tests/doors/test_nbgrader_agreement.py", "-k", "gradebook_scores_equal")),
    M("otter-verdict", "autograder/doors/otter.py",
      "                                t.score >= t.max_score) for t in tests]",
      "                                True) for t in tests]",
      "otter marks every test case passed, whatever its score",
      ("tests/doors/test_otter_agreement.py", "-k", "verdict")),
    # --- the release pipeline ---
    M("stub-keeps-body", "autograder/build/stubgen.py",
      'STUB_LINE = "raise NotImplementedError()"', 'STUB_LINE = "pass"',
      "stub regions become `pass` instead of raising",
      ("tests/release/test_release_stubgen.py",)),
    M("release-stale", "autograder/build/notebook.py",
      'with X your letter.', 'with X the letter you chose.',
      "the notebook builder's text changes, release/ is not regenerated",
      ("tests/release/test_release_pipeline.py", "-k", "not_stale")),
    M("leak-no-keys", "autograder/build/leakscan.py",
      "    if keys:\n        for qid, key in secrets.keys.items():",
      "    if False:\n        for qid, key in secrets.keys.items():",
      "the leak scan stops looking for answer keys",
      ("tests/release/test_release_leakscan.py",)),
    # --- grading integrity (issue 12) ---
    M("reply-count-unchecked", "autograder/engine/sandbox/client.py",
      "if not isinstance(replies, list) or len(replies) != len(kwargs_list):",
      "if not isinstance(replies, list):",
      "a forged batch reply with fewer replies than inputs is accepted",
      ("tests/security/test_forged_replies.py",)),
    M("physics-gate-open", "autograder/engine/scoring.py",
      "    if total is None:\n        return None if hidden_passed else",
      "    return None\n    if total is None:\n        return None if hidden_passed else",
      "the physics gate is always open: a constant collects example and property points",
      ("tests/security/test_vacuous_credit.py", "-k", "lab06")),
    M("jail-as-root", "autograder/engine/sandbox/client.py",
      'cmd = [self.bwrap, "--unshare-all", "--unshare-user", "--uid", str(JAIL_UID), "--gid", str(JAIL_UID),',
      'cmd = [self.bwrap, "--unshare-all", "--unshare-user", "--uid", "0", "--gid", "0",',
      "the bubblewrap jail runs student code as uid 0",
      ("tests/security/test_boundary.py", "-k", "unhooked and bubblewrap")),
    # --- the reference ---
    M("physics-compute-time", "reference/collectives.py",
      "return flops / (n_gpus * peak_flops * mfu)",
      "return 2 * flops / (n_gpus * peak_flops * mfu)",
      "compute time twice too long",
      ("tests/labs/lab06_collectives/test_lab06_reference.py",)),
    # --- named misconceptions and the class report (issue 15) ---
    M("diagnose-any", "autograder/engine/diagnose.py",
      "if all(computes(m.model, kw, v) for kw, v in numeric)), None)",
      "if any(computes(m.model, kw, v) for kw, v in numeric)), None)",
      "a misconception is named when it matches one observed value, not every one",
      ("tests/labs/test_misconceptions.py", "-k", "named and lab06")),
    M("diagnose-right-numbers", "autograder/engine/diagnose.py",
      "        return None   # the numbers are right",
      "        pass   # the numbers are right",
      "a function whose numbers are all right can still be given a misconception",
      ("tests/engine/test_diagnose.py",)),
    M("diagnose-silent", "autograder/engine/checks.py",
      'output=f"{o.output}\\n{feedback_line(found)}"',
      "output=o.output",
      "the named misconception stays out of the student's feedback",
      ("tests/labs/test_misconceptions.py", "-k", "what_and_where and lab06")),
    M("report-no-reflections", "autograder/classroom/report.py",
      'if t.item in answers and t.kind in ("prediction", "reflection"):',
      'if t.item in answers and t.kind == "prediction":',
      "the class report drops the reflections' answers",
      ("tests/test_report.py", "-k", "counts")),
    M("report-hidden-section", "autograder/classroom/templates/report.html.j2",
      '<section id="predictions">', "<section>",
      "the report page loses its prediction-vs-reflection section",
      ("tests/test_report.py", "-k", "chromium")),
    # --- design challenges ---
    M("challenge-all-shares", "autograder/engine/challenges.py",
      "score = round(sum(share for v in verdicts if v.met), scoring.DIGITS)",
      "score = round(sum(share for v in verdicts), scoring.DIGITS)",
      "a design earns every constraint's share, met or not",
      ("tests/engine/test_challenges.py",)),
    M("challenge-bool-is-a-number", "autograder/engine/challenges.py",
      "type(node.value) in (int, float)",
      "isinstance(node.value, (int, float))",
      "True/False read as the numbers 1 and 0",
      ("tests/engine/test_challenges.py",)),
    M("challenge-lab02-bubble-strict", "labs/lab02_interconnect/challenges.py",
      'cut["bubble"] <= BUBBLE_CEILING',
      'cut["bubble"] < BUBBLE_CEILING',
      "a bubble exactly at the ceiling no longer meets it",
      ("tests/labs/lab02_interconnect/test_lab02_challenge.py",)),
    M("challenge-lab01-exact", "labs/lab01_scale/challenges.py",
      "abs(yours - breakeven) <= BREAKEVEN_TOLERANCE",
      "yours == breakeven",
      "a breakeven rounded to two decimals no longer counts",
      ("tests/labs/lab01_scale/test_lab01_challenge.py",)),
]


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [f for f in out.decode().split("\0") if f]


def copy_tree(dest: Path) -> None:
    for rel in tracked_files():
        src = REPO / rel
        if src.is_file():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)


def run_tests(root: Path, args: tuple[str, ...]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    # a private --basetemp: pytest never touches (or trips over) other runs' folders in /tmp
    basetemp = root.parent / f"{root.name}-pytest"
    return subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-x", "-q", "-p", "no:cacheprovider",
                           f"--basetemp={basetemp}", *args], cwd=root, env=env, capture_output=True, text=True)


def check_isolation(root: Path) -> None:
    """The copy, not the installed worktree, is what imports."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    found = subprocess.run([sys.executable, "-c", "import autograder, reference; print(autograder.__file__); "
                            "print(reference.__file__)"], cwd=root, env=env, capture_output=True, text=True).stdout
    assert all(Path(line).is_relative_to(root) for line in found.split()), found


def apply(root: Path, m: Mutation) -> bool:
    path = root / m.file
    text = path.read_text(encoding="utf-8")
    if not m.old or text.count(m.old) != 1:
        return False
    path.write_text(text.replace(m.old, m.new), encoding="utf-8")
    return True


def main(argv: list[str]) -> int:
    chosen = [m for m in MUTATIONS if not argv or any(m.id.startswith(a) for a in argv)]
    rows, ok = [], True
    with tempfile.TemporaryDirectory(prefix="scalelabs-mutate-") as tmp:
        base = Path(tmp) / "control"
        copy_tree(base)
        check_isolation(base)
        for args in sorted({m.tests for m in chosen}):
            control = run_tests(base, args)
            if control.returncode != 0:
                print(f"CONTROL FAILS (no break applied): {' '.join(args)}\n{control.stdout[-3000:]}")
                return 1
        for m in chosen:
            root = Path(tmp) / m.id
            copy_tree(root)
            started = time.perf_counter()
            if not apply(root, m):
                verdict, detail = "stale snippet", f"{m.file}: old snippet not found exactly once"
            else:
                proc = run_tests(root, m.tests)
                caught = proc.returncode != 0
                failed = [line.split(" ")[1] for line in proc.stdout.splitlines() if line.startswith("FAILED ")]
                verdict = "caught" if caught else "NOT caught"
                detail = failed[0] if failed else proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
            seconds = time.perf_counter() - started
            ok &= verdict == "caught"
            rows.append((m.id, verdict, f"{seconds:.0f} s", m.breaks, detail))
            print(f"{m.id:24s} {verdict:13s} {seconds:5.0f} s  {m.breaks}\n{'':24s} {detail}", flush=True)
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(root.parent / f"{root.name}-pytest", ignore_errors=True)
    caught = sum(r[1] == "caught" for r in rows)
    print(f"\n{caught} of {len(rows)} breaks caught")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
