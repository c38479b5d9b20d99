"""A POST answered on an SSE stream gives its connection back to the pool: the reader, its answer in hand,
reads on to the stream's end (the server ends it right after the answer) instead of closing it there. Before,
nearly every call of a sweep opened a new TCP connection (one for ``tools/call``, one for its result).
Counted by a byte relay on 127.0.0.1 between the client and the demo, which sees every connection opened and
lets the end of each chunked answer (its last, empty chunk) arrive a moment after the rest, as it does over any
network: a reader that stops at the answer finds the stream not yet ended."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import pytest

import mcp_tasks_jupyter as mtj
from tests.support import start_demo_http

pytestmark = pytest.mark.anyio
WAIT = 60  # seconds: a bound on every wait, never a speed claim
ITEMS = 60
LIMIT = 8
LAST_CHUNK = b"0\r\n\r\n"  # a chunked body's end
END_DELAY_S = 0.02


class CountingRelay:
    """Relays bytes both ways between each accepted connection and ``upstream``; counts the connections."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.host, self.port, self.path = parts.hostname or "127.0.0.1", parts.port or 80, parts.path
        self.accepted = 0

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, late_end: bool) -> None:
        try:
            while chunk := await reader.read(65536):
                if late_end and chunk.endswith(LAST_CHUNK) and len(chunk) > len(LAST_CHUNK):
                    writer.write(chunk[: -len(LAST_CHUNK)])
                    await writer.drain()
                    await asyncio.sleep(END_DELAY_S)
                    chunk = LAST_CHUNK
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        await asyncio.gather(
            self._pipe(reader, up_writer, late_end=False), self._pipe(up_reader, writer, late_end=True)
        )

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[str]:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}{self.path}"
        finally:
            server.close()


async def test_a_sweeps_calls_reuse_a_few_kept_alive_connections():
    with start_demo_http("--poll-interval", "100") as url:
        relay = CountingRelay(url)
        async with relay.running() as relayed, mtj.connect(relayed, protocol_version="2025-11-25") as client:
            items = [{"seconds": 0.05, "steps": 1, "label": f"i{i}"} for i in range(ITEMS)]
            batch = await client.map("slow_compute", items, limit=LIMIT)
            await asyncio.wait_for(batch.gather(), WAIT)
            assert [h.status for h in batch] == ["completed"] * ITEMS
            opened = relay.accepted
    # Each of the LIMIT tasks in flight holds a stream for its result and may hold one for its call; the
    # GET stream and the first requests take a few more. A connection per call would be 2 x ITEMS.
    assert opened <= 2 * LIMIT + 6, f"{opened} connections for {ITEMS} calls"
