"""The demo server over stdio: task life cycles, results, cancellation, listing, ttl, elicitation."""

from __future__ import annotations

import asyncio
import base64
import struct
import time
import zlib
from datetime import datetime

import pytest
from demo_harness import RELATED, StdioPeer, eventually

pytestmark = pytest.mark.anyio

TASK_KEYS = {"taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttl", "pollInterval"}


def parse_time(value: str) -> datetime:
    assert value.endswith("Z")
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


async def test_slow_compute_task_reports_and_delivers_its_result() -> None:
    async with StdioPeer.start("--poll-interval", "250") as peer:
        await peer.initialize()
        task = await peer.call_task(
            "slow_compute", {"seconds": 0.6, "steps": 3, "label": "sq"}, ttl=60_000, progress_token="tok"
        )
        assert set(task) == TASK_KEYS
        assert task["status"] == "working" and task["ttl"] == 60_000 and task["pollInterval"] == 250
        assert len(task["taskId"]) >= 16
        parse_time(task["createdAt"]), parse_time(task["lastUpdatedAt"])
        task_id = task["taskId"]

        # tasks/result blocks until the task ends; meanwhile other requests still get answers
        started = time.monotonic()
        _, pending = await peer.start_request("tasks/result", {"taskId": task_id})
        polled = await peer.result("tasks/get", {"taskId": task_id})
        assert polled["status"] == "working" and polled["pollInterval"] == 250 and polled["ttl"] == 60_000
        assert not pending.done()
        response = await asyncio.wait_for(pending, 10)
        assert time.monotonic() - started > 0.3
        result = response["result"]
        assert result["content"] == [{"type": "text", "text": "sq: done in 3 steps, value=14"}]
        assert result["structuredContent"] == {"label": "sq", "steps": 3, "seconds": 0.6, "value": 14}
        assert result["_meta"][RELATED] == {"taskId": task_id}

        done = await peer.result("tasks/get", {"taskId": task_id})
        assert done["status"] == "completed"
        assert parse_time(done["lastUpdatedAt"]) >= parse_time(done["createdAt"])

        statuses = peer.notes("notifications/tasks/status", task_id)
        assert [s["statusMessage"] for s in statuses][:4] == [
            "step 0/3: starting sq",
            "step 1/3: sq value=1",
            "step 2/3: sq value=5",
            "step 3/3: sq value=14",
        ]
        assert statuses[-1]["status"] == "completed" and set(statuses[-1]) == TASK_KEYS
        progress = peer.notes("notifications/progress", task_id)
        assert [(p["progress"], p["total"]) for p in progress] == [(0, 3), (1, 3), (2, 3), (3, 3)]
        assert all(p["progressToken"] == "tok" and p["_meta"][RELATED]["taskId"] == task_id for p in progress)
        logs = peer.notes("notifications/message", task_id)
        assert len(logs) == 4 and all(log["level"] == "info" and log["logger"] == "demo" for log in logs)

        # a finished task keeps answering tasks/result with the same outcome
        assert (await peer.result("tasks/result", {"taskId": task_id}))["structuredContent"]["value"] == 14


async def test_failing_job_tool_error_and_protocol_error() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize()
        tool_error = await peer.call_task("failing_job", {"seconds": 0.1, "message": "nope"})
        protocol_error = await peer.call_task(
            "failing_job", {"seconds": 0.1, "mode": "protocol_error", "message": "kaput"}
        )

        result = await peer.result("tasks/result", {"taskId": tool_error["taskId"]})
        assert result["isError"] is True and result["content"][0]["text"] == "nope"
        assert result["_meta"][RELATED] == {"taskId": tool_error["taskId"]}
        got = await peer.result("tasks/get", {"taskId": tool_error["taskId"]})
        assert (got["status"], got["statusMessage"]) == ("failed", "nope")

        error = await peer.error("tasks/result", {"taskId": protocol_error["taskId"]})
        assert error == {"code": -32603, "message": "kaput", "data": {"reason": "demo"}}
        got = await peer.result("tasks/get", {"taskId": protocol_error["taskId"]})
        assert (got["status"], got["statusMessage"]) == ("failed", "kaput")


async def test_make_chart_returns_a_real_png() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize()
        task = await peer.call_task("make_chart", {"values": [3, -1, 4, 1, 5], "title": "Pi-ish", "seconds": 0.05})
        result = await peer.result("tasks/result", {"taskId": task["taskId"]})
        image, text = result["content"]
        assert image["type"] == "image" and image["mimeType"] == "image/png"
        assert text["type"] == "text" and "Pi-ish" in text["text"]
        assert result["structuredContent"] == {"title": "Pi-ish", "count": 5, "min": -1, "max": 5, "mean": 2.4}
        png = base64.b64decode(image["data"])
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", png[16:24])
        assert 200 <= width <= 1000 and 100 <= height <= 1000
        idat = png.index(b"IDAT")
        (length,) = struct.unpack(">I", png[idat - 4 : idat])
        assert len(zlib.decompress(png[idat + 4 : idat + 4 + length])) == height * (1 + 3 * width)

        inline = await peer.result(
            "tools/call", {"name": "make_chart", "arguments": {"values": [1], "seconds": 0}}
        )
        assert inline["structuredContent"]["count"] == 1


