"""A server's numbers and strings are checked and bounded on the real path (loopback HTTP, the scripted
fault server): clamped where they can be, refused with an error naming server, method and field where not."""

from __future__ import annotations

import asyncio
import time

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.errors import InvalidMessage
from mcp_tasks_jupyter.protocol import bounds, jsonrpc

from .server import Brain, Raw, http_fault_server

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]

WORKING = {"taskId": "t1", "status": "working", "ttl": 60_000, "pollInterval": 100}


@pytest.mark.timeout(30)
async def test_poll_interval_and_ttl_are_clamped_whatever_the_server_says():
    brain = Brain(poll_interval_ms=0)  # "poll me as fast as you can"
    brain.ttl_ms = 10**15
    async with http_fault_server(brain) as server, mtj.connect(server.url) as client:
        started = time.monotonic()
        handle = await client.start_task("job", {"seconds": 0.5})
        assert handle.poll_interval_ms == bounds.MIN_POLL_INTERVAL_MS and handle.ttl_ms == bounds.MAX_TTL_MS
        assert (await asyncio.wait_for(handle, 20)).text == "done"
        elapsed = time.monotonic() - started
        # Not a speed test: however slow the machine, polls are never closer than the minimum.
        assert len(server.brain.requests("tasks/get")) <= 2 + elapsed * 1000 / bounds.MIN_POLL_INTERVAL_MS


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "field, value, says",
    [
        (
            "pollInterval",
            "soon",
            "'pollInterval' must be a finite, non-negative number of milliseconds, got 'soon'",
        ),
        ("ttl", -5, "'ttl' must be a finite, non-negative number of milliseconds, got -5"),
        ("ttl", 2**60, "'ttl' must be at most 9007199254740992 milliseconds"),
        ("taskId", "x" * 5000, "'taskId' is 5000 characters long"),
        ("taskId", "t1\r\nSet-Cookie: x", "'taskId' must be printable text"),
        ("status", ["working"], "unknown status an array"),
    ],
)
async def test_a_nonsense_task_field_is_an_invalid_message_naming_server_method_and_field(field, value, says):
    brain = Brain()
    brain.script["tools/call"] = lambda message: {"task": {**WORKING, field: value}}
    async with http_fault_server(brain) as server, mtj.connect(server.url) as client:
        with pytest.raises(InvalidMessage) as info:
            await client.start_task("job")
    assert info.value.server.startswith("fault-server") and info.value.method == "tools/call"
    assert says in str(info.value) and "CreateTaskResult.task" in str(info.value)


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "body, says",
    [
        (
            '{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t1","status":"working","pollInterval":NaN}}}',
            "NaN is not a JSON number",
        ),
        (
            '{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t1","status":"working","ttl":1e999}}}',
            "too large for a double",
        ),
        (
            '{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"t1","status":"working","ttl":'
            + "9" * 5000
            + "}}}",
            "an integer of 5000 digits",
        ),
        (
            '{"jsonrpc":"2.0","id":1,"result":{"task":{"taskId":"\\ud800","status":"working"}}}',
            "unpaired UTF-16 surrogate",
        ),
        ('{"jsonrpc":"2.0","id":1,"result":{"v":' + "[" * 50_000 + "]" * 50_000 + "}}", "nested deeper than"),
    ],
)
async def test_json_that_python_reads_but_is_not_json_is_an_invalid_message(body, says):
    brain = Brain()
    brain.script["tools/call"] = lambda message: Raw(body=body.replace('"id":1', f'"id":{message["id"]}'))
    async with http_fault_server(brain) as server, mtj.connect(server.url) as client:
        with pytest.raises(InvalidMessage) as info:
            await client.start_task("job")
    assert info.value.server.startswith("fault-server") and "unreadable answer to tools/call" in str(info.value)
    assert says in str(info.value)


@pytest.mark.timeout(30)
async def test_a_long_status_message_is_cut_and_a_bad_listed_task_named():
    brain = Brain()
    async with http_fault_server(brain) as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job")
        task = next(iter(brain.tasks.values()))
        task.status_message = "step " * 100_000
        brain.finish(task.task_id)
        await asyncio.wait_for(handle, 20)
        assert len(handle.status_message) == bounds.MAX_STATUS_MESSAGE_CHARS
        assert handle.status_message.endswith(bounds.ELLIPSIS)
        brain.script["tasks/list"] = lambda message: {"tasks": [WORKING, {**WORKING, "taskId": "a\x00b"}]}
        with pytest.raises(InvalidMessage) as info:
            await client.list_tasks()
        assert info.value.method == "tasks/list"
        assert "invalid tasks[1]: 'taskId' must be printable" in str(info.value)


@pytest.mark.timeout(30)
async def test_a_huge_number_in_a_notification_does_not_end_the_servers_stream():
    """It used to raise OverflowError (``float(10**400)``) out of the progress listener, through the
    session, into the GET stream's reader, which died: nothing the server sent afterwards arrived."""
    brain = Brain()
    async with http_fault_server(brain) as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job")
        token = handle.progress_token

        def progress(value: object) -> None:
            brain.push(jsonrpc.notification("notifications/progress", {"progressToken": token, "progress": value}))

        progress(10**400)
        progress(float("nan"))
        progress(0.5)
        async with asyncio.timeout(20):
            while handle.progress is None:
                await asyncio.sleep(0.02)
        assert handle.progress.progress == 0.5
        assert "not valid JSON" in str(client.session.last_noise)
        brain.finish(next(iter(brain.tasks)))
        assert (await asyncio.wait_for(handle, 20)).text == "done"
