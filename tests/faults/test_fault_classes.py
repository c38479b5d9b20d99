"""The fault classes of the fault suite not covered elsewhere: 5xx answers, broken stdio framing, servers
that never answer, odd server requests, huge results."""

import asyncio
import itertools

import pytest

import mcp_tasks_jupyter as mtj

from .conftest import stdio_argv
from .server import Raw, http_fault_server

pytestmark = pytest.mark.anyio


async def until(predicate, timeout: float = 10.0, step: float = 0.02) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(step)


@pytest.mark.usefixtures("short_backoff")
@pytest.mark.parametrize("status", [500, 502, 503])
async def test_a_5xx_on_polls_is_retried_and_the_task_completes(status):
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job")
        count = itertools.count()
        server.brain.script["tasks/get"] = lambda m: Raw(status, b"busy", "text/plain") if next(count) < 2 else None
        await until(lambda: len(server.brain.requests("tasks/get")) >= 3, 20)
        server.brain.finish(handle.task_id)
        assert (await asyncio.wait_for(handle, 20)).text == "done"


async def test_broken_stdio_framing_is_noise_and_the_task_still_completes():
    async with mtj.connect(stdio_argv("garbage_framing")) as client:
        handle = await client.start_task("job", {"seconds": 0.5})
        assert (await asyncio.wait_for(handle, 20)).text == "done"
        assert client.session.last_noise is not None
        assert "fault-stdio-garbage_framing" in str(client.session.last_noise)


@pytest.mark.usefixtures("short_backoff")
async def test_a_server_that_never_answers_polls_loses_the_task_with_the_reason():
    async with mtj.connect(stdio_argv("silent_tasks_get")) as client:
        client.session.request_timeout = 0.3
        client.max_poll_failures = 2
        handle = await client.start_task("job")
        with pytest.raises(mtj.TaskLost, match=r"tasks/get: no answer within 0.3 s"):
            await asyncio.wait_for(handle, 20)
        assert handle.status == "lost"


async def test_odd_server_requests_get_errors_and_odd_notifications_are_ignored():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        await client.list_tools()
        push = server.brain.push
        push({"jsonrpc": "2.0", "id": "odd-1", "method": "files/delete", "params": {"path": "/"}})
        push({"jsonrpc": "2.0", "id": "odd-2", "method": "elicitation/create", "params": {"message": 7}})
        push({"jsonrpc": "2.0", "id": "odd-3", "method": "sampling/createMessage", "params": {"messages": []}})
        push({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {"taskId": 5, "status": 1}})
        push({"jsonrpc": "2.0", "method": "notifications/whatever", "params": None})
        push({"jsonrpc": "2.0", "id": "odd-4", "method": "ping"})
        await until(lambda: {"odd-1", "odd-2", "odd-3", "odd-4"} <= set(server.brain.answers))
        answers = server.brain.answers
        assert answers["odd-1"]["error"]["code"] == -32601
        assert answers["odd-2"]["error"]["code"] == -32602
        assert "no sampling_handler" in answers["odd-3"]["error"]["message"] or "error" in answers["odd-3"]
        assert answers["odd-4"]["result"] == {}
        assert [t.name for t in await client.list_tools(refresh=True)] == ["job", "ask", "echo"]  # still fine


async def test_a_huge_result_arrives_whole():
    text = "x" * 5_000_000
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job")
        await until(lambda: server.brain.requests("tasks/get"))
        server.brain.finish(handle.task_id, text)
        result = await asyncio.wait_for(handle, 20)
        assert result.text == text
