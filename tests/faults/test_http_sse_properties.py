"""Properties of the event-stream reader: any stream, with any line endings, cut into any chunks,
decodes to the events a reference reading gives; any bytes at all give events or MCPErrors, and end."""

import asyncio
import itertools

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mcp_tasks_jupyter.errors import MCPError
from mcp_tasks_jupyter.transport.sse import MAX_RETRY_MS, MIN_RETRY_MS, SSEEvent, StreamPosition, read_events

pytestmark = pytest.mark.timeout(120)

#: Characters that end lines for str.splitlines but not for an event stream, and multi-byte ones.
TRICKY = ["\u2028", "\u2029", "\u0085", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c", "é", "€", "𝄞", ":", " ", "\ufeff"]
char = st.sampled_from(TRICKY) | st.characters(blacklist_characters="\r\n\x00", blacklist_categories=("Cs",))
value = st.lists(char, max_size=12).map("".join)
nonempty = st.lists(char, min_size=1, max_size=12).map("".join)
event_strategy = st.fixed_dictionaries(
    {
        "data": st.lists(value, min_size=1, max_size=3),
        "id": st.none() | nonempty,
        "event": st.none() | nonempty,
        "retry": st.none() | st.integers(0, 10**9),
        "comment": st.none() | value,
    }
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def lines_of(events, trailing):
    lines = []
    for event in events:
        if event["comment"] is not None:
            lines.append(":" + event["comment"])
        if event["event"] is not None:
            lines.append("event: " + event["event"])
        if event["id"] is not None:
            lines.append("id: " + event["id"])
        if event["retry"] is not None:
            lines.append(f"retry: {event['retry']}")
        lines += ["data: " + d for d in event["data"]]
        lines.append("")
    return lines, (f"id: never-dispatched\ndata: {trailing}" if trailing is not None else "")


def encode(lines, endings, tail, bom):
    out, previous = [], ""
    for line, ending in zip(lines, endings, strict=False):
        if previous == "\r" and line == "" and ending == "\n":
            ending = "\r\n"  # a CR then an LF would be one line end, not two
        out.append(line + ending)
        previous = ending
    return (("\ufeff" if bom else "") + "".join(out) + tail).encode()


def reference(events):
    """What the format says these events are: (type, data, id) each, then the last id and retry."""
    out, last_id, retry = [], None, None
    for event in events:
        last_id = event["id"] if event["id"] is not None else last_id
        retry = max(MIN_RETRY_MS, min(event["retry"], MAX_RETRY_MS)) if event["retry"] is not None else retry
        out.append((event["event"] or "message", "\n".join(event["data"]), last_id))
    return out, last_id, retry


def split(raw, cuts):
    edges = [0, *sorted({c % (len(raw) + 1) for c in cuts}), len(raw)]
    return [raw[a:b] for a, b in itertools.pairwise(edges) if b > a]


async def _chunks(parts):
    for part in parts:
        yield part


async def read_all(parts, position, **kwargs):
    return [e async for e in read_events(_chunks(parts), position, **kwargs)]


@SETTINGS
@given(events=st.lists(event_strategy, max_size=6), trailing=st.none() | value, bom=st.booleans(), data=st.data())
def test_any_stream_in_any_chunks_decodes_as_the_format_says(events, trailing, bom, data):
    lines, tail = lines_of(events, trailing)
    endings = data.draw(st.lists(st.sampled_from(["\n", "\r", "\r\n"]), min_size=len(lines), max_size=len(lines)))
    raw = encode(lines, endings, tail, bom)
    parts = split(raw, data.draw(st.lists(st.integers(0, 10**6), max_size=30)))
    position = StreamPosition()
    got = asyncio.run(asyncio.wait_for(read_all(parts, position), 10))
    expected, last_id, retry = reference(events)
    assert [(e.event, e.data, e.id) for e in got] == expected
    assert (position.last_event_id, position.retry_ms) == (last_id, retry)


GARBAGE_PIECES = [
    b"data:",
    b"data: ",
    b"id:",
    b"id: 1",
    b"retry:",
    b"retry: 7",
    b"event:",
    b":",
    b" ",
    b"\r",
    b"\n",
    b"\r\n",
    b"\xe2\x80\xa8",
    b"\xe2\x80",
    b"\xff",
    b"\x00",
    b"{",
    b'"',
    b"x" * 40,
    b"\xef\xbb\xbf",
    b"\xf0\x9d",
]
garbage = st.binary(max_size=3000) | st.lists(st.sampled_from(GARBAGE_PIECES), max_size=200).map(b"".join)


@SETTINGS
@given(raw=garbage, cuts=st.lists(st.integers(0, 10**6), max_size=30), limit=st.sampled_from([16, 64, 4096]))
def test_garbage_gives_events_or_an_mcp_error_and_ends(raw, cuts, limit):
    position = StreamPosition()

    async def run():
        got = []
        try:
            async for event in read_events(_chunks(split(raw, cuts)), position, max_event_bytes=limit):
                got.append(event)
        except MCPError:
            pass  # (an event past the bound) anything else fails the test
        return got

    got = asyncio.run(asyncio.wait_for(run(), 10))
    assert all(isinstance(e, SSEEvent) and isinstance(e.data, str) for e in got)
    assert position.last_event_id is None or isinstance(position.last_event_id, str)
    assert position.retry_ms is None or MIN_RETRY_MS <= position.retry_ms <= MAX_RETRY_MS
