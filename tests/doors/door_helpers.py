"""Helpers of the door tests (a module of its own: `conftest` names collide across folders):
the sample class (correct, buggy, noisy with a non-literal answer, untouched stub) and tool runs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from autograder.build import release
from autograder.build.publictests import CODE_TEMPLATES
from autograder.build.stubgen import flat_imports

TESTS_RELEASE = Path(__file__).resolve().parents[1] / "release"
sys.path.insert(0, str(TESTS_RELEASE))

import release_toy as toy  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

_RING = "return 2 * (n - 1) * alpha_s + 2 * (n - 1) / n * message_bytes / bandwidth"
_DEPTH = "depth = (n - 1).bit_length()"


# `otter run` writes an empty submission_metadata.json; this runs otter with Gradescope's, for one submission
# (argv: the metadata as JSON, the autograder zip, the submission, the output folder).
OTTER_WITH_METADATA = """
import json, sys
import otter.run
metadata = json.loads(sys.argv[1])
real_dump = json.dump
def dump(obj, fp, *args, **kwargs):
    return real_dump(metadata if obj == {} else obj, fp, *args, **kwargs)
json.dump = dump
otter.run.main(sys.argv[3], autograder=sys.argv[2], output_dir=sys.argv[4], no_logo=True)
"""


def _reference_module() -> str:
    return flat_imports((REPO / "reference" / "collectives.py").read_text())


def sample_class() -> dict[str, tuple[str | None, dict]]:
    """student -> (module source or None for the stub, answers)."""
    correct = _reference_module()
    assert _RING in correct and _DEPTH in correct
    buggy = correct.replace(_RING, "return 2 * n * alpha_s + (n - 1) / n * message_bytes / bandwidth")
    buggy = buggy.replace(_DEPTH, "depth = max(1, n.bit_length() - 1)")
    future = "from __future__ import annotations\n"
    noisy = correct.replace(future, future + 'import sys, warnings\nwarnings.warn("noisy module")\n'
                                             'print("noise", file=sys.stderr)\n', 1)
    return {
        "ada": (correct, {"act1_prediction": "@key"}),
        "bob": (buggy, {"act1_prediction": "@wrong"}),
        "cy": (noisy, {"act1_prediction": {"source": 'act1_prediction = "ABCD"[3]'}}),
        "dee": (None, {}),
    }


# A folder whose rfc3987_syntax module raises ImportError (its docstring says why).
WITHOUT_RFC3987 = Path(__file__).resolve().parent / "without_rfc3987"


def env(without_rfc3987: bool = False) -> dict:
    """The environment of the door commands: this venv's tools first on PATH, the toy declaration
    importable. without_rfc3987: as the otter zip's setup.sh leaves Gradescope's (WITHOUT_RFC3987),
    for the runs whose subject is not that package (each nbgrader or otter process then starts
    about 2 s of CPU sooner); the toy-course door tests (tests/doors/test_{nbgrader,otter}_agreement.py),
    tests/security/test_door_nbgrader.py and tests/test_course_week.py keep it, so both
    environments stay covered."""
    e = dict(os.environ)
    e["PATH"] = f"{BIN}{os.pathsep}{e.get('PATH', '')}"
    first = [str(WITHOUT_RFC3987)] if without_rfc3987 else []
    e["PYTHONPATH"] = os.pathsep.join([*first, str(TESTS_RELEASE), e.get("PYTHONPATH", "")])
    return e


def run(command: list[str], cwd: Path, without_rfc3987: bool = False) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env(without_rfc3987))
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done


# The toy course's nbgrader_config.py: the repository's config, the toy declaration on sys.path.
_COURSE_CONFIG = CODE_TEMPLATES.from_string('''\
import sys
sys.path.insert(0, {{ tests_release | repr }})
exec(compile(open({{ config | repr }}).read(), {{ config | repr }}, "exec"))
c.Autograde.exclude_overwriting = {**c.Autograde.exclude_overwriting, {{ toy_id | repr }}: ["collectives.py"]}
c.EngineScores.declaration = "release_toy:ASSIGNMENT"
''')


def toy_course(root: Path, assignment, class_: dict[str, tuple[str | None, dict]]) -> Path:
    """root/ as a course of the toy assignment: source/, nbgrader_config.py, release/ (by `nbgrader
    generate_assignment`) and samples/<student>/ (collectives.py unless None, answers.json) of class_."""
    release.build_source(assignment, root, toy.PROPERTIES_PATH)
    (root / "nbgrader_config.py").write_text(_COURSE_CONFIG.render(
        tests_release=str(TESTS_RELEASE), config=str(REPO / "nbgrader_config.py"), toy_id=assignment.id))
    run([str(BIN / "nbgrader"), "generate_assignment", assignment.id, "--force"], root)
    for student, (module, answers) in class_.items():
        folder = root / "samples" / student
        folder.mkdir(parents=True)
        if module is not None:
            (folder / "collectives.py").write_text(module)
        (folder / "answers.json").write_text(json.dumps(answers))
    return root




def gradescope_metadata(users: dict, created_at: str | None, lab_due, previous: list | None = None,
                        release=None) -> dict:
    """submission_metadata.json as Gradescope writes it for one upload. Its autograder documentation
    (gradescope-autograders.readthedocs.io, "Submission Metadata") gives `created_at` (the upload's time),
    `assignment` (`due_date`, `late_due_date`: null where none is set, `release_date`, ...), `users` (every
    member of a group) and `previous_submissions` (`submission_time`, `score`, `results`); each user also
    carries `assignment` with their own dates (the class's, or an extension's set in Gradescope's
    interface; not on that page). `users`: sid -> their own due date (an aware datetime)."""
    from datetime import timedelta, timezone

    iso = lambda moment: moment.astimezone(timezone.utc).isoformat()   # noqa: E731
    late_due, release = lab_due + timedelta(days=7), release or lab_due - timedelta(days=14)
    metadata = {"id": 4242, "assignment": {"id": 25828, "title": "toy", "due_date": iso(lab_due),
                                           "late_due_date": iso(late_due), "release_date": iso(release),
                                           "group_submission": len(users) > 1, "group_size": 2, "total_points": "10.0"},
                "users": [{"sid": sid, "email": f"{sid}@example.edu", "name": sid, "id": 1000 + n,
                           "assignment": {"due_date": iso(due), "late_due_date": iso(max(due, late_due)),
                                          "release_date": iso(release)}}
                          for n, (sid, due) in enumerate(users.items())],
                "submission_method": "upload", "previous_submissions": previous or []}
    if created_at is not None:
        metadata["created_at"] = created_at
    return metadata
