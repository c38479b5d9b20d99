"""Reading a text/event-stream (WHATWG server-sent events) from chunks of bytes, bounded. No sockets.

A small reader of our own, fed aiohttp's bytes as they come (no HTTP response object in between):

- a line ends only at CR, LF or CRLF, as the format says (Python's ``str.splitlines`` also ends lines
  at U+2028, U+2029, U+0085, \\x1c-\\x1e..., which a JSON string may hold raw: Node's
  ``JSON.stringify`` writes U+2028 as is), also when a CRLF is cut between two chunks;
- the stream is UTF-8 whatever its charset says (bytes that are not become U+FFFD), and one leading
  byte order mark is dropped (the format says both);
- fields as the format reads them: ``data`` lines joined by LF, ``event`` (default ``message``), ``id``
  (one holding NUL is ignored; an empty one keeps the id we have), ``retry`` (ASCII digits only),
  comments (``:``) skipped; an event still open when the chunks end is dropped;
- no event grows past ``MAX_EVENT_BYTES``: a server that sends an endless line gets an InvalidMessage,
  and the reader stops;
- where a stream got to (``StreamPosition``: the last event id and the server's ``retry:`` delay)
  outlives one connection, so that a cut stream can be resumed.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass

from ..errors import InvalidMessage

#: The largest event read (one JSON-RPC message, the same bound as a JSON answer's body).
MAX_EVENT_BYTES = 64 * 1024 * 1024
#: A server's ``retry:`` is taken within these bounds: a huge one must not stall resumption for ever,
#: nor a zero make a stream that ends at once a busy loop of reconnections.
MIN_RETRY_MS, MAX_RETRY_MS = 100, 60_000
#: Chunks are handed on in pieces of at most this, so that the size bound is checked at least this
#: often (an event may pass ``max_event_bytes`` by less than one piece before it is refused).
_PIECE_BYTES = 64 * 1024
#: Where a line ends: CRLF, CR or LF, and nothing else.
_LINE_END = re.compile(r"\r\n|\r|\n")


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
    parser = _Parser()
    async for chunk in chunks:
        for start in range(0, len(chunk), _PIECE_BYTES):
            piece = chunk[start : start + _PIECE_BYTES]
            if parser.pending + len(piece) > max_event_bytes:
                raise InvalidMessage(
                    f"an SSE event is larger than {size_text(max_event_bytes)} (the most this "
                    "client reads): the stream is closed",
                    server=server,
                )
            for event in parser.feed(piece):
                if event.retry is not None:
                    position.retry_ms = max(MIN_RETRY_MS, min(event.retry, MAX_RETRY_MS))
                if event.id is not None:
                    position.last_event_id = event.id
                yield SSEEvent(event.event, event.data, event.id)


@dataclass(slots=True)
class _Dispatched:
    event: str
    data: str
    id: str | None
    retry: int | None


class _Parser:
    """The format's line and field rules over decoded text, one piece of bytes at a time."""

    __slots__ = (
        "_after_cr",
        "_data",
        "_data_chars",
        "_decoder",
        "_event",
        "_fields",
        "_id",
        "_retry",
        "_tail",
        "_tail_chars",
    )

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
        self._tail: list[str] = []  # a line not ended yet, in the parts it came in
        self._tail_chars = 0
        self._after_cr = False  # the last piece ended with CR: an LF first in the next is its CRLF
        self._event = ""
        self._data: list[str] = []
        self._data_chars = 0
        self._id: str | None = None  # the last event id of this stream (it carries over events)
        self._retry: int | None = None
        self._fields = False  # a field line came since the last blank line

    @property
    def pending(self) -> int:
        """About how much the event being read holds (characters of its data and of its open line)."""
        return self._data_chars + self._tail_chars

    def feed(self, piece: bytes) -> list[_Dispatched]:
        text = self._decoder.decode(piece)
        if self._after_cr and text:
            self._after_cr = False
            if text[0] == "\n":
                text = text[1:]  # the LF of a CRLF cut between two pieces
        if text:
            self._after_cr = text[-1] == "\r"
        lines = _LINE_END.split(text)
        tail = lines.pop()
        if not lines:  # no line ended: the open line grows (kept in parts: an endless one costs no copies)
            if tail:
                self._tail.append(tail)
                self._tail_chars += len(tail)
            return []
        if self._tail:
            lines[0] = "".join(self._tail) + lines[0]
        self._tail, self._tail_chars = ([tail], len(tail)) if tail else ([], 0)
        events = []
        for line in lines:
            if line:
                self._field(line)
            elif self._fields:
                events.append(self._dispatch())
        return events

    def _field(self, line: str) -> None:
        if line[0] == ":":
            return  # a comment
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        self._fields = True
        if name == "data":
            self._data.append(value)
            self._data_chars += len(value) + 1
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value or None
        elif name == "retry" and value.isascii() and value.isdigit():
            self._retry = int(value)

    def _dispatch(self) -> _Dispatched:
        event = _Dispatched(self._event or "message", "\n".join(self._data), self._id, self._retry)
        self._event, self._data, self._data_chars, self._retry, self._fields = "", [], 0, None, False
        return event


def size_text(n: int) -> str:
    """``64 MiB``, ``8 KiB``, ``100 bytes``."""
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} bytes"
