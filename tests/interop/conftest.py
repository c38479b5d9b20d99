"""Fixtures for tests against real peers: each yields what `mtj.connect` takes (an argv or a URL)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import (
    everything_stdio_argv,
    mcp1_stdio_argv,
    start_everything_http,
    start_mcp1_http,
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def everything_http() -> Iterator[str]:
    """URL of a @modelcontextprotocol/server-everything on 127.0.0.1, shared by a module's tests."""
    with start_everything_http() as url:
        yield url


@pytest.fixture(scope="module")
def mcp1_http() -> Iterator[str]:
    """URL of tests/interop/mcp1_task_server.py over Streamable HTTP, shared by a module's tests."""
    with start_mcp1_http() as url:
        yield url


@pytest.fixture(params=["stdio", "http"])
def everything(request: pytest.FixtureRequest) -> list[str] | str:
    """The everything server over each transport: an argv to spawn (stdio) or a URL (http)."""
    return everything_stdio_argv() if request.param == "stdio" else request.getfixturevalue("everything_http")


@pytest.fixture(params=["stdio", "http"])
def mcp1(request: pytest.FixtureRequest) -> list[str] | str:
    """The mcp 1.x SDK task server over each transport: an argv (stdio) or a URL (http)."""
    return mcp1_stdio_argv() if request.param == "stdio" else request.getfixturevalue("mcp1_http")
