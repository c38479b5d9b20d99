"""Shared pytest set-up: async tests run on asyncio through anyio's plugin; every test gets its band.

Bands (markers, applied here so that no test can forget its own; run one with ``pytest -m unit``):

``browser``
    tests/browser: JupyterLab driven through chromium.
``kernel``
    Starts a Jupyter kernel: the notebooks (nbval), and every test module that uses jupyter_client,
    nbclient, papermill or tests/jupyter/kernel_harness.py.
``peers``
    Needs what ``make peers`` installs (the npm peers, the fastmcp venv, the conformance suite):
    tests/interop, tests/conformance, a module that uses one of those peers' launchers, or a test
    marked ``peers`` by hand.
``servers``
    Starts a server process of ours: the demo server (over stdio or HTTP) or the scripted stdio fault
    server, by a module's launchers or the ``connect_demo`` fixture.
``loopback``
    Opens a socket (a scripted server in the test's own loop, an OAuth listener) or runs a process of
    its own (a pipe, a subprocess) without starting one of the servers above: marked by hand
    (``pytest.mark.loopback``, on the module or the test). Fast, but it waits on the network stack.
``unit``
    Everything else: no kernel, no browser, no peer, no server, no socket, no process. ``make check``
    runs this band, and a guard fails a unit test that binds or connects a socket or starts a process
    (mark it ``loopback``), so the band keeps meaning what it says.
"""

from __future__ import annotations

import socket
import subprocess
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.postgres import PostgresServer

ROOT = Path(__file__).resolve().parents[1]

#: Directories whose every test is in one band.
BROWSER_DIRS = (ROOT / "tests" / "browser",)
PEER_DIRS = (ROOT / "tests" / "interop", ROOT / "tests" / "conformance")
#: A test module that uses anything from these modules starts a kernel.
KERNEL_MODULES = ("jupyter_client", "nbclient", "nbval", "papermill", "tests.jupyter.kernel_harness")
#: Launchers in tests/support/peers.py of the peers ``make peers`` installs (the demo's are not).
#: Launchers of our own server processes (the demo, the scripted stdio fault server).
SERVER_LAUNCHERS = frozenset(
    {
        "demo_stdio_argv",
        "start_demo_http",
        "start_auth_demo",
        "demo_client",
        "StdioPeer",
        "HttpPeer",
        "http_server",
        "stdio_argv",
    }
)
SERVER_FIXTURES = frozenset({"connect_demo"})
PEER_LAUNCHERS = frozenset(
    {
        "everything_stdio_argv",
        "start_everything_http",
        "mcp1_stdio_argv",
        "start_mcp1_http",
        "fastmcp_stdio_argv",
        "start_fastmcp_http",
    }
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _own_task_index(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test records tasks in a task index of its own, never in the user's data directory."""
    monkeypatch.setenv("MTJ_INDEX", str(tmp_path_factory.mktemp("index") / "tasks.sqlite3"))
    monkeypatch.setenv("MTJ_TOKENS", str(tmp_path_factory.mktemp("tokens")))  # never the user's sign-ins


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A real PostgreSQL server of the test session (tests/support/postgres.py), stopped at its end."""
    with PostgresServer() as server:
        yield server


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.loopback)])
def index_location(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A task index of the test's own on each backend: a SQLite file, and a new database on the session's
    PostgreSQL server (those tests are in the loopback band: they reach a server process). The data
    directory is the test's own too (a shared index without a team key keeps this user's key there)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    if request.param == "sqlite":
        return str(tmp_path / "index" / "tasks.sqlite3")
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.database()


@pytest.fixture
def index_env(index_location: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The kernels' index of the test (``MTJ_INDEX``) on each backend (:func:`index_location`)."""
    monkeypatch.setenv("MTJ_INDEX", index_location)
    return index_location


#: Socket families a unit test may not bind or connect (a socketpair, as the event loop makes, is fine).
_NETWORK_FAMILIES = (socket.AF_INET, socket.AF_INET6, socket.AF_UNIX)


@pytest.fixture(autouse=True)
def _unit_tests_touch_no_socket_or_process(request: pytest.FixtureRequest) -> Iterator[None]:
    """In the unit band, binding or connecting a socket, or starting a process, fails the test at once
    with what to do (the band's meaning is kept by the code, not by memory)."""
    if request.node.get_closest_marker("unit") is None or any(
        request.node.get_closest_marker(band) for band in ("loopback", "servers", "kernel", "peers", "browser")
    ):
        yield
        return
    where = request.node.nodeid
    connect, bind, popen = socket.socket.connect, socket.socket.bind, subprocess.Popen.__init__

    def refuse(what: str) -> AssertionError:
        return AssertionError(f"{where} is a unit test but {what}: mark it pytest.mark.loopback")

    def guarded_connect(sock: socket.socket, *args: Any) -> Any:
        if sock.family in _NETWORK_FAMILIES:
            raise refuse("connects a socket")
        return connect(sock, *args)

    def guarded_bind(sock: socket.socket, *args: Any) -> Any:
        if sock.family in _NETWORK_FAMILIES:
            raise refuse("binds a socket")
        return bind(sock, *args)

    def guarded_popen(*_args: Any, **_kwargs: Any) -> None:
        raise refuse("starts a process")

    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.bind = guarded_bind  # type: ignore[method-assign]
    subprocess.Popen.__init__ = guarded_popen  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect = connect  # type: ignore[method-assign]
        socket.socket.bind = bind  # type: ignore[method-assign]
        subprocess.Popen.__init__ = popen  # type: ignore[method-assign]


def _origin(value: object) -> str:
    """The module a global of a test module comes from ("" when it tells none)."""
    if isinstance(value, types.ModuleType):
        return value.__name__
    origin = getattr(value, "__module__", None)
    return origin if isinstance(origin, str) else ""


def _uses(module: types.ModuleType | None) -> tuple[bool, bool, bool]:
    """(starts a kernel, needs a peer, starts a server process) for a test module, from what it imports."""
    if module is None:
        return False, False, False
    kernel = peers = servers = False
    for name, value in vars(module).items():
        origin = _origin(value)
        if any(origin == m or origin.startswith(m + ".") for m in KERNEL_MODULES):
            kernel = True
        if name in PEER_LAUNCHERS and origin == "tests.support.peers":
            peers = True
        if name in SERVER_LAUNCHERS and (origin.startswith("tests.") or origin == "demo_harness"):
            servers = True
    return kernel, peers, servers


def _band_markers(item: pytest.Item) -> list[str]:
    path = Path(str(item.path)).resolve()
    if any(path.is_relative_to(d) for d in BROWSER_DIRS):
        return ["browser"]
    kernel, peers, servers = _uses(getattr(item, "module", None))
    servers = servers or bool(SERVER_FIXTURES & set(getattr(item, "fixturenames", ())))
    if path.suffix == ".ipynb":
        kernel = True  # an nbval cell: the notebook runs in a kernel
    kernel = kernel or item.get_closest_marker("kernel") is not None  # marked by hand (tests/test_wheel.py)
    peers = peers or any(path.is_relative_to(d) for d in PEER_DIRS) or item.get_closest_marker("peers") is not None
    bands = (["kernel"] if kernel else []) + (["peers"] if peers else [])
    if not bands and servers:
        bands = ["servers"]
    if not bands and item.get_closest_marker("loopback") is not None:
        bands = ["loopback"]
    return bands or ["unit"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for band in _band_markers(item):
            if item.get_closest_marker(band) is None:
                item.add_marker(band)
