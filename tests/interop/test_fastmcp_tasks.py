"""Our client (dialect ``ext``) against a SEP-2663 server nobody here wrote: fastmcp-tasks 4.1.4.

The server is tests/interop/fastmcp_tasks_server.py (its docstring lists the tools), run from
tests/peers/fastmcp-venv over stdio and over Streamable HTTP on 127.0.0.1. Its tasks advertise
pollIntervalMs 200; it offers no subscriptions/listen, so the client polls; it checks
``Mcp-Name`` and ``Mcp-Param-*`` headers against the body over HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest

import mcp_tasks_jupyter as mtj
from tests.support import eventually, fastmcp_stdio_argv, start_fastmcp_http

pytestmark = [pytest.mark.anyio, pytest.mark.peers]

TIMEOUT = 30  # seconds per test


@pytest.fixture(scope="module")
def fastmcp_http() -> Iterator[str]:
    with start_fastmcp_http() as url:
        yield url


@pytest.fixture(params=["stdio", "http"])
def fastmcp(request: pytest.FixtureRequest) -> list[str] | str:
    return fastmcp_stdio_argv() if request.param == "stdio" else request.getfixturevalue("fastmcp_http")


class Answers:
    """An elicitation handler answering by question, remembering every question it was shown."""

    def __init__(self, **by_field: Any) -> None:
        self.by_field = by_field
        self.asked: list[dict[str, Any]] = []

    async def __call__(self, params: dict[str, Any]) -> dict[str, Any]:
        self.asked.append(params)
        fields = params["requestedSchema"]["properties"]
        return {"action": "accept", "content": {k: v for k, v in self.by_field.items() if k in fields}}


async def test_discovers_the_extension_and_picks_ext(fastmcp: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp) as client:
            info = client.describe()
            names = {tool.name for tool in await client.list_tools()}
            hello = await client.call_tool("greet", {"name": "Ada"})
    assert info["protocol"] == "2026-07-28" and info["stateless"] is True
    assert info["dialect"] == "ext" and "io.modelcontextprotocol/tasks" in info["dialect_reason"]
    assert info["server"] == "fastmcp-tasks-peer"
    assert {"greet", "slow_compute", "confirm_delete", "multi_input", "route"} <= names
    assert hello.text == "Hello, Ada!"


async def test_optional_tool_becomes_a_task_and_is_polled_to_its_result(fastmcp: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp) as client:
            task = await client.start_task("slow_compute", {"seconds": 1.0, "label": "sum"})
            assert task.runs_as_task and task.task_id and task.poll_interval_ms == 200
            assert task.ttl_ms and task.ttl_ms > 0
            messages: set[str | None] = set()
            task.on_change(lambda h: messages.add(h.status_message))
            result = await task
            assert client.tasks == {}  # released once finished
    assert result.text == "sum done after 1 s" and task.status == "completed"
    assert any(m and m.startswith("sum: step") for m in messages), messages


async def test_call_tool_polls_a_task_answer_to_its_end(fastmcp: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp) as client:
            result = await client.call_tool("slow_compute", {"seconds": 0.3, "label": "quick"})
    assert result.text == "quick done after 0.3 s"


async def test_a_call_the_server_runs_inline_ends_the_handle_at_once(fastmcp: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp) as client:
            handle = await client.start_task("greet", {"name": "Bo"})
            result = await handle
    assert not handle.runs_as_task and handle.task_id is None
    assert result.text == "Hello, Bo!" and handle.status == "completed"


async def test_tool_error_completes_and_protocol_error_fails(fastmcp: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp) as client:
            tool_error = await client.start_task("failing_job")
            result = await tool_error
            broken = await client.start_task("protocol_error_job")
            with pytest.raises(mtj.TaskFailed) as failure:
                await broken
    assert result.is_error and result.text == "the job failed on purpose"
    assert tool_error.server_status == "completed"  # SEP-2663: a tool error is a completed task
    assert tool_error.status == "error"  # ... whose outcome is a tool error
    assert broken.status == "failed"
    assert failure.value.error == {"code": -32603, "message": "the backend is unreachable"}
    assert "the backend is unreachable" in str(failure.value)


async def test_input_request_answered_once_through_the_handler(fastmcp: list[str] | str) -> None:
    handler = Answers(confirm=True)
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp, elicitation_handler=handler) as client:
            task = await client.start_task("confirm_delete", {"filename": "report.txt"})
            result = await task
    assert result.text == "Deleted 'report.txt'"
    # Polled many times while input_required: asked exactly once, tagged with its task.
    assert [p["message"] for p in handler.asked] == ["Delete 'report.txt'?"]
    assert handler.asked[0]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task.task_id}
    assert task.answered == [("Delete 'report.txt'?", "handler", "accept")]
    assert task.pending_input == {}


async def test_two_questions_at_once_each_answered_once(fastmcp: list[str] | str) -> None:
    handler = Answers(name="Ada", color="blue")
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp, elicitation_handler=handler) as client:
            result = await client.call_tool("multi_input")
    assert result.text == "Ada likes blue"
    assert sorted(p["message"] for p in handler.asked) == ["Favourite colour?", "Your name?"]


async def test_answers_given_in_advance_and_a_person(fastmcp: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp) as client:
            preset = await client.start_task("confirm_delete", {"filename": "a.txt"}, answers={"confirm": True})
            assert (await preset).text == "Deleted 'a.txt'"
            assert [source for _m, source, _a in preset.answered] == ["answers"]

            shown: list[tuple[str, list[str]]] = []

            async def person(params: dict[str, Any]) -> dict[str, Any]:
                handle = client.tasks[params["_meta"]["io.modelcontextprotocol/related-task"]["taskId"]]
                shown.append((params["message"], [q["params"]["message"] for q in handle.pending_input.values()]))
                return {"action": "decline"}

            client.ask_user = person
            asked = await client.start_task("confirm_delete", {"filename": "b.txt"})
            assert (await asked).text == "Kept 'b.txt' (decline)"
    assert shown == [("Delete 'b.txt'?", ["Delete 'b.txt'?"])]  # the form, and the question pending
    assert asked.answered == [("Delete 'b.txt'?", "person", "decline")]


async def test_cancel_is_acknowledged_then_asked_once_how_the_task_stands(fastmcp: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp) as client:
            task = await client.start_task("slow_compute", {"seconds": 30, "label": "long"})
            await eventually(lambda: task.status_message is not None, timeout=10)
            await task.cancel()
            # ext's tasks/cancel only acknowledges; the client asks once at once (no waiting for a poll)
            assert task.status == "cancelled"
            with pytest.raises(mtj.TaskCancelled):
                await task


async def test_list_tasks_is_the_clients_own_record(fastmcp: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp) as client:
            assert not client.dialect.supports_list
            task = await client.start_task("slow_compute", {"seconds": 5, "label": "listed"})
            listed = await client.list_tasks()
            await task.cancel()
            with pytest.raises(mtj.TaskCancelled):
                await task
    assert [(s.task_id, s.status) for s in listed] == [(task.task_id, "working")]


async def test_another_client_attaches_by_task_id(fastmcp: list[str] | str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp) as first:
            task = await first.start_task("slow_compute", {"seconds": 0.8, "label": "shared"})
            if isinstance(fastmcp, str):  # a second connection to the same HTTP server
                async with mtj.connect(fastmcp) as second:
                    attached = second.attach(task.task_id, tool="slow_compute")
                    assert (await attached).text == "shared done after 0.8 s"
            assert (await task).text == "shared done after 0.8 s"
            with pytest.raises(mtj.TaskNotFound):
                await first.attach("no-such-task")


async def test_x_mcp_header_parameters_travel_as_headers(fastmcp: list[str] | str) -> None:
    # Over HTTP the server refuses a call whose Mcp-Param-Region is missing or differs (-32020).
    with anyio.fail_after(TIMEOUT):
        async with mtj.connect(fastmcp) as client:
            routed = await client.call_tool("route", {"region": "eu west 1", "count": 3})
            plain = await client.call_tool("route", {"region": "Zürich", "count": 1})
    assert routed.text == "routed to eu west 1 x3" and plain.text == "routed to Zürich x1"
