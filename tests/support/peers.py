"""The real peers the interop tests talk to: how to run each over stdio and over HTTP.

Stdio helpers return an argv for the client library to spawn. HTTP helpers are context managers
that start the server on 127.0.0.1, wait until it is ready, yield its URL and stop it afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .demo_server import demo_argv
from .paths import (
    FASTMCP_SERVER,
    LOOPBACK_PRELOAD,
    MCP1_SERVER,
    PYTHON,
    basic_apps_js,
    everything_js,
    fastmcp_python,
    node22,
    node_env,
)
from .processes import PeerStartError, free_port, python_env, spawn, wait_for_port, wait_for_stdout

START_TIMEOUT = 30.0  # seconds; two busy cores can make a cold Node or Python start slow
LISTENING_LINE = r"listening on (http://127\.0\.0\.1:\d+/mcp)"


# @modelcontextprotocol/server-basic-vanillajs (npm): the MCP Apps reference server, `get-time` and its view.


def basic_apps_stdio_argv() -> list[str]:
    return [node22(), "-r", str(LOOPBACK_PRELOAD), basic_apps_js(), "--stdio"]


# @modelcontextprotocol/server-everything (npm), 2025-11-25 tasks: `simulate-research-query`.


def everything_stdio_argv() -> list[str]:
    return [node22(), "-r", str(LOOPBACK_PRELOAD), everything_js(), "stdio"]


@contextmanager
def start_everything_http(*, attempts: int = 3) -> Iterator[str]:
    """Yield `http://127.0.0.1:N/mcp` of a Streamable HTTP everything server (PORT=N, loopback only)."""
    argv = [node22(), "-r", str(LOOPBACK_PRELOAD), everything_js(), "streamableHttp"]
    for attempt in range(1, attempts + 1):
        port = free_port()  # the server takes its port from PORT; another process may grab it first
        with spawn(argv, env=node_env() | {"PORT": str(port)}) as process:
            try:
                wait_for_port(process, port, START_TIMEOUT)
            except PeerStartError:
                if attempt < attempts and "already in use" in process.output():
                    continue  # the server says "Port N is already in use" and exits 1
                raise
            yield f"http://127.0.0.1:{port}/mcp"
            return


# tests/interop/mcp1_task_server.py: the official Python SDK `mcp` 1.30, experimental tasks.


def mcp1_stdio_argv() -> list[str]:
    return [PYTHON, str(MCP1_SERVER)]


@contextmanager
def start_mcp1_http() -> Iterator[str]:
    """Yield the URL of the mcp 1.x task server over Streamable HTTP on a free loopback port."""
    with spawn([PYTHON, str(MCP1_SERVER), "--http", "--port", "0"], env=python_env()) as process:
        yield wait_for_stdout(process, LISTENING_LINE, START_TIMEOUT).group(1)


# tests/interop/fastmcp_tasks_server.py: fastmcp-tasks 4.1.4 (PyPI), the SEP-2663 tasks extension.


def fastmcp_stdio_argv() -> list[str]:
    return [fastmcp_python(), str(FASTMCP_SERVER)]


@contextmanager
def start_fastmcp_http() -> Iterator[str]:
    """Yield the URL of the fastmcp-tasks server over Streamable HTTP on a free loopback port."""
    with spawn([fastmcp_python(), str(FASTMCP_SERVER), "--http", "--port", "0"], env=python_env()) as process:
        yield wait_for_stdout(process, LISTENING_LINE, START_TIMEOUT).group(1)


# The project's own demo server (mcp_tasks_jupyter.demo; with --faults or --conformance, the demo plus
# the tools of tests/support/demo_server.py).


def demo_stdio_argv(*extra_args: str) -> list[str]:
    return demo_argv(*extra_args, python=PYTHON)


@contextmanager
def start_demo_http(*extra_args: str) -> Iterator[str]:
    """Yield the URL the demo server prints first: `MCP demo server listening on http://127.0.0.1:PORT/mcp`."""
    argv = demo_argv("--http", "--port", "0", *extra_args, python=PYTHON)
    with spawn(argv, env=python_env()) as process:
        yield wait_for_stdout(process, LISTENING_LINE, START_TIMEOUT).group(1)
