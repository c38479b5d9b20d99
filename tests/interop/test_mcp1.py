"""Our client against a task server built on the official Python SDK (`mcp` 1.30, experimental tasks).

The server is tests/interop/mcp1_task_server.py; its docstring lists the tools. pollInterval is the
SDK default 500 ms; ttl is whatever the client asks for.
"""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest

import mcp_tasks_jupyter as mtj
from tests.support import eventually

pytestmark = [pytest.mark.anyio, pytest.mark.peers]

TIMEOUT = 30  # seconds per test


class Confirm:
    """An elicitation handler for `confirm_delete`: answers `action` and remembers the requests."""

    def __init__(self, action: str = "accept", confirm: bool = True) -> None:
        self.action, self.confirm = action, confirm
        self.requests: list[dict[str, Any]] = []

    async def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        self.requests.append(request)
        if self.action != "accept":
            return {"action": self.action}
        return {"action": "accept", "content": {"confirm": self.confirm}}


async def test_tools_and_their_task_support(mcp1: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(mcp1) as client:
            tools = {tool.name: tool for tool in await client.list_tools()}
            echoed = await client.call_tool("echo", {"text": "hi"})
    assert tools["long_job"].task_support == "required"
    assert tools["slow_echo"].task_support == "optional"
    assert tools["echo"].task_support in (None, "forbidden")
    assert echoed.text == "echo: hi"
    assert not echoed.is_error


async def test_long_task_reports_progress_and_completes(mcp1: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(mcp1) as client:
            task = await client.start_task("long_job", {"seconds": 2, "steps": 4}, ttl=60000)
            assert task.ttl_ms == 60000
            assert task.poll_interval_ms == 500
            messages = set()
            while not task.done():
                messages.add(task.status_message)
                await anyio.sleep(0.05)
            result = await task
    assert task.status == "completed"
    assert result.text == "long_job finished after 2 s"
    assert any(re.fullmatch(r"step [1-4]/4", m or "") for m in messages), messages


async def test_optional_tool_as_a_task(mcp1: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(mcp1) as client:
            result = await (await client.start_task("slow_echo", {"text": "later", "seconds": 0.3}))
    assert result.text == "echo: later"


async def test_elicitation_inside_a_task(mcp1: list[str] | str) -> None:
    handler = Confirm("accept", confirm=True)
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(mcp1, elicitation_handler=handler) as client:
            task = await client.start_task("confirm_delete", {"filename": "report.txt"})
            result = await task
    assert [r["message"] for r in handler.requests] == ["Delete 'report.txt'?"]
    assert handler.requests[0]["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"
    assert task.status == "completed"
    assert result.text == "Deleted 'report.txt'"


async def test_declined_elicitation_inside_a_task(mcp1: list[str] | str) -> None:
    handler = Confirm("decline")
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(mcp1, elicitation_handler=handler) as client:
            result = await (await client.start_task("confirm_delete", {"filename": "report.txt"}))
    assert len(handler.requests) == 1
    assert result.text == "Deletion of 'report.txt' cancelled (decline)"


async def test_failing_task(mcp1: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(mcp1) as client:
            task = await client.start_task("failing_job", {"message": "disk on fire"})
            with pytest.raises(mtj.TaskFailed) as failure:
                await task
    assert task.status == "failed"
    assert "disk on fire" in f"{failure.value} {task.status_message}"


async def test_cancelling_a_running_task(mcp1: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(mcp1) as client:
            task = await client.start_task("long_job", {"seconds": 60, "steps": 60})
            await eventually(lambda: (task.status_message or "").startswith("step"), what="a step message")
            await task.cancel()
            with pytest.raises(mtj.TaskCancelled):
                await task
            assert task.status == "cancelled"

            listed = {t.task_id: t.status for t in await client.list_tasks()}
            assert listed.get(task.task_id) == "cancelled"
