"""What a user installs works: ``python -m build`` makes the sdist and the wheel (the wheel from the sdist,
so the sdist carries everything), and the wheel installed into a fresh virtual environment with no Node or
npm on ``PATH`` gives the JupyterLab extension (listed, enabled, OK), the Jupyter Server extension
(enabled), ``%load_ext`` and a task against the bundled demo in a kernel of that environment, and the
``mcp-tasks`` command.

Band: kernel (it starts one). Its cost is the installs: about a minute from the machine's pip cache
(PyPI is reachable; ``.ci/run`` runs it with the rest of ``make test``)."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

pytestmark = [pytest.mark.kernel, pytest.mark.timeout(900)]

BUILD_TIMEOUT_S = 600
#: What the kernel of the fresh environment runs, cell by cell (the README's grammar).
CELLS = (
    "%load_ext mcp_tasks_jupyter",
    "%mcp_connect demo {sys.executable} -m mcp_tasks_jupyter.demo",
    "r = %mcp_task --wait demo:slow_compute seconds=0.2 label=from-the-wheel",
    "print('LABEL', r.structured['label'])",
)
KERNEL_SCRIPT = """
import sys
from jupyter_client.manager import start_new_kernel

km, kc = start_new_kernel(kernel_name="python3")
try:
    for code in sys.argv[1:]:
        def hook(msg):
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                print(content["text"], end="")
            elif kind == "error":
                print("ERROR", content["ename"], content["evalue"])
        reply = kc.execute_interactive(code, timeout=120, output_hook=hook)
        print("REPLY", reply["content"]["status"])
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
"""


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> str:
    done = subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
    )
    assert done.returncode == 0, (argv, done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel (built from the sdist) and what a notebook user adds: a kernel and
    JupyterLab. Its bin directory, alone on PATH: no node, no npm."""
    root = tmp_path_factory.mktemp("wheel")
    dist = root / "dist"
    run([sys.executable, "-m", "build", "--outdir", str(dist), str(REPO_ROOT)], dict(os.environ))
    [wheel] = dist.glob("*.whl")
    assert list(dist.glob("*.tar.gz")), "no sdist was built"
    target = root / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    bin_dir = target / "bin"
    env = {"PATH": str(bin_dir), "HOME": str(root), "PIP_DISABLE_PIP_VERSION_CHECK": "1", "LANG": "C.UTF-8"}
    env["JUPYTER_PLATFORM_DIRS"] = "1"
    if "PIP_CACHE_DIR" in os.environ:
        env["PIP_CACHE_DIR"] = os.environ["PIP_CACHE_DIR"]
    else:  # the machine's pip cache, not the empty one of the fake HOME
        env["PIP_CACHE_DIR"] = str(Path.home() / ".cache" / "pip")
    run(
        [str(bin_dir / "python"), "-m", "pip", "install", "-q", f"{wheel}[demo-http]", "ipykernel", "jupyterlab"],
        env,
    )
    return bin_dir


def _env(bin_dir: Path) -> dict[str, str]:
    home = bin_dir.parent.parent
    return {"PATH": str(bin_dir), "HOME": str(home), "LANG": "C.UTF-8", "JUPYTER_PLATFORM_DIRS": "1"}


def test_no_node_or_npm_is_on_the_path(installed: Path) -> None:
    probe = "import shutil; print(shutil.which('node'), shutil.which('npm'))"
    assert run([str(installed / "python"), "-c", probe], _env(installed)).split() == ["None", "None"]


def test_jupyterlab_lists_the_prebuilt_extension(installed: Path) -> None:
    listed = run([str(installed / "jupyter"), "labextension", "list"], _env(installed))
    line = next((ln for ln in listed.splitlines() if "mcp-tasks-jupyter" in ln), "")
    assert "enabled" in line and "OK" in line, listed


def test_a_kernel_of_the_environment_loads_the_magics_and_runs_a_task(installed: Path) -> None:
    env = _env(installed) | {"MTJ_INDEX": str(installed.parent.parent / "tasks.sqlite3")}
    said = run([str(installed / "python"), "-c", KERNEL_SCRIPT, *CELLS], env)
    assert "ERROR" not in said and said.count("REPLY ok") == len(CELLS), said
    assert "LABEL from-the-wheel" in said, said


def test_the_command_line_runs(installed: Path) -> None:
    assert "usage: mcp-tasks" in run([str(installed / "mcp-tasks"), "--help"], _env(installed))


def test_the_jupyter_server_extension_is_enabled(installed: Path) -> None:
    listed = run([str(installed / "jupyter"), "server", "extension", "list"], _env(installed))
    line = next((ln for ln in listed.splitlines() if "mcp_tasks_jupyter.serverext" in ln), "")
    assert "enabled" in line, listed
    assert (
        "mcp_tasks_jupyter.serverext" in listed and "OK" in listed.split("mcp_tasks_jupyter.serverext", 1)[1][:200]
    )
