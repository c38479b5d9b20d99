"""The same task flows in every dialect (2025-11-25, sep1686, ext), over stdio and HTTP, against the
demo server, which speaks all three (each client in the one it asks for).

What differs by dialect is asserted where it differs: a tool error is a ``failed`` task in
2025-11-25 and a ``completed`` one elsewhere; ext has no ``tasks/list`` and asks for no ttl;
only sep1686 deletes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from tests.support import eventually

pytestmark = pytest.mark.anyio

WAIT = 20.0
FAST = ("--poll-interval", "200")


@pytest.fixture(params=["2025-11-25", "sep1686", "ext"])
def dialect(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def connect(connect_demo: Callable[..., Any], dialect: str) -> Callable[..., Any]:
    """``connect(*server_args, **options)`` in the dialect under test."""
    return lambda *args, **options: connect_demo(*FAST, *args, dialect=dialect, **options)


def _first_choice(params: dict[str, Any]) -> dict[str, Any]:
    prop = params["requestedSchema"]["properties"]["interpretation"]
    options = [o["const"] for o in prop["oneOf"]] if "oneOf" in prop else prop["enum"]
    return {"action": "accept", "content": {"interpretation": options[0]}}


async def test_connects_in_the_dialect_asked_for(connect, dialect):
    async with connect() as client:
        info = client.describe()
    assert info["dialect"] == dialect and info["dialect_reason"] == f"forced by dialect={dialect!r}"
    assert info["stateless"] is (dialect == "ext")
    assert info["protocol"] == ("2026-07-28" if dialect == "ext" else "2025-11-25")


async def test_task_polled_to_its_result(connect, dialect):
    async with connect() as client:
        task = await client.start_task("slow_compute", {"seconds": 0.6, "steps": 3}, ttl=60000)
        assert task.runs_as_task and task.task_id and task.poll_interval_ms == 200
        assert task.status in ("working", "submitted")
        if dialect != "ext":
            assert task.ttl_ms == 60000  # ext lets the server choose the retention
        result = await asyncio.wait_for(task, WAIT)
    assert result.structured["value"] == 14 and task.status == "completed"
    assert client.tasks == {}


async def test_call_tool_waits_for_a_task(connect):
    async with connect() as client:
        report = await client.call_tool("research", {"topic": "reefs", "stage_seconds": 0.05}, timeout=WAIT)
    assert report.structured["topic"] == "reefs"


async def test_question_inside_a_task_is_answered_once(connect):
    asked: list[dict[str, Any]] = []

    async def handler(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return _first_choice(params)

    async with connect(elicitation_handler=handler) as client:
        task = await client.start_task("research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0})
        result = await asyncio.wait_for(task, WAIT)
    assert len(asked) == 1 and "tides" in asked[0]["message"]
    assert not result.is_error and task.answered[0][1:] == ("handler", "accept")
    assert task.pending_input == {}


async def test_answers_in_advance_and_a_person_in_every_dialect(connect):
    async with connect() as client:
        preset = await client.start_task(
            "research",
            {"topic": "tides", "ambiguous": True, "stage_seconds": 0.05},
            answers={"interpretation": "tides (economics)"},
        )
        await asyncio.wait_for(preset, WAIT)
        forms: list[list[str]] = []

        async def person(params: dict[str, Any]) -> dict[str, Any]:
            task_id = (params.get("_meta") or {})["io.modelcontextprotocol/related-task"]["taskId"]
            forms.append([q["params"]["message"] for q in client.tasks[task_id].pending_input.values()])
            return {"action": "decline"}

        client.ask_user = person
        declined = await client.start_task(
            "research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0.05}
        )
        result = await asyncio.wait_for(declined, WAIT)
    assert [source for _m, source, _a in preset.answered] == ["answers"]
    assert len(forms) == 1 and len(forms[0]) == 1  # one form, its question pending while shown
    assert result.is_error and "declined" in result.text
    assert declined.answered[0][1:] == ("person", "decline")


async def test_tool_error_and_protocol_error(connect, dialect):
    async with connect() as client:
        tool_error = await client.start_task("failing_job", {"seconds": 0.05, "message": "bad row 7"})
        result = await asyncio.wait_for(tool_error, WAIT)
        broken = await client.start_task("failing_job", {"seconds": 0.05, "mode": "protocol_error"})
        with pytest.raises(mtj.TaskFailed):
            await asyncio.wait_for(broken, WAIT)
    assert result.is_error and result.text == "bad row 7"
    assert tool_error.server_status == ("failed" if dialect == "2025-11-25" else "completed")
    assert tool_error.status == "error"  # the outcome, whatever word the dialect uses
    assert broken.status == "failed"


async def test_cancel_reaches_the_server(connect, dialect):
    async with connect() as client:
        task = await client.start_task("slow_compute", {"seconds": 30})
        await eventually(lambda: task.status == "working", timeout=WAIT)
        await task.cancel()
        with pytest.raises(mtj.TaskCancelled):
            await asyncio.wait_for(task, WAIT)
        assert task.status == "cancelled"
        if client.dialect.supports_list:  # the server's own view
            states = {s.task_id: s for s in await client.list_tasks()}
            assert states[task.task_id].status == "cancelled"


async def test_list_and_delete(connect, dialect):
    async with connect() as client:
        tasks = [await client.start_task("slow_compute", {"seconds": 0.05, "steps": 1}) for _ in range(3)]
        running = await client.start_task("slow_compute", {"seconds": 30})
        listed = {s.task_id for s in await client.list_tasks()}
        await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
        if dialect == "ext":  # no tasks/list: the client's own record of unfinished tasks
            assert running.task_id in listed
        else:
            assert {t.task_id for t in tasks} | {running.task_id} <= listed | {t.task_id for t in tasks}
            assert {t.task_id for t in tasks} <= {s.task_id for s in await client.list_tasks()}
        if dialect == "sep1686":
            await client.delete_task(tasks[0].task_id)
            with pytest.raises(mtj.TaskNotFound):
                await asyncio.wait_for(client.attach(tasks[0].task_id), WAIT)
        else:
            with pytest.raises(mtj.UsageError):
                await client.delete_task(tasks[0].task_id)
        await running.cancel()
        with pytest.raises(mtj.TaskCancelled):
            await asyncio.wait_for(running, WAIT)


async def test_plain_tool_behind_a_handle(connect):
    async with connect() as client:
        echo = await client.start_task("echo", {"text": "hello"})
        assert (await asyncio.wait_for(echo, WAIT)).text == "hello" and echo.status == "completed"
        assert echo.task_id is None and not echo.runs_as_task
        assert (await client.call_tool("echo", {"text": "again"})).text == "again"


@pytest.mark.parametrize("served", ["2025-11-25", "sep1686", "ext"])
async def test_auto_picks_what_the_server_speaks(connect_demo, served):
    # The demo forced to one dialect: auto must find it (the probe, then the initialize answer).
    async with connect_demo("--dialect", served, *FAST, dialect="auto", protocol_version=None) as client:
        info = client.describe()
        result = await asyncio.wait_for(
            await client.start_task("slow_compute", {"seconds": 0.1, "steps": 1}), WAIT
        )
    assert info["dialect"] == served and result.structured["value"] == 1
    expected = {
        "ext": "server/discover",
        "2025-11-25": "capabilities.tasks.requests.tools.call",
        "sep1686": "SEP-1686",
    }[served]
    assert expected in info["dialect_reason"]


async def test_auto_prefers_the_newest(connect_demo):
    async with connect_demo(*FAST, dialect="auto", protocol_version=None) as client:
        assert client.describe()["dialect"] == "ext"


async def test_ext_task_notifications_end_a_task_long_before_the_next_poll(connect_demo):
    # subscriptions/listen delivers notifications/tasks: the poller wakes at once, 60 s early.
    async with connect_demo("--poll-interval", "60000", dialect="ext") as client:
        task = await client.start_task("slow_compute", {"seconds": 0.5, "steps": 1})
        assert task.poll_interval_ms == 60000
        result = await asyncio.wait_for(task, WAIT)
    assert result.structured["value"] == 1 and client.dialect.listen_supported is not False


async def test_ext_one_subscription_carries_every_live_task(connect_demo):
    # Tasks started together share one subscriptions/listen (renewed as the set grows), not one
    # stream each; its snapshot and notifications end every task long before its next poll.
    async with connect_demo("--poll-interval", "60000", dialect="ext") as client:
        dialect = client.dialect
        tasks = [await client.start_task("slow_compute", {"seconds": 1.5, "steps": 3}) for _ in range(6)]
        ids = {task.task_id for task in tasks}
        await eventually(lambda: dialect.subscribed == ids and dialect.push_live(tasks[0]), timeout=WAIT)
        assert dialect.subscriptions_made < len(tasks)
        results = await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
        assert [r.structured["value"] for r in results] == [14] * 6
        await eventually(lambda: dialect.subscription is None, timeout=WAIT)  # no live task: no subscription


async def test_ext_question_before_the_task_exists_is_a_multi_round_trip(connect_demo):
    asked: list[str] = []

    async def handler(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"name": "Ada"}}

    async with connect_demo("--conformance", *FAST, dialect="ext", elicitation_handler=handler) as client:
        task = await client.start_task("test_tool_with_task")
        result = await asyncio.wait_for(task, WAIT)
    assert asked == ["What is your name?"] and task.runs_as_task and task.task_id
    assert result.text == "Hello, Ada! (from a task)"


async def test_task_support_as_the_server_says_it(connect, dialect):
    """2025-11-25 lists each tool's task support; ext lists none (the server decides per call), so a
    tool reads None there, not "forbidden", the tools table says so, and it runs as a task."""
    from mcp_tasks_jupyter.jupyter.tables import tools_table

    async with connect() as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        table = tools_table("demo", list(tools.values()), client.dialect)
        support = {row[0]: row[1] for row in table.rows}
        if dialect == "2025-11-25":
            assert tools["research"].task_support == "required"
            assert support["research"] == "required (runs as a task)"
        elif dialect == "sep1686":  # the demo lists 2025-11-25's hint there too, and it is believed
            assert tools["research"].task_support == "required"
            assert support["research"] == "required (server decides per call)"
        else:
            assert tools["research"].task_support is None and tools["slow_compute"].task_support is None
            assert support["slow_compute"] == "server decides per call"
            assert (
                support["research"] == "server decides per call (described as a task)"
            )  # "Must be called as a task"
            assert not client.dialect.requires_task(tools["slow_compute"])
        task = await client.start_task("slow_compute", {"seconds": 0.2, "steps": 1})
        await asyncio.wait_for(task, WAIT)
    assert task.runs_as_task and task.status == "completed"


async def test_ext_a_listen_the_server_ends_gracefully_is_opened_again_at_once(connect_demo):
    # The server answers each subscriptions/listen after 1.2 s (its graceful close): the next one is
    # opened at once for the live task, not after the backoff of a failed one (2 s, then 4, 8, ...).
    async with connect_demo("--poll-interval", "60000", "--listen-for", "1200", dialect="ext") as client:
        dialect = client.dialect
        task = await client.start_task("slow_compute", {"seconds": 30, "steps": 1})
        await eventually(lambda: dialect.subscriptions_made >= 4, timeout=8, what="three renewals in a row")
        assert dialect.listen_supported is True and not task.done()
        await task.cancel()
