"""A lab's sample class graded by a given Python through `scalelabs grade-batch`, each student's scores
held to what the lab's samples.toml declares (the jail's layouts, the user sandbox)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from attack import REPO
from autograder.classroom import samples
from autograder.classroom.gradebook import item_scores
from labs import load


def grade_sample_class(python: Path | str, lab: str, where: Path, mode: str, env: dict | None = None) -> None:
    """`grade-batch` of `lab`'s sample class by `python` (in `env`): every result is of `mode`, and each
    student gets what samples.toml declares (a function full marks unless declared wrong or the module
    is a stub or does not compile; a prediction its points when recorded, in the default commitment
    mode; a reflection when it names the key)."""
    declared = samples.sample_class(lab)
    for student in declared:
        samples.materialise(lab, student, where / "class" / student)
    proc = subprocess.run([str(python), "-c", "from autograder.cli import main; main()", "grade-batch", lab,
                           str(where / "class"), "--jobs", "1", "--out", str(where / "out")],
                          cwd=REPO, capture_output=True, text=True, env=env, timeout=900)
    # exit 1 names the students who need a person (here `broken`, whose module does not import), 2 a refusal
    assert proc.returncode in (0, 1) and "failed 0" in proc.stdout, proc.stdout[-2000:] + proc.stderr[-2000:]
    a = load(lab)
    for student, entry in declared.items():
        data = json.loads((where / "out" / "results" / f"{student}.json").read_text())
        assert data["scalelabs"]["sandbox"] == mode
        scores = item_scores(data)
        no_module = entry.get("module") == "stub" or not entry.get("compiles", True)
        for f in a.functions:
            full = scores[f.name] == pytest.approx(f.points)
            assert full == (not no_module and f.name not in entry.get("wrong", ())), (student, f.name, scores[f.name])
        for q in a.questions:   # the default commitment mode: a recorded prediction earns its points (as test_labs)
            answer = entry.get("answers", {}).get(q.id)
            if q.kind == "prediction":
                word = samples._ANSWER_WORDS.get(answer, answer) if isinstance(answer, str) else answer
                value = samples.kernel_value(samples.answer_source(a, q.id, word), q.id) if answer else None
                earns = entry.get("recorded", True) and isinstance(value, str) and value.strip().upper() in q.options
            else:
                earns = answer == "key"
            assert scores[q.id] == (q.points if earns else 0), (student, q.id)
    assert json.loads((where / "out" / "results" / "correct.json").read_text())["score"] == a.total_points
