"""The demo server starts on what the package installs: stdio needs no web server and no client library;
``--http`` without the ``demo-http`` extra says which extra to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.processes import python_env

pytestmark = pytest.mark.loopback

#: Start the demo's command line with some modules made unimportable (as if not installed), then
#: report which heavy modules it loaded.
PROBE = """
import sys
for name in sys.argv[1].split(","):
    if name:
        sys.modules[name] = None  # "import name" now fails as for a missing package
from mcp_tasks_jupyter.demo.__main__ import main
code = main(sys.argv[2:])
heavy = ("mcp_tasks_jupyter.client", "pydantic", "httpx", "starlette", "uvicorn", "IPython")
print("loaded:", ",".join(m for m in heavy if sys.modules.get(m) is not None))
sys.exit(code)
"""


def run_demo(blocked: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, blocked, *args],
        input="",
        capture_output=True,
        text=True,
        timeout=30,
        env=python_env(),
    )


@pytest.mark.timeout(60)
def test_http_without_the_extra_names_the_extra() -> None:
    for missing in ("starlette", "uvicorn"):
        done = run_demo(missing, "--http", "--port", "0")
        assert done.returncode == 2, done
        assert f"needs {missing}, which is not installed" in done.stderr
        assert "pip install 'mcp-tasks-jupyter[demo-http]'" in done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.timeout(60)
def test_stdio_needs_no_web_server_and_no_client_library() -> None:
    done = run_demo("starlette,uvicorn", "--log-level", "error")  # stdin is empty: it serves, then ends
    assert done.returncode == 0, done
    assert done.stdout.strip() == "loaded:", done.stdout
