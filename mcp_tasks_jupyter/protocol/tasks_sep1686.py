"""Wire codec for the ``sep1686`` dialect: the SEP-1686 tasks draft. No I/O.

The *client* names the task: a ``tools/call`` carries ``params._meta["modelcontextprotocol.io/task"]
= {taskId, keepAlive}`` with an unguessable id. The call's own answer is the ordinary result,
eventually; meanwhile the server announces the task with ``notifications/tasks/created`` (the id in
``_meta["modelcontextprotocol.io/related-task"]``) and the client polls ``tasks/get`` →
``{taskId, status, keepAlive, pollFrequency?, error?}``, fetches ``tasks/result`` once completed,
and may ``tasks/list`` and ``tasks/delete``. Cancelling is ``notifications/cancelled`` for the
original request. Statuses add ``submitted`` and (terminal) ``unknown``.

How a server says it speaks this draft (the draft itself is torn between "declare a ``tasks``
capability ... with boolean properties" and "no capabilities declaration"): its ``initialize``
capabilities carry ``tasks`` in the draft's boolean form (e.g. ``{"tools": {"call": true}}``, also
under ``requests``), or ``experimental["modelcontextprotocol.io/tasks"]``. The object form
``tasks.requests.tools.call = {}`` is 2025-11-25's and wins over this.
"""

from __future__ import annotations

import secrets
from typing import Any

from . import bounds
from .task_state import TaskState, parse_task, tagged_task_id

TASK_META = "modelcontextprotocol.io/task"
RELATED_TASK = "modelcontextprotocol.io/related-task"
CREATED_NOTIFICATION = "notifications/tasks/created"
EXPERIMENTAL_MARKER = "modelcontextprotocol.io/tasks"


def new_task_id() -> str:
    """An unguessable task id (256 bits from ``secrets``)."""
    return secrets.token_urlsafe(32)


def server_signals(capabilities: dict[str, Any]) -> bool:
    """Whether an ``initialize`` answer declares the draft's tasks (see the module docstring)."""
    experimental = capabilities.get("experimental")
    if isinstance(experimental, dict) and isinstance(experimental.get(EXPERIMENTAL_MARKER), dict):
        return True
    tasks = capabilities.get("tasks")
    if not isinstance(tasks, dict):
        return False
    requests = tasks.get("requests")
    scope = requests if isinstance(requests, dict) else tasks
    tools = scope.get("tools")
    return isinstance(tools, dict) and tools.get("call") is True


def call_params(
    tool: str, arguments: dict[str, Any], task_id: str, keep_alive_ms: int | None, progress_token: str | None
) -> dict[str, Any]:
    task: dict[str, Any] = {"taskId": task_id}
    if keep_alive_ms is not None:
        task["keepAlive"] = keep_alive_ms
    meta: dict[str, Any] = {TASK_META: task}
    if progress_token is not None:
        meta["progressToken"] = progress_token
    return {"name": tool, "arguments": arguments, "_meta": meta}


def task_params(task_id: str) -> dict[str, Any]:
    """Params of tasks/get, tasks/result and tasks/delete, tagged with the related task as the draft shows."""
    return {"taskId": task_id, "_meta": {RELATED_TASK: {"taskId": task_id}}}


def related_task_id(params: dict[str, Any]) -> str | None:
    """The task id a server message is tagged with (``modelcontextprotocol.io/related-task``)."""
    return tagged_task_id(params, RELATED_TASK)


def parse_task_state(obj: Any, what: str = "tasks/get result") -> tuple[TaskState, str | None]:
    """``(TaskState, error text)`` of a draft task (``keepAlive``/``pollFrequency`` in ms; raises ValueError)."""
    state = parse_task(obj, what, ttl_key="keepAlive", poll_key="pollFrequency")
    error = obj.get("error")
    if error is not None and not isinstance(error, str):
        error = str(error.get("message", error)) if isinstance(error, dict) else str(error)
    if error is not None:
        error = bounds.clip(error, bounds.MAX_STATUS_MESSAGE_CHARS)
    if state.status_message is None and error:
        state.status_message = error
    return state, error


def parse_list_result(result: dict[str, Any]) -> tuple[list[TaskState], str | None]:
    tasks = result.get("tasks")
    if not isinstance(tasks, list):
        raise ValueError("invalid tasks/list result: 'tasks' must be an array")
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise ValueError("invalid tasks/list result: 'nextCursor' must be a string")
    return [parse_task_state(t, f"tasks[{i}]")[0] for i, t in enumerate(tasks)], cursor
