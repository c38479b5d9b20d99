"""The stateless 2026-07-28 wire and the ext dialect against a scripted in-process server.

For what real servers won't do on demand: a probe answered in every way, several multi round-trip
rounds, input requests that linger across polls or are withdrawn, a poll interval that changes,
a cancel that is only acknowledged. The transport is the one narrow interface; everything above
it (session, handshake, dialect, client, handle, poller) is the real code.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj

from .scripted import Refuse, scripted_client as _client

pytestmark = pytest.mark.anyio

META = (
    "io.modelcontextprotocol/protocolVersion",
    "io.modelcontextprotocol/clientCapabilities",
    "io.modelcontextprotocol/clientInfo",
)
TASKS_EXT = "io.modelcontextprotocol/tasks"
UI_EXT = "io.modelcontextprotocol/ui"
DISCOVER = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}, "extensions": {TASKS_EXT: {}}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}},
}
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "legacy", "version": "1"},
}


def _task(task_id: str, status: str, **extra: Any) -> dict[str, Any]:
    return {
        "taskId": task_id,
        "status": status,
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttlMs": 60000,
        "pollIntervalMs": 50,
        **extra,
    }


TOOLS = {"tools": [{"name": "job", "inputSchema": {"type": "object"}}]}


# -- the handshake -----------------------------------------------------------------------------


@pytest.mark.parametrize("answer", ["method-not-found", "not-a-discover-result", "silence"])
async def test_a_legacy_server_is_probed_then_initialized(answer):
    async def handler(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "server/discover":
            if answer == "method-not-found":
                raise Refuse(-32601, "Method not found")
            return {} if answer == "not-a-discover-result" else None
        return INITIALIZE if method == "initialize" else {}

    client, transport = await _client(handler, probe_timeout=0.3)
    assert not client.session.modern and client.protocol_version == "2025-11-25"
    assert transport.version == "2025-11-25" and not transport.stateless
    initialize = transport.requests("initialize")[0][0]
    assert "_meta" not in initialize["params"] and initialize["params"]["protocolVersion"] == "2025-11-25"
    assert client.describe()["dialect"] == "none"


async def test_a_dual_era_server_offering_only_legacy_versions_gets_initialize():
    async def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            raise Refuse(-32022, "Unsupported protocol version", {"supported": ["2025-06-18"], "requested": "x"})
        return {**INITIALIZE, "protocolVersion": "2025-06-18"} if method == "initialize" else {}

    client, transport = await _client(handler)
    assert transport.requests("initialize")[0][0]["params"]["protocolVersion"] == "2025-06-18"
    assert client.protocol_version == "2025-06-18"


async def test_refused_version_is_retried_with_one_the_server_offers():
    refused = []

    async def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if not refused:
            refused.append(method)
            raise Refuse(-32022, "Unsupported protocol version", {"supported": ["2026-07-28"], "requested": "x"})
        return DISCOVER if method == "server/discover" else TOOLS

    client, transport = await _client(handler, protocol_version="2026-07-28")
    await client.list_tools()
    discovers = transport.requests("server/discover")
    assert len(discovers) == 2 and discovers[0][0]["id"] != discovers[1][0]["id"]
    assert client.describe()["dialect"] == "ext" and client.session.modern


async def test_every_request_carries_meta_and_headers():
    async def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return DISCOVER
        if method == "tools/list":
            return {
                "tools": [
                    {
                        "name": "job",
                        "inputSchema": {
                            "type": "object",
                            "properties": {
                                "region": {"type": "string", "x-mcp-header": "Region"},
                                "n": {"type": "integer"},
                            },
                        },
                    }
                ]
            }
        if method == "tools/call":
            return {"resultType": "task", **_task("t1", "working")}
        return {"resultType": "complete", **_task("t1", "completed", result={"content": []})}

    client, transport = await _client(handler)
    await (await client.start_task("job", {"region": " eu", "n": 2}))
    for message, headers in transport.sent:
        meta = message["params"]["_meta"]
        assert all(key in meta for key in META), message
        assert meta[META[0]] == "2026-07-28" and headers and headers["Mcp-Method"] == message["method"]
        assert "tasks" not in meta[META[1]] and "elicitation" in meta[META[1]]
        extensions = dict(meta[META[1]]["extensions"])  # a copy: the meta is shared between requests
        assert extensions.pop(UI_EXT) == {"mimeTypes": ["text/html;profile=mcp-app"]}  # MCP Apps: on every request
        if message["method"] != "server/discover":  # declared once the dialect is chosen
            assert extensions == {TASKS_EXT: {}}
    call, headers = transport.requests("tools/call")[0]
    assert headers == {"Mcp-Method": "tools/call", "Mcp-Name": "job", "Mcp-Param-Region": "=?base64?IGV1?="}
    assert call["params"]["_meta"]["progressToken"].startswith("mtj-")
    assert transport.requests("tasks/get")[0][1]["Mcp-Name"] == "t1"


# -- multi round-trip requests -----------------------------------------------------------------


async def test_multi_round_trip_rounds_echo_the_exact_state_with_fresh_ids():
    rounds: list[dict[str, Any]] = []
    asked: list[str] = []

    async def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return {**DISCOVER, "capabilities": {"tools": {}}}
        if method == "tools/list":
            return TOOLS
        rounds.append(params)
        if len(rounds) == 1:
            return {
                "resultType": "input_required",
                "requestState": ' {"n": 1} ',
                "inputRequests": {
                    "a": {
                        "method": "elicitation/create",
                        "params": {"message": "first?", "requestedSchema": {"type": "object", "properties": {}}},
                    }
                },
            }
        if len(rounds) == 2:
            return {
                "resultType": "input_required",
                "inputRequests": {
                    "b": {"method": "elicitation/create", "params": {"message": "second?", "requestedSchema": {}}},
                    "r": {"method": "roots/list", "params": {}},
                },
            }
        return {"content": [{"type": "text", "text": "done"}]}  # no resultType: complete

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {}}

    client, transport = await _client(handler, elicitation_handler=answer)
    assert client.describe()["dialect"] == "none"
    result = await client.call_tool("job", {"x": 1})
    assert result.text == "done" and asked == ["first?", "second?"]
    assert "inputResponses" not in rounds[0] and "requestState" not in rounds[0]
    assert rounds[1]["requestState"] == ' {"n": 1} ' and rounds[1]["inputResponses"] == {
        "a": {"action": "accept", "content": {}}
    }
    assert "requestState" not in rounds[2] and set(rounds[2]["inputResponses"]) == {"b", "r"}
    assert all(r["arguments"] == {"x": 1} for r in rounds)
    ids = [m["id"] for m, _h in transport.requests("tools/call")]
    assert len(set(ids)) == 3


async def test_unknown_result_type_is_an_invalid_message():
    async def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return {**DISCOVER, "capabilities": {}}
        return TOOLS if method == "tools/list" else {"resultType": "task", **_task("t", "working")}

    client, _ = await _client(handler)
    with pytest.raises(mtj.InvalidMessage, match="'task' result to tools/call"):
        await client.call_tool("job")  # no extension declared: a task answer is not allowed


# -- ext: questions, pacing, cancel ------------------------------------------------------------


class ExtServer:
    """A scripted ext server: one task whose ``tasks/get`` answers come from ``script``."""

    def __init__(self, script: Callable[[int], dict[str, Any]]) -> None:
        self.script = script
        self.polls = 0
        self.poll_times: list[float] = []
        self.updates: list[dict[str, Any]] = []
        self.cancels = 0

    async def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "server/discover":
            return DISCOVER
        if method == "tools/list":
            return TOOLS
        if method == "tools/call":
            return {"resultType": "task", **_task("t1", "working", pollIntervalMs=30)}
        if method == "tasks/get":
            self.polls += 1
            self.poll_times.append(asyncio.get_running_loop().time())
            return {"resultType": "complete", **self.script(self.polls)}
        if method == "tasks/update":
            self.updates.append(params["inputResponses"])
            return {"resultType": "complete"}
        if method == "tasks/cancel":
            self.cancels += 1
            return {"resultType": "complete"}
        if method == "subscriptions/listen":
            raise Refuse(-32601, "Method not found")
        raise Refuse(-32601, "Method not found")


def _question(key: str, message: str) -> dict[str, Any]:
    return {
        key: {
            "method": "elicitation/create",
            "params": {
                "message": message,
                "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            },
        }
    }


async def test_input_requests_are_answered_once_across_polls():
    release = asyncio.Event()
    shown: list[str] = []

    def script(poll: int) -> dict[str, Any]:
        if len(server.updates) == 0:
            return _task("t1", "input_required", pollIntervalMs=20, inputRequests=_question("k1", "first?"))
        if len(server.updates) == 1:
            return _task(
                "t1",
                "input_required",
                pollIntervalMs=20,
                inputRequests={**_question("k1", "first?"), **_question("k2", "second?")},
            )
        return _task("t1", "completed", result={"content": [{"type": "text", "text": "ok"}]})

    async def person(params: dict[str, Any]) -> dict[str, Any]:
        shown.append(params["message"])
        await release.wait()
        return {"action": "accept", "content": {"ok": True}}

    server = ExtServer(script)
    client, _ = await _client(server, elicitation_handler=person)
    task = await client.start_task("job")
    while server.polls < 5:  # the question lingers across polls while the person thinks
        await asyncio.sleep(0.02)
    assert shown == ["first?"] and list(task.pending_input) == ["k1"]
    release.set()
    result = await asyncio.wait_for(task, 5)
    assert result.text == "ok"
    # k1 is still listed after its answer (eventual consistency): never answered or shown again
    assert shown == ["first?", "second?"] and server.updates == [
        {"k1": {"action": "accept", "content": {"ok": True}}},
        {"k2": {"action": "accept", "content": {"ok": True}}},
    ]
    assert [a[1:] for a in task.answered] == [("handler", "accept"), ("handler", "accept")]


async def test_a_question_the_server_stops_asking_is_withdrawn():
    def script(poll: int) -> dict[str, Any]:
        if poll <= 2:
            return _task("t1", "input_required", inputRequests=_question("k1", "still?"))
        if poll <= 4:
            return _task("t1", "working")
        return _task("t1", "completed", result={"content": []})

    cancelled = asyncio.Event()

    async def person(params: dict[str, Any]) -> dict[str, Any]:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {}

    server = ExtServer(script)
    client, _ = await _client(server, elicitation_handler=person)
    task = await client.start_task("job")
    await asyncio.wait_for(task, 5)
    assert cancelled.is_set() and task.pending_input == {} and server.updates == []


async def test_the_poll_interval_the_server_asks_for_is_honoured_as_it_changes():
    def script(poll: int) -> dict[str, Any]:
        if poll < 3:
            return _task("t1", "working", pollIntervalMs=30)
        if poll < 6:
            return _task("t1", "working", pollIntervalMs=150)
        return _task("t1", "completed", result={"content": []})

    server = ExtServer(script)
    client, _ = await _client(server)
    task = await client.start_task("job")
    await asyncio.wait_for(task, 5)
    gaps = [b - a for a, b in zip(server.poll_times, server.poll_times[1:], strict=False)]
    assert all(g >= 0.025 for g in gaps[:2]) and all(g >= 0.14 for g in gaps[3:]), gaps


async def test_cancel_is_only_acknowledged_and_polling_shows_the_outcome():
    def script(poll: int) -> dict[str, Any]:
        if server.cancels and poll > 3:
            return _task("t1", "cancelled", statusMessage="stopped on request")
        return _task("t1", "working")

    server = ExtServer(script)
    client, _ = await _client(server)
    task = await client.start_task("job")
    await task.cancel()
    assert server.cancels == 1 and task.status == "working"
    with pytest.raises(mtj.TaskCancelled, match="stopped on request"):
        await asyncio.wait_for(task, 5)


async def test_cancel_that_loses_the_race_shows_the_real_end():
    def script(poll: int) -> dict[str, Any]:
        return _task("t1", "completed", result={"content": [{"type": "text", "text": "too late"}]})

    server = ExtServer(script)
    client, _ = await _client(server)
    task = await client.start_task("job")
    await task.cancel()
    assert (await asyncio.wait_for(task, 5)).text == "too late" and task.status == "completed"


async def test_pushed_task_notifications_wake_the_poller():
    listening = asyncio.Event()

    async def handler(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "subscriptions/listen":
            assert params["notifications"] == {"taskIds": ["t1"]}
            listening.set()
            return None  # held open
        if method == "tools/call":
            return {"resultType": "task", **_task("t1", "working", pollIntervalMs=60000)}
        return await ExtServer(lambda _poll: _task("t1", "working", pollIntervalMs=60000))(method, params)

    client, transport = await _client(handler)
    task = await client.start_task("job")
    await asyncio.wait_for(listening.wait(), 5)
    transport.notify_client(
        "notifications/tasks",
        {
            **_task("t1", "completed", result={"content": [{"type": "text", "text": "pushed"}]}),
            "_meta": {
                "io.modelcontextprotocol/subscriptionId": transport.requests("subscriptions/listen")[0][0]["id"]
            },
        },
    )
    assert (await asyncio.wait_for(task, 5)).text == "pushed"
    await asyncio.sleep(0)  # the released listener is withdrawn (the scripted transport has no streams)
    assert client.dialect.listen_supported is not False


async def test_invalid_x_mcp_header_tools_are_left_out(caplog):
    tools = {
        "tools": [
            {
                "name": "good",
                "inputSchema": {"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "R"}}},
            },
            {
                "name": "bad",
                "inputSchema": {"type": "object", "properties": {"r": {"type": "number", "x-mcp-header": "R"}}},
            },
        ]
    }

    async def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        return DISCOVER if method == "server/discover" else tools

    client, _ = await _client(handler)
    with caplog.at_level(logging.WARNING):
        names = [tool.name for tool in await client.list_tools()]
    assert names == ["good"]
    assert "'bad' left out" in caplog.text and "number" in caplog.text
    with pytest.raises(mtj.ToolNotFound):
        await client.call_tool("bad", {"r": 1.5})


async def test_an_answer_whose_update_did_not_get_through_is_sent_again_while_the_server_still_asks(monkeypatch):
    # Issue 30, item 7: an answer whose tasks/update failed through every attempt was settled all the same
    # (never sent again), while each poll showed the server still asking: the task waited until its retention
    # ran out. The answer is kept and sent again (nobody asked again) while the server still asks.
    from mcp_tasks_jupyter.dialects import ext

    monkeypatch.setattr(ext, "UPDATE_ATTEMPTS", 2)
    shown: list[str] = []

    def script(poll: int) -> dict[str, Any]:
        if not server.updates:
            return _task("t1", "input_required", pollIntervalMs=20, inputRequests=_question("k1", "which?"))
        return _task("t1", "completed", result={"content": [{"type": "text", "text": "ok"}]})

    async def person(params: dict[str, Any]) -> dict[str, Any]:
        shown.append(params["message"])
        return {"action": "accept", "content": {"ok": True}}

    server = ExtServer(script)
    client, transport = await _client(server, elicitation_handler=person)
    refused = 0
    send = transport.send

    async def lossy_send(message: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        nonlocal refused
        if message.get("method") == "tasks/update" and refused < 3:  # more than one answer's attempts
            refused += 1
            raise mtj.HTTPStatusError("HTTP 503 for tasks/update", server="scripted", status_code=503)
        await send(message, headers)

    transport.send = lossy_send  # type: ignore[method-assign]
    task = await client.start_task("job")
    result = await asyncio.wait_for(task, 10)
    assert result.text == "ok" and shown == ["which?"] and refused == 3
    assert server.updates == [{"k1": {"action": "accept", "content": {"ok": True}}}]
