"""The demo server over stdio: handshake, listing, framing and the tool-level task rules."""

from __future__ import annotations

import asyncio
import os

import pytest
from demo_harness import StdioPeer

pytestmark = pytest.mark.anyio


async def test_initialize_declares_tasks_and_negotiates_the_version() -> None:
    async with StdioPeer.start() as peer:
        result = await peer.initialize()
        assert result["protocolVersion"] == "2025-11-25"
        assert result["serverInfo"]["name"] == "mcp-tasks-jupyter-demo"
        assert result["serverInfo"]["version"]
        caps = result["capabilities"]
        assert caps["tools"] == {"listChanged": False}
        assert caps["logging"] == {}
        assert caps["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        assert await peer.result("ping") == {}
        assert await peer.result("logging/setLevel", {"level": "debug"}) == {}
        assert (await peer.error("logging/setLevel", {"level": "loud"}))["code"] == -32602
        assert caps["resources"] == {}  # the MCP App's view (demo/app_tools.py)
        assert [r["uri"] for r in (await peer.result("resources/list"))["resources"]] == [
            "ui://demo/live-chart.html"
        ]
        assert (await peer.error("resources/read", {"uri": "ui://demo/nope"}))["code"] == -32002
        assert (await peer.error("prompts/list"))["code"] == -32601

    for asked, answered in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2099-01-01", "2025-11-25"),
    ]:
        async with StdioPeer.start() as peer:
            assert (await peer.initialize(version=asked))["protocolVersion"] == answered


async def test_framing_blank_lines_and_garbage() -> None:
    async with StdioPeer.start() as peer:
        await peer.send_raw(b"\n   \nthis is not json\n")
        await peer.initialize()
        await peer.send_raw(b'{"jsonrpc": "2.0", "id": 5}\n')  # neither request nor response
        assert await peer.result("ping") == {}
        parse_errors = [r for r in peer.orphan_responses if r["error"]["code"] == -32700]
        assert len(parse_errors) == 1 and parse_errors[0]["id"] is None
        invalid = [r for r in peer.orphan_responses if r["error"]["code"] == -32600]
        assert len(invalid) == 1 and invalid[0]["id"] == 5
    assert peer.proc.returncode == 0  # stdin closed: clean exit
    assert b"Traceback" not in peer.stderr


async def test_tools_list_pages_with_opaque_cursors() -> None:
    async with StdioPeer.start("--tools-page-size", "2") as peer:
        await peer.initialize()
        names, cursor, pages = [], None, 0
        while True:
            page = await peer.result("tools/list", {} if cursor is None else {"cursor": cursor})
            pages += 1
            assert len(page["tools"]) <= 2
            names += [tool["name"] for tool in page["tools"]]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert pages == 4
        assert names == [
            "slow_compute",
            "research",
            "failing_job",
            "make_chart",
            "echo",
            *("live_chart", "chart_points", "steer_chart"),  # the MCP App (demo/app_tools.py)
        ]
        error = await peer.error("tools/list", {"cursor": "not-a-cursor"})
        assert error["code"] == -32602


async def test_tool_definitions() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize()
        tools = {tool["name"]: tool for tool in (await peer.result("tools/list"))["tools"]}
        assert {name: tool.get("execution") for name, tool in tools.items()} == {
            "slow_compute": {"taskSupport": "optional"},
            "research": {"taskSupport": "required"},
            "failing_job": {"taskSupport": "optional"},
            "make_chart": {"taskSupport": "optional"},
            "echo": None,
            "live_chart": {"taskSupport": "optional"},
            "chart_points": None,
            "steer_chart": None,
        }
        for tool in tools.values():
            assert tool["title"] and tool["description"]
            assert tool["inputSchema"]["type"] == "object"
        slow = tools["slow_compute"]["inputSchema"]["properties"]
        assert (slow["seconds"]["default"], slow["steps"]["default"], slow["label"]["default"]) == (5, 10, "job")
        assert tools["research"]["inputSchema"]["required"] == ["topic"]
        assert tools["failing_job"]["inputSchema"]["properties"]["mode"]["enum"] == [
            "tool_error",
            "protocol_error",
        ]
        assert tools["make_chart"]["inputSchema"]["properties"]["values"]["items"] == {"type": "number"}
        assert set(tools["slow_compute"]["outputSchema"]["required"]) == {"label", "steps", "seconds", "value"}
        assert set(tools["make_chart"]["outputSchema"]["required"]) == {"title", "count", "min", "max", "mean"}
        assert "outputSchema" not in tools["echo"]

    async with StdioPeer.start("--faults") as peer:
        await peer.initialize()
        tools = {tool["name"]: tool for tool in (await peer.result("tools/list"))["tools"]}
        assert tools["exit_process"]["execution"] == {"taskSupport": "optional"}


