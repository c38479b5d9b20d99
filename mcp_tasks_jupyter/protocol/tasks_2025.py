"""Wire codec for the 2025-11-25 task dialect (experimental core tasks). No I/O.

See ../../../shared/PROTOCOL.md: the server names the task; ``tools/call`` with ``params.task`` answers a
``CreateTaskResult``; ``tasks/result`` blocks until the task is terminal.
"""

from __future__ import annotations

from typing import Any

from .task_state import TaskState, parse_task, tagged_task_id

RELATED_TASK = "io.modelcontextprotocol/related-task"
STATUS_NOTIFICATION = "notifications/tasks/status"


def server_supports_task_calls(capabilities: dict[str, Any]) -> bool:
    """True when the server declared ``tasks.requests.tools.call``."""
    tasks = capabilities.get("tasks")
    if not isinstance(tasks, dict):
        return False
    requests = tasks.get("requests")
    return isinstance(requests, dict) and isinstance(requests.get("tools"), dict) and "call" in requests["tools"]


def server_supports(capabilities: dict[str, Any], operation: str) -> bool:
    """``operation`` is ``list`` or ``cancel``."""
    tasks = capabilities.get("tasks")
    return isinstance(tasks, dict) and operation in tasks


def call_params(
    tool: str, arguments: dict[str, Any], ttl_ms: int | None, progress_token: str | None
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": arguments, "task": {}}
    if ttl_ms is not None:
        params["task"]["ttl"] = ttl_ms
    if progress_token is not None:
        params["_meta"] = {"progressToken": progress_token}
    return params


def parse_create_result(result: dict[str, Any]) -> TaskState:
    """``CreateTaskResult`` → TaskState (raises ValueError when it is not one)."""
    if "task" not in result:
        raise ValueError("invalid CreateTaskResult: no 'task' in the answer to a task-augmented tools/call")
    return parse_task(result["task"], "CreateTaskResult.task")


def parse_list_result(result: dict[str, Any]) -> tuple[list[TaskState], str | None]:
    tasks = result.get("tasks")
    if not isinstance(tasks, list):
        raise ValueError("invalid tasks/list result: 'tasks' must be an array")
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise ValueError("invalid tasks/list result: 'nextCursor' must be a string")
    return [parse_task(t, f"tasks[{i}]") for i, t in enumerate(tasks)], cursor


def related_task_id(params: dict[str, Any]) -> str | None:
    """The task id a server message is tagged with, if any."""
    return tagged_task_id(params, RELATED_TASK)
