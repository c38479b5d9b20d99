"""Reading a text/event-stream (WHATWG server-sent events) from chunks of bytes, bounded. No sockets.

Lines and fields are httpx-sse's: a line ends only at CR, LF or CRLF, as the format says (Python's
``str.splitlines`` also ends lines at U+2028, U+2029, U+0085, \\x1c-\\x1e..., which a JSON string may
hold raw: Node's ``JSON.stringify`` writes U+2028 as is). What is ours:

- the stream is UTF-8 whatever its charset says, and one leading byte order mark is dropped (the format
  says both);
- no event grows past ``MAX_EVENT_BYTES``: a server that sends an endless line gets an InvalidMessage,
  and the reader stops;
- where a stream got to (``StreamPosition``: the last event id and the server's ``retry:`` delay)
  outlives one connection, so that a cut stream can be resumed.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

import httpx
from httpx_sse import EventSource

from ..errors import InvalidMessage

#: The largest event read (one JSON-RPC message, the same bound as a JSON answer's body).
MAX_EVENT_BYTES = 64 * 1024 * 1024
#: A server's ``retry:`` is taken within these bounds: a huge one must not stall resumption for ever,
#: nor a zero make a stream that ends at once a busy loop of reconnections.
MIN_RETRY_MS, MAX_RETRY_MS = 100, 60_000
#: Chunks are handed on in pieces of at most this, so that the size bound is checked at least this
#: often (an event may pass ``max_event_bytes`` by less than one piece before it is refused).
_PIECE_BYTES = 64 * 1024
#: httpx decodes the text as this: UTF-8, less one leading byte order mark.
_AS_UTF8 = {"content-type": "text/event-stream; charset=utf-8-sig"}


@dataclass(slots=True)
class SSEEvent:
    event: str
    data: str
    id: str | None


@dataclass(slots=True)
class StreamPosition:
    """How far a stream got: the id of its last event with one (``Last-Event-ID`` when resuming)
    and the reconnection delay the server asked for, if it did."""

    last_event_id: str | None = None
    retry_ms: int | None = None


async def read_events(
    chunks: AsyncIterable[bytes],
    position: StreamPosition,
    *,
    server: str | None = None,
    max_event_bytes: int = MAX_EVENT_BYTES,
) -> AsyncIterator[SSEEvent]:
    """The events in a stream of byte chunks (e.g. ``response.aiter_bytes()``), updating ``position``.

    An event still open when the chunks end is dropped, as the format says. Raises InvalidMessage
    (naming ``server``) when an event passes ``max_event_bytes``; errors of ``chunks`` pass through.
    """
    budget = _Budget(max_event_bytes, server)
    # httpx-sse reads a response; this one decodes our own (bounded) chunks.
    source = httpx.Response(200, headers=_AS_UTF8, content=budget.pieces(chunks))
    events = EventSource(source).aiter_sse()
    try:
        async for sse in events:
            budget.used = 0
            if sse.retry is not None and sse.retry >= 0:
                position.retry_ms = max(MIN_RETRY_MS, min(sse.retry, MAX_RETRY_MS))
            # httpx-sse gives "" both for no id yet and for "id:" with no value (which the format
            # reads as "forget the id"): both keep the id we have, which outlives reconnections.
            if sse.id:
                position.last_event_id = sse.id
            yield SSEEvent(sse.event, sse.data, sse.id or None)
    finally:
        await events.aclose()
        await source.aclose()


class _Budget:
    """Counts the bytes read since the last event; past the bound, the stream is refused."""

    __slots__ = ("limit", "server", "used")

    def __init__(self, limit: int, server: str | None) -> None:
        self.limit = limit
        self.server = server
        self.used = 0

    async def pieces(self, chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
        async for chunk in chunks:
            for start in range(0, len(chunk), _PIECE_BYTES):
                piece = chunk[start : start + _PIECE_BYTES]
                self.used += len(piece)
                if self.used > self.limit:
                    raise InvalidMessage(
                        f"an SSE event is larger than {size_text(self.limit)} (the most this "
                        "client reads): the stream is closed",
                        server=self.server,
                    )
                yield piece


def size_text(n: int) -> str:
    """``64 MiB``, ``8 KiB``, ``100 bytes``."""
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} bytes"