async def test_task_support_rules_and_argument_errors() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize()
        error = await peer.error("tools/call", {"name": "research", "arguments": {"topic": "x"}})
        assert error["code"] == -32601 and "requires task augmentation" in error["message"]
        error = await peer.error("tools/call", {"name": "echo", "arguments": {"text": "x"}, "task": {}})
        assert error["code"] == -32601
        error = await peer.error("tools/call", {"name": "nope", "arguments": {}})
        assert error == {"code": -32602, "message": "Unknown tool: nope"}
        error = await peer.error("tools/call", {"name": "echo", "arguments": {}})
        assert error["code"] == -32602 and "'text'" in error["message"]
        error = await peer.error("tools/call", {"name": "slow_compute", "arguments": {"steps": "ten"}, "task": {}})
        assert error["code"] == -32602 and "'steps' must be an integer" in error["message"]
        error = await peer.error("tools/call", {"name": "make_chart", "arguments": {"values": [1, "x"]}})
        assert error["code"] == -32602 and "values[1]" in error["message"]
        error = await peer.error("tools/call", {"name": "failing_job", "arguments": {"mode": "explode"}})
        assert error["code"] == -32602
        assert (await peer.error("tasks/list", {"cursor": "bogus"}))["code"] == -32602
        # nothing of this created a task
        assert (await peer.result("tasks/list"))["tasks"] == []


async def test_inline_calls() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize()
        assert await peer.result("tools/call", {"name": "echo", "arguments": {"text": "hé, there"}}) == {
            "content": [{"type": "text", "text": "hé, there"}],
            "isError": False,
        }
        result = await peer.result(
            "tools/call",
            {
                "name": "slow_compute",
                "arguments": {"seconds": 0.2, "steps": 4, "label": "inline"},
                "_meta": {"progressToken": 7},
            },
        )
        assert result["content"][0]["text"] == "inline: done in 4 steps, value=30"
        assert result["structuredContent"] == {"label": "inline", "steps": 4, "seconds": 0.2, "value": 30}
        progress = peer.notes("notifications/progress")
        assert [p["progress"] for p in progress] == [0, 1, 2, 3, 4]
        assert all(p["progressToken"] == 7 and p["total"] == 4 for p in progress)
        assert not peer.notes("notifications/tasks/status")  # no task, no task status

        result = await peer.result("tools/call", {"name": "failing_job", "arguments": {"seconds": 0}})
        assert result["isError"] is True and result["content"][0]["text"] == "The job failed on purpose"
        error = await peer.error(
            "tools/call",
            {"name": "failing_job", "arguments": {"seconds": 0, "mode": "protocol_error", "message": "boom"}},
        )
        assert error == {"code": -32603, "message": "boom", "data": {"reason": "demo"}}


async def test_notifications_cancelled_stops_an_inline_call() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize()
        msg_id, future = await peer.start_request(
            "tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}}
        )
        await asyncio.sleep(0.2)
        await peer.notify("notifications/cancelled", {"requestId": msg_id, "reason": "changed my mind"})
        assert await peer.result("ping") == {}
        await asyncio.sleep(0.3)
        assert not future.done()  # a cancelled request gets no response


@pytest.mark.skipif(not hasattr(os, "SCHED_BATCH"), reason="a Linux scheduling policy")
async def test_the_demo_runs_as_a_batch_job_unless_told_not_to() -> None:
    """On a shared core the demo must not preempt the kernel it serves (every request the kernel sends woke
    the demo onto the kernel's own core): it runs under SCHED_BATCH; ``--no-batch-scheduling`` keeps the
    normal policy."""
    async with StdioPeer.start() as peer:
        await peer.initialize()  # past its start: the policy is set before it serves
        assert os.sched_getscheduler(peer.proc.pid) == os.SCHED_BATCH
    async with StdioPeer.start("--no-batch-scheduling") as peer:
        await peer.initialize()
        assert os.sched_getscheduler(peer.proc.pid) == os.SCHED_OTHER
