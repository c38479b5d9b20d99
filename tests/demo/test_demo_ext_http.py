"""The ext dialect over Streamable HTTP: stateless POSTs, header checks, SSE answers and subscriptions."""

from __future__ import annotations

import asyncio
import base64

import httpx
import pytest
from demo_harness import TASKS_EXT, StatelessHttp, http_server, modern, poll_task

pytestmark = pytest.mark.anyio

SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"


async def test_stateless_life_cycle_over_http() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        peer = StatelessHttp(client, server.url)
        found = await peer.result("server/discover")
        assert found["capabilities"]["extensions"] == {TASKS_EXT: {}}

        # research asks its question through tasks/get, answered with tasks/update
        created = await peer.result(
            "tools/call",
            {"name": "research", "arguments": {"topic": "mercury", "ambiguous": True, "stage_seconds": 0}},
        )
        assert created["resultType"] == "task"
        task = await poll_task(lambda p: peer.result("tasks/get", p), created["taskId"], until=("input_required",))
        [(key, question)] = task["inputRequests"].items()
        reading = question["params"]["requestedSchema"]["properties"]["interpretation"]["oneOf"][0]["const"]
        ack = await peer.result(
            "tasks/update",
            {
                "taskId": created["taskId"],
                "inputResponses": {key: {"action": "accept", "content": {"interpretation": reading}}},
            },
        )
        assert ack == {"resultType": "complete"}
        done = await poll_task(lambda p: peer.result("tasks/get", p), created["taskId"])
        assert done["status"] == "completed" and done["result"]["structuredContent"]["interpretation"] == reading

        # the demo's failing_job: a tool error is completed, a protocol error failed
        for mode, status in (("tool_error", "completed"), ("protocol_error", "failed")):
            arguments = {"seconds": 0, "mode": mode}
            created = await peer.result("tools/call", {"name": "failing_job", "arguments": arguments})
            done = await poll_task(lambda p: peer.result("tasks/get", p), created["taskId"])
            assert done["status"] == status
        assert done["error"]["code"] == -32603

        # cancel a running task
        created = await peer.result("tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}})
        assert await peer.result("tasks/cancel", {"taskId": created["taskId"]}) == {"resultType": "complete"}
        assert (await peer.result("tasks/get", {"taskId": created["taskId"]}))["status"] == "cancelled"

        # without the opt-in: inline; echo never becomes a task
        chart = {"name": "make_chart", "arguments": {"values": [1, 2], "seconds": 0}}
        inline = await peer.result("tools/call", modern(chart, tasks=False))
        assert inline["resultType"] == "complete" and inline["content"][0]["type"] == "image"
        echo = await peer.result("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        assert echo == {"content": [{"type": "text", "text": "hi"}], "isError": False, "resultType": "complete"}


async def test_http_header_version_and_method_errors() -> None:
    async with http_server("--conformance") as server, httpx.AsyncClient() as client:
        peer = StatelessHttp(client, server.url)
        greet = modern({"name": "greet", "arguments": {"name": "Ann"}})

        # Mcp-Method / Mcp-Name must agree with the body (-32020, HTTP 400)
        error = await peer.error("tools/call", greet, 400, **{"Mcp-Method": "tasks/get"})
        assert error["code"] == -32020
        error = await peer.error("tools/call", greet, 400, **{"Mcp-Name": "echo"})
        assert error["code"] == -32020
        response = await client.post(
            server.url,
            json=peer.message("tools/call", greet),
            headers={
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
            },
        )  # no Mcp-Name
        assert response.status_code == 400 and response.json()["error"]["code"] == -32020
        encoded = "=?base64?" + base64.b64encode(b"greet").decode() + "?="
        response = await peer.post("tools/call", greet, **{"Mcp-Name": encoded})
        assert response.status_code == 200 and response.json()["result"]["content"][0]["text"] == "Hello, Ann!"
        created = await peer.result("tools/call", {"name": "slow_compute", "arguments": {"seconds": 30}})
        error = await peer.error("tasks/get", modern({"taskId": created["taskId"]}), 400, **{"Mcp-Name": "other"})
        assert error["code"] == -32020
        error = await peer.error(
            "tasks/get", modern({"taskId": created["taskId"]}), 400, **{"Mcp-Method": "Tasks/Get"}
        )
        assert error["code"] == -32020

        # versions: the header must match _meta; an unsupported version names the supported ones
        error = await peer.error("ping", modern(), 400, **{"MCP-Protocol-Version": "2025-11-26"})
        assert error["code"] == -32020
        error = await peer.error(
            "ping", modern(version="2099-01-01"), 400, **{"MCP-Protocol-Version": "2099-01-01"}
        )
        assert error["code"] == -32022 and error["data"] == {
            "supported": ["2026-07-28"],
            "requested": "2099-01-01",
        }
        error = await peer.error("ping", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}, 400)
        assert error["code"] == -32602 and "clientCapabilities" in error["message"]

        # unknown methods are 404, a missing capability 400, a failed call 200
        for method in ("tasks/result", "tasks/list", "prompts/list"):
            assert (await peer.error(method, modern({"taskId": "x"}), 404))["code"] == -32601
        assert (await peer.error("tasks/get", modern({"taskId": "x"}, tasks=False), 400))["code"] == -32021
        assert (await peer.error("tasks/get", modern({"taskId": "x"}), 200))["code"] == -32602
        await peer.result("tasks/cancel", {"taskId": created["taskId"]})

        # stateless: a notification is accepted and ignored; no session is ever made
        response = await client.post(
            server.url,
            json={"jsonrpc": "2.0", "method": "notifications/cancelled", "params": modern({"requestId": 1})},
            headers=peer.headers("notifications/cancelled", {}),
        )
        assert response.status_code == 202 and "mcp-session-id" not in response.headers


async def test_sse_answers_progress_and_subscriptions() -> None:
    async with http_server("--conformance") as server, httpx.AsyncClient() as client:
        peer = StatelessHttp(client, server.url)

        # an inline call that asked for progress is answered with SSE: progress, then the result
        call = {"name": "slow_compute", "arguments": {"seconds": 0.1, "steps": 2}}
        params = modern(call, tasks=False, progressToken=7)
        async with peer.stream("tools/call", params) as stream:
            messages = [m for _, m in await stream.until(lambda m: "result" in m)]
        assert [m["params"]["progress"] for m in messages[:-1]] == [0, 1, 2]
        assert messages[-1]["result"]["structuredContent"]["value"] == 5

        # a subscription: acknowledged, the current state, each change; the server's end closes it
        created = await peer.result("tools/call", {"name": "confirm_delete", "arguments": {"filename": "c.txt"}})
        task_id = created["taskId"]
        async with peer.stream(
            "subscriptions/listen", modern({"notifications": {"taskIds": [task_id]}})
        ) as stream:
            meta = {SUBSCRIPTION: stream.request_id}
            _, ack = await stream.next_message()
            assert ack == {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {"notifications": {"taskIds": [task_id]}, "_meta": meta},
            }
            await stream.until(lambda m: m["params"].get("status") == "input_required")
            await peer.result(
                "tasks/update",
                {
                    "taskId": task_id,
                    "inputResponses": {"input-1": {"action": "accept", "content": {"confirm": True}}},
                },
            )
            seen = await stream.until(lambda m: m["params"].get("status") == "completed")
            final = seen[-1][1]["params"]
            assert final["result"]["content"][0]["text"] == "Deleted c.txt" and final["_meta"] == meta
            server.proc.terminate()  # shutting down ends the subscription with its answer
            rest = [event.message for event in await stream.rest()]
        assert rest[-1] == {
            "jsonrpc": "2.0",
            "id": stream.request_id,
            "result": {"resultType": "complete", "_meta": meta},
        }
        await asyncio.wait_for(server.proc.wait(), 10)
        assert server.proc.returncode == 0
