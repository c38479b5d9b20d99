"""In-process checks of the demo server's small pieces (no subprocess)."""

from __future__ import annotations

import asyncio
import struct
import zlib

import pytest

from mcp_tasks_jupyter.demo import server_command
from mcp_tasks_jupyter.demo.chart import render_bar_chart
from mcp_tasks_jupyter.demo.http_session import HttpSession, SseConnection
from mcp_tasks_jupyter.demo.options import DemoConfig
from mcp_tasks_jupyter.demo.pagination import InvalidCursor, decode_cursor, encode_cursor
from mcp_tasks_jupyter.demo.png import encode_png
from mcp_tasks_jupyter.demo.task_store import TaskExpired, TaskNotFound, TaskStore
from mcp_tasks_jupyter.demo.validation import ArgumentError, validate_arguments


def test_png_round_trip() -> None:
    pixels = bytes([255, 0, 0, 0, 255, 0, 0, 0, 255, 9, 9, 9])
    png = encode_png(2, 2, pixels)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert struct.unpack(">II", png[16:24]) == (2, 2)
    idat = png.index(b"IDAT")
    (length,) = struct.unpack(">I", png[idat - 4 : idat])
    assert zlib.decompress(png[idat + 4 : idat + 4 + length]) == b"\x00" + pixels[:6] + b"\x00" + pixels[6:]
    with pytest.raises(ValueError):
        encode_png(2, 2, b"short")
    chart = render_bar_chart([1, -2, 3.5, 0])
    assert struct.unpack(">II", chart[16:24]) == (480, 270)


def test_validation_and_cursors_and_config() -> None:
    schema = {
        "properties": {"n": {"type": "integer", "minimum": 1, "default": 2}, "s": {"type": "string"}},
        "required": ["s"],
    }
    assert validate_arguments(schema, {"s": "x", "extra": 1}) == {"n": 2, "s": "x"}
    assert validate_arguments(schema, {"s": "x", "n": 3.0}) == {"n": 3, "s": "x"}
    for bad in ({"n": 1}, {"s": "x", "n": 0}, {"s": "x", "n": True}, {"s": 1}, []):
        with pytest.raises(ArgumentError):
            validate_arguments(schema, bad)
    assert decode_cursor("tasks", encode_cursor("tasks", 7)) == 7
    for bad_cursor in ("", "!!", encode_cursor("tools", 7), 5, None):
        with pytest.raises(InvalidCursor):
            decode_cursor("tasks", bad_cursor)
    config = DemoConfig(default_ttl_ms=5000, max_ttl_ms=10_000)
    assert [config.clamp_ttl(t) for t in (None, 0, 999, 5000, 10**9)] == [5000, 1000, 1000, 5000, 10_000]
    with pytest.raises(ValueError):
        DemoConfig(max_ttl_ms=10)
    assert server_command("--http")[1:] == ["-m", "mcp_tasks_jupyter.demo", "--http"]


def test_task_store_expiry_listing_and_terminal_rules() -> None:
    async def scenario() -> None:
        now = [100.0]
        store = TaskStore(monotonic=lambda: now[0])
        a = store.create(tool_name="t", ttl_ms=1000, poll_interval_ms=1, status_message="a")
        b = store.create(tool_name="t", ttl_ms=5000, poll_interval_ms=1, status_message="b")
        changes = []
        b.listeners.append(lambda task: changes.append((task.status, task.status_message)))
        assert store.update(b, message="b2") and not store.update(b, message="b2")
        assert store.finish(b, "completed", "done", result={"content": []})
        assert not store.finish(b, "failed", "late")  # terminal never changes
        assert changes == [("working", "b2"), ("completed", "done")]
        page, cursor = store.list_page(None, 1)
        assert page == [a] and cursor is not None
        assert store.list_page(cursor, 1) == ([b], None)
        now[0] += 1.0
        with pytest.raises(TaskExpired):
            store.get(a.task_id)
        with pytest.raises(TaskNotFound):
            store.get("nope")
        assert a.done.is_set()
        assert store.list_page(None, 10) == ([b], None)

    asyncio.run(scenario())


def test_task_store_purge_looks_only_at_what_expires() -> None:
    """A store operation purges first; it must not walk every live task (a 10,000-task sweep made each of
    its 30,000 requests do so). The tasks' expiry times are read only for those that come due."""
    read: list[str] = []

    class Watched(dict):  # type: ignore[type-arg]
        def values(self):  # type: ignore[no-untyped-def]
            read.append("values")
            return super().values()

        def items(self):  # type: ignore[no-untyped-def]
            read.append("items")
            return super().items()

        def __iter__(self):  # type: ignore[no-untyped-def]
            read.append("iter")
            return super().__iter__()

    async def scenario() -> None:
        now = [100.0]
        store = TaskStore(monotonic=lambda: now[0])
        store._tasks = Watched()
        tasks = [
            store.create(tool_name="t", ttl_ms=1000 + k, poll_interval_ms=1, status_message=None)
            for k in range(50)
        ]
        store.delete(tasks[1])
        for task in tasks[2:]:
            store.get(task.task_id)
        assert read == []  # 50 creates and 48 lookups, no walk over the store
        now[0] += 1.0005  # the first task and the deleted one come due
        with pytest.raises(TaskExpired):
            store.get(tasks[0].task_id)
        assert store.get(tasks[2].task_id) is tasks[2] and read == []
        now[0] += 1
        for task in tasks[2:]:
            with pytest.raises(TaskExpired):
                store.get(task.task_id)
        with pytest.raises(TaskNotFound):
            store.get(tasks[1].task_id)  # deleted, never expired
        assert all(task.done.is_set() for task in tasks if task is not tasks[1])

    asyncio.run(scenario())


