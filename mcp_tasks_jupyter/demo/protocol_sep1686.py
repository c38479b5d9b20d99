"""The sep1686 dialect: the tasks of the SEP-1686 draft (``seps/1686-tasks.md``), on a session.

A sep1686 session is a 2025-11-25 session (``initialize``, server-to-client requests, logging,
progress: :class:`~.protocol_2025.Session2025`) whose task rules are the draft's:

* The client names the task: ``tools/call`` with ``params._meta["modelcontextprotocol.io/task"]
  = {"taskId": ID, "keepAlive": MS}``. ID must be a string of 16 to 256 characters that was never
  used on this server (-32602 otherwise: the draft lets the client choose, so the server refuses
  ids too short to be unguessable; use a UUID4). ``keepAlive`` (optional, null = default) is
  clamped like a ttl and counts from the task's end.
* The server creates the task in ``submitted``, sends ``notifications/tasks/created`` with params
  ``{"_meta": {"modelcontextprotocol.io/related-task": {"taskId": ID}}}``, then moves it to
  ``working``. The ``tools/call`` itself is answered when the task ends, with the ordinary
  result (``_meta`` carrying the related-task key) or the call's JSON-RPC error. A call without
  the key, or to a tool that never runs as a task (``echo``), runs as an ordinary request.
* ``tasks/get {taskId}`` -> ``{taskId, status, keepAlive, pollFrequency, error?}`` (``error``, a
  string, when ``failed``) with the related-task ``_meta``. Statuses: submitted, working,
  input_required, completed, failed, cancelled (``unknown`` is never used).
* ``tasks/result {taskId}`` -> the result (``completed``), the call's JSON-RPC error
  (``failed``), or -32602 "Cannot retrieve result: Task status is 'S', not 'completed'".
* ``tasks/list {cursor?}`` -> ``{tasks: [{taskId, status, keepAlive, pollFrequency, error?}],
  nextCursor?}``: the sep1686 tasks of every session, oldest first.
* ``tasks/delete {taskId}`` -> ``{_meta: related-task}``; a task still running is cancelled
  first. Its id then answers -32602 "Task not found" and is never accepted again.
* Cancelling is ``notifications/cancelled`` for the ``tools/call`` request id: the task goes
  ``cancelled`` and the call gets no answer. There is no ``tasks/cancel`` (-32601).
* A question (``elicitation/create``) carries the related-task ``_meta``; the task is
  ``input_required`` while any is open. A tool result with ``isError: true`` is ``completed``.
* Over HTTP, a task-augmented ``tools/call`` is answered with an SSE stream that carries the
  task's notifications and questions, then the response.
* No ``notifications/tasks/status``; unknown or expired ids answer -32602.

Detection (see :mod:`.server`): an ``initialize`` whose ``capabilities.tasks`` has a boolean
leaf (the draft's "``tasks`` capability ... with boolean properties", e.g.
``{"tasks": {"tools": {"call": true}}}``; 2025-11-25 uses empty objects there), or, on a
session that started as 2025-11-25, the first request carrying ``modelcontextprotocol.io/task``
(the draft's own "no capabilities declaration" path).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, ClassVar

from .protocol_2025 import CallContext, Session2025, first_text
from .rpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    REQUEST_CANCELLED,
    RpcError,
    is_valid_id,
    make_notification,
)
from .task_store import TaskIdTaken, TaskRecord
from .tools import Tool

logger = logging.getLogger("mcp_tasks_jupyter.demo")

TASK_META = "modelcontextprotocol.io/task"
RELATED_TASK = "modelcontextprotocol.io/related-task"
MIN_TASK_ID_LENGTH = 16
MAX_TASK_ID_LENGTH = 256


def task_marker(params: Any) -> Any:
    """The ``modelcontextprotocol.io/task`` value of a request's ``params._meta`` (None: absent)."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(TASK_META) if isinstance(meta, dict) else None


