"""Where chromium cannot start the browser test skips with the reason, and with CI=true it fails."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BROWSER_TEST = Path(__file__).parent / "test_notebooks_in_browser.py"


def _run_browser_test(tmp_path, **env):
    environment = {name: value for name, value in os.environ.items() if name != "CI"}
    environment.update(SCALELABS_CHROMIUM=str(tmp_path / "no-chromium-here"), **env)
    return subprocess.run([sys.executable, "-m", "pytest", "-n", "0", "-q", "-rs", "-p", "no:cacheprovider",
                           f"--basetemp={tmp_path / 'run'}", str(BROWSER_TEST), "-k", "stub"],
                          capture_output=True, text=True, env=environment, cwd=Path(__file__).parents[2], timeout=300)


def test_without_chromium_the_browser_test_skips_and_says_why(tmp_path):
    done = _run_browser_test(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout and "chromium cannot start here: no chromium executable" in done.stdout, done.stdout


@pytest.mark.parametrize("ci", ["true", "1"])
def test_in_ci_without_chromium_the_browser_test_fails(tmp_path, ci):
    done = _run_browser_test(tmp_path, CI=ci)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "CI=true and the browser test cannot run: no chromium executable" in done.stdout, done.stdout
    assert "skipped" not in done.stdout
