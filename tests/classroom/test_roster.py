"""Who is in a class folder (autograder.classroom.roster), decided before anything is graded: a Gradescope
export's submitters, hidden folders, --student of a group member, and what is refused in one line (the
CLI's wrong folders: tests/engine/test_cli_batch.py)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.classroom.roster import NotAClass, class_roster
from labs import load

LAB = load("lab06_collectives")
RELEASE = Path(__file__).resolve().parents[2] / "release" / LAB.id


def submission(folder: Path) -> None:
    folder.mkdir(parents=True)
    for module in RELEASE.glob("*.py"):
        shutil.copy(module, folder / module.name)


def export(root: Path, submitters: dict[str, list[str]]) -> Path:
    lines = []
    for name, sids in submitters.items():
        submission(root / name)
        lines.append(f"{name}:\n  :submitters:" + "".join(f"\n  - :sid: '{s}'" for s in sids))
    (root / "submission_metadata.yml").write_text("\n".join(lines) + "\n")
    return root


def test_an_exports_folders_are_its_submitters_and_hidden_folders_are_no_one(tmp_path):
    root = export(tmp_path / "export", {"submission_1": ["3101"], "submission_2": ["3120", "3105"]})
    (root / ".ipynb_checkpoints").mkdir()
    (root / "__MACOSX").mkdir()
    roster = class_roster(root, LAB)
    assert [(s.name, s.students, s.graded_as) for s in roster] == [
        ("submission_1", ("3101",), "3101"), ("submission_2", ("3105", "3120"), "3105")]
    assert [s.name for s in class_roster(root, LAB, ["3120"])] == ["submission_2"]   # a group member: the group


@pytest.mark.parametrize("case, said", [
    ("twice", "student 3101 has two submissions in"),
    ("unlisted", "submission_3 in"),
    ("empty", "has no student subfolders")])
def test_a_class_that_cannot_be_graded_is_one_line(tmp_path, case, said):
    root = tmp_path / "export"
    if case == "twice":
        export(root, {"submission_1": ["3101"], "submission_2": ["3101", "3102"]})
    elif case == "unlisted":
        export(root, {"submission_1": ["3101"]})
        submission(root / "submission_3")
    else:
        root.mkdir()
    with pytest.raises(NotAClass) as refused:
        class_roster(root, LAB)
    assert said in str(refused.value) and "\n" not in str(refused.value), str(refused.value)
    if case == "unlisted":
        assert "not a submission with a student id in its submission_metadata.yml" in str(refused.value)
