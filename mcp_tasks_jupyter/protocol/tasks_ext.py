"""Wire codec for the ``ext`` dialect: the tasks extension ``io.modelcontextprotocol/tasks``
(SEP-2663) on the stateless 2026-07-28 protocol. No I/O.

The client declares the extension in each request's ``clientCapabilities``; the server decides per
``tools/call`` whether to answer with a task: a flat ``{resultType: "task", taskId, status, ...,
ttlMs, pollIntervalMs}``. ``tasks/get`` returns the task with, by status, the inline ``result``
(completed), ``error`` (failed) or ``inputRequests`` (input_required), answered by ``tasks/update
{taskId, inputResponses}``. ``tasks/cancel`` and ``tasks/update`` only acknowledge. Pushes are
``notifications/tasks`` (the same detailed task) on a ``subscriptions/listen`` stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import bounds
from .modern import input_requests, result_type
from .task_state import TaskState, parse_task

EXTENSION = "io.modelcontextprotocol/tasks"
NOTIFICATION = "notifications/tasks"


def server_supports(capabilities: dict[str, Any]) -> bool:
    """True when ``server/discover`` declared ``capabilities.extensions["io.modelcontextprotocol/tasks"]``."""
    extensions = capabilities.get("extensions")
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def declare(capabilities: dict[str, Any]) -> dict[str, Any]:
    """Client capabilities with the extension declared (a new dict; the argument is not changed)."""
    extensions = capabilities.get("extensions")
    return {**capabilities, "extensions": {**(extensions if isinstance(extensions, dict) else {}), EXTENSION: {}}}


@dataclass(slots=True)
class DetailedTask:
    """A task as ``tasks/get`` (or ``notifications/tasks``) describes it, with its payload."""

    state: TaskState
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, dict[str, Any]] = field(default_factory=dict)


def _task(obj: Any, what: str) -> TaskState:
    if not isinstance(obj, dict):
        raise ValueError(f"invalid {what}: expected an object")
    # Earlier drafts named the fields ``ttlSeconds`` and ``pollIntervalMilliseconds``; an error names
    # the field the server sent.
    poll_key = (
        "pollIntervalMilliseconds"
        if "pollIntervalMs" not in obj and "pollIntervalMilliseconds" in obj
        else "pollIntervalMs"
    )
    if "ttlMs" not in obj and obj.get("ttlSeconds") is not None:
        seconds = bounds.number(obj, "ttlSeconds", what, unit="seconds", limit=bounds.MAX_MS / 1000)
        obj = {**obj, "ttlMs": seconds * 1000}  # type: ignore[operator]
    state = parse_task(obj, what, ttl_key="ttlMs", poll_key=poll_key)
    if state.status in ("submitted", "unknown"):
        raise ValueError(f"invalid {what}: status {state.status!r} does not exist in the tasks extension")
    return state


def parse_create_result(result: dict[str, Any]) -> TaskState:
    """A ``resultType: "task"`` answer → TaskState (raises ValueError)."""
    if result_type(result) != "task":
        raise ValueError("invalid CreateTaskResult: 'resultType' must be \"task\"")
    return _task(result, "CreateTaskResult")


def parse_detailed(obj: Any, what: str = "tasks/get result") -> DetailedTask:
    """A ``tasks/get`` result or ``notifications/tasks`` params → DetailedTask (raises ValueError)."""
    state = _task(obj, what)
    detailed = DetailedTask(state)
    if state.status == "completed":
        result = obj.get("result")
        if result is not None and not isinstance(result, dict):
            raise ValueError(f"invalid {what}: 'result' must be an object")
        detailed.result = result
    elif state.status == "failed":
        error = obj.get("error")
        if error is not None and not isinstance(error, dict):
            raise ValueError(f"invalid {what}: 'error' must be an object")
        detailed.error = error
    elif state.status == "input_required":
        detailed.input_requests = input_requests(obj, what)
    return detailed


def get_params(task_id: str) -> dict[str, Any]:
    return {"taskId": task_id}


def update_params(task_id: str, responses: dict[str, Any]) -> dict[str, Any]:
    return {"taskId": task_id, "inputResponses": responses}


def listen_params(task_ids: list[str]) -> dict[str, Any]:
    return {"notifications": {"taskIds": task_ids}}
