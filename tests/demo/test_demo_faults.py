"""The demo server's fault tool (--faults): the process dies mid-task, on purpose."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from demo_harness import HttpPeer, StdioPeer, http_server

from tests.support import eventually

pytestmark = pytest.mark.anyio


async def test_exit_process_over_stdio() -> None:
    async with StdioPeer.start("--faults") as peer:
        await peer.initialize()
        task = await peer.call_task("exit_process", {"after_seconds": 0.2, "code": 3})
        assert task["status"] == "working"
        assert await asyncio.wait_for(peer.proc.wait(), 10) == 3
        # the stderr reader may still be reading the last line: wait for it, not for a guessed time
        await eventually(lambda: b"demo server exiting on purpose" in peer.stderr, what="the exit message")


async def test_exit_process_over_http() -> None:
    async with http_server("--faults") as server, httpx.AsyncClient() as client:
        peer = HttpPeer(client, server.url)
        await peer.initialize()
        await peer.call_task("exit_process", {"after_seconds": 0.1, "code": 7})
        assert await asyncio.wait_for(server.proc.wait(), 10) == 7
        assert server.proc.stderr is not None
        assert b"demo server exiting on purpose" in await asyncio.wait_for(server.proc.stderr.read(), 5)
        with pytest.raises(httpx.TransportError):
            await peer.post(peer.message("ping"))


async def test_exit_process_is_hidden_without_faults() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize()
        error = await peer.error("tools/call", {"name": "exit_process", "arguments": {}, "task": {}})
        assert error == {"code": -32602, "message": "Unknown tool: exit_process"}
