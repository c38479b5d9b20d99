"""The event-stream reader on its own: bytes in, events out (the framing, fields, bounds)."""

import pytest

from mcp_tasks_jupyter.errors import InvalidMessage
from mcp_tasks_jupyter.transport.sse import MAX_RETRY_MS, MIN_RETRY_MS, StreamPosition, read_events

pytestmark = pytest.mark.anyio


async def _chunks(parts):
    for part in parts:
        yield part


async def events_of(data, *, position=None, split=None, max_event_bytes=None):
    """The events of ``data`` (str or bytes), fed whole or in pieces of ``split`` bytes."""
    raw = data.encode() if isinstance(data, str) else data
    parts = [raw] if split is None else [raw[i : i + split] for i in range(0, len(raw), split)]
    position = StreamPosition() if position is None else position
    kwargs = {} if max_event_bytes is None else {"max_event_bytes": max_event_bytes}
    return [e async for e in read_events(_chunks(parts), position, **kwargs)]


async def test_multiline_data_ids_and_retry_persist():
    position = StreamPosition()
    events = await events_of(
        'retry: 250\nid: 1\ndata: {"a":\ndata: 1}\n\n: comment\ndata: x\n\n', position=position
    )
    assert [e.data for e in events if e.data] == ['{"a":\n1}', "x"]
    assert all(e.id == "1" for e in events)  # the last id carries over
    assert position.retry_ms == 250 and position.last_event_id == "1"


async def test_priming_event_sets_the_id():
    position = StreamPosition()
    events = await events_of("id: s-0\nretry: 1000\n\n", position=position)
    assert [e.data for e in events] == [""]
    assert position.last_event_id == "s-0" and position.retry_ms == 1000


async def test_field_details():
    position = StreamPosition()
    events = await events_of("event: message\ndata:nospace\nretry: soon\nid: a\0b\n\n", position=position)
    assert [(e.event, e.data) for e in events] == [("message", "nospace")]
    assert position.retry_ms is None and position.last_event_id is None


async def test_an_unterminated_event_is_dropped_and_its_id_unused():
    position = StreamPosition(last_event_id="old")
    assert await events_of("data: x\n\nid: 12", position=position) == (await events_of("data: x\n\n"))
    assert position.last_event_id == "old"  # "id: 12" (perhaps of "id: 123") never ended
    assert [e.data for e in await events_of("data: unterminated\n")] == []


async def test_retry_is_bounded_and_negative_ignored():
    position = StreamPosition()
    await events_of("retry: 99999999999\ndata: x\n\n", position=position)
    assert position.retry_ms == MAX_RETRY_MS
    await events_of("retry: -5\ndata: x\n\n", position=position)
    assert position.retry_ms == MAX_RETRY_MS
    await events_of("retry: 0\ndata: x\n\n", position=position)
    assert position.retry_ms == MIN_RETRY_MS


@pytest.mark.parametrize("split", [None, 1, 2, 3, 7])
@pytest.mark.parametrize("newline", ["\n", "\r", "\r\n"])
async def test_only_cr_lf_and_crlf_end_lines(newline, split):
    # str.splitlines() also ends lines at each of these; an event-stream does not.
    text = "a\u2028b\u2029c\u0085d\x1ce\x1df\x1eg\x0bh\x0ci é €𝄞"
    stream = f"\ufeffid: 1{newline}data: {text}{newline}data: 2{newline}{newline}"
    events = await events_of(stream, split=split)
    assert [(e.data, e.id) for e in events] == [(f"{text}\n2", "1")]


async def test_a_chunk_boundary_between_cr_and_lf_is_one_line_end():
    position = StreamPosition()
    got = [e async for e in read_events(_chunks([b"data: a\r", b"\ndata: b\r", b"\n\r", b"\n"]), position)]
    assert [e.data for e in got] == ["a\nb"]


async def test_a_byte_order_mark_only_at_the_start_is_dropped():
    assert [e.data for e in await events_of("\ufeffdata: x\n\n")] == ["x"]
    assert [e.event for e in await events_of("data: x\n\n\ufeffevent: y\ndata: z\n\n")] == ["message", "message"]


async def test_the_stream_is_utf8_whatever_the_bytes():
    events = await events_of(b"data: \xff\xfe ok\n\n")
    assert events[0].data == "\ufffd\ufffd ok"


async def test_an_endless_line_is_refused():
    with pytest.raises(InvalidMessage, match="larger than 1 KiB"):
        await events_of("data: " + "x" * 5000, split=100, max_event_bytes=1024)


async def test_many_small_events_are_no_large_event():
    stream = "data: 0123456789\n\n" * 1000
    events = await events_of(stream, split=500, max_event_bytes=1024)
    assert len(events) == 1000


async def test_a_crlf_cut_into_a_piece_of_its_own_ends_one_line_only():
    # "...\r" | "\n" | "\n...": the lone LF is the CRLF's end, the next LF the blank line that ends the event
    got = [e async for e in read_events(_chunks([b"data: a\r", b"\n", b"\ndata: b\n\n"]), StreamPosition())]
    assert [e.data for e in got] == ["a", "b"]
