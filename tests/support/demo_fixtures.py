"""The demo server, started by the tests over stdio and over Streamable HTTP on 127.0.0.1: the
``transport`` and ``connect_demo`` fixtures (each test folder that connects to the demo imports them
into its conftest.py) and ``demo_client``."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from tests.support import demo_stdio_argv, start_demo_http


@contextlib.asynccontextmanager
async def demo_client(transport: str, *server_args: str, **options: Any) -> AsyncIterator[mtj.Client]:
    """A client connected to a fresh demo server over ``transport`` ("stdio" or "http").

    Unless ``dialect=`` or ``protocol_version=`` say otherwise, the client speaks 2025-11-25
    (``initialize``): probing would find the stateless wire, where ``auto`` picks ext.
    test_dialect_demo.py runs the task flows in every dialect.
    """
    if options.get("dialect", "auto") == "auto":
        options.setdefault("protocol_version", "2025-11-25")
    if transport == "stdio":
        async with mtj.connect(demo_stdio_argv(*server_args), **options) as client:
            yield client
    else:
        with start_demo_http(*server_args) as url:
            async with mtj.connect(url, **options) as client:
                yield client


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def connect_demo(transport: str) -> Callable[..., Any]:
    """``async with connect_demo(*server_args, **connect_options) as client``."""
    return lambda *args, **options: demo_client(transport, *args, **options)
