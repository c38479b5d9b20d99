"""A bare HTTP/1.1 server on loopback that answers with exactly the bytes a test gives, piece by piece.

For what a web framework will not send on demand: a chunk boundary inside a CRLF or inside a UTF-8
character, a body that never ends, an endless SSE line. ``answer(request)`` returns ``(status,
headers, pieces)``; each piece of the async iterable ``pieces`` is written as one HTTP chunk, flushed,
and followed by a short pause (TCP_NODELAY is set), so that it normally reaches the client as a read
of its own. ``sent`` counts the body bytes written, so that a test can tell how much a client read
before it hung up.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

PAUSE_S = 0.02


@dataclass
class RawRequest:
    method: str
    headers: dict[str, str]
    body: bytes

    @property
    def message(self) -> Any:
        return json.loads(self.body) if self.body else None


Answer = tuple[int, dict[str, str], AsyncIterable[bytes]]


async def pieces_of(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def json_answer(message: dict[str, Any]) -> Answer:
    return 200, {"Content-Type": "application/json"}, pieces_of(json.dumps(message).encode())


class BytesServer:
    """Answers every request with ``answer(request)``; ``requests`` records them, ``sent`` the body bytes."""

    def __init__(self, answer: Callable[[RawRequest], Answer], *, pause: float = PAUSE_S) -> None:
        self.answer = answer
        self.pause = pause
        self.requests: list[RawRequest] = []
        self.sent = 0
        self.url = ""
        self._server: asyncio.AbstractServer | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}/mcp"

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()  # each handler then ends by itself (cancelling it would log an error)
        if self._handlers:
            await asyncio.wait(list(self._handlers), timeout=5)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._writers.add(writer)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                request = await self._read_request(reader)
                if request is None:
                    return
                self.requests.append(request)
                status, headers, pieces = self.answer(request)
                head = [f"HTTP/1.1 {status} Whatever", "Transfer-Encoding: chunked"]
                head += [f"{name}: {value}" for name, value in headers.items()]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
                async for piece in pieces:
                    if piece:
                        writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        await writer.drain()
                        self.sent += len(piece)
                        await asyncio.sleep(self.pause)
                writer.write(b"0\r\n\r\n")
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client hung up
        finally:
            self._handlers.discard(task)
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    @staticmethod
    async def _read_request(reader: asyncio.StreamReader) -> RawRequest | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        first, *lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return RawRequest(first.split(" ", 1)[0], headers, body)


@contextlib.asynccontextmanager
async def bytes_server(
    answer: Callable[[RawRequest], Answer], *, pause: float = PAUSE_S
) -> AsyncIterator[BytesServer]:
    server = BytesServer(answer, pause=pause)
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


class Collected:
    """A transport's owner for tests: keeps what the transport reports (its TransportEvents)."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self.failures: dict[Any, Exception] = {}
        self.noise: list[Exception] = []
        self.lost: list[Exception] = []
        self._changed = asyncio.Event()
        from mcp_tasks_jupyter.session.background import Background

        #: The connection's group, as a session holds it: the transport's jobs run in a child of it.
        self.background = Background("test connection")

    def message_received(self, message: Any) -> None:
        self.messages.append(message)
        self._changed.set()

    def request_failed(self, msg_id: Any, exc: Exception) -> None:
        self.failures[msg_id] = exc
        self._changed.set()

    def noise_received(self, exc: Exception) -> None:
        self.noise.append(exc)
        self._changed.set()

    def connection_lost(self, exc: Exception) -> None:
        self.lost.append(exc)
        self._changed.set()

    async def until(self, done: Callable[[], Any], timeout: float = 20.0) -> None:
        """Wait until ``done()`` is true (TimeoutError after ``timeout`` s)."""
        async with asyncio.timeout(timeout):
            while not done():
                self._changed.clear()
                await self._changed.wait()


@contextlib.asynccontextmanager
async def http_transport(url: str, **kwargs: Any) -> AsyncIterator[tuple[Any, Collected]]:
    """A started StreamableHTTPTransport to ``url`` and what it reports; closed at the end."""
    from mcp_tasks_jupyter.transport.http import StreamableHTTPTransport

    transport = StreamableHTTPTransport(url, **kwargs)
    collected = Collected()
    await transport.start(collected)
    try:
        yield transport, collected
    finally:
        await transport.close()
