"""No key that can still earn points is recoverable from anything a student gets (issue 37).

Under `[grading] predictions = "correctness"` a prediction's key earns its points, so the released
notebook carries no prediction key and no explanation of any option (the reveal shows the measurement;
the best answer comes with the feedback after the due date). Under "commitment" (the default) any
recorded option earns the points, so a reveal may carry its prediction's key and explanations, shown
once the prediction is recorded. A reflection's key always earns: it never ships. The leak scan decodes
what a student could (base64, zlib, hex, nested) and fails on any key that can still earn points.
"""
from __future__ import annotations

import base64
import json
import re
import shutil
import zlib
from pathlib import Path

import nbformat
import pytest

from autograder.build import leakscan
from autograder.build.release import build_source
from labs import all_assignments, load

from release_helpers import REPO

LAB = "lab06_collectives"


def _decoded_blobs(text: str) -> list[dict]:
    """What one line of Python gets out of a shipped file: every quoted base64 string, zlib-decompressed."""
    found = []
    for blob in re.findall(r"'([A-Za-z0-9+/=]{40,})'", text):
        try:
            found.append(json.loads(zlib.decompress(base64.b64decode(blob))))
        except (ValueError, zlib.error):
            pass
    return found


def _walk(value, path=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, path + (i,))
    else:
        yield path, value


def _course(tmp_path: Path, predictions: str) -> Path:
    root = tmp_path / predictions
    root.mkdir()
    (root / "scalelabs.toml").write_text(f'[grading]\npredictions = "{predictions}"\n')
    return root


PREDICTING = sorted(lab for lab, a in all_assignments().items() if any(q.kind == "prediction" for q in a.questions))


@pytest.mark.parametrize("lab", PREDICTING)
def test_a_correctness_course_ships_no_prediction_key_nor_any_explanation(lab, tmp_path):
    """Every lab with predictions, every version it ships: the attacker's one line (every quoted base64
    blob, zlib-decompressed) finds no `key` entry and no option's explanation (they name the right one) in
    any shipped file of a correctness course; nor does the leak scan (base64, zlib, hex, nested)."""
    a = load(lab)
    correctness_source = build_source(a, _course(tmp_path, "correctness"))
    versions = [a.variants.assignment(i) for i in range(a.variant_count)] if a.variants is not None else [a]
    whys = {why for version in versions for q in version.questions for why in q.why.values()}
    texts = [p.read_text(encoding="utf-8") for p in correctness_source.rglob("*") if p.is_file()]
    blobs = [blob for text in texts for blob in _decoded_blobs(text)]
    assert blobs, "the reveals still carry their options"
    keys = [path for blob in blobs for path, _ in _walk(blob) if "key" in path]
    assert keys == []
    shipped = json.dumps(blobs, ensure_ascii=False) + "".join(texts)
    assert not [w for w in whys if w in shipped]
    secrets = leakscan.secrets_for([a], predictions="correctness")
    assert leakscan.scan([correctness_source], secrets=secrets) == []


def test_the_committed_release_ships_no_reflection_key_and_commitment_keys_only_in_reveals():
    """The committed release (commitment, the default): decoded, its reveals hold the predictions' keys
    (they earn nothing there) and never a reflection's key or explanation; the scan, told the course
    grades correctness, finds the prediction keys it decodes."""
    a = load(LAB)
    notebook = REPO / "release" / LAB / f"{LAB}.ipynb"
    blobs = _decoded_blobs(notebook.read_text(encoding="utf-8"))
    reflections = {q.id for q in a.questions if q.kind == "reflection"}
    keyed = {step for blob in blobs for path, _ in _walk(blob) if "key" in path for step in path if step in
             {q.id for q in a.questions}}
    assert keyed and not keyed & reflections
    assert leakscan.scan([notebook], [a]) == []
    found = leakscan.scan([notebook], secrets=leakscan.secrets_for([a], predictions="correctness"))
    assert found and all(": key: " in f or ": explanation: " in f for f in found), found
    assert {q.id for q in a.questions if q.kind == "prediction"} <= {f.split(": key: ")[1].split()[0]
                                                                      for f in found if ": key: " in f}


def _zhex(raw: bytes) -> str:
    return zlib.compress(raw).hex()


ENCODINGS = {
    "zlib+base64": lambda raw: base64.b64encode(zlib.compress(raw)).decode(),
    "base64": lambda raw: base64.b64encode(raw).decode(),
    "hex": lambda raw: raw.hex(),
    "zlib+hex": _zhex,
    "base64 of zlib+hex": lambda raw: base64.b64encode(_zhex(raw).encode()).decode(),
    "urlsafe base64 of zlib": lambda raw: base64.urlsafe_b64encode(zlib.compress(raw)).decode(),
}


@pytest.mark.parametrize("encoding", sorted(ENCODINGS))
def test_the_scan_decodes_a_planted_reflection_key(encoding, tmp_path):
    """A reflection's key (always worth points) and its explanation, encoded and planted in a code cell of
    a copy of the released notebook, are found however they are encoded; the released copy itself is clean."""
    a = load(LAB)
    q = next(q for q in a.questions if q.kind == "reflection")
    copy = tmp_path / LAB
    shutil.copytree(REPO / "release" / LAB, copy)
    notebook = copy / f"{LAB}.ipynb"
    assert leakscan.scan([copy], [a]) == []
    nb = nbformat.read(str(notebook), as_version=4)
    payload = json.dumps({"questions": {q.id: {"key": q.key, "why": q.why[q.key]}}}).encode()
    nb.cells[3].source += f"\n_data = {ENCODINGS[encoding](payload)!r}\n"
    nbformat.write(nb, str(notebook))
    found = leakscan.scan([copy], [a])
    assert any(f.endswith(f": key: {q.id} (decoded)") for f in found), (encoding, found)
    assert any(": explanation: " in f for f in found), (encoding, found)
