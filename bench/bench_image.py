"""Benchmark: the grader image built from the Containerfile, and a grade inside it equal to one outside.

    sudo python bench/bench_image.py [--work DIR]

Needs root, buildah and debootstrap (`apt-get install -y buildah debootstrap`); no Docker daemon and no
docker.io: the Containerfile's BASE (by default the public python:3.11-slim-bookworm) is replaced by a
local image of the same Debian (bookworm) and Python (3.11, Debian's own) made here:
1. the base: `debootstrap --variant=minbase` of bookworm with python3, python3-venv and ca-certificates
   (the host's CA bundle copied in, so pip reaches PyPI through the same proxy the host uses), imported
   with `buildah from scratch` and committed as localhost/scalelabs-base:3.11-bookworm;
2. the image: `buildah bud --isolation chroot --storage-driver vfs --build-arg BASE=<that base>
   -f Containerfile .` (the Containerfile as a course builds it: apt-get, the README's install);
3. a grade: one student of Lab 06's sample class graded by `scalelabs grade --json` inside the image
   (`buildah run`) and on this machine, no course secret either side; their per-item scores must be equal.
Prints the base's and the build's seconds, the image's size, both scores and the sandbox each used (in
buildah's chroot isolation bubblewrap cannot make its namespaces: the grade runs in the user sandbox, as
in a container under a default seccomp profile). Not part of the test suite (minutes, and root).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.classroom import samples  # noqa: E402
from autograder.engine.results import Result  # noqa: E402

LAB = "lab06_collectives"
BASE = "localhost/scalelabs-base:3.11-bookworm"
IMAGE = "localhost/scalelabs-grader:bench"
BUILDAH = ["buildah", "--storage-driver", "vfs"]
MIRROR = "http://deb.debian.org/debian"


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return done


def make_base(work: Path) -> float:
    """The local stand-in for python:3.11-slim-bookworm; its seconds (0 when the rootfs was kept)."""
    start = time.perf_counter()
    rootfs = work / "rootfs"
    if not (rootfs / "usr" / "bin" / "python3").exists():
        run(["debootstrap", "--variant=minbase", "--include=python3,python3-venv,ca-certificates", "bookworm",
             str(rootfs), MIRROR])
    shutil.copyfile("/etc/ssl/certs/ca-certificates.crt", rootfs / "etc/ssl/certs/ca-certificates.crt")
    container = run([*BUILDAH, "from", "scratch"]).stdout.strip()
    try:
        mount = run([*BUILDAH, "mount", container]).stdout.strip()
        run(["cp", "-a", f"{rootfs}/.", mount])
        run([*BUILDAH, "umount", container])
        run([*BUILDAH, "config", "--env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
             "--env", "LANG=C.UTF-8", container])
        run([*BUILDAH, "commit", "-q", container, BASE])
    finally:
        subprocess.run([*BUILDAH, "rm", container], capture_output=True)
    return time.perf_counter() - start


def image_size(name: str) -> str:
    listed = run([*BUILDAH, "images", "--format", "{{.Name}}:{{.Tag}} {{.Size}}"]).stdout.splitlines()
    return next((line.split(" ", 1)[1] for line in listed if line.startswith(name)), "?")


def grade_inside(student: Path) -> dict:
    container = run([*BUILDAH, "from", IMAGE]).stdout.strip()
    try:
        run([*BUILDAH, "copy", container, str(student), f"/sub/{student.name}"])
        done = run([*BUILDAH, "run", "--isolation", "chroot", container, "--", "scalelabs", "grade", LAB,
                    f"/sub/{student.name}", "--student", student.name, "--json"])
        return json.loads(done.stdout)
    finally:
        subprocess.run([*BUILDAH, "rm", container], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="keep the debootstrapped rootfs here (reused when there)")
    args = parser.parse_args()
    if os.geteuid() != 0 or not shutil.which("buildah") or not shutil.which("debootstrap"):
        raise SystemExit("run as root, with buildah and debootstrap installed (apt-get install -y buildah debootstrap)")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="scalelabs-bench-image-") as tmp:
        work = args.work or Path(tmp)
        base_s = make_base(work)
        start = time.perf_counter()
        run([*BUILDAH, "bud", "--isolation", "chroot", "--build-arg", f"BASE={BASE}", "-t", IMAGE, "-f", "Containerfile",
             "."], cwd=ROOT)
        build_s = time.perf_counter() - start
        student = Path(tmp) / "s001"
        samples.materialise(LAB, samples.students(LAB)[1], student, release_dir=ROOT / "release" / LAB)
        start = time.perf_counter()
        inside = Result.from_gradescope(grade_inside(student))
        inside_s = time.perf_counter() - start
        native = Result.from_gradescope(json.loads(run(
            [str(Path(sys.executable).parent / "scalelabs"), "grade", LAB, str(student), "--student", student.name,
             "--json"], cwd=tmp).stdout))
    print(f"base (debootstrap bookworm + python3, imported): {base_s:.0f} s, {image_size(BASE)}")
    print(f"image (buildah bud of the Containerfile, BASE={BASE}): {build_s:.0f} s, {image_size(IMAGE)}")
    for name, record, seconds in (("inside the image", inside, f", {inside_s:.1f} s"), ("on this machine", native, "")):
        print(f"grade {LAB} {student.name} {name}: {record.score:g} / {record.max_score:g}{seconds} "
              f"({record.output.splitlines()[0].split(': ', 1)[-1][:90]})")
    same = inside.item_scores() == native.item_scores()
    print(f"per-item scores equal: {same}")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
