"""The sep1686 dialect (the SEP-1686 draft's tasks) over stdio and over Streamable HTTP."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from demo_harness import HttpPeer, StdioPeer, eventually, http_server

pytestmark = pytest.mark.anyio

TASK = "modelcontextprotocol.io/task"
RELATED = "modelcontextprotocol.io/related-task"
SEP1686_CAPABILITIES = {"tasks": {"tools": {"call": True}}}


def with_task(name: str, arguments: dict[str, Any], task_id: str, **marker: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, "_meta": {TASK: {"taskId": task_id, **marker}}}


def created(peer: StdioPeer, task_id: str) -> bool:
    return any(
        note["method"] == "notifications/tasks/created"
        and note["params"] == {"_meta": {RELATED: {"taskId": task_id}}}
        for note in peer.notifications
    )


async def test_life_cycle_over_stdio() -> None:
    async with StdioPeer.start("--poll-interval", "100") as peer:
        init = await peer.initialize({"elicitation": {}, **SEP1686_CAPABILITIES})
        assert init["capabilities"]["tasks"] == {"tools": {"call": True}}
        assert all("execution" not in tool for tool in (await peer.result("tools/list"))["tools"])

        # the client names the task; the server announces it and answers the call at the end
        task_id = str(uuid.uuid4())
        _, call = await peer.start_request(
            "tools/call", with_task("slow_compute", {"seconds": 0.4, "steps": 2}, task_id, keepAlive=5)
        )
        await eventually(lambda: created(peer, task_id))
        task = await peer.result("tasks/get", {"taskId": task_id})
        assert task == {
            "taskId": task_id,
            "status": task["status"],
            "keepAlive": 1000,
            "pollFrequency": 100,
            "_meta": {RELATED: {"taskId": task_id}},
        }
        assert task["status"] in ("submitted", "working")
        error = await peer.error("tasks/result", {"taskId": task_id})
        assert error["code"] == -32602 and error["message"].startswith("Cannot retrieve result: Task status is")
        answer = await asyncio.wait_for(call, 10)
        assert answer["result"]["structuredContent"]["value"] == 5
        assert answer["result"]["_meta"] == {RELATED: {"taskId": task_id}}
        assert (await peer.result("tasks/get", {"taskId": task_id}))["status"] == "completed"
        assert (await peer.result("tasks/result", {"taskId": task_id})) == answer["result"]
        logged = peer.notes("notifications/message")
        assert logged and all(note["_meta"] == {RELATED: {"taskId": task_id}} for note in logged)
        assert peer.notes("notifications/tasks/status") == []  # the draft has none

        # a tool error is completed; a JSON-RPC error is failed (error: a string) and is the call's answer
        tool_error = str(uuid.uuid4())
        answer = await peer.request("tools/call", with_task("failing_job", {"seconds": 0}, tool_error))
        assert answer["result"]["isError"] is True
        assert (await peer.result("tasks/get", {"taskId": tool_error}))["status"] == "completed"
        protocol_error = str(uuid.uuid4())
        answer = await peer.request(
            "tools/call",
            with_task("failing_job", {"seconds": 0, "mode": "protocol_error", "message": "boom"}, protocol_error),
        )
        assert answer["error"] == {"code": -32603, "message": "boom", "data": {"reason": "demo"}}
        failed = await peer.result("tasks/get", {"taskId": protocol_error})
        assert failed["status"] == "failed" and failed["error"] == "boom" and failed["keepAlive"] == 600_000
        assert (await peer.error("tasks/result", {"taskId": protocol_error}))["code"] == -32603

        # list (oldest first), delete, and ids that cannot be used
        listed = await peer.result("tasks/list")
        assert [t["taskId"] for t in listed["tasks"]] == [task_id, tool_error, protocol_error]
        assert listed["tasks"][2] == {
            "taskId": protocol_error,
            "status": "failed",
            "keepAlive": 600_000,
            "pollFrequency": 100,
            "error": "boom",
        }
        assert await peer.result("tasks/delete", {"taskId": tool_error}) == {
            "_meta": {RELATED: {"taskId": tool_error}}
        }
        assert (await peer.error("tasks/get", {"taskId": tool_error}))[
            "message"
        ] == f"Task not found: {tool_error}"
        for used in (task_id, tool_error):
            error = await peer.error("tools/call", with_task("slow_compute", {"seconds": 0}, used))
            assert error == {"code": -32602, "message": f"Task ID already exists: {used}"}
        assert (await peer.error("tools/call", with_task("slow_compute", {}, "short")))["code"] == -32602
        assert (await peer.error("tools/call", with_task("slow_compute", {}, str(uuid.uuid4()), keepAlive=-1)))[
            "code"
        ] == -32602
        assert (await peer.error("tasks/cancel", {"taskId": task_id}))["code"] == -32601

        # a tool that never runs as a task ignores the key
        plain = str(uuid.uuid4())
        assert (await peer.result("tools/call", with_task("echo", {"text": "hi"}, plain)))["content"][0][
            "text"
        ] == "hi"
        assert not created(peer, plain)


async def test_cancel_and_questions_over_stdio() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize({"elicitation": {}, **SEP1686_CAPABILITIES})

        # notifications/cancelled for the call cancels the task; the call gets no answer
        task_id = str(uuid.uuid4())
        call_id, call = await peer.start_request("tools/call", with_task("slow_compute", {"seconds": 30}, task_id))
        await eventually(lambda: created(peer, task_id))
        await peer.notify("notifications/cancelled", {"requestId": call_id, "reason": "enough"})

        async def status() -> str:
            return (await peer.result("tasks/get", {"taskId": task_id}))["status"]

        assert await status() == "cancelled"
        await asyncio.sleep(0.2)
        assert not call.done() and peer.orphan_responses == []

        # a question is tagged with the task and makes it input_required until answered
        task_id = str(uuid.uuid4())
        call_id, call = await peer.start_request(
            "tools/call",
            with_task("research", {"topic": "python", "ambiguous": True, "stage_seconds": 0}, task_id),
        )
        question = await peer.next_server_request()
        assert question["method"] == "elicitation/create"
        assert question["params"]["_meta"] == {RELATED: {"taskId": task_id}}
        assert await status() == "input_required"
        reading = question["params"]["requestedSchema"]["properties"]["interpretation"]["oneOf"][2]["const"]
        await peer.respond(question["id"], {"action": "accept", "content": {"interpretation": reading}})
        answer = await asyncio.wait_for(call, 10)
        assert answer["result"]["structuredContent"]["interpretation"] == reading
        assert await status() == "completed"


async def test_stream_over_http() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        peer = HttpPeer(client, server.url)
        init = await peer.initialize({"elicitation": {}, **SEP1686_CAPABILITIES})
        assert init["capabilities"]["tasks"] == {"tools": {"call": True}}

        # the task-augmented call is answered with SSE: created, the question, then the result
        task_id = str(uuid.uuid4())
        message = peer.message(
            "tools/call", with_task("research", {"topic": "java", "ambiguous": True, "stage_seconds": 0}, task_id)
        )
        async with peer.stream_post(message) as stream:
            seen = await stream.until(lambda m: m.get("method") == "elicitation/create")
            assert seen[0][1] == {
                "jsonrpc": "2.0",
                "method": "notifications/tasks/created",
                "params": {"_meta": {RELATED: {"taskId": task_id}}},
            }
            question = seen[-1][1]
            polled = await peer.result("tasks/get", {"taskId": task_id})
            assert polled["status"] == "input_required"
            reading = question["params"]["requestedSchema"]["properties"]["interpretation"]["oneOf"][0]["const"]
            assert (
                await peer.respond(question["id"], {"action": "accept", "content": {"interpretation": reading}})
            ).status_code == 202
            final = (await stream.until(lambda m: m.get("id") == message["id"]))[-1][1]
        assert final["result"]["_meta"] == {RELATED: {"taskId": task_id}}
        assert (await peer.result("tasks/result", {"taskId": task_id})) == final["result"]
        assert [t["taskId"] for t in (await peer.result("tasks/list"))["tasks"]] == [task_id]

        # a call without the key is an ordinary JSON answer
        plain = await peer.request("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0, "steps": 1}})
        assert plain["result"]["structuredContent"]["value"] == 1

        # cancelling the call cancels the task; its stream ends without an answer
        task_id = str(uuid.uuid4())
        message = peer.message("tools/call", with_task("slow_compute", {"seconds": 30}, task_id))
        async with peer.stream_post(message) as stream:
            await stream.until(lambda m: m.get("method") == "notifications/tasks/created")
            note = await peer.post(
                {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": message["id"]}}
            )
            assert note.status_code == 202
            rest = [event.message for event in await stream.rest() if event.data]
        assert all("id" not in m for m in rest)
        assert (await peer.result("tasks/get", {"taskId": task_id}))["status"] == "cancelled"