def _has_boolean_leaf(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    return isinstance(value, dict) and any(_has_boolean_leaf(item) for item in value.values())


def initialize_wants_sep1686(params: Any) -> bool:
    """Whether an ``initialize`` declares the draft's ``tasks`` capability (boolean properties)."""
    capabilities = params.get("capabilities") if isinstance(params, dict) else None
    tasks = capabilities.get("tasks") if isinstance(capabilities, dict) else None
    return isinstance(tasks, dict) and _has_boolean_leaf(tasks)


def task_to_wire(task: TaskRecord) -> dict[str, Any]:
    """The draft's task object (``tasks/get``, ``tasks/list`` entries)."""
    wire: dict[str, Any] = {
        "taskId": task.task_id,
        "status": task.status,
        "keepAlive": task.keep_alive_ms,
        "pollFrequency": task.poll_interval_ms,
    }
    if task.status == "failed":
        wire["error"] = str((task.error or {}).get("message") or task.status_message or "failed")
    return wire


class Session1686(Session2025):
    """One client session speaking the sep1686 dialect (see the module docstring)."""

    dialect: ClassVar[str] = "sep1686"
    METHODS: ClassVar[dict[str, str]] = {
        **{name: handler for name, handler in Session2025.METHODS.items() if name != "tasks/cancel"},
        "tasks/delete": "_tasks_delete",
    }

    def related(self, task_id: str) -> dict[str, Any]:
        return {RELATED_TASK: {"taskId": task_id}}

    def response_stream_task(self, message: dict[str, Any]) -> str | None:
        if message.get("method") != "tools/call":
            return None
        marker = task_marker(message.get("params"))
        task_id = marker.get("taskId") if isinstance(marker, dict) else None
        return task_id if isinstance(task_id, str) else None

    @property
    def _calls(self) -> dict[Any, TaskRecord]:
        """Tasks by the id of the ``tools/call`` that created them (while that call is open).
        Created lazily: a session that :meth:`became <Session2025.become>` sep1686 has no
        ``__init__`` of its own."""
        calls: dict[Any, TaskRecord] = self.__dict__.setdefault("_sep1686_calls", {})
        return calls

    # -- lifecycle ---------------------------------------------------------------------------

    async def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        result = await super()._initialize(params)
        result["capabilities"]["tasks"] = {"tools": {"call": True}}
        return result

    def _notification(self, method: str, params: Any) -> None:
        if method == "notifications/cancelled" and isinstance(params, dict):
            request_id = params.get("requestId")
            task = self._calls.get(request_id) if is_valid_id(request_id) else None
            if task is not None and not task.terminal:
                logger.info("client cancelled the call of task %s", task.task_id)
                self.store.cancel(task, "Cancelled by the client")
        super()._notification(method, params)

    # -- tools -------------------------------------------------------------------------------

    async def _tools_list(self, params: dict[str, Any]) -> dict[str, Any]:
        result = await super()._tools_list(params)
        for entry in result["tools"]:
            entry.pop("execution", None)  # the draft has no per-tool task declaration
        return result

    async def _tools_call(self, params: dict[str, Any]) -> dict[str, Any]:
        tool = self._find_tool(params)
        marker = task_marker(params)
        if marker is None or not tool.allows_task:
            arguments, progress_token = self._arguments(tool, params)
            return await tool.body(arguments, CallContext(self, None, progress_token))
        task_id, keep_alive = self._check_marker(marker)
        arguments, progress_token = self._arguments(tool, params)
        kept = self.config.clamp_ttl(keep_alive)
        try:
            task = self.store.create(
                tool_name=tool.name,
                ttl_ms=kept,
                keep_alive_ms=kept,
                poll_interval_ms=self.config.poll_interval_ms,
                status_message=f"{tool.name} submitted",
                dialect=self.dialect,
                task_id=task_id,
                status="submitted",
            )
        except TaskIdTaken:
            raise RpcError(INVALID_PARAMS, f"Task ID already exists: {task_id}") from None
        request_id = next(
            (rid for rid, runner in self._inflight.items() if runner is asyncio.current_task()), None
        )
        if request_id is not None:
            self._calls[request_id] = task
        self.send(
            make_notification("notifications/tasks/created", {"_meta": self.related(task.task_id)}),
            task_id=task.task_id,
        )
        self.store.start(task, self._run_task(tool, arguments, CallContext(self, task, progress_token), task))
        try:
            await task.done.wait()
        finally:
            self._calls.pop(request_id, None)
        if task.status == "cancelled":
            raise RpcError(REQUEST_CANCELLED, "Task was cancelled", {"taskId": task.task_id})
        return self._outcome(task)

    @staticmethod
    def _check_marker(marker: Any) -> tuple[str, int | float | None]:
        if not isinstance(marker, dict):
            raise RpcError(INVALID_PARAMS, f"_meta.{TASK_META} must be an object")
        task_id, keep_alive = marker.get("taskId"), marker.get("keepAlive")
        if not isinstance(task_id, str) or not MIN_TASK_ID_LENGTH <= len(task_id) <= MAX_TASK_ID_LENGTH:
            raise RpcError(
                INVALID_PARAMS,
                f"_meta.{TASK_META}.taskId must be a string of {MIN_TASK_ID_LENGTH} to {MAX_TASK_ID_LENGTH} "
                "characters that nobody can guess (a UUID4, say)",
            )
        if keep_alive is not None and (
            isinstance(keep_alive, bool) or not isinstance(keep_alive, (int, float)) or keep_alive < 0
        ):
            raise RpcError(INVALID_PARAMS, f"_meta.{TASK_META}.keepAlive must be a non-negative number or null")
        return task_id, keep_alive

    async def _run_task(self, tool: Tool, arguments: dict[str, Any], ctx: CallContext, task: TaskRecord) -> None:
        """The background body of a task (the draft's rules: a tool error is still ``completed``)."""
        self.store.update(task, status="working", message=f"{tool.name} working")
        try:
            result = await tool.body(arguments, ctx)
        except RpcError as exc:
            self.store.finish(task, "failed", exc.message, error=exc.to_error())
        except Exception as exc:
            logger.exception("tool %s crashed in task %s", tool.name, task.task_id)
            error = RpcError(INTERNAL_ERROR, f"Internal error: {exc}")
            self.store.finish(task, "failed", error.message, error=error.to_error())
        else:
            self.store.finish(task, "completed", first_text(result) or "completed", result=result)

    def _outcome(self, task: TaskRecord) -> dict[str, Any]:
        """What the call returns: its result (with the related-task ``_meta``) or its error."""
        if task.error is not None:
            raise RpcError.from_error(task.error)
        result = dict(task.result or {})
        result["_meta"] = {**(result.get("_meta") or {}), **self.related(task.task_id)}
        return result

    # -- tasks -------------------------------------------------------------------------------

    async def _tasks_get(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self._lookup(params)
        return {**task_to_wire(task), "_meta": self.related(task.task_id)}

    async def _tasks_result(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self._lookup(params)
        if task.status not in ("completed", "failed"):
            raise RpcError(
                INVALID_PARAMS, f"Cannot retrieve result: Task status is '{task.status}', not 'completed'"
            )
        return self._outcome(task)

    def listed_task(self, task: TaskRecord) -> dict[str, Any]:
        return task_to_wire(task)

    async def _tasks_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        task = self._lookup(params)
        self.store.delete(task)
        return {"_meta": self.related(task.task_id)}
