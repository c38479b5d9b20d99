"""Incremental parser for text/event-stream (the WHATWG server-sent events format). No I/O."""

from __future__ import annotations

from dataclasses import dataclass
from typing import AsyncIterator


@dataclass(slots=True)
class SSEEvent:
    event: str
    data: str
    id: str | None
    retry_ms: int | None


class SSEParser:
    """Feed it lines (without their line ending); it returns an event at each blank line.

    ``last_event_id`` and ``retry_ms`` persist across events, as the format requires.
    """

    __slots__ = ("_data", "_event", "_has_data", "last_event_id", "retry_ms")

    def __init__(self) -> None:
        self._data: list[str] = []
        self._event = ""
        self._has_data = False
        self.last_event_id: str | None = None
        self.retry_ms: int | None = None

    def feed_line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line[0] == ":":
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._has_data = True
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value.isdigit():
                self.retry_ms = int(value)
        return None

    def _dispatch(self) -> SSEEvent | None:
        if not self._has_data:
            self._event = ""
            return None
        event = SSEEvent(self._event or "message", "\n".join(self._data), self.last_event_id,
                         self.retry_ms)
        self._data = []
        self._event = ""
        self._has_data = False
        return event


async def iter_events(lines: AsyncIterator[str], parser: SSEParser) -> AsyncIterator[SSEEvent]:
    """Events from an async iterator of lines; a final event without a blank line is dropped (per spec)."""
    async for line in lines:
        event = parser.feed_line(line)
        if event is not None:
            yield event