async def test_cancel_a_running_task_and_refuse_to_cancel_a_finished_one() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize()
        task = await peer.call_task("slow_compute", {"seconds": 30, "steps": 30})
        _, waiting = await peer.start_request("tasks/result", {"taskId": task["taskId"]})
        cancelled = await peer.result("tasks/cancel", {"taskId": task["taskId"]})
        assert cancelled["status"] == "cancelled" and cancelled["statusMessage"] == "Cancelled by request"
        error = (await asyncio.wait_for(waiting, 5))["error"]
        assert error["code"] == -32800 and error["message"] == "Task was cancelled"
        await peer.wait_status(task["taskId"], "cancelled")
        await asyncio.sleep(0.2)  # the body is gone: the status stays put
        assert (await peer.result("tasks/get", {"taskId": task["taskId"]}))["status"] == "cancelled"

        error = await peer.error("tasks/cancel", {"taskId": task["taskId"]})
        assert error["code"] == -32602 and "cancelled" in error["message"]
        quick = await peer.call_task("slow_compute", {"seconds": 0, "steps": 1})
        await peer.result("tasks/result", {"taskId": quick["taskId"]})
        error = await peer.error("tasks/cancel", {"taskId": quick["taskId"]})
        assert error["code"] == -32602 and "completed" in error["message"]

        for method in ("tasks/get", "tasks/result", "tasks/cancel"):
            error = await peer.error(method, {"taskId": "no-such-task"})
            assert error == {"code": -32602, "message": "Task not found: no-such-task"}


async def test_tasks_list_pages_through_every_task() -> None:
    async with StdioPeer.start("--tasks-page-size", "2") as peer:
        await peer.initialize()
        created = [(await peer.call_task("slow_compute", {"seconds": 0, "steps": 1}))["taskId"] for _ in range(5)]
        listed, cursor, pages = [], None, 0
        while True:
            page = await peer.result("tasks/list", {} if cursor is None else {"cursor": cursor})
            pages += 1
            assert len(page["tasks"]) <= 2
            listed += page["tasks"]
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        assert pages == 3
        assert [task["taskId"] for task in listed] == created  # creation order, oldest first
        assert all(set(task) == TASK_KEYS for task in listed)


async def test_ttl_is_clamped_and_expired_tasks_are_gone() -> None:
    async with StdioPeer.start("--max-ttl", "120000", "--default-ttl", "5000") as peer:
        await peer.initialize()
        assert (await peer.call_task("slow_compute", {"seconds": 0}))["ttl"] == 5000
        assert (await peer.call_task("slow_compute", {"seconds": 0}, ttl=10**9))["ttl"] == 120_000
        short = await peer.call_task("slow_compute", {"seconds": 30}, ttl=10)
        assert short["ttl"] == 1000
        started = time.monotonic()
        expired = {"code": -32602, "message": f"Task has expired: {short['taskId']}"}
        assert await peer.error("tasks/result", {"taskId": short["taskId"]}, timeout=5) == expired
        assert time.monotonic() - started > 0.8  # it waited for the ttl, not for the 30 s body
        assert await peer.error("tasks/get", {"taskId": short["taskId"]}) == expired
        assert await peer.error("tasks/cancel", {"taskId": short["taskId"]}) == expired
        listed = {task["taskId"] for task in (await peer.result("tasks/list"))["tasks"]}
        assert short["taskId"] not in listed and len(listed) == 2


async def test_research_without_ambiguity() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize(capabilities={"elicitation": {}})
        task = await peer.call_task("research", {"topic": "tides", "stage_seconds": 0.05}, progress_token=1)
        result = await peer.result("tasks/result", {"taskId": task["taskId"]})
        assert result["isError"] is False
        assert result["content"][0]["text"].startswith("# Research report: tides")
        assert result["structuredContent"]["interpretation"] == "tides"
        assert result["structuredContent"]["depth"] == 2 and len(result["structuredContent"]["sources"]) == 3
        messages = [s["statusMessage"] for s in peer.notes("notifications/tasks/status", task["taskId"])]
        for stage in ("searching", "reading", "synthesizing"):
            assert any(m.startswith(stage) for m in messages), messages
        assert [p["progress"] for p in peer.notes("notifications/progress", task["taskId"])] == [0, 1, 2, 3]
        assert peer.server_requests.empty()


