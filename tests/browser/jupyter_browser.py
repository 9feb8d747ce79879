"""JupyterLab in a headless Chromium, driven as a student would: open a notebook, Run All, read what
the page shows, move an instrument's controls, take screenshots.

The server runs on a free loopback port with its own config, data, runtime and settings folders
(nothing of the machine's Jupyter set-up leaks in, no news pop-up, every cell rendered: windowing
off). The browser is Debian's chromium (`apt-get install chromium`), driven by playwright; its own
browser download is never used.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import nbformat

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
SERVER_START_S = 90
RUN_ALL_S = 120
MOVE_S = 20
# Widget classes of ipywidgets 8 (the controls _instruments.py builds), in the order they are tried.
SLIDER, DROPDOWN, BUTTONS, CHECKBOX = ".widget-slider", ".widget-dropdown", ".widget-toggle-buttons", ".widget-checkbox"

# Settings of the test's own user: every cell in the DOM (no virtual scrolling), no news requests.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false",
                                                                         "checkForUpdates": False},
}


class BrowserUnavailable(RuntimeError):
    """Chromium cannot start here (not installed, or it fails to launch)."""


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def chromium_path() -> str:
    """Debian's chromium, or the executable SCALELABS_CHROMIUM names (and then only that one)."""
    chosen = os.environ.get("SCALELABS_CHROMIUM")
    candidates = (chosen,) if chosen else (*CHROMIUM_CANDIDATES, shutil.which("chromium") or "")
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise BrowserUnavailable(f"no chromium executable (looked for {', '.join(c for c in candidates if c)}): "
                             "apt-get install -y chromium")


@contextmanager
def chromium():
    """A headless Chromium (playwright Browser) from Debian's package; BrowserUnavailable if it
    cannot start."""
    executable = chromium_path()
    try:
        from playwright.sync_api import Error as PlaywrightError, sync_playwright
    except ImportError as exc:   # a declared dependency; missing only in a broken install
        raise BrowserUnavailable(f"playwright is not importable ({exc}): pip install -e '.[test]'") from exc
    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=executable, headless=True)
        except PlaywrightError as exc:
            raise BrowserUnavailable(f"{executable} does not start: {str(exc).splitlines()[0]}") from exc
        try:
            yield browser
        finally:
            browser.close()


