"""The whole client against the bundled demo server, over both transports."""

from __future__ import annotations

import asyncio

import pytest

import mcp_tasks_jupyter as mtj

pytestmark = pytest.mark.anyio
WAIT = 20  # seconds: a bound on every wait, never a speed claim


async def test_connects_and_lists_every_tool_across_pages(connect_demo):
    async with connect_demo("--tools-page-size", "2") as client:
        info = client.describe()
        assert info["protocol"] == "2025-11-25" and info["dialect"] == "2025-11-25"
        assert "capabilities.tasks" in info["dialect_reason"]
        support = {t.name: t.task_support for t in await client.list_tools()}
        assert support == {
            "slow_compute": "optional",
            "research": "required",
            "failing_job": "optional",
            "make_chart": "optional",
            "echo": "forbidden",
            "live_chart": "optional",  # the MCP Apps tools (issue 32)
            "chart_points": "forbidden",
            "steer_chart": "forbidden",
        }
        tool = await client.tool("research")
        assert tool.required_arguments == ["topic"] and "ambiguous" in tool.input_schema["properties"]


async def test_task_returns_at_once_then_reports_progress_and_result(connect_demo):
    async with connect_demo("--poll-interval", "200") as client:
        seen: list[tuple[str, float | None]] = []
        task = await client.start_task("slow_compute", {"seconds": 1.0, "steps": 5, "label": "sq"}, ttl=60000)
        assert not task.done() and task.runs_as_task and task.task_id
        assert task.status == "working" and task.poll_interval_ms == 200 and task.ttl_ms == 60000
        task.on_change(lambda h: seen.append((h.status, h.progress and h.progress.progress)))
        result = await asyncio.wait_for(task, WAIT)
        assert result.structured == {"label": "sq", "steps": 5, "seconds": 1.0, "value": 55}
        assert "sq: done in 5 steps" in result.text and not result.is_error
        assert task.status == "completed" and task.done() and task.result() is result
        assert task.progress and task.progress.fraction == 1.0
        assert ("completed", 5.0) in seen and any(p == 3.0 for _, p in seen)
        assert task.status_message and task.elapsed > 0


async def test_polls_no_faster_than_the_poll_interval(connect_demo):
    async with connect_demo("--poll-interval", "400") as client:
        calls = 0
        real_get = client.dialect.get

        async def counting_get(task_id):
            nonlocal calls
            calls += 1
            return await real_get(task_id)

        client.dialect.get = counting_get
        task = await client.start_task("slow_compute", {"seconds": 2.0, "steps": 2})
        await asyncio.wait_for(task, WAIT)
        assert calls <= 2.0 / 0.4 + 1


async def test_status_push_finishes_a_task_long_before_the_next_poll(connect_demo, transport):
    async with connect_demo("--poll-interval", "60000") as client:
        if transport == "http":
            await asyncio.wait_for(_until(lambda: client.transport.listening), WAIT)
        task = await client.start_task("slow_compute", {"seconds": 0.3, "steps": 1})
        assert task.poll_interval_ms == 60000
        result = await asyncio.wait_for(task, WAIT)  # a poll would only come after 60 s
        assert result.structured["value"] == 1


async def test_ttl_is_asked_for_and_clamped_by_the_server(connect_demo):
    async with connect_demo("--max-ttl", "120000") as client:
        short = await client.start_task("slow_compute", {"seconds": 0.1}, ttl=5000)
        long = await client.start_task("slow_compute", {"seconds": 0.1}, ttl=10**9)
        assert short.ttl_ms == 5000 and long.ttl_ms == 120000
        await asyncio.wait_for(asyncio.gather(short, long), WAIT)


