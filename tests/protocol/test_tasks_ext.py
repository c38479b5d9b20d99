"""The ext dialect's codec: the tasks extension (SEP-2663) wire shapes."""

from __future__ import annotations

import pytest

from mcp_tasks_jupyter.protocol import tasks_ext

TASK = {
    "taskId": "t1",
    "status": "working",
    "createdAt": "2026-01-01T00:00:00Z",
    "lastUpdatedAt": "2026-01-01T00:00:01Z",
    "ttlMs": 60000,
    "pollIntervalMs": 500,
}


def test_capability_negotiation():
    assert tasks_ext.server_supports({"extensions": {"io.modelcontextprotocol/tasks": {}}})
    assert not tasks_ext.server_supports({"extensions": {"io.modelcontextprotocol/ui": {}}})
    assert not tasks_ext.server_supports({"tasks": {"requests": {"tools": {"call": {}}}}})
    caps = {"elicitation": {}, "extensions": {"x.y/z": {"a": 1}}}
    assert tasks_ext.declare(caps) == {
        "elicitation": {},
        "extensions": {"x.y/z": {"a": 1}, "io.modelcontextprotocol/tasks": {}},
    }
    assert caps == {"elicitation": {}, "extensions": {"x.y/z": {"a": 1}}}


def test_create_result_is_flat():
    state = tasks_ext.parse_create_result({"resultType": "task", **TASK, "statusMessage": "queued"})
    assert (state.task_id, state.status, state.ttl_ms, state.poll_interval_ms, state.status_message) == (
        "t1",
        "working",
        60000,
        500,
        "queued",
    )
    with pytest.raises(ValueError, match="resultType"):
        tasks_ext.parse_create_result(TASK)
    with pytest.raises(ValueError, match="does not exist"):
        tasks_ext.parse_create_result({"resultType": "task", **TASK, "status": "submitted"})


def test_detailed_task_carries_its_payload_by_status():
    done = tasks_ext.parse_detailed({**TASK, "status": "completed", "result": {"content": [], "isError": True}})
    assert done.state.status == "completed" and done.result == {"content": [], "isError": True}
    failed = tasks_ext.parse_detailed({**TASK, "status": "failed", "error": {"code": -32603, "message": "x"}})
    assert failed.error == {"code": -32603, "message": "x"} and failed.result is None
    asking = tasks_ext.parse_detailed(
        {
            **TASK,
            "status": "input_required",
            "inputRequests": {"k": {"method": "elicitation/create", "params": {"message": "?"}}},
        }
    )
    assert list(asking.input_requests) == ["k"]
    # payload of another status is ignored; a working task asks nothing
    assert tasks_ext.parse_detailed({**TASK, "result": {"content": []}}).result is None
    assert tasks_ext.parse_detailed(TASK).input_requests == {}


@pytest.mark.parametrize(
    "bad",
    [
        {**TASK, "status": "completed", "result": []},
        {**TASK, "status": "failed", "error": "boom"},
        {**TASK, "status": "input_required", "inputRequests": {"k": 1}},
        {**TASK, "taskId": ""},
        {**TASK, "status": "sleeping"},
        {**TASK, "pollIntervalMs": -1},
        "task",
    ],
)
def test_invalid_tasks_are_refused(bad):
    with pytest.raises(ValueError):
        tasks_ext.parse_detailed(bad)


def test_earlier_draft_units_are_understood():
    old = {k: v for k, v in TASK.items() if k not in ("ttlMs", "pollIntervalMs")}
    state = tasks_ext.parse_detailed({**old, "ttlSeconds": 60, "pollIntervalMilliseconds": 250}).state
    assert state.ttl_ms == 60000 and state.poll_interval_ms == 250


def test_request_params():
    assert tasks_ext.get_params("t") == {"taskId": "t"}
    assert tasks_ext.update_params("t", {"k": {"action": "decline"}}) == {
        "taskId": "t",
        "inputResponses": {"k": {"action": "decline"}},
    }
    assert tasks_ext.listen_params(["a"]) == {"notifications": {"taskIds": ["a"]}}