def chromium_or_skip():
    """A module fixture's Chromium (`yield from` it): where it cannot start the module skips, and fails
    under CI=true (.ci/run installs it)."""
    import pytest

    opened = chromium()
    try:
        instance = opened.__enter__()
    except BrowserUnavailable as exc:
        if in_ci():
            pytest.fail(f"CI=true and the browser test cannot run: {exc}", pytrace=False)
        pytest.skip(f"chromium cannot start here: {exc}")
    yield instance
    opened.__exit__(None, None, None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class JupyterServer:
    """`jupyter lab` serving `root` on 127.0.0.1 (also Jupyter Notebook 7 at /notebooks/)."""

    def __init__(self, root: Path, home: Path):
        self.root, self.home = Path(root), Path(home)
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = self.home / "server.log"
        self.process: subprocess.Popen | None = None

    def _environment(self) -> dict:
        env = dict(os.environ)
        for name, sub in (("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_DATA_DIR", "data"),
                          ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython"),
                          # a private font cache: a stale shared one made kernels print findfont
                          # warnings, which the test rightly reads as error output
                          ("MPLCONFIGDIR", "matplotlib")):
            env[name] = str(self.home / sub)
        env.pop("JUPYTER_PATH", None)
        env.pop("JUPYTER_CONFIG_PATH", None)
        return env

    def start(self) -> "JupyterServer":
        settings = self.home / "settings"
        for name, values in LAB_SETTINGS.items():
            path = settings / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
                   f"--port={self.port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={self.token}",
                   f"--ServerApp.root_dir={self.root}", f"--LabApp.user_settings_dir={settings}",
                   f"--LabApp.workspaces_dir={self.home / 'workspaces'}"]
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(command, cwd=self.root, env=self._environment(), stdout=self.log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        for _ in range(SERVER_START_S * 2):   # polls, not the clock (no verdict reads it: tests/test_hygiene.py)
            if self.process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.process.returncode}:\n{self.log_text()}")
            try:
                self.api("GET", "/api/status")
                return self
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.5)
        raise RuntimeError(f"jupyter lab did not answer within {SERVER_START_S} s:\n{self.log_text()}")

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.exists() else ""

    def api(self, method: str, path: str):
        request = urllib.request.Request(f"{self.base}{path}", method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            body = reply.read()
        return json.loads(body) if body else None

    def shut_down_kernels(self) -> None:
        for session in self.api("GET", "/api/sessions"):
            self.api("DELETE", f"/api/sessions/{session['id']}")

    def url(self, notebook: Path, ui: str = "lab") -> str:
        relative = Path(notebook).resolve().relative_to(self.root.resolve()).as_posix()
        if ui == "lab":   # reset: open this notebook alone, not the tabs the last page left in the workspace
            return f"{self.base}/lab/tree/{relative}?reset&token={self.token}"
        return f"{self.base}/notebooks/{relative}?token={self.token}"

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if getattr(self, "log", None):
            self.log.close()


def _complete(path: Path) -> bool:
    """The server has finished writing the notebook (it may be caught half-written)."""
    try:
        json.loads(path.read_text(encoding="utf-8"))
        return True
    except (ValueError, OSError):
        return False


def saved_problems(path: Path) -> tuple[list[str], list[int]]:
    """(error outputs and stderr text, indices of code cells never executed) of a saved notebook."""
    nb = nbformat.read(str(path), as_version=4)
    problems, unrun = [], []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        if cell.get("execution_count") is None:
            unrun.append(index)
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                problems.append(f"cell {index}: {out.ename}: {out.evalue}")
            elif out.output_type == "stream" and out.name == "stderr":
                problems.append(f"cell {index}: stderr: {out.text[:300]}")
            elif "scalelabs-instrument-problem" in str(out.get("data", {}).get("text/html", "")):
                problems.append(f"cell {index}: instrument problem: {out.data.get('text/plain', '')[:300]}")
            elif "scalelabs-reveal-problem" in str(out.get("data", {}).get("text/html", "")):
                problems.append(f"cell {index}: reveal problem: {out.data.get('text/plain', '')[:300]}")
    return problems, unrun


def saved_instruments(path: Path) -> list[str]:
    """The controls line of every instrument in a saved notebook (the kernel's text/plain of each
    controls box): what the page must render as widgets."""
    nb = nbformat.read(str(path), as_version=4)
    return [out.data["text/plain"] for cell in nb.cells if cell.cell_type == "code"
            for out in cell.get("outputs", [])
            if "application/vnd.jupyter.widget-view+json" in out.get("data", {})
            and str(out.data.get("text/plain", "")).startswith("Controls (")]


class NotebookPage:
    """One notebook open in a browser page, JupyterLab (`ui="lab"`) or Jupyter Notebook 7."""

    def __init__(self, page, server: JupyterServer, notebook: Path, ui: str = "lab"):
        self.page, self.server, self.notebook, self.ui = page, server, Path(notebook), ui
        self.console_errors: list[str] = []
        page.on("console", lambda m: self.console_errors.append(m.text) if m.type == "error" else None)

    def open(self) -> "NotebookPage":
        self.page.goto(self.server.url(self.notebook, self.ui))
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", state="attached", timeout=SERVER_START_S * 1000)
        self.wait_until(self.kernel_idle, SERVER_START_S, "the kernel did not start")
        return self

    def wait_until(self, condition, seconds: float, failure: str) -> None:
        for _ in range(int(seconds * 4)):
            if condition():
                return
            self.page.wait_for_timeout(250)
        raise AssertionError(f"{self.notebook.name}: {failure} within {seconds} s")

    def menu(self, top: str, *labels: str) -> None:
        """Click menu `top`, then its item labelled exactly one of `labels` (JupyterLab and Notebook 7
        word some items differently)."""
        self.page.locator("li.lm-MenuBar-item", has_text=top).first.click()
        exact = re.compile("^(" + "|".join(map(re.escape, labels)) + ")$")
        self.page.locator("li.lm-Menu-item .lm-Menu-itemLabel").filter(has_text=exact).first.click()

    def save(self) -> None:
        """File > Save Notebook, and wait until the file on disk changed."""
        before = self.notebook.stat().st_mtime_ns
        self.menu("File", "Save Notebook", "Save")
        self.wait_until(lambda: self.notebook.stat().st_mtime_ns != before and _complete(self.notebook), 15,
                        "the notebook was not saved")

    def run_all(self) -> None:
        """Run All from the Run menu, then wait until the kernel is idle and the saved notebook shows
        every code cell executed."""
        self.menu("Run", "Run All Cells")
        for _ in range(RUN_ALL_S):
            self.wait_until(self.kernel_idle, RUN_ALL_S, "Run All did not finish")
            self.save()
            if not saved_problems(self.notebook)[1] and self.kernel_idle():
                return
            self.page.wait_for_timeout(500)
        raise AssertionError(f"{self.notebook.name}: Run All left cells unexecuted")

    def kernel_idle(self) -> bool:
        sessions = [s for s in self.server.api("GET", "/api/sessions")
                    if Path(s["path"]).name == self.notebook.name]
        return bool(sessions) and all(s["kernel"]["execution_state"] == "idle" for s in sessions)

    # --- what the page shows --------------------------------------------------------------------
    def error_outputs(self) -> list[str]:
        """Text of every error/stderr output, widget error and instrument problem on the page."""
        selectors = ['.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]',
                     ".scalelabs-instrument-problem", ".scalelabs-reveal-problem", ".jupyter-widgets-error-widget",
                     ".jp-RenderedJavaScript"]
        found = []
        for selector in selectors:
            loc = self.page.locator(selector)
            found += [f"{selector}: {loc.nth(i).inner_text()[:300]}" for i in range(loc.count())]
        return found

    def unrendered_widgets(self) -> list[str]:
        """Widget outputs the page shows as plain text (the widget manager did not render them)."""
        loc = self.page.locator(".jp-OutputArea-output", has_text="Controls (move them in")
        return [loc.nth(i).inner_text()[:200] for i in range(loc.count())]

    def instruments(self):
        return self.page.locator(".scalelabs-instrument")

    def readout(self, index: int) -> str:
        return self.page.locator(".scalelabs-readout").nth(index).inner_text()

    def readouts(self) -> int:
        return self.page.locator(".scalelabs-readout").count()

    def controls(self, index: int) -> list:
        box = self.instruments().nth(index)
        children = box.locator(":scope > .lm-Widget")
        return [children.nth(i) for i in range(children.count())]

    def move(self, control) -> str:
        """Move one control as a student would (drag a slider, pick another option, click a
        box); returns what was done."""
        classes = control.get_attribute("class") or ""
        if "widget-slider" in classes:
            return self._drag(control)
        if "widget-dropdown" in classes:
            select = control.locator("select")
            options = select.locator("option").all_inner_texts()
            current = select.evaluate("s => s.selectedIndex")
            choice = (current + 1) % len(options)
            select.select_option(index=choice)
            return f"dropdown -> {options[choice]}"
        if "widget-toggle-buttons" in classes:
            button = control.locator("button:not(.mod-active)").first
            text = button.inner_text()
            button.click()
            return f"buttons -> {text}"
        if "widget-checkbox" in classes:
            control.locator("input[type=checkbox]").click()
            return "checkbox"
        raise AssertionError(f"no way to move a control of class {classes!r}")

    def _drag(self, control) -> str:
        """Drag a slider's handle one step (a tenth of the track if steps are finer than that), to the
        right unless it is at the end. The keyboard would be quicker but Notebook 7 does not pass
        arrow keys to the slider."""
        handle = control.locator(".noUi-handle").first
        handle.scroll_into_view_if_needed()
        low, high, now = (float(handle.get_attribute(a)) for a in ("aria-valuemin", "aria-valuemax", "aria-valuenow"))
        track, box = control.locator(".noUi-base").first.bounding_box(), handle.bounding_box()
        dx = max(track["width"] / (high - low), track["width"] / 10) if high > low else 0
        dx = -dx if now >= high else dx
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        self.page.mouse.move(x, y)
        self.page.mouse.down()
        self.page.mouse.move(x + dx, y, steps=5)
        self.page.mouse.up()
        return f"slider dragged {'left' if dx < 0 else 'right'}"

    def wait_for_readout_change(self, index: int, before: str, how: str) -> str:
        from playwright.sync_api import TimeoutError as PlaywrightTimeout
        try:
            self.page.wait_for_function(
                "([i, b]) => { const r = document.querySelectorAll('.scalelabs-readout')[i];"
                " return r && r.innerText !== b; }", arg=[index, before], timeout=MOVE_S * 1000)
        except PlaywrightTimeout:
            raise AssertionError(f"{self.notebook.name}: instrument {index}: the readout did not change within "
                                 f"{MOVE_S} s after {how}; it still reads {before!r}") from None
        return self.readout(index)

    def screenshot_notebook(self, path: Path, max_height: int = 16000) -> Path:
        """The whole notebook in one picture: scrolled to the top, the viewport stretched to the
        notebook's height (at most `max_height` pixels)."""
        size = self.page.viewport_size
        scroller = "(document.querySelector('.jp-WindowedPanel-outer') || document.querySelector('.jp-NotebookPanel-notebook'))"
        height = self.page.evaluate(f"() => {{ const s = {scroller}; s.scrollTop = 0; return s.scrollHeight + 200; }}")
        self.page.set_viewport_size({"width": size["width"], "height": min(max(height, size["height"]), max_height)})
        self.page.evaluate(f"() => {{ {scroller}.scrollTop = 0; }}")
        self.page.wait_for_timeout(300)
        self.page.screenshot(path=str(path))
        self.page.set_viewport_size(size)
        return Path(path)
