"""The ext dialect (tasks extension on the stateless 2026-07-28 protocol) over the demo's stdio pipes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from demo_harness import (
    TASKS_EXT,
    RpcFailure,
    StdioPeer,
    eventually,
    modern,
    modern_meta,
    poll_task,
)

pytestmark = pytest.mark.anyio

RELATED_2025 = "io.modelcontextprotocol/related-task"
TASK_FIELDS = {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}


def call(name: str, arguments: dict, **params_and_meta: object) -> dict:
    """``tools/call`` params with a 2026-07-28 ``_meta``: keywords that are ``tools/call`` params
    (``requestState``, ``inputResponses``, ``task``) go to the params, the rest to the ``_meta``."""
    params = {"name": name, "arguments": arguments}
    for key in ("requestState", "inputResponses", "task"):
        if key in params_and_meta:
            params[key] = params_and_meta.pop(key)
    return modern(params, **params_and_meta)


async def test_discover_tools_and_task_life_cycle() -> None:
    async with StdioPeer.start("--conformance", "--poll-interval", "100") as peer:
        found = await peer.result("server/discover", modern())
        assert found["resultType"] == "complete"
        assert found["supportedVersions"] == ["2026-07-28"]
        assert found["capabilities"]["extensions"] == {TASKS_EXT: {}}
        assert "tasks" not in found["capabilities"]
        assert found["cacheScope"] == "public" and isinstance(found["ttlMs"], int)
        assert found["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcp-tasks-jupyter-demo"

        listed = await peer.result("tools/list", modern())
        names = [tool["name"] for tool in listed["tools"]]
        assert names[:5] == ["slow_compute", "research", "failing_job", "make_chart", "echo"]
        assert {"greet", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task"} <= set(
            names
        )
        assert listed["resultType"] == "complete" and all("execution" not in tool for tool in listed["tools"])

        # opted in: a task, answered at once with the flat CreateTaskResult
        created = await peer.result("tools/call", call("slow_compute", {"seconds": 0.3, "steps": 3}))
        assert created["resultType"] == "task" and set(created) >= TASK_FIELDS
        assert not {"task", "ttl", "pollInterval", "result", "error", "inputRequests", "requestState"} & set(
            created
        )
        assert created["ttlMs"] == 600_000 and created["pollIntervalMs"] == 100
        task_id = created["taskId"]
        assert len(task_id) >= 20
        seen = await peer.result("tasks/get", modern({"taskId": task_id}))  # findable at once
        assert seen["resultType"] == "complete" and seen["taskId"] == task_id
        done = await poll_task(lambda p: peer.result("tasks/get", p), task_id)
        assert done["status"] == "completed" and done["resultType"] == "complete"
        assert done["result"]["structuredContent"]["value"] == 14 and done["result"]["resultType"] == "complete"
        assert RELATED_2025 not in done["result"].get("_meta", {})
        assert "requestState" not in done and "inputRequests" not in done

        # a tool error is completed with isError; a JSON-RPC error is failed, with the error inline
        tool_error = await peer.result("tools/call", call("failing_job", {"seconds": 0}))
        done = await poll_task(lambda p: peer.result("tasks/get", p), tool_error["taskId"])
        assert done["status"] == "completed" and done["result"]["isError"] is True
        protocol_error = await peer.result("tools/call", call("protocol_error_job", {"seconds": 0}))
        done = await poll_task(lambda p: peer.result("tasks/get", p), protocol_error["taskId"])
        assert done["status"] == "failed" and "result" not in done
        assert done["error"] == {
            "code": -32603,
            "message": "protocol_error_job failed on purpose",
            "data": {"reason": "demo"},
        }

        # cancel: acknowledged with exactly {resultType}, cancelled at once; again on a terminal task
        long = await peer.result("tools/call", call("slow_compute", {"seconds": 30}))
        assert await peer.result("tasks/cancel", modern({"taskId": long["taskId"]})) == {"resultType": "complete"}
        assert (await peer.result("tasks/get", modern({"taskId": long["taskId"]})))["status"] == "cancelled"
        assert await peer.result("tasks/cancel", modern({"taskId": long["taskId"]})) == {"resultType": "complete"}

        # not opted in: the same tool runs inline; a legacy params.task changes nothing
        inline = await peer.result(
            "tools/call", call("slow_compute", {"seconds": 0, "steps": 2}, task={"ttl": 60000}, tasks=False)
        )
        assert inline["resultType"] == "complete" and inline["structuredContent"]["value"] == 5
        greet = await peer.result("tools/call", call("greet", {"name": "Ann"}, task={}))
        assert greet == {
            "content": [{"type": "text", "text": "Hello, Ann!"}],
            "isError": False,
            "resultType": "complete",
        }
        assert peer.notifications == []  # ext over stdio sends nothing unasked


async def test_input_requests_answered_with_tasks_update() -> None:
    async with StdioPeer.start("--conformance") as peer:

        def get(p: dict[str, Any]) -> Any:
            return peer.result("tasks/get", p)

        created = await peer.result("tools/call", call("confirm_delete", {"filename": "a.txt"}))
        task = await poll_task(get, created["taskId"], until=("input_required",))
        schema = {
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "description": "Go ahead?"}},
            "required": ["confirm"],
        }
        assert task["inputRequests"] == {
            "input-1": {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "Delete a.txt?", "requestedSchema": schema},
            }
        }
        error = await peer.error(
            "tasks/update",
            modern({"taskId": created["taskId"], "inputResponses": {"input-1": {"action": "maybe"}}}),
        )
        assert error["code"] == -32602
        ack = await peer.result(
            "tasks/update",
            modern(
                {
                    "taskId": created["taskId"],
                    "inputResponses": {
                        "input-1": {"action": "accept", "content": {"confirm": True}},
                        "unknown": {"ignored": True},
                    },
                }
            ),
        )
        assert ack == {"resultType": "complete"}
        done = await poll_task(get, created["taskId"])
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "Deleted a.txt"

        # two questions at once; answering one leaves the other; keys are never reused
        created = await peer.result("tools/call", call("multi_input", {}))
        task = await poll_task(get, created["taskId"], until=("input_required",))
        for _ in range(50):
            task = await get(modern({"taskId": created["taskId"]}))
            if len(task.get("inputRequests", {})) == 2:
                break
            await asyncio.sleep(0.02)
        assert sorted(task["inputRequests"]) == ["input-1", "input-2"]
        await peer.result(
            "tasks/update",
            modern(
                {
                    "taskId": created["taskId"],
                    "inputResponses": {"input-1": {"action": "accept", "content": {"name": "Ann"}}},
                }
            ),
        )
        task = await get(modern({"taskId": created["taskId"]}))
        assert task["status"] == "input_required" and list(task["inputRequests"]) == ["input-2"]
        await peer.result(
            "tasks/update",
            modern(
                {
                    "taskId": created["taskId"],
                    "inputResponses": {
                        "input-1": {"action": "accept", "content": {"name": "Bob"}},  # answered already: ignored
                        "input-2": {"action": "accept", "content": {"confirm": True}},
                    },
                }
            ),
        )
        done = await poll_task(get, created["taskId"])
        assert done["result"]["content"][0]["text"] == "Hello, Ann!"

        # the demo's own research tool asks the same way
        created = await peer.result(
            "tools/call", call("research", {"topic": "jaguar", "ambiguous": True, "stage_seconds": 0})
        )
        task = await poll_task(get, created["taskId"], until=("input_required",))
        schema = task["inputRequests"]["input-1"]["params"]["requestedSchema"]
        reading = schema["properties"]["interpretation"]["oneOf"][1]["const"]
        await peer.result(
            "tasks/update",
            modern(
                {
                    "taskId": created["taskId"],
                    "inputResponses": {
                        "input-1": {"action": "accept", "content": {"interpretation": reading, "depth": 3}}
                    },
                }
            ),
        )
        done = await poll_task(get, created["taskId"])
        assert done["result"]["structuredContent"]["interpretation"] == reading


async def test_multi_round_trip_requests() -> None:
    async with StdioPeer.start("--conformance") as peer:
        asked = {"name": "test_tool_with_task", "arguments": {"seconds": 0}}
        first = await peer.result("tools/call", modern(asked))
        assert first["resultType"] == "input_required" and "taskId" not in first
        assert list(first["inputRequests"]) == ["input-1"]
        assert (
            first["inputRequests"]["input-1"]["params"]["requestedSchema"]["properties"]["name"]["type"]
            == "string"
        )
        state = first["requestState"]

        # no answer: asked again; a changed state or another call's state: refused
        again = await peer.result("tools/call", modern({**asked, "requestState": state}))
        assert again["resultType"] == "input_required" and list(again["inputRequests"]) == ["input-1"]
        for bad in (state[:-2] + "xx", "garbage"):
            error = await peer.error("tools/call", modern({**asked, "requestState": bad}))
            assert error["code"] == -32602 and "requestState" in error["message"]
        other = {"name": "test_tool_with_task", "arguments": {"seconds": 1}}
        assert (await peer.error("tools/call", modern({**other, "requestState": state})))["code"] == -32602
        bad_responses = await peer.error(
            "tools/call", modern({**asked, "requestState": state, "inputResponses": 3})
        )
        assert bad_responses["code"] == -32602

        # the answer: the retry becomes a task (without requestState) that uses it
        answers = {"input-1": {"action": "accept", "content": {"name": "Ann"}}}
        created = await peer.result(
            "tools/call", modern({**asked, "requestState": state, "inputResponses": answers})
        )
        assert created["resultType"] == "task" and "requestState" not in created and "inputRequests" not in created
        done = await poll_task(lambda p: peer.result("tasks/get", p), created["taskId"])
        assert done["result"]["content"][0]["text"] == "Hello, Ann! (from a task)"

        # without the opt-in a task-capable tool asks inline and answers inline
        asked = {"name": "confirm_delete", "arguments": {"filename": "b.txt"}}
        first = await peer.result("tools/call", modern(asked, tasks=False))
        assert first["resultType"] == "input_required"
        retry = {
            **asked,
            "requestState": first["requestState"],
            "inputResponses": {"input-1": {"action": "decline"}},
        }
        final = await peer.result("tools/call", modern(retry, tasks=False))
        assert final["resultType"] == "complete" and final["content"][0]["text"] == "Kept b.txt"

        # two questions at once go out together
        multi = await peer.result("tools/call", modern({"name": "multi_input", "arguments": {}}, tasks=False))
        assert sorted(multi["inputRequests"]) == ["input-1", "input-2"]

        # a client that cannot answer questions is told which capability is missing
        error = await peer.error("tools/call", modern(asked, tasks=False, elicitation=False))
        assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": {"elicitation": {}}}


async def test_errors() -> None:
    async with StdioPeer.start("--conformance") as peer:
        for method in ("tasks/result", "tasks/list", "no/such"):
            assert (await peer.error(method, modern({"taskId": "x"})))["code"] == -32601
        for method, extra in (("tasks/get", {}), ("tasks/cancel", {}), ("tasks/update", {"inputResponses": {}})):
            error = await peer.error(method, modern({"taskId": "never-made", **extra}))
            assert error["code"] == -32602 and "not found" in error["message"]
            error = await peer.error(method, modern({"taskId": "never-made", **extra}, tasks=False))
            assert error == {
                "code": -32021,
                "message": error["message"],
                "data": {"requiredCapabilities": {"extensions": {TASKS_EXT: {}}}},
            }
        # a task-only tool without the opt-in
        for name in ("research", "failing_job", "test_tool_with_task"):
            error = await peer.error(
                "tools/call", modern({"name": name, "arguments": {"topic": "x"}}, tasks=False)
            )
            assert error["code"] == -32021 and error["data"]["requiredCapabilities"]["extensions"] == {
                TASKS_EXT: {}
            }
        error = await peer.error("ping", modern(version="1999-01-01"))
        assert error == {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": ["2026-07-28"], "requested": "1999-01-01"},
        }
        meta = modern_meta()
        del meta["io.modelcontextprotocol/clientCapabilities"]
        assert (await peer.error("ping", {"_meta": meta}))["code"] == -32602
        assert (await peer.error("tools/call", modern({"name": "nope"})))["code"] == -32602
        assert (await peer.error("tools/call", modern({"name": "greet", "arguments": {}})))["code"] == -32602
        with pytest.raises(RpcFailure):
            await peer.result("tasks/get", modern({"taskId": 5}))


async def test_stdio_progress_cancellation_and_subscriptions() -> None:
    async with StdioPeer.start("--conformance") as peer:
        # an inline call that asked for progress and logs gets them before its answer
        params = modern(
            {"name": "slow_compute", "arguments": {"seconds": 0.1, "steps": 2}},
            tasks=False,
            progressToken="p1",
            **{"io.modelcontextprotocol/logLevel": "info"},
        )
        result = await peer.result("tools/call", params)
        assert result["resultType"] == "complete"
        progress = peer.notes("notifications/progress")
        assert [note["progress"] for note in progress] == [0, 1, 2] and progress[0]["progressToken"] == "p1"
        assert any("step 2/2" in note["data"] for note in peer.notes("notifications/message"))

        # notifications/cancelled ends an inline call: no answer comes
        msg_id, answer = await peer.start_request("tools/call", call("slow_compute", {"seconds": 30}, tasks=False))
        await asyncio.sleep(0.2)
        await peer.notify("notifications/cancelled", {"requestId": msg_id})
        assert (await peer.result("ping", modern())) == {"resultType": "complete"}
        await asyncio.sleep(0.2)
        assert not answer.done() and peer.orphan_responses == []

        # subscriptions/listen: acknowledged first, then the task as tasks/get shows it, at each change
        created = await peer.result("tools/call", call("slow_compute", {"seconds": 0.3, "steps": 2}))
        task_id = created["taskId"]
        listen_id, listen = await peer.start_request(
            "subscriptions/listen",
            modern({"notifications": {"taskIds": [task_id, "unknown-task"], "toolsListChanged": True}}),
        )

        def final_note() -> dict | None:
            return next(
                (
                    n["params"]
                    for n in peer.notifications
                    if n["method"] == "notifications/tasks" and n["params"]["status"] == "completed"
                ),
                None,
            )

        final = await eventually(final_note)
        ours = [
            n
            for n in peer.notifications
            if n.get("params", {}).get("_meta", {}).get("io.modelcontextprotocol/subscriptionId") == listen_id
        ]
        assert ours[0] == {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "notifications": {"taskIds": [task_id]},
                "_meta": {"io.modelcontextprotocol/subscriptionId": listen_id},
            },
        }
        assert all(n["method"] == "notifications/tasks" for n in ours[1:]) and len(ours) >= 3
        assert final["result"]["structuredContent"]["value"] == 5 and "resultType" not in final
        await peer.notify("notifications/cancelled", {"requestId": listen_id})
        await asyncio.sleep(0.2)
        assert not listen.done()
