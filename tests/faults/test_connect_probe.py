"""Connecting stays fast (issue 14, item 4): over stdio a legacy server that ignores ``server/discover`` is
recognised one round trip later (a ping answered behind the probe), not after the whole probe timeout."""

import asyncio

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter import client as client_module

from .conftest import stdio_argv

pytestmark = pytest.mark.anyio


async def test_a_stdio_server_that_ignores_server_discover_is_known_after_one_ping(monkeypatch):
    monkeypatch.setattr(client_module, "PROBE_TIMEOUT_S", 3600.0)  # waiting the probe out would hang here
    async with asyncio.timeout(20), mtj.connect(stdio_argv("ignores_discover"), timeout=60) as client:
        assert client.protocol_version == "2025-11-25" and client.dialect.name == "2025-11-25"
        handle = await client.start_task("job", {"seconds": 0.1})
        assert (await handle).text == "done"


async def test_a_stdio_server_that_refuses_server_discover_is_still_legacy_at_once():
    async with asyncio.timeout(20), mtj.connect(stdio_argv("plain")) as client:
        assert client.protocol_version == "2025-11-25"