async def test_elicitation_answered_by_the_handler(connect_demo):
    asked: list[dict] = []

    async def choose_second(params):
        asked.append(params)
        options = params["requestedSchema"]["properties"]["interpretation"]["oneOf"]
        return {"action": "accept", "content": {"interpretation": options[1]["const"], "depth": 4}}

    async with connect_demo(elicitation_handler=choose_second) as client:
        task = await client.start_task("research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0.2})
        result = await asyncio.wait_for(task, WAIT)
        assert len(asked) == 1
        assert asked[0]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"] == task.task_id
        assert result.structured["interpretation"] == "tides (technology)" and result.structured["depth"] == 4
        assert "tides (technology)" in result.text and not task.pending_input


async def test_elicitation_declined_ends_in_a_tool_error(connect_demo):
    async def decline(params):
        return {"action": "decline"}

    async with connect_demo(elicitation_handler=decline) as client:
        task = await client.start_task("research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0.1})
        result = await asyncio.wait_for(task, WAIT)
        assert (
            result.is_error
            and "declined" in result.text
            and task.status == "declined"
            and task.server_status == "failed"
        )


async def test_without_a_handler_or_answers_the_question_is_declined_not_left_waiting(connect_demo):
    async with connect_demo() as client:
        task = await client.start_task("research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0.1})
        result = await asyncio.wait_for(task, WAIT)
        assert result.is_error and "declined" in result.text
        assert [a[1:] for a in task.answered] == [("no handler", "decline")]


async def test_answers_given_in_advance_answer_the_question(connect_demo):
    async with connect_demo() as client:
        task = await client.start_task(
            "research",
            {"topic": "tides", "ambiguous": True, "stage_seconds": 0.1},
            answers={"interpretation": "tides (economics)"},
        )
        result = await asyncio.wait_for(task, WAIT)
        assert result.structured["interpretation"] == "tides (economics)" and result.structured["depth"] == 2
        assert [a[1:] for a in task.answered] == [("answers", "accept")]


async def test_answers_that_do_not_fit_fall_back_to_the_handler(connect_demo):
    asked = []

    async def handler(params):
        asked.append(params["message"])
        return {"action": "accept", "content": {"interpretation": "tides (history)"}}

    async with connect_demo() as client:
        client.elicitation_handler = None
        task = await client.start_task(
            "research",
            {"topic": "tides", "ambiguous": True, "stage_seconds": 0.1},
            answers={"interpretation": "tides (astrology)"},
        )
        result = await asyncio.wait_for(task, WAIT)
        assert result.is_error and [a[1:] for a in task.answered] == [("no handler", "decline")]
    async with connect_demo(elicitation_handler=handler) as client:
        task = await client.start_task(
            "research",
            {"topic": "tides", "ambiguous": True, "stage_seconds": 0.1},
            answers={"interpretation": "tides (astrology)"},
        )
        result = await asyncio.wait_for(task, WAIT)
        assert asked and result.structured["interpretation"] == "tides (history)"


async def test_tool_error_is_a_result_and_protocol_error_is_task_failed(connect_demo):
    async with connect_demo() as client:
        tool_error = await client.start_task("failing_job", {"seconds": 0.1, "message": "bad input row 7"})
        result = await asyncio.wait_for(tool_error, WAIT)
        assert (
            result.is_error
            and result.text == "bad input row 7"
            and tool_error.status == "error"
            and tool_error.server_status == "failed"
        )

        failing = await client.start_task(
            "failing_job", {"seconds": 0.1, "mode": "protocol_error", "message": "disk full"}
        )
        with pytest.raises(mtj.TaskFailed, match="disk full") as info:
            await asyncio.wait_for(failing, WAIT)
        assert info.value.status_message == "disk full"
        assert info.value.error["code"] == -32603 and info.value.error["data"] == {"reason": "demo"}
        assert info.value.task_id == failing.task_id and failing.status == "failed"


async def test_cancel_reaches_the_server(connect_demo):
    async with connect_demo() as client:
        task = await client.start_task("slow_compute", {"seconds": 30})
        await task.cancel()
        with pytest.raises(mtj.TaskCancelled):
            await asyncio.wait_for(task, WAIT)
        assert task.status == "cancelled"
        states = {s.task_id: s for s in await client.list_tasks()}
        assert states[task.task_id].status == "cancelled"


async def test_list_tasks_follows_every_page(connect_demo):
    async with connect_demo("--tasks-page-size", "2") as client:
        tasks = [await client.start_task("slow_compute", {"seconds": 0.05}) for _ in range(5)]
        await asyncio.wait_for(asyncio.gather(*tasks), WAIT)
        listed = {s.task_id for s in await client.list_tasks()}
        assert {t.task_id for t in tasks} <= listed


async def test_tools_without_task_support_run_as_calls_behind_the_handle(connect_demo):
    async with connect_demo() as client:
        echo = await client.start_task("echo", {"text": "hello"})
        assert not echo.runs_as_task and echo.task_id is None
        assert (await asyncio.wait_for(echo, WAIT)).text == "hello" and echo.status == "completed"
        # a task-required tool through call_tool runs as a task and waits for it
        report = await client.call_tool("research", {"topic": "reefs", "stage_seconds": 0.05}, timeout=WAIT)
        assert report.structured["topic"] == "reefs"
        # an optional tool through call_tool is an ordinary call
        assert (await client.call_tool("slow_compute", {"seconds": 0.05, "steps": 2})).structured["value"] == 5


async def test_image_and_structured_content(connect_demo):
    async with connect_demo() as client:
        result = await asyncio.wait_for(await client.start_task("make_chart", {"values": [3, 1, 2]}), WAIT)
        kinds = [b.type for b in result.content]
        assert "image" in kinds
        image = next(b for b in result.content if b.type == "image")
        assert image.mime_type == "image/png"
        import base64

        assert base64.b64decode(image.data).startswith(b"\x89PNG")
        assert result.structured == {"title": "Chart", "count": 3, "min": 1, "max": 3, "mean": 2}


async def test_bad_calls_are_refused_before_sending(connect_demo):
    async with connect_demo() as client:
        refused = r"mcp-tasks-jupyter-demo.*no tool named 'nope' \(tools: chart_points, echo,"
        with pytest.raises(mtj.ToolNotFound, match=refused):
            await client.start_task("nope")
        with pytest.raises(mtj.UsageError, match="tool 'research' needs argument\\(s\\) topic"):
            await client.start_task("research", {"ambiguous": True})
        with pytest.raises(mtj.UsageError, match="must be a mapping"):
            await client.start_task("echo", ["hello"])  # type: ignore[arg-type]


async def test_unknown_and_expired_task_ids(connect_demo):
    async with connect_demo() as client:
        with pytest.raises(mtj.TaskNotFound, match="no-such-task"):
            await asyncio.wait_for(client.attach("no-such-task"), WAIT)
        task = await client.start_task("slow_compute", {"seconds": 5}, ttl=1000)
        with pytest.raises(mtj.TaskExpired, match="expired"):
            await asyncio.wait_for(task, WAIT)
        assert task.status == "expired"


async def test_awaiting_code_cancelled_does_not_cancel_the_task(connect_demo):
    async with connect_demo() as client:
        task = await client.start_task("slow_compute", {"seconds": 0.5, "steps": 2})
        waiter = asyncio.create_task(_wait(task))
        await asyncio.sleep(0.05)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert not task.done()
        assert (await asyncio.wait_for(task, WAIT)).structured["value"] == 5


async def test_server_exiting_mid_task_loses_the_task_with_the_reason(connect_demo, transport):
    async with connect_demo("--faults", reconnect_for=1.0) as client:
        client.max_poll_failures = 2
        task = await client.start_task("exit_process", {"after_seconds": 0.2, "code": 3})
        with pytest.raises(mtj.TaskLost, match="exit_process") as info:
            await asyncio.wait_for(task, WAIT * 2)
        assert task.status == "lost"
        if transport == "stdio":
            assert "code 3" in str(info.value) and "exiting on purpose" in str(info.value)
        else:  # an HTTP server that went away is reconnected for reconnect_for seconds first
            assert "did not come back within 1 s" in str(info.value) and "cannot connect" in str(info.value)


async def _wait(task):
    return await task


async def _until(predicate, step: float = 0.02):
    while not predicate():
        await asyncio.sleep(step)


async def test_a_question_open_when_its_task_is_cancelled_is_withdrawn(connect_demo):
    opened = asyncio.Event()
    closed = asyncio.Event()

    async def slow_person(params):
        opened.set()
        try:
            await asyncio.sleep(3600)
        finally:
            closed.set()

    async with connect_demo(elicitation_handler=slow_person) as client:
        task = await client.start_task("research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0.1})
        await asyncio.wait_for(opened.wait(), WAIT)
        assert task.pending_input
        await task.cancel()
        with pytest.raises(mtj.TaskCancelled):
            await asyncio.wait_for(task, WAIT)
        await asyncio.wait_for(closed.wait(), WAIT)
        assert not task.pending_input
