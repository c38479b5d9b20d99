"""The sep1686 dialect's codec: the SEP-1686 draft's client-named tasks."""

from __future__ import annotations

import pytest

from mcp_tasks_jupyter.protocol import tasks_sep1686 as wire


def test_task_ids_are_unguessable():
    ids = {wire.new_task_id() for _ in range(1000)}
    assert len(ids) == 1000 and all(len(i) >= 40 for i in ids)


@pytest.mark.parametrize(
    ("caps", "signals"),
    [
        ({"tasks": {"tools": {"call": True}}}, True),
        ({"tasks": {"requests": {"tools": {"call": True}}}}, True),
        ({"experimental": {"modelcontextprotocol.io/tasks": {}}}, True),
        ({"tasks": {"requests": {"tools": {"call": {}}}}}, False),  # 2025-11-25's object form
        ({"tasks": {"list": {}}}, False),
        ({}, False),
        ({"tasks": True}, False),
    ],
)
def test_server_signals(caps, signals):
    assert wire.server_signals(caps) is signals


def test_call_params_carry_the_drafts_marker():
    params = wire.call_params("job", {"a": 1}, "id-1", 60000, "p1")
    assert params == {
        "name": "job",
        "arguments": {"a": 1},
        "_meta": {"modelcontextprotocol.io/task": {"taskId": "id-1", "keepAlive": 60000}, "progressToken": "p1"},
    }
    assert wire.call_params("job", {}, "id-2", None, None)["_meta"] == {
        "modelcontextprotocol.io/task": {"taskId": "id-2"}
    }
    assert wire.task_params("id-1") == {
        "taskId": "id-1",
        "_meta": {"modelcontextprotocol.io/related-task": {"taskId": "id-1"}},
    }


def test_related_task():
    assert wire.related_task_id({"_meta": {"modelcontextprotocol.io/related-task": {"taskId": "x"}}}) == "x"
    assert wire.related_task_id({"_meta": {"io.modelcontextprotocol/related-task": {"taskId": "x"}}}) is None
    assert wire.related_task_id({}) is None


@pytest.mark.parametrize(
    "status", ["submitted", "working", "input_required", "completed", "failed", "cancelled", "unknown"]
)
def test_task_states(status):
    state, error = wire.parse_task_state(
        {"taskId": "t", "status": status, "keepAlive": None, "pollFrequency": 250}
    )
    assert (state.status, state.ttl_ms, state.poll_interval_ms, error) == (status, None, 250, None)
    assert state.terminal is (status in ("completed", "failed", "cancelled", "unknown"))


def test_failed_task_error_becomes_the_status_message():
    state, error = wire.parse_task_state(
        {"taskId": "t", "status": "failed", "keepAlive": 30000, "error": "rate limit"}
    )
    assert error == "rate limit" and state.status_message == "rate limit" and state.ttl_ms == 30000


def test_list_result():
    page, cursor = wire.parse_list_result(
        {
            "tasks": [
                {"taskId": "a", "status": "working", "keepAlive": 1},
                {"taskId": "b", "status": "completed"},
            ],
            "nextCursor": "c2",
        }
    )
    assert [s.task_id for s in page] == ["a", "b"] and cursor == "c2"
    with pytest.raises(ValueError):
        wire.parse_list_result({"tasks": {}})
