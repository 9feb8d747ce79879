"""`scalelabs lint` catches each of its rules broken on purpose, in one line naming the file, the line
and the fix. Every break is applied to a copy of the repository (three labs broken at once, so lint
runs once), then `scalelabs lint` runs there as an author would run it."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.author import lint
from labs import load
from repo_copy import copy_repository

L06, L02, L09 = "labs/lab06_collectives", "labs/lab02_interconnect", "labs/lab09_performance"
# the keys as the labs compute them: a prompt or a hint that names one fails lint
KEY09 = {q.id: q.key for q in load("lab09_performance").questions}

# (rule, file, old, new, the line the report must name (a regex of the broken file), words of the message)
BREAKS = [
    ("import", f"{L02}/questions.md", "\n## act2_reflection\n",
     "\n## act3_prediction\n\nMore?\n\n### hint\n\nNo.\n\n## act2_reflection\n",
     r"^## act3_prediction$", "a section for ['act3_prediction'], which questions.py does not declare"),
    ("contract", f"{L06}/physics.md",
     "| `comm_fraction` | fraction | comm / (comm + compute), nothing overlapped; above 0.5 is the lab's failure state | definition |\n",
     "", r"^\| `compute_time` \|", "graded function comm_fraction has no row"),
    ("contract", "reference/collectives.py",
     '    check_nonneg("alpha_s", alpha_s)\n    check_positive("bandwidth", bandwidth)\n    ### BEGIN SOLUTION\n    return alpha_s + message_bytes',
     '    check_positive("bandwidth", bandwidth)\n    ### BEGIN SOLUTION\n    return alpha_s + message_bytes',
     r"^def p2p_time\(", "p2p_time: alpha_s=nan is accepted"),
    ("items", f"{L06}/items.py", 'dict(alpha_s=ALPHA_S, bandwidth=C.IB_HDR200_BANDWIDTH)),',
     "dict(alpha_s=ALPHA_S, bandwidth=0.0)),", r'FunctionItem\("critical_message_size"',
     "critical_message_size's example 'InfiniBand HDR' is not a valid call"),
    ("sampler", f"{L06}/items.py", 'domain=_H_P2P, properties=_public("p2p_time")',
     'domain=st.fixed_dictionaries({"message_bytes": st.integers(min_value=0), "alpha_s": st.just(1e-6), '
     '"bandwidth": st.just(5e10)}), properties=_public("p2p_time")',
     r'FunctionItem\("p2p_time"', "p2p_time's hidden domain uses ['IntegersStrategy']"),
    ("sampler", f"{L06}/items.py", 'domain=_H_ALLREDUCE, properties=_public("tree_allreduce_time")',
     'domain=public.ALLREDUCE, properties=_public("tree_allreduce_time")', r'FunctionItem\("tree_allreduce_time"',
     "tree_allreduce_time's hidden domain is a strategy of properties.py"),
    ("keys", f"{L06}/questions.py", "], _act2_choices.index(_act2_picks), offset=0)", "], 1, offset=0)",
     r"^\], 1, offset=0\)", "act2_prediction is a prediction whose key index 1 is typed"),
    ("keys", f"{L09}/questions.md", "-week budget?\n", f"-week budget? (Not option {KEY09['act2_prediction']}, surely.)\n",
     r"^## act2_prediction$", f"act2_prediction: its prompt names the key {KEY09['act2_prediction']!r}"),
    ("keys", f"{L09}/questions.md", "that anything is broken.\n",
     f"that anything is broken. The answer {KEY09['act1_prediction']} follows.\n",
     r"^## act1_prediction$", f"act1_prediction: its hint names the key {KEY09['act1_prediction']!r}"),
    ("properties", f"{L06}/properties.py", "\ndef _link(d: dict, **changes) -> dict:",
     "\ndef _orphan_check(f, d):\n    assert f(**d) >= 0\n\n\ndef _link(d: dict, **changes) -> dict:",
     r"^def _orphan_check", "_orphan_check is neither declared a property nor used"),
    ("notebook", f"{L06}/notebook.py", "\n# %% grades=true", "\n# %%\nprint(act1_prediction)\n\n# %% grades=true",
     r"^print\(act1_prediction\)", "a cell reads ['act1_prediction'] without waiting for the answer"),
    ("misconceptions", "tests/labs/lab06_collectives/impls/wrong_a.py",
     "    return message_bytes / bandwidth                       # forgets the latency",
     "    return 3 * message_bytes / bandwidth                   # a factor nobody explains",
     r"^def p2p_time\(", "wrong_a's p2p_time computes none of the lab's declared wrong models"),
    ("measurements", f"{L06}/measurements.py", "busbw is about 365-370 GBps", "busbw is about 360-370 GBps",
     r'id="ring_one_node"', "ring_one_node: the quote does not contain the published figure 365"),
    ("giveaways", f"{L06}/notebook.py", "# **The setup.** Each of the n GPUs",
     "# **The setup.** The master carries 128× a ring rank's bytes. Each of the n GPUs",
     r'^# %% answer="act1_prediction"', "act1_prediction: keyed figure '128×' is readable before the question"),
    ("giveaways", f"{L06}/notebook.py", '# %% answer="act1_reflection"\n\n# %% [markdown]\n# ## Act II',
     '# %% answer="act1_reflection"\n\n# %% [markdown]\n# Naive AllReduce funnels every byte through one link; ring '
     'keeps every link busy and sends the least any AllReduce can, about 2M per rank.\n#\n# ## Act II',
     r'^# %% answer="act1_reflection"', "states its key"),
    ("notebook", f"{L09}/notebook.py", "\n# ## Act II — Distributed performance analysis",
     "\n# **Takeaway (Act I).** Measure before you optimise.\n#\n# ## Act II — Distributed performance analysis",
     r"^# \*\*Takeaway \(Act I\)", "a markdown cell holds a Takeaway"),
    ("derive", "reference/collectives.py", "    Derive: the buffer is cut into n chunks of M/n bytes.",
     "    Derive: T = 2(n-1) * alpha_s + 2(n-1)/n * M / B. The buffer is cut into n chunks of M/n bytes.",
     r"^def ring_allreduce_time\(", "ring_allreduce_time's stub docstring states its closed form"),
    ("leaks", f"{L06}/notebook.py", "# **The setup.** The master",
     "# ACT1_MESSAGE_BYTES = ACT1_PARAMS * FP16_BYTES\n#\n# **The setup.** The master",
     r"", "the built notebook leaks"),
    ("variants", f"{L06}/variants.py", '"N_GPUS": (32, 64, 128, 256),', '"N_GPUS": (32, 64, 128, 512),', r"^VARY",
     "version 3: does not compute at N_GPUS=512"),   # 512 GPUs: the byte ratio falls in no option's range
    ("samples", f"{L06}/samples.toml",
     'wrong = ["naive_allreduce_time", "rabenseifner_allreduce_time", "ring_tree_crossover_bytes"]',
     'wrong = ["naive_allreduce_time", "rabenseifner_allreduce_time"]', r"",
     "defines ['naive_allreduce_time', 'rabenseifner_allreduce_time', 'ring_tree_crossover_bytes']: only graded "
     "functions it declares wrong"),
    ("typed-numbers", f"{L06}/questions.md", "NVLink's {{ C.NVLINK4_BANDWIDTH | fmt(\".0f\", 1e9) }} GB/s line rate",
     "NVLink's 450 GB/s line rate", r"^Compare each measurement with NVLink's 450 GB/s",
     "'450 GB/s' is typed in measurement_reflection, its hint"),
    ("typed-numbers", f"{L06}/questions.py", 'Option("Ring compresses the gradients on the wire to cut the bytes sent",',
     'Option("Ring compresses the 14 GB gradient on the wire to cut the bytes sent",', r"Ring compresses the 14 GB",
     "'14 GB' is typed in an option's text"),
    ("typed-numbers", f"{L09}/notebook.py", "# ## Act I — The profiling revelation",
     "# ## Act I — The profiling revelation\n#\n# The cluster's links carry 50 GB/s each.", r"^# The cluster's links carry 50",
     "'50 GB/s' is typed in the story"),
    ("import-time", f"{L09}/challenges.py", "\nfrom reference import performance as ref\n",
     "\nfrom reference import performance as ref\n\n_GRID = sum(range(40_000_000))   # a grid searched at import\n",
     r"^_GRID = ", "over the 0.2 s budget; this line about"),
]
# where the report is not the broken file itself: the samples break is named in the sample's diff
REPORTED_IN = {"samples": f"{L06}/samples/partly_wrong.py"}


def _line(path: Path, pattern: str) -> int:
    return lint.line_of(path, pattern) if pattern else 1


@pytest.fixture(scope="module")
def linted(tmp_path_factory):
    """(the copy, lint's output) of a repository copy with every break applied."""
    copy = copy_repository(tmp_path_factory.mktemp("lint") / "repo")
    for _, name, old, new, _, _ in BREAKS:
        path = copy / name
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, (name, old)
        path.write_text(text.replace(old, new), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(copy)}
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "lint", "lab02_interconnect", "lab06_collectives",
                           "lab09_performance"], cwd=copy, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 1, done.stdout + done.stderr
    return copy, done.stdout


