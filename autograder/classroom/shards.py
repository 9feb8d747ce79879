"""Sharded class grading: one class split over N machines (a Kubernetes Indexed Job, a Slurm array
job), each grading the submitters whose id hashes to its shard, and what each shard records so that
`scalelabs merge` can prove the parts make the whole class (autograder.classroom.merge).

    Shard.parse("1/4")       shard 1 of 4 (0 <= K < N, as Kubernetes counts its completion indexes)
    Shard.parse("auto/4")    K from JOB_COMPLETION_INDEX (Kubernetes), else SLURM_ARRAY_TASK_ID less
                             SLURM_ARRAY_TASK_MIN (Slurm, whatever the array's first index)
    shard_of(graded_as, n)   the shard of a submitter: sha256 of the id it is graded under, mod n (the
                             same on every machine and Python; a group goes whole to one shard)
    Shard.take(roster)       the submitters of this shard, roster order kept

Each shard writes `shard.json` into its output folder before grading anyone (so a shard stopped
half-way is known as such): the assignment, K and N, the whole class as a digest of every
submitter's id (shards cut from different class lists never merge) and the students of this shard.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from autograder.classroom.feedback import write_atomic
from autograder.classroom.roster import Submitter

MANIFEST = "shard.json"
K8S_INDEX = "JOB_COMPLETION_INDEX"          # a Kubernetes Indexed Job: 0 .. completions-1
SLURM_TASK = "SLURM_ARRAY_TASK_ID"          # a Slurm array job: the task's index in --array
SLURM_MIN, SLURM_COUNT = "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT"


class ShardError(ValueError):
    """A --shard that cannot be used; the message names what is wrong and what to pass."""


def shard_of(graded_as: str, n: int) -> int:
    """The shard (0 .. n-1) of the submitter graded under `graded_as`: the first 8 bytes of its
    sha256, mod n. Not Python's hash(), which is salted per process."""
    return int.from_bytes(hashlib.sha256(graded_as.encode("utf-8")).digest()[:8], "big") % n


def _whole(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except (ValueError, AttributeError):
        raise ShardError(f"{what} must be a whole number, not {text!r}") from None


@dataclass(frozen=True)
class Shard:
    k: int      # this shard, 0 <= k < n
    n: int      # how many shards the class is split into
    source: str = ""   # where k came from, when read from the environment (shown in messages)

    @classmethod
    def parse(cls, text: str, environ: Mapping[str, str] | None = None) -> "Shard":
        """`K/N` or `auto/N` (K from the job's environment: module docstring); ShardError otherwise."""
        environ = os.environ if environ is None else environ
        k_text, slash, n_text = (text or "").partition("/")
        if not slash:
            raise ShardError(f"--shard {text}: write K/N (shard K of N, 0 <= K < N) or auto/N")
        n = _whole(n_text, f"--shard {text}: N")
        if n < 1:
            raise ShardError(f"--shard {text}: N must be 1 or more")
        if k_text.strip() != "auto":
            shard = cls(_whole(k_text, f"--shard {text}: K"), n)
        elif environ.get(K8S_INDEX, "").strip():
            shard = cls(_whole(environ[K8S_INDEX], K8S_INDEX), n, K8S_INDEX)
        elif environ.get(SLURM_TASK, "").strip():
            count = environ.get(SLURM_COUNT, "").strip()
            if count and _whole(count, SLURM_COUNT) != n:
                raise ShardError(f"--shard {text}, but the Slurm array has {count} tasks ({SLURM_COUNT}): "
                                 f"submit it with --array=0-{n - 1}, or pass --shard auto/{count}")
            first = _whole(environ.get(SLURM_MIN, "0") or "0", SLURM_MIN)
            shard = cls(_whole(environ[SLURM_TASK], SLURM_TASK) - first, n, SLURM_TASK)
        else:
            raise ShardError(f"--shard {text} reads the shard from {K8S_INDEX} (a Kubernetes Indexed Job) or "
                             f"{SLURM_TASK} (a Slurm array job), and neither is set: pass --shard K/{n}")
        if not 0 <= shard.k < n:
            where = f" ({shard.source})" if shard.source else ""
            slurm = f" (a Slurm array of {n} shards is --array=0-{n - 1})" if shard.source == SLURM_TASK else ""
            raise ShardError(f"--shard {text}: shard {shard.k}{where} is not one of 0 .. {n - 1}{slurm}")
        return shard

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"

    def take(self, roster: Sequence[Submitter]) -> list[Submitter]:
        return [s for s in roster if shard_of(s.graded_as, self.n) == self.k]


def class_digest(roster: Sequence[Submitter]) -> str:
    """A digest of the whole class a shard was cut from: every submitter's id and students."""
    lines = sorted(f"{s.graded_as}\0{','.join(s.students)}" for s in roster)
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:16]


def write_manifest(out_dir: Path, assignment_id: str, shard: Shard, whole: Sequence[Submitter],
                   mine: Sequence[Submitter]) -> None:
    """shard.json in the shard's output folder (module docstring)."""
    write_atomic(Path(out_dir) / MANIFEST, json.dumps({
        "assignment": assignment_id, "shard": shard.k, "of": shard.n,
        "class": class_digest(whole), "class_size": sum(len(s.students) for s in whole),
        "students": sorted(m for s in mine for m in s.students)}, indent=1, sort_keys=True))


def read_manifest(out_dir: Path) -> dict | None:
    """A shard's shard.json, None when it has none (or it is not one: torn, hand-edited)."""
    try:
        data = json.loads((Path(out_dir) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    fields = {"assignment": str, "shard": int, "of": int, "class": str, "class_size": int, "students": list}
    if not isinstance(data, dict) or any(not isinstance(data.get(k), t) for k, t in fields.items()):
        return None
    if not all(isinstance(s, str) for s in data["students"]):
        return None
    return data
