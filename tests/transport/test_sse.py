from mcp_tasks_jupyter.transport.sse import SSEParser


def feed(parser, text):
    events = []
    for line in text.split("\n"):
        event = parser.feed_line(line.rstrip("\r"))
        if event:
            events.append(event)
    return events


def test_multiline_data_ids_and_retry_persist():
    parser = SSEParser()
    events = feed(parser, "retry: 250\nid: 1\ndata: {\"a\":\ndata: 1}\n\n: comment\ndata: x\n\n")
    assert [e.data for e in events] == ['{"a":\n1}', "x"]
    assert events[0].id == "1" and events[1].id == "1"  # the last id carries over
    assert events[1].retry_ms == 250 and parser.last_event_id == "1"


def test_priming_event_sets_id_without_dispatching():
    parser = SSEParser()
    assert feed(parser, "id: s-0\nretry: 1000\n\n") == []
    assert parser.last_event_id == "s-0" and parser.retry_ms == 1000
    events = feed(parser, "id: s-1\ndata:\n\n")
    assert len(events) == 1 and events[0].data == ""


def test_field_details():
    parser = SSEParser()
    events = feed(parser, "event: message\ndata:nospace\nretry: soon\nid: a\0b\n\n")
    assert events[0].event == "message" and events[0].data == "nospace"
    assert parser.retry_ms is None and parser.last_event_id is None
    assert feed(parser, "data: unterminated") == []  # no blank line yet: nothing dispatched
