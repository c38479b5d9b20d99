"""JupyterLab on loopback and Debian's chromium, for the browser tests: started per test module,
in directories of their own (config, settings, workspaces, runtime, task index), always stopped.

Chromium must be Debian's (``apt-get install -y chromium``, which ``.ci/run`` does): Playwright's
own browser download is never used. A missing browser is an error, not a skip.
"""

from __future__ import annotations

import json
import os
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import nbformat
from playwright.sync_api import Page, sync_playwright

from tests.support.paths import PYTHON, REPO_ROOT
from tests.support.processes import PeerProcess, free_port, python_env, spawn

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
START_TIMEOUT = 90.0  # seconds: a bound on JupyterLab's start on a loaded 2-core machine


@dataclass
class Lab:
    """A running JupyterLab server (``url``: its address with its ``base_url``, no slash at the end)."""

    url: str
    token: str
    root: Path
    process: PeerProcess

    #: ``jupyterlab`` or ``notebook`` (Notebook 7: a notebook opens at ``/notebooks/PATH``).
    app: str = "jupyterlab"

    def page_url(self, path: str) -> str:
        if self.app == "notebook":
            return f"{self.url}/notebooks/{path}?token={self.token}"
        return f"{self.url}/lab/tree/{path}?token={self.token}&reset"


def write_notebook(path: Path, cells: list[str]) -> None:
    """A notebook of code ``cells`` at ``path``, for this kernel's kernelspec (``python3``)."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(code) for code in cells]
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nbformat.write(notebook, path)


def lab_env(home: Path) -> dict[str, str]:
    """Directories of the test's own: nothing read from or written to the user's Jupyter set-up."""
    env = python_env()
    dirs = {
        "JUPYTER_CONFIG_DIR": "config",
        "JUPYTERLAB_SETTINGS_DIR": "settings",
        "JUPYTERLAB_WORKSPACES_DIR": "workspaces",
        "JUPYTER_RUNTIME_DIR": "runtime",
        "IPYTHONDIR": "ipython",
    }
    for name, sub in dirs.items():
        (home / sub).mkdir(parents=True, exist_ok=True)
        env[name] = str(home / sub)
    env["MTJ_INDEX"] = str(home / "tasks.sqlite3")
    env["MTJ_TOKENS"] = str(home / "tokens")
    # The JupyterLab extension as built in this checkout (npm run build), ahead of an installed copy
    # (of another checkout, say): $JUPYTER_PATH comes first on JupyterLab's extension path.
    data = home / "data"
    (data / "labextensions").mkdir(parents=True, exist_ok=True)
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in (str(data), env.get("JUPYTER_PATH")) if p)
    built = REPO_ROOT / "mcp_tasks_jupyter" / "labextension"
    link = data / "labextensions" / "mcp-tasks-jupyter"
    if (built / "static").is_dir() and not link.exists():
        link.symlink_to(built, target_is_directory=True)
    # The Jupyter Server extension, enabled as installing the package does (jupyter-config/ in the wheel).
    server_config = home / "config" / "jupyter_server_config.d"
    server_config.mkdir(parents=True, exist_ok=True)
    for shipped in (REPO_ROOT / "jupyter-config" / "jupyter_server_config.d").glob("*.json"):
        (server_config / shipped.name).write_text(shipped.read_text())
    env.pop("MTJ_CONFIG", None)
    # No news or update pop-ups over the page.
    notification = home / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True, exist_ok=True)
    notification.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    return env


@contextmanager
def running_lab(root: Path, home: Path, *, base_url: str = "/", app: str = "jupyterlab") -> Iterator[Lab]:
    """JupyterLab serving ``root`` on 127.0.0.1 until the block ends (then shut down, then killed);
    ``base_url`` as JupyterHub gives a user's server (``/user/NAME/``); ``app="notebook"``: Notebook 7."""
    if not Path(CHROMIUM).exists():
        raise RuntimeError(
            f"the browser tests need Debian's chromium at {CHROMIUM} "
            "(apt-get install -y chromium; .ci/run installs it)"
        )
    port, token = free_port(), secrets.token_hex(16)
    argv = [
        str(PYTHON),
        "-m",
        app,
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--ServerApp.token={token}",
        "--allow-root",
        f"--ServerApp.root_dir={root}",
        "--ServerApp.port_retries=0",
        *(["--LabApp.news_url="] if app == "jupyterlab" else []),
        "--ServerApp.open_browser=False",
        f"--{'LabApp' if app == 'jupyterlab' else 'JupyterNotebookApp'}.expose_app_in_browser=True",
        f"--ServerApp.base_url={base_url}",
    ]
    with spawn(argv, env=lab_env(home), cwd=root, grace=10.0) as process:
        lab = Lab(f"http://127.0.0.1:{port}{base_url.rstrip('/')}", token, root, process, app)
        _wait_ready(lab)
        try:
            yield lab
        finally:
            _shutdown(lab)


def _wait_ready(lab: Lab) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        if lab.process.popen.poll() is not None:
            raise lab.process.fail(f"JupyterLab exited with code {lab.process.popen.returncode}")
        try:
            with urllib.request.urlopen(f"{lab.url}/api/status?token={lab.token}", timeout=2) as answer:
                if answer.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            raise lab.process.fail(f"JupyterLab did not answer within {START_TIMEOUT:g} s")
        time.sleep(0.2)


def _shutdown(lab: Lab) -> None:
    request = urllib.request.Request(f"{lab.url}/api/shutdown?token={lab.token}", method="POST")
    try:
        urllib.request.urlopen(request, timeout=5).close()
        lab.process.popen.wait(timeout=15)
    except Exception:  # spawn() kills the process group when this did not stop it
        pass


__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "Lab", "running_lab"]


@contextmanager
def notebook_page(
    lab: Lab,
    notebook: str,
    step_ms: int,
    *,
    size: tuple[int, int] = (1400, 900),
    permissions: tuple[str, ...] = (),
) -> Iterator[Page]:
    """Chromium on ``notebook`` in ``lab`` (each wait bounded by ``step_ms``): the browser's console goes to
    the test's output (shown when it fails), and at the end no page error may come from the extension."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": size[0], "height": size[1]})
            if permissions:
                context.grant_permissions(list(permissions))
            page = context.new_page()
            page.set_default_timeout(step_ms)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda m: print(f"[console.{m.type}] {m.text}"[:500]))
            page.goto(lab.page_url(notebook))
            yield page
            ours = [e for e in errors if "mcp" in e.lower()]
            assert not ours, f"errors in the page from the extension: {ours}"
        finally:
            browser.close()
