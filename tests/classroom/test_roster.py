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


# --- an export graded student by student (issue 37): odd ids and uploads of every shape ------------------

def _odd_export(root: Path, shaped: bool = True) -> Path:
    """submission_1 at its top; submission_2 zipped from Downloads/ (the lab two folders down), by a
    student with no sid and an apostrophe in the email; submission_3 a folder renamed `my lab (1)/`, by a
    student whose sid is a formula; submission_4 a zip inside the upload (Gradescope unpacks only the
    upload). Not `shaped`: every upload holds the lab at its top."""
    import zipfile

    submission(root / "submission_1")
    submission(root / "submission_2" / ("Downloads/" + LAB.id if shaped else ""))
    submission(root / "submission_3" / ("my lab (1)" if shaped else ""))
    if not shaped:
        submission(root / "submission_4")
    else:
        (root / "submission_4").mkdir(parents=True)
        with zipfile.ZipFile(root / "submission_4" / "lab06.zip", "w") as zf:
            for module in RELEASE.glob("*.py"):
                zf.write(module, f"{LAB.id}/{module.name}")
    (root / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :sid: '3101'\n"
        "submission_2:\n  :submitters:\n  - :sid:\n    :email: mary.o'brien@uni.example\n"
        "submission_3:\n  :submitters:\n  - :sid: '=HYPERLINK(\"x\")'\n"
        "submission_4:\n  :submitters:\n  - :sid: '3104'\n")
    return root


def test_an_exports_misshaped_uploads_are_read_as_the_otter_door_reads_them(tmp_path):
    """Downloads/ zipped and a renamed folder made the export no class ("hold neither"); each upload's
    folder is the otter door's."""
    from autograder.doors import otter as otter_door

    root = _odd_export(tmp_path / "export")
    roster = {s.name: s for s in class_roster(root, LAB, ["3101", "mary.o'brien@uni.example", '=HYPERLINK("x")'])}
    assert {n: s.folder for n, s in roster.items()} == {
        "submission_1": root / "submission_1", "submission_2": root / "submission_2" / "Downloads" / LAB.id,
        "submission_3": root / "submission_3" / "my lab (1)"}
    for name, sub in roster.items():
        assert sub.folder == otter_door.graded_folder(root / name, LAB) and sub.upload == ""


def test_an_exports_ids_that_no_file_can_be_named_by_are_their_safe_ids(tmp_path):
    """An email with an apostrophe (no sid) and a formula sid made the export no class ("rename the
    folder", which an export cannot do). Each is its safe_id, and the roster says which it stands for;
    --student takes Gradescope's own id too."""
    root = _odd_export(tmp_path / "export", shaped=False)
    roster = {s.name: s for s in class_roster(root, LAB)}
    from autograder.classroom.identity import safe_id
    mary, formula = safe_id("mary.o'brien@uni.example"), safe_id('=HYPERLINK("x")')
    assert {n: s.students for n, s in roster.items()} == {
        "submission_1": ("3101",), "submission_2": (mary,), "submission_3": (formula,), "submission_4": ("3104",)}
    assert roster["submission_2"].renamed == ((mary, "mary.o'brien@uni.example"),)
    assert roster["submission_3"].renamed == ((formula, '=HYPERLINK("x")'),) and roster["submission_1"].renamed == ()
    assert [s.name for s in class_roster(root, LAB, ["mary.o'brien@uni.example"])] == ["submission_2"]


def test_one_upload_that_holds_no_lab_is_a_line_for_a_person_and_the_rest_is_the_class(tmp_path):
    """A zip inside submission_4's upload (neither door opens it) made the whole export no class. It is
    graded as it is with one line naming the zip; only an export where no upload holds the lab is refused."""
    root = _odd_export(tmp_path / "export")
    roster = {s.name: s for s in class_roster(root, LAB)}
    assert sorted(roster) == ["submission_1", "submission_2", "submission_3", "submission_4"]
    bad = roster["submission_4"]
    assert bad.folder == root / "submission_4" and bad.students == ("3104",)
    assert bad.upload.startswith("the upload holds neither collectives.py nor lab06_collectives.ipynb")
    assert "it holds lab06.zip: a zip inside the upload is not opened" in bad.upload and "\n" not in bad.upload
    for name in ("submission_1", "submission_2", "submission_3"):
        shutil.rmtree(root / name)
    with pytest.raises(NotAClass, match="no student folder in"):    # no upload holds the lab: not this lab's export
        class_roster(root, LAB)


def test_an_export_of_uploads_holding_only_the_students_module_is_a_class(tmp_path):
    """Students upload their module and notebook alone to Gradescope, whose door puts the released provided
    modules beside them (upload.put_provided): grade-batch of the export refused the class ("copy the
    released files into each student's folder first"); each upload is now marked to be graded with the
    released ones (Submitter.export), as the door grades it. A class folder of the same is still refused."""
    root = export(tmp_path / "export", {"submission_1": ["3101"], "submission_2": ["3102"]})
    for name in LAB.provided:
        for upload in (root / "submission_1", root / "submission_2"):
            (upload / f"{name}.py").unlink()
    roster = class_roster(root, LAB)
    assert [(s.name, s.students, s.export) for s in roster] == [("submission_1", ("3101",), True),
                                                               ("submission_2", ("3102",), True)]
    (root / "submission_metadata.yml").unlink()
    with pytest.raises(NotAClass, match="so no module can import them"):
        class_roster(root, LAB)
