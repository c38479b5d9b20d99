"""Closing the HTTP transport while a request reads its answer: the read ends at once as a connection
failure naming the server, never a wait without end (closing aiohttp's session drops the connection
without telling a body being read; a read begun a moment later raised a bare ``RuntimeError``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

import mcp_tasks_jupyter as mtj

from .http_bytes_server import Answer, RawRequest, bytes_server, http_transport

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]
WAIT = 10  # seconds: a bound on every wait, never a speed claim


async def test_closing_while_an_answer_is_read_fails_the_read_at_once():
    done = asyncio.Event()

    async def never_ends() -> AsyncIterator[bytes]:
        yield b'{"jsonrpc": "2.0", "id": 1, "result": {"tools": ['
        await done.wait()  # (until the test ends)

    def answer(_request: RawRequest) -> Answer:
        return 200, {"Content-Type": "application/json"}, never_ends()

    async with bytes_server(answer) as server:
        try:
            async with http_transport(server.url) as (transport, _):
                sending = asyncio.create_task(transport.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
                while server.sent == 0:  # the answer's first bytes went out: the client reads the rest
                    await asyncio.sleep(0.01)
                await asyncio.sleep(0.1)
                await transport.close()
                with pytest.raises(mtj.ConnectionFailed) as raised:
                    await asyncio.wait_for(sending, WAIT)
                assert "was closed here while its answer was read" in str(raised.value)
                assert server.url.split("//")[1].split("/")[0] in str(raised.value)  # names the server
        finally:
            done.set()
