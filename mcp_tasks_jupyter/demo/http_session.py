"""Delivery of server-to-client messages for one Streamable HTTP session, over SSE streams.

A session has one *standalone* stream (key ``get``, opened by GET) and one stream per
``tasks/result`` POST (keys ``r1``, ``r2``, …). Every event gets an id ``<stream>-<n>`` with
``n`` counting up across the whole session, and goes into a ring buffer of the last 1000
events, so a GET with ``Last-Event-ID`` can resume *that* stream: replay what came after the
id and, if the stream is still live, carry on (a ``tasks/result`` stream then ends with its
response, as it would have).

Routing (:meth:`HttpSession.send`):

* a message related to a task goes to the newest connected ``tasks/result`` stream of that
  task, if there is one;
* otherwise to the standalone stream; notifications are buffered there even while no GET is
  connected (a reconnect with ``Last-Event-ID`` replays them), but a server *request*
  (``elicitation/create``) waits in a queue until a GET connects or a ``tasks/result`` stream
  for its task opens, and is then delivered on exactly one stream.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
from collections import deque
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .rpc import message_kind

if TYPE_CHECKING:
    from .protocol_2025 import Session2025

logger = logging.getLogger("mcp_tasks_jupyter.demo")

STANDALONE = "get"
RETRY_MS = 1000
BUFFER_SIZE = 1000
PING_SECONDS = 15.0
MAX_RESULT_STREAMS = 1000


class StreamBusy(Exception):
    """That stream already has a connection (HTTP 409)."""


class UnknownEventId(Exception):
    """``Last-Event-ID`` names no stream of this session (HTTP 400)."""


def format_event(event_id: str, data: str) -> str:
    """One SSE event carrying a JSON-RPC message."""
    return f"id: {event_id}\nevent: message\ndata: {data}\n\n"


class SseConnection:
    """One HTTP response carrying SSE: a queue of ready-made chunks, ended by :meth:`close`."""

    def __init__(self, ping_seconds: float = PING_SECONDS) -> None:
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._ping_seconds = ping_seconds
        self.closed = False

    def put(self, chunk: str) -> None:
        """Queue a chunk for the client (ignored once closed)."""
        if not self.closed:
            self._queue.put_nowait(chunk)

    def close(self) -> None:
        """End the response after the chunks already queued."""
        if not self.closed:
            self.closed = True
            self._queue.put_nowait(None)

    async def chunks(self) -> AsyncIterator[str]:
        """The chunks to write, with a ``: ping`` comment after each quiet interval. Chunks queued together
        (a task's status, progress and log at one step) are written together: one write, and one wake-up of
        the client, instead of one per event."""
        queue = self._queue
        while True:
            if queue.empty():
                try:
                    async with asyncio.timeout(self._ping_seconds):
                        chunk = await queue.get()
                except TimeoutError:
                    yield ": ping\n\n"
                    continue
            else:
                chunk = queue.get_nowait()
            if chunk is None:
                return
            if queue.empty():
                yield chunk
                continue
            together = [chunk]
            while not queue.empty():
                more = queue.get_nowait()
                if more is None:
                    yield "".join(together)
                    return
                together.append(more)
            yield "".join(together)


@dataclass(eq=False)
class _Stream:
    key: str
    task_id: str | None = None
    connection: SseConnection | None = None
    finished: bool = False
    number: int = 0  # the order streams were opened in: the newest of a task's streams wins


class HttpSession:
    """The SSE side of one ``Mcp-Session-Id``; it is the :class:`~.jsonrpc.Outbound` of its
    protocol session (set :attr:`protocol` right after construction)."""

    def __init__(
        self, session_id: str, *, buffer_size: int = BUFFER_SIZE, ping_seconds: float = PING_SECONDS
    ) -> None:
        self.session_id = session_id
        self.protocol: Session2025 | None = None
        self.closed = False
        self._ping_seconds = ping_seconds
        self._events: deque[tuple[int, str, str]] = deque(maxlen=buffer_size)
        self._counter = itertools.count()
        self._result_numbers = itertools.count(1)
        self._streams: dict[str, _Stream] = {STANDALONE: _Stream(STANDALONE)}
        # Looked up for every message a task sends (its status, progress, logs): by task and by connection,
        # not by walking the up to MAX_RESULT_STREAMS streams kept for resumption.
        self._live_by_task: dict[str, list[_Stream]] = {}
        self._connected: dict[SseConnection, _Stream] = {}
        self._pending: list[tuple[str | None, dict[str, Any]]] = []
        self._background: set[asyncio.Task[Any]] = set()

    # -- outbound ----------------------------------------------------------------------------

    def send(self, message: dict[str, Any], *, task_id: str | None = None) -> None:
        """Route one server-to-client message (see the module docstring)."""
        if self.closed:
            return
        stream = self._result_stream_for(task_id)
        if stream is None:
            stream = self._streams[STANDALONE]
            if stream.connection is None and message_kind(message) == "request":
                self._pending.append((task_id, message))
                return
        self._emit(stream, message)

    def _result_stream_for(self, task_id: str | None) -> _Stream | None:
        live = self._live_by_task.get(task_id) if task_id is not None else None
        return max(live, key=lambda stream: stream.number) if live else None

    def _attach(self, stream: _Stream, connection: SseConnection) -> None:
        stream.connection = connection
        self._connected[connection] = stream
        if stream.task_id is not None and not stream.finished:
            self._live_by_task.setdefault(stream.task_id, []).append(stream)

    def _detach(self, stream: _Stream) -> None:
        if stream.connection is not None:
            self._connected.pop(stream.connection, None)
            stream.connection = None
        live = self._live_by_task.get(stream.task_id) if stream.task_id is not None else None
        if live is not None and stream in live:
            live.remove(stream)
            if not live:
                del self._live_by_task[stream.task_id]  # type: ignore[arg-type]

    def _emit(self, stream: _Stream, message: dict[str, Any]) -> None:
        number = next(self._counter)
        chunk = format_event(f"{stream.key}-{number}", json.dumps(message, separators=(",", ":")))
        self._events.append((number, stream.key, chunk))
        if stream.connection is not None:
            stream.connection.put(chunk)

    def _flush_pending(self, stream: _Stream) -> None:
        keep: list[tuple[str | None, dict[str, Any]]] = []
        for task_id, message in self._pending:
            if self.protocol is not None and not self.protocol.is_waiting_for(message.get("id")):
                continue  # nobody waits for the answer any more (task cancelled or expired)
            if stream.key == STANDALONE or task_id == stream.task_id:
                self._emit(stream, message)
            else:
                keep.append((task_id, message))
        self._pending = keep

    # -- streams -----------------------------------------------------------------------------

    def open_result_stream(self, task_id: str | None) -> tuple[_Stream, SseConnection]:
        """A new stream for a ``tasks/result`` POST, connected, primed with an event id."""
        number = next(self._result_numbers)
        key = f"r{number}"
        stream = _Stream(key, task_id, number=number)
        connection = SseConnection(self._ping_seconds)
        self._streams[key] = stream
        self._attach(stream, connection)
        self._prune_finished()
        connection.put(f"id: {key}-{next(self._counter)}\nretry: {RETRY_MS}\ndata:\n\n")
        self._flush_pending(stream)
        return stream, connection

    def finish_result_stream(self, stream: _Stream, response: dict[str, Any] | None) -> None:
        """Send the final response on a ``tasks/result`` stream and end it."""
        if response is not None:
            self._emit(stream, response)
        connection = stream.connection
        self._detach(stream)
        stream.finished = True
        if connection is not None:
            connection.close()

    def connect(self, last_event_id: str | None) -> SseConnection:
        """A connection for a GET: the standalone stream, or (with ``Last-Event-ID``) the stream
        that id belongs to, after replaying the buffered events that followed it.

        Raises :class:`StreamBusy` if that stream is connected already, :class:`UnknownEventId`
        if the id names no stream of this session.
        """
        after: int | None = None
        stream = self._streams[STANDALONE]
        if last_event_id is not None:
            key, _, number = last_event_id.strip().rpartition("-")
            found = self._streams.get(key)
            if found is None or not number.isdigit():
                raise UnknownEventId(last_event_id)
            stream, after = found, int(number)
        if stream.connection is not None:
            raise StreamBusy(stream.key)
        connection = SseConnection(self._ping_seconds)
        connection.put(f"retry: {RETRY_MS}\n\n")
        if after is not None:
            for event_number, key, chunk in self._events:
                if key == stream.key and event_number > after:
                    connection.put(chunk)
        if stream.finished:
            connection.close()
            return connection
        self._attach(stream, connection)
        self._flush_pending(stream)
        return connection

    def disconnect(self, connection: SseConnection) -> None:
        """The HTTP response of ``connection`` ended (or the client went away)."""
        connection.close()
        stream = self._connected.get(connection)
        if stream is not None:
            self._detach(stream)

    def _prune_finished(self) -> None:
        if len(self._streams) <= MAX_RESULT_STREAMS:
            return
        for key in [k for k, s in self._streams.items() if s.finished and s.connection is None]:
            del self._streams[key]
            if len(self._streams) <= MAX_RESULT_STREAMS // 2:
                break

    # -- lifetime ----------------------------------------------------------------------------

    def run_in_background(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run a coroutine owned by this session (cancelled by :meth:`close`)."""
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    def close(self) -> None:
        """End the session: close every stream and stop its background work."""
        if self.closed:
            return
        self.closed = True
        if self.protocol is not None:
            self.protocol.close()
        for stream in self._streams.values():
            if stream.connection is not None:
                stream.connection.close()
                self._detach(stream)
        for task in list(self._background):
            task.cancel()
        self._pending.clear()
