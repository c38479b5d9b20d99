"""Which dialect the demo server speaks with whom: chosen per client, or forced with --dialect."""

from __future__ import annotations

import uuid

import httpx
import pytest
from demo_harness import (
    HttpPeer,
    StatelessHttp,
    StdioPeer,
    eventually,
    http_server,
    modern,
    poll_task,
)

pytestmark = pytest.mark.anyio

TASK = "modelcontextprotocol.io/task"
RELATED_1686 = "modelcontextprotocol.io/related-task"


async def test_one_http_server_serves_each_client_in_its_own_dialect() -> None:
    async with http_server() as server, httpx.AsyncClient() as client:
        legacy = HttpPeer(client, server.url)
        init = await legacy.initialize()
        assert init["capabilities"]["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        task_2025 = await legacy.call_task("slow_compute", {"seconds": 0, "steps": 1})
        assert set(task_2025) >= {"taskId", "status", "ttl", "pollInterval"}

        drafted = HttpPeer(client, server.url)  # a plain initialize: 2025-11-25 until the sep1686 key shows up
        await drafted.initialize()
        task_1686 = str(uuid.uuid4())
        message = drafted.message(
            "tools/call",
            {
                "name": "slow_compute",
                "arguments": {"seconds": 0, "steps": 1},
                "_meta": {TASK: {"taskId": task_1686}},
            },
        )
        async with drafted.stream_post(message) as stream:  # served the sep1686 way
            answer = (await stream.until(lambda m: m.get("id") == message["id"]))[-1][1]
        assert answer["result"]["_meta"] == {RELATED_1686: {"taskId": task_1686}}
        assert set(await drafted.result("tasks/get", {"taskId": task_1686})) == {
            "taskId",
            "status",
            "keepAlive",
            "pollFrequency",
            "_meta",
        }

        stateless = StatelessHttp(client, server.url)
        created = await stateless.result("tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}})
        task_ext = created["taskId"]
        await poll_task(lambda p: stateless.result("tasks/get", p), task_ext)

        # each dialect sees its own tasks only
        assert [t["taskId"] for t in (await legacy.result("tasks/list"))["tasks"]] == [task_2025["taskId"]]
        assert [t["taskId"] for t in (await drafted.result("tasks/list"))["tasks"]] == [task_1686]
        for other in (task_1686, task_ext):
            assert (await legacy.request("tasks/get", {"taskId": other}))["error"]["code"] == -32602
        for other in (task_2025["taskId"], task_1686):
            assert (await stateless.error("tasks/get", modern({"taskId": other}), 200))["code"] == -32602


async def test_legacy_and_stateless_requests_share_one_pipe() -> None:
    async with StdioPeer.start() as peer:
        await peer.initialize({"elicitation": {}})
        task = await peer.call_task("slow_compute", {"seconds": 0, "steps": 1}, ttl=5000)
        assert task["ttl"] == 5000  # 2025-11-25
        found = await peer.result("server/discover", modern())  # 2026-07-28 on the same pipe
        assert found["supportedVersions"] == ["2026-07-28"]
        created = await peer.result("tools/call", modern({"name": "slow_compute", "arguments": {"seconds": 0}}))
        assert created["resultType"] == "task"

        # the first request with the sep1686 key turns the session into a sep1686 one
        task_id = str(uuid.uuid4())
        await peer.result(
            "tools/call",
            {
                "name": "slow_compute",
                "arguments": {"seconds": 0, "steps": 1},
                "_meta": {TASK: {"taskId": task_id}},
            },
        )
        assert any(n["method"] == "notifications/tasks/created" for n in peer.notifications)
        assert (await peer.result("tasks/get", {"taskId": task_id}))["status"] == "completed"
        assert (await peer.error("tasks/cancel", {"taskId": task_id}))["code"] == -32601


async def test_forced_ext() -> None:
    async with StdioPeer.start("--dialect", "ext") as peer:
        error = await peer.error(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
        )
        assert error == {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"},
        }
        assert (await peer.error("ping"))["code"] == -32602  # no _meta
        assert (await peer.result("ping", modern())) == {"resultType": "complete"}
    async with http_server("--dialect", "ext") as server, httpx.AsyncClient() as client:
        legacy = HttpPeer(client, server.url)
        response = await legacy.post(
            legacy.message(
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
            )
        )
        assert response.status_code == 400 and response.json()["error"]["code"] == -32022
        response = await legacy.post(legacy.message("ping"))
        assert (
            response.status_code == 400 and response.json()["error"]["code"] == -32020
        )  # no MCP-Protocol-Version
        assert await StatelessHttp(client, server.url).result("ping") == {"resultType": "complete"}


async def test_forced_2025_and_forced_sep1686() -> None:
    async with StdioPeer.start("--dialect", "2025-11-25") as peer:
        await peer.initialize()
        assert (await peer.error("server/discover", modern()))["code"] == -32601  # not served statelessly
        task_id = str(uuid.uuid4())
        plain = await peer.result(
            "tools/call",
            {
                "name": "slow_compute",
                "arguments": {"seconds": 0, "steps": 1},
                "_meta": {TASK: {"taskId": task_id}},
            },
        )
        assert "_meta" not in plain and not peer.notes("notifications/tasks/created")  # the key is ignored
    async with http_server("--dialect", "2025-11-25") as server, httpx.AsyncClient() as client:
        response = await StatelessHttp(client, server.url).post("ping", modern())
        assert response.status_code == 400 and response.json()["error"]["code"] == -32600  # initialize first
    async with StdioPeer.start("--dialect", "sep1686") as peer:
        init = await peer.initialize()
        assert init["capabilities"]["tasks"] == {"tools": {"call": True}}
        task_id = str(uuid.uuid4())
        await peer.result(
            "tools/call",
            {
                "name": "slow_compute",
                "arguments": {"seconds": 0, "steps": 1},
                "_meta": {TASK: {"taskId": task_id, "keepAlive": None}},
            },
        )
        await eventually(lambda: peer.notes("notifications/tasks/created"))
        assert (await peer.result("tasks/get", {"taskId": task_id}))["keepAlive"] == 600_000
        assert (await peer.error("server/discover", modern()))["code"] == -32601