def test_every_rule_has_a_break():
    assert {rule for rule, *_ in BREAKS} == {"import", *lint.RULES}


@pytest.mark.parametrize("rule, name, old, new, where, words", BREAKS, ids=[f"{b[0]}-{i}" for i, b in enumerate(BREAKS)])
def test_each_broken_rule_is_one_line_naming_file_line_and_fix(linted, rule, name, old, new, where, words):
    copy, output = linted
    reported = REPORTED_IN.get(rule, name)
    line = _line(copy / name, where) if reported == name else 1
    lines = [text for text in output.splitlines()
             if text.startswith(f"{reported}:{line}: {rule}: ") and words in text]
    assert len(lines) == 1, f"no line {reported}:{line}: {rule}: ...{words}... in:\n{output}"
    assert re.search(r" \(fix: .+\)$", lines[0]), lines[0]


def test_a_lab_that_does_not_import_is_one_line_and_no_traceback(linted):
    copy, output = linted
    lab02 = [text for text in output.splitlines() if text.startswith(f"{L02}/") or text.startswith("lab02_interconnect:")]
    assert len(lab02) == 2 and "Traceback" not in output, lab02
    assert lab02[-1].startswith("lab02_interconnect: 1 problem(s), ")


def test_an_unknown_lab_or_rule_is_named():
    env = {**os.environ}
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "lint", "lab99_nothing"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 1 and "import: no lab 'lab99_nothing'" in done.stdout, done.stdout
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "lint", "--rule", "spelling"], capture_output=True,
                          text=True, env=env, timeout=120)
    assert done.returncode == 2 and "unknown rule spelling" in done.stderr, done.stderr
