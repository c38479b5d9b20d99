"""The stdio transport: newline-delimited JSON-RPC on stdin/stdout, one client per process.

Every line goes to a :class:`~.server.Connection`, which hands it to the dialect it belongs to
(stateless 2026-07-28 requests and a legacy session may share the pipe).

Each incoming message is handled in its own asyncio task, so a blocking ``tasks/result`` or a
slow inline ``tools/call`` never holds up the next line. Blank lines are ignored; a line that
is not JSON gets an error response with id null (-32700). Nothing but protocol messages is
ever written to stdout (logs go to stderr). When stdin closes, running requests and task
bodies are cancelled and the coroutine returns.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import IO, Any

from .rpc import PARSE_ERROR, make_error
from .server import Connection, DemoServer

logger = logging.getLogger("mcp_tasks_jupyter.demo")

LINE_LIMIT = 64 * 1024 * 1024


class _LineTooLong(Exception):
    pass


class StdoutWriter:
    """:class:`~.jsonrpc.Outbound` for stdio: each message is written as one line at once."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._broken = False

    def send(self, message: dict[str, Any], *, task_id: str | None = None) -> None:
        """Write one message as a single line and flush (dropped once the pipe is broken)."""
        if self._broken:
            return
        try:
            self._stream.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
            self._stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            self._broken = True
            logger.warning("stdout is closed; dropping messages from now on")


class _Lines:
    """Lines from stdin without blocking the event loop."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._reader: asyncio.StreamReader | None = None

    async def open(self) -> None:
        if os.isatty(self._stream.fileno()):
            return  # a terminal shares its file with stdout: keep it blocking, read in a thread
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        loop = asyncio.get_running_loop()
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), self._stream)
        except (ValueError, OSError):
            return  # e.g. a regular file: read it in a thread
        self._reader = reader

    async def readline(self) -> bytes:
        if self._reader is None:
            return await asyncio.to_thread(self._stream.readline)
        try:
            return await self._reader.readline()
        except ValueError:  # longer than LINE_LIMIT
            raise _LineTooLong from None


async def serve_stdio(server: DemoServer, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> None:
    """Serve one client on stdin/stdout until stdin closes."""
    writer = StdoutWriter(stdout or sys.stdout.buffer)
    connection = Connection(server, writer)
    lines = _Lines(stdin or sys.stdin.buffer)
    await lines.open()
    handlers: set[asyncio.Task[None]] = set()

    async def serve_one(message: Any) -> None:
        response = await connection.handle(message)
        if response is not None:
            writer.send(response)

    try:
        while True:
            try:
                line = await lines.readline()
            except _LineTooLong:
                writer.send(make_error(None, PARSE_ERROR, f"Parse error: line longer than {LINE_LIMIT} bytes"))
                continue
            if not line:
                break
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                writer.send(make_error(None, PARSE_ERROR, "Parse error: the line is not valid JSON"))
                continue
            handler = asyncio.create_task(serve_one(message))
            handlers.add(handler)
            handler.add_done_callback(handlers.discard)
    finally:
        logger.info("stdin closed; shutting down")
        connection.close()
        for handler in list(handlers):
            handler.cancel()
        if handlers:
            await asyncio.wait(handlers, timeout=2)
        await server.shutdown()