async def test_research_elicitation_accept() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize(capabilities={"elicitation": {}})
        task = await peer.call_task("research", {"topic": "Rust", "ambiguous": True, "stage_seconds": 0.05})
        task_id = task["taskId"]
        ask = await peer.next_server_request()
        assert ask["method"] == "elicitation/create" and ask["id"] == 0  # server request ids start at 0
        params = ask["params"]
        assert params["_meta"][RELATED] == {"taskId": task_id}
        schema = params["requestedSchema"]
        assert schema["required"] == ["interpretation"]
        choices = [option["const"] for option in schema["properties"]["interpretation"]["oneOf"]]
        assert choices == ["Rust (history)", "Rust (technology)", "Rust (economics)"]
        depth = schema["properties"]["depth"]
        assert (depth["type"], depth["minimum"], depth["maximum"], depth["default"]) == ("integer", 1, 5, 2)

        waiting = await peer.result("tasks/get", {"taskId": task_id})
        assert waiting["status"] == "input_required" and "Which one" in waiting["statusMessage"]
        await peer.respond(
            ask["id"], {"action": "accept", "content": {"interpretation": "Rust (technology)", "depth": 4}}
        )
        result = await peer.result("tasks/result", {"taskId": task_id})
        assert "Rust (technology)" in result["content"][0]["text"]
        assert result["structuredContent"]["interpretation"] == "Rust (technology)"
        assert result["structuredContent"]["depth"] == 4 and len(result["structuredContent"]["sources"]) == 5
        statuses = [s["status"] for s in peer.notes("notifications/tasks/status", task_id)]
        first_wait = statuses.index("input_required")
        assert "working" in statuses[first_wait:] and statuses[-1] == "completed"


async def test_research_elicitation_decline_and_error() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize(capabilities={"elicitation": {"form": {}}})
        declined = await peer.call_task("research", {"topic": "Java", "ambiguous": True, "stage_seconds": 0.05})
        ask = await peer.next_server_request()
        await peer.respond(ask["id"], {"action": "decline"})
        result = await peer.result("tasks/result", {"taskId": declined["taskId"]})
        assert result["isError"] is True and result["content"][0]["text"].startswith("The user declined")
        got = await peer.result("tasks/get", {"taskId": declined["taskId"]})
        assert got["status"] == "failed" and got["statusMessage"].startswith("The user declined")

        broken = await peer.call_task("research", {"topic": "Go", "ambiguous": True, "stage_seconds": 0.05})
        ask = await peer.next_server_request()
        assert ask["id"] == 1
        await peer.respond(ask["id"], error={"code": -32603, "message": "no UI here"})
        result = await peer.result("tasks/result", {"taskId": broken["taskId"]})
        assert result["isError"] is True and "no UI here" in result["content"][0]["text"]
        assert (await peer.result("tasks/get", {"taskId": broken["taskId"]}))["status"] == "failed"


async def test_research_without_elicitation_capability_uses_a_default() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize()
        task = await peer.call_task("research", {"topic": "Mercury", "ambiguous": True, "stage_seconds": 0.05})
        result = await peer.result("tasks/result", {"taskId": task["taskId"]})
        assert result["isError"] is False
        assert result["structuredContent"]["interpretation"] == "Mercury (history)"
        assert "cannot answer questions" in result["content"][0]["text"]
        assert peer.server_requests.empty()
        assert "input_required" not in [
            s["status"] for s in peer.notes("notifications/tasks/status", task["taskId"])
        ]


async def test_cancel_while_waiting_for_input() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize(capabilities={"elicitation": {}})
        task = await peer.call_task("research", {"topic": "Ada", "ambiguous": True, "stage_seconds": 0.05})
        ask = await peer.next_server_request()
        await eventually(
            lambda: any(
                s["status"] == "input_required" for s in peer.notes("notifications/tasks/status", task["taskId"])
            )
        )
        assert (await peer.result("tasks/cancel", {"taskId": task["taskId"]}))["status"] == "cancelled"
        await peer.respond(
            ask["id"], {"action": "accept", "content": {"interpretation": "Ada (history)"}}
        )  # too late
        await asyncio.sleep(0.1)
        assert (await peer.result("tasks/get", {"taskId": task["taskId"]}))["status"] == "cancelled"


async def test_no_status_notifications_leaves_polling_as_the_only_news() -> None:
    async with StdioPeer.start("--poll-interval", "100", "--no-status-notifications") as peer:
        await peer.initialize()
        task = await peer.call_task("slow_compute", {"seconds": 0.3, "steps": 3}, ttl=60_000, progress_token="tok")
        response = await asyncio.wait_for(peer.request("tasks/result", {"taskId": task["taskId"]}), 10)
        assert response["result"]["structuredContent"]["value"] == 14
        done = await peer.result("tasks/get", {"taskId": task["taskId"]})
        assert done["status"] == "completed" and done["statusMessage"] == "job: done in 3 steps, value=14"
        assert peer.notes("notifications/tasks/status", task["taskId"]) == []
        assert peer.notes("notifications/progress")  # progress still flows: only status pushes are off
