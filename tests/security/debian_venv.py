"""A venv of Debian's /usr/bin/python3 for the jail's layout tests and bench/bench_jail.py: the grader
run from a Python whose stdlib holds no site-packages (issue 26's first layout)."""
from __future__ import annotations

import os
import site
import subprocess
import sys
from pathlib import Path

DEBIAN_PYTHON = Path("/usr/bin/python3")


def debian_venv(where: Path) -> Path | None:
    """A venv of Debian's /usr/bin/python3 that imports this environment's packages (a .pth adds our
    site folders: same Python minor version, so the same compiled packages): its python, or None where
    there is no such Python of this version."""
    if not DEBIAN_PYTHON.exists():
        return None
    version = subprocess.run([DEBIAN_PYTHON, "-c", "import sys; print(sys.version_info[:2])"],
                             capture_output=True, text=True).stdout.strip()
    if version != str(tuple(sys.version_info[:2])):
        return None
    subprocess.run([DEBIAN_PYTHON, "-m", "venv", "--without-pip", where], check=True, capture_output=True)
    sites = [p for p in site.getsitepackages() if os.path.isdir(p)]
    [target] = (where / "lib").glob("python3*/site-packages")
    (target / "scalelabs_host.pth").write_text("import site; " + "; ".join(f"site.addsitedir({p!r})" for p in sites) + "\n")
    return where / "bin" / "python"

