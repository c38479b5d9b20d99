"""The sep1686 dialect against a scripted server: the creation race, cancel by withdrawing the
original request, the draft's related-task meta on questions, list/delete, and detection."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj

from .scripted import Refuse, Scripted, scripted_client

pytestmark = pytest.mark.anyio

RELATED = "modelcontextprotocol.io/related-task"
DRAFT_CAPS = {"tools": {}, "tasks": {"tools": {"call": True}}}
TOOLS = {"tools": [{"name": "job", "inputSchema": {"type": "object"}}]}


def _init(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "serverInfo": {"name": "draft", "version": "1"},
    }


class DraftServer:
    """A SEP-1686 server: tasks named by the client, announced, polled; the call answers at the end."""

    def __init__(self, *, announce: bool = True, steps: int = 3) -> None:
        self.transport: Scripted | None = None
        self.announce, self.steps = announce, steps
        self.tasks: dict[str, dict[str, Any]] = {}
        self.finished: dict[str, asyncio.Event] = {}
        self.call_ids: dict[str, Any] = {}
        self.results_fetched = 0

    async def __call__(self, method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "server/discover":
            raise Refuse(-32601, "Method not found")
        if method == "initialize":
            return _init(DRAFT_CAPS)
        if method == "tools/list":
            return TOOLS
        if method == "tools/call":
            task_id = params["_meta"]["modelcontextprotocol.io/task"]["taskId"]
            self.tasks[task_id] = {
                "taskId": task_id,
                "status": "submitted",
                "keepAlive": 30000,
                "pollFrequency": 50,
                "polls": 0,
            }
            self.finished[task_id] = asyncio.Event()
            if self.announce:
                assert self.transport is not None
                self.transport.notify_client(
                    "notifications/tasks/created", {"_meta": {RELATED: {"taskId": task_id}}}
                )
            await self.finished[task_id].wait()
            task = self.tasks[task_id]
            if task["status"] == "cancelled":
                return None  # a cancelled request is never answered
            return {
                "content": [{"type": "text", "text": "from the call"}],
                "_meta": {RELATED: {"taskId": task_id}},
            }
        if method == "tasks/get":
            task = self.tasks.get(params["taskId"])
            if task is None:
                raise Refuse(-32602, "Task not found")
            assert params["_meta"][RELATED] == {"taskId": params["taskId"]}
            task["polls"] += 1
            if task["status"] not in ("cancelled", "completed") and task["polls"] >= self.steps:
                task["status"] = "completed"
            elif task["status"] == "submitted":
                task["status"] = "working"
            return {k: v for k, v in task.items() if k != "polls"}
        if method == "tasks/result":
            self.results_fetched += 1
            return {"content": [{"type": "text", "text": "from tasks/result"}]}
        if method == "tasks/list":
            return {"tasks": [{k: v for k, v in t.items() if k != "polls"} for t in self.tasks.values()]}
        if method == "tasks/delete":
            self.tasks.pop(params["taskId"], None)
            return {}
        return {}

    def cancelled(self, request_id: Any) -> None:
        for task_id, event in self.finished.items():
            if self.call_ids.get(task_id) == request_id:
                self.tasks[task_id]["status"] = "cancelled"
                event.set()


async def _connect(server: DraftServer, **options: Any) -> tuple[mtj.Client, Scripted]:
    client, transport = await scripted_client(server, **options)
    server.transport = transport
    return client, transport


async def test_auto_detects_the_draft_and_names_the_task_itself():
    server = DraftServer(steps=2)
    client, transport = await _connect(server)
    assert client.describe()["dialect"] == "sep1686" and "SEP-1686" in client.describe()["dialect_reason"]
    task = await client.start_task("job", ttl=45000)
    call = transport.requests("tools/call")[0][0]
    marker = call["params"]["_meta"]["modelcontextprotocol.io/task"]
    assert marker == {"taskId": task.task_id, "keepAlive": 45000} and len(task.task_id) >= 40
    result = await asyncio.wait_for(task, 5)
    assert result.text == "from tasks/result" and task.status == "completed" and server.results_fetched == 1
    assert task.ttl_ms == 30000 and task.poll_interval_ms == 100  # keepAlive / pollFrequency (50, at least 100)


async def test_the_calls_own_answer_wins_when_it_comes_first():
    server = DraftServer(steps=10**6)
    client, _ = await _connect(server)
    task = await client.start_task("job")
    await asyncio.sleep(0.2)
    server.finished[task.task_id].set()  # the original request is answered: that is the result
    result = await asyncio.wait_for(task, 5)
    assert result.text == "from the call" and server.results_fetched == 0 and task.status == "completed"


async def test_a_server_without_tasks_just_answers():
    async def plain(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "initialize":
            return _init({"tools": {}})
        if method == "tools/list":
            return TOOLS
        if method == "tools/call":
            await asyncio.sleep(0.1)
            return {"content": [{"type": "text", "text": "plain"}]}
        raise Refuse(-32601, "Method not found")

    client, _ = await scripted_client(plain, dialect="sep1686")
    handle = await client.start_task("job")
    assert (await asyncio.wait_for(handle, 5)).text == "plain"
    assert handle.task_id is None and not handle.runs_as_task


async def test_without_the_created_notification_a_speculative_poll_finds_the_task():
    server = DraftServer(announce=False, steps=2)
    client, transport = await _connect(server)
    task = await asyncio.wait_for(client.start_task("job"), 5)
    assert task.task_id in server.tasks and transport.requests("tasks/get")
    assert (await asyncio.wait_for(task, 5)).text == "from tasks/result"


async def test_cancel_withdraws_the_original_request_then_polls():
    server = DraftServer(steps=10**6)
    client, transport = await _connect(server)
    task = await client.start_task("job")
    server.call_ids[task.task_id] = transport.requests("tools/call")[0][0]["id"]
    await task.cancel()
    await asyncio.sleep(0.05)
    cancels = transport.requests("notifications/cancelled")
    assert [m["params"]["requestId"] for m, _h in cancels] == [server.call_ids[task.task_id]]
    server.cancelled(cancels[0][0]["params"]["requestId"])
    with pytest.raises(mtj.TaskCancelled):
        await asyncio.wait_for(task, 5)
    assert task.status == "cancelled"


async def test_questions_tagged_with_the_drafts_meta_reach_the_task():
    server = DraftServer(steps=10**6)
    seen: list[dict[str, Any]] = []

    async def handler(params: dict[str, Any]) -> dict[str, Any]:
        seen.append(params)
        return {"action": "accept", "content": {"ok": True}}

    client, transport = await _connect(server, elicitation_handler=handler)
    task = await client.start_task("job")
    transport.ask_client(
        900,
        "elicitation/create",
        {
            "message": "ok?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            "_meta": {RELATED: {"taskId": task.task_id}},
        },
    )
    await asyncio.sleep(0.1)
    assert seen and seen[0]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task.task_id}
    assert task.answered == [("ok?", "handler", "accept")]
    reply = next(m for m, _h in transport.sent if m.get("id") == 900 and "result" in m)
    assert reply["result"] == {"action": "accept", "content": {"ok": True}}
    server.finished[task.task_id].set()
    await asyncio.wait_for(task, 5)


async def test_list_delete_and_unknown():
    server = DraftServer(steps=10**6)
    client, _ = await _connect(server)
    task = await client.start_task("job")
    assert {s.task_id for s in await client.list_tasks()} == {task.task_id}
    server.tasks[task.task_id]["status"] = "unknown"
    with pytest.raises(mtj.TaskFailed, match="status unknown"):
        await asyncio.wait_for(task, 5)
    await client.delete_task(task.task_id)
    assert server.tasks == {}


@pytest.mark.parametrize(
    ("caps", "dialect"),
    [
        (DRAFT_CAPS, "sep1686"),
        ({"experimental": {"modelcontextprotocol.io/tasks": {}}}, "sep1686"),
        ({"tasks": {"requests": {"tools": {"call": {}}}}}, "2025-11-25"),
        (
            {
                "tasks": {"requests": {"tools": {"call": {}}}},
                "experimental": {"modelcontextprotocol.io/tasks": {}},
            },
            "2025-11-25",
        ),
        ({"tools": {}}, "none"),
    ],
)
async def test_detection_prefers_the_newest(caps, dialect):
    async def handler(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            raise Refuse(-32601, "Method not found")
        return _init(caps) if method == "initialize" else {}

    client, _ = await scripted_client(handler)
    assert client.describe()["dialect"] == dialect