def test_sse_pings_and_queued_requests() -> None:
    async def scenario() -> None:
        connection = SseConnection(ping_seconds=0.05)
        chunks = connection.chunks()
        assert await asyncio.wait_for(chunks.__anext__(), 1) == ": ping\n\n"
        connection.put("x")
        connection.close()
        assert [chunk async for chunk in chunks] == ["x"]

        # chunks queued together go out as one write (one wake-up of the client), in order; the close after
        # them ends the response
        together = SseConnection(ping_seconds=5)
        for chunk in ("data: 1\n\n", "data: 2\n\n", "data: 3\n\n"):
            together.put(chunk)
        together.close()
        assert [chunk async for chunk in together.chunks()] == ["data: 1\n\ndata: 2\n\ndata: 3\n\n"]

        session = HttpSession("s")
        session.send({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
        session.send({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create", "params": {}}, task_id="T")
        _, result_connection = session.open_result_stream("T")
        result_chunks = result_connection.chunks()
        first = await result_chunks.__anext__()  # the priming event and the queued request, written together
        assert first.startswith("id: r1-") and "retry: 1000" in first.split("\n\n")[0]
        assert '"elicitation/create"' in first.split("\n\n", 1)[1]  # the queued request came to the task's stream
        standalone = session.connect(None)
        session.close()
        assert [chunk async for chunk in standalone.chunks()] == ["retry: 1000\n\n"]

    asyncio.run(scenario())


def test_task_messages_go_to_the_newest_live_stream_of_their_task() -> None:
    """A task's messages go to its newest connected, unfinished ``tasks/result`` stream, else the standalone one,
    however many finished streams the session keeps for resumption (looked up by task, not by walking them)."""

    def drained(connection: SseConnection) -> str:
        chunks = []
        while not connection._queue.empty():
            chunk = connection._queue.get_nowait()
            if chunk is not None:
                chunks.append(chunk)
        return "".join(chunks)

    def note(n: int) -> dict[str, object]:
        return {"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {"n": n}}

    async def scenario() -> None:
        session = HttpSession("s")
        standalone = session.connect(None)
        for k in range(1500):  # more than are kept: the oldest finished ones are pruned
            stream, _ = session.open_result_stream(f"old{k}")
            session.finish_result_stream(stream, None)
        older, older_connection = session.open_result_stream("T")
        newer, newer_connection = session.open_result_stream("T")
        _, other_connection = session.open_result_stream("U")
        for connection in (standalone, older_connection, newer_connection, other_connection):
            drained(connection)

        session.send(note(1), task_id="T")
        assert '"n":1' in drained(newer_connection) and drained(older_connection) == ""
        session.disconnect(newer_connection)  # the client dropped the newer stream: the older one is next
        session.send(note(2), task_id="T")
        assert '"n":2' in drained(older_connection) and drained(newer_connection) == ""
        again = session.connect(f"{newer.key}-0")  # it comes back with Last-Event-ID: the newest again
        drained(again)
        session.send(note(3), task_id="T")
        assert '"n":3' in drained(again) and drained(older_connection) == ""
        session.finish_result_stream(newer, None)
        session.finish_result_stream(older, None)
        session.send(note(4), task_id="T")  # no live stream of T: the standalone one
        assert '"n":4' in drained(standalone)
        session.send(note(5), task_id="old3")  # an old task's stream ended long ago
        assert '"n":5' in drained(standalone) and drained(other_connection) == ""
        session.send(note(6), task_id="U")
        assert '"n":6' in drained(other_connection)
        session.close()
        assert session._live_by_task == {} and session._connected == {}

    asyncio.run(scenario())


def test_dialect_detection_helpers_and_config() -> None:
    from mcp_tasks_jupyter.demo.protocol_2026 import is_modern
    from mcp_tasks_jupyter.demo.protocol_sep1686 import initialize_wants_sep1686, task_marker

    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    assert is_modern({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}})
    assert not is_modern({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"_meta": meta}})
    assert not is_modern({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    assert initialize_wants_sep1686({"capabilities": {"tasks": {"tools": {"call": True}}}})
    assert not initialize_wants_sep1686(
        {"capabilities": {"tasks": {"list": {}, "requests": {"tools": {"call": {}}}}}}
    )
    assert not initialize_wants_sep1686({"capabilities": {}})
    assert task_marker({"_meta": {"modelcontextprotocol.io/task": {"taskId": "x"}}}) == {"taskId": "x"}
    assert task_marker({"_meta": "nope"}) is None
    for bad in ({"poll_interval_ms": 99}, {"dialect": "v2"}):
        with pytest.raises(ValueError):
            DemoConfig(**bad)
    assert DemoConfig(dialect="ext").serves("ext") and not DemoConfig(dialect="ext").serves("sep1686")


def test_request_state_codec() -> None:
    from mcp_tasks_jupyter.demo.mrtr import StateCodec
    from mcp_tasks_jupyter.demo.rpc import RpcError

    now = [1000.0]
    codec = StateCodec(clock=lambda: now[0])
    asked = {"input-1": {"method": "elicitation/create", "params": {}}}
    state = codec.encode("tool", {"a": 1}, {}, asked)
    answer = {"action": "accept", "content": {"name": "Ann"}}
    params = {"requestState": state, "inputResponses": {"input-1": answer, "input-9": {"x": 1}}}
    assert codec.round_for(params, "tool", {"a": 1}).answers == {"input-1": answer}  # unasked keys ignored
    assert codec.round_for({}, "tool", {"a": 1}).answers == {}
    for bad_params, tool, arguments in (
        ({"requestState": state + "x"}, "tool", {"a": 1}),
        ({"requestState": state}, "other", {"a": 1}),
        ({"requestState": state}, "tool", {"a": 2}),
        ({"requestState": state, "inputResponses": {"input-1": {"action": "maybe"}}}, "tool", {"a": 1}),
        ({"requestState": state, "inputResponses": ["x"]}, "tool", {"a": 1}),
        ({"requestState": StateCodec().encode("tool", {"a": 1}, {}, asked)}, "tool", {"a": 1}),  # another key
    ):
        with pytest.raises(RpcError) as caught:
            codec.round_for(bad_params, tool, arguments)
        assert caught.value.code == -32602
    now[0] += 601
    with pytest.raises(RpcError, match="expired"):
        codec.round_for({"requestState": state}, "tool", {"a": 1})


def test_task_store_dialects_ids_keep_alive_and_questions() -> None:
    from mcp_tasks_jupyter.demo.task_store import TaskIdTaken

    async def scenario() -> None:
        now = [100.0]
        store = TaskStore(monotonic=lambda: now[0])
        ours = store.create(
            tool_name="t",
            ttl_ms=1000,
            poll_interval_ms=100,
            status_message=None,
            dialect="sep1686",
            task_id="client-chosen-id-1",
            status="submitted",
            keep_alive_ms=1000,
        )
        other = store.create(tool_name="t", ttl_ms=1000, poll_interval_ms=100, status_message=None, dialect="ext")
        assert ours.status == "submitted" and store.get("client-chosen-id-1", "sep1686") is ours
        with pytest.raises(TaskNotFound):
            store.get(other.task_id, "sep1686")
        assert store.list_page(None, 10, "ext") == ([other], None)
        with pytest.raises(TaskIdTaken):
            store.create(
                tool_name="t", ttl_ms=1000, poll_interval_ms=1, status_message=None, task_id="client-chosen-id-1"
            )

        # questions: fresh keys, input_required while any is open
        first = store.add_input(other, "elicitation/create", {}, "asking")
        second = store.add_input(other, "elicitation/create", {})
        assert (first.key, second.key, other.status) == ("input-1", "input-2", "input_required")
        store.remove_input(other, first, "one answered")
        assert other.status == "input_required"
        store.remove_input(other, second, "all answered")
        assert (other.status, other.status_message) == ("working", "all answered")
        assert store.add_input(other, "elicitation/create", {}).key == "input-3"

        # keepAlive counts from the end, not from creation
        now[0] += 5
        assert store.get(ours.task_id) is ours
        store.finish(ours, "completed", "done", result={})
        now[0] += 0.5
        assert store.get(ours.task_id) is ours
        now[0] += 1
        with pytest.raises(TaskExpired):
            store.get(ours.task_id)
        with pytest.raises(TaskExpired):
            store.get(other.task_id)  # ttl from creation

        # delete: gone (not found, not expired), its id never reused, a running task cancelled first
        running = store.create(
            tool_name="t",
            ttl_ms=10_000,
            poll_interval_ms=1,
            status_message=None,
            task_id="another-client-id",
            keep_alive_ms=1000,
        )
        store.delete(running)
        assert running.status == "cancelled"
        with pytest.raises(TaskNotFound):
            store.get("another-client-id")
        with pytest.raises(TaskIdTaken):
            store.create(
                tool_name="t", ttl_ms=1000, poll_interval_ms=1, status_message=None, task_id="another-client-id"
            )

    asyncio.run(scenario())
