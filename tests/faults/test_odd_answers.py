"""Odd but well-formed answers: pushes with ids of the wrong type, timestamps of two kinds, a poll answer
about another task, endless pagination, a progress listener that fails."""

import asyncio
import itertools
import logging

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.dialects import dialect

from .server import http_fault_server

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]


async def until(predicate, timeout: float = 10.0, step: float = 0.02) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(step)


async def test_a_status_push_with_a_list_for_its_task_id_is_ignored_quietly(caplog):
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job")
        with caplog.at_level(logging.ERROR):
            server.brain.push(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/tasks/status",
                    "params": {"taskId": [handle.task_id], "status": "completed"},
                }
            )
            # a valid push after it on the same stream: once it shows, the odd one was handled
            server.brain.push(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/tasks/status",
                    "params": {
                        "taskId": handle.task_id,
                        "status": "working",
                        "statusMessage": "after the odd",
                    },
                }
            )
            await until(lambda: handle.status_message == "after the odd", 10)
        assert "failed" not in caplog.text and not handle.done()
        await handle.cancel()


async def test_timestamps_naive_after_aware_do_not_break_the_task():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job")
        stamps = itertools.chain(["2026-12-01T10:00:00Z"], itertools.repeat("2026-12-01T10:00:01.5"))

        def naive(message):
            task = server.brain.tasks[message["params"]["taskId"]]
            return {**task.wire(100, 60_000), "lastUpdatedAt": next(stamps)}

        server.brain.script["tasks/get"] = naive
        await until(lambda: len(server.brain.requests("tasks/get")) >= 3)
        server.brain.finish(handle.task_id)
        assert (await asyncio.wait_for(handle, 10)).text == "done"


async def test_a_poll_answer_about_another_task_does_not_change_the_handle():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        handle = await client.start_task("job")
        own = handle.task_id
        server.brain.script["tasks/get"] = lambda m: {"taskId": "someone-else", "status": "cancelled"}
        await until(lambda: len(server.brain.requests("tasks/get")) >= 2)
        assert handle.task_id == own and handle.status == "working"
        del server.brain.script["tasks/get"]
        server.brain.finish(own)
        assert (await asyncio.wait_for(handle, 10)).text == "done"


async def test_endless_pagination_stops(monkeypatch):
    monkeypatch.setattr(dialect, "MAX_LIST_PAGES", 20)
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        pages = itertools.count()
        server.brain.script["tasks/list"] = lambda m: {"tasks": [], "nextCursor": f"c{next(pages)}"}
        assert await asyncio.wait_for(client.list_tasks(), 10) == []
        assert len(server.brain.requests("tasks/list")) == 20


async def test_a_failing_progress_listener_does_not_stop_the_reader():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        client.session.server_requests.add_progress_listener("tok", lambda params: 1 / 0)
        server.brain.push(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "tok", "progress": 1},
            }
        )
        asking = server.brain.ask(None, "Anyone there?")  # the next message on the same stream
        await until(lambda: asking in server.brain.answers)
        assert server.brain.answers[asking]["result"] == {"action": "decline"}
