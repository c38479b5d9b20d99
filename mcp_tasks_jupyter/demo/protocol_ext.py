"""The ext dialect: the tasks extension ``io.modelcontextprotocol/tasks`` (SEP-2663) on the
stateless 2026-07-28 protocol (:mod:`.protocol_2026`).

Opt-in is judged per request: a request opts in when its ``_meta
["io.modelcontextprotocol/clientCapabilities"].extensions`` has ``"io.modelcontextprotocol/tasks"``.
``server/discover`` advertises ``capabilities.extensions["io.modelcontextprotocol/tasks"] = {}``.

``tools/call`` (the server decides; a legacy ``params.task`` is ignored):

* a tool with task support "required" from a request that did not opt in: -32021 with
  ``data: {requiredCapabilities: {extensions: {"io.modelcontextprotocol/tasks": {}}}}``;
* a tool that may run as a task, from a request that opted in: a task, answered at once with
  the flat ``CreateTaskResult`` ``{resultType: "task", taskId, status: "working", statusMessage,
  createdAt, lastUpdatedAt, ttlMs, pollIntervalMs}``. A tool that starts inline
  (``test_tool_with_task``) first asks its questions as a multi round-trip request
  (``resultType: "input_required"``, :mod:`.mrtr`) and becomes a task when its body says so;
* anything else runs inline: ``{...CallToolResult, resultType: "complete"}`` or
  ``input_required``.

``tasks/get {taskId}`` -> ``{resultType: "complete", taskId, status, statusMessage?, createdAt,
lastUpdatedAt, ttlMs, pollIntervalMs}`` plus, by status: ``result`` (completed: the
CallToolResult, ``isError: true`` included, with ``resultType: "complete"`` and no
related-task ``_meta``), ``error`` (failed: the JSON-RPC error object), ``inputRequests``
(input_required: ``{KEY: {method: "elicitation/create", params: {mode: "form", message,
requestedSchema}}}``, keys ``input-1``, ``input-2``, ... never reused within a task).

``tasks/update {taskId, inputResponses: {KEY: ElicitResult}}`` answers open questions (other keys
are ignored; a malformed answer to an open key is -32602) and is acknowledged with exactly
``{resultType: "complete"}``; the answered keys leave ``inputRequests`` at once and the task goes
back to ``working`` when none is left. ``tasks/cancel {taskId}`` cancels a live task at once
(``cancelled``) and acknowledges ``{resultType: "complete"}``, also for a task already ended.

``tasks/get``, ``tasks/update`` and ``tasks/cancel`` need the opt-in on their own request
(-32021 otherwise), answer -32602 for an unknown or expired task, and see only ext tasks.
``requestState`` never appears on a task. Over HTTP they carry ``Mcp-Name: <taskId>``.

``subscriptions/listen {notifications: {taskIds: [...]}}`` (from a request that opted in)
acknowledges the ids of live ext tasks among those asked, sends each one's current state at once,
then a ``notifications/tasks`` (params: the task as ``tasks/get`` shows it, without
``resultType``, plus the subscription ``_meta``) at every change of status or status message.

Tasks live ``ttlMs`` (the default ttl) from creation; nothing about them is tied to a connection.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from .mrtr import Round, check_answer
from .protocol_2025 import first_text
from .protocol_2026 import InlineContext, Request2026, Stateless2026, missing_capability
from .rpc import INTERNAL_ERROR, INVALID_PARAMS, RpcError
from .task_store import TaskExpired, TaskNotFound, TaskRecord, TaskStore, isoformat_utc
from .tools import ElicitationFailed, Tool

logger = logging.getLogger("mcp_tasks_jupyter.demo")

EXTENSION = "io.modelcontextprotocol/tasks"
DIALECT = "ext"


def task_to_wire(task: TaskRecord, *, detailed: bool) -> dict[str, Any]:
    """The extension's Task; ``detailed`` adds ``result``/``error``/``inputRequests`` by status."""
    wire: dict[str, Any] = {"taskId": task.task_id, "status": task.status}
    if task.status_message is not None:
        wire["statusMessage"] = task.status_message
    wire.update(
        createdAt=isoformat_utc(task.created_at),
        lastUpdatedAt=isoformat_utc(task.last_updated_at),
        ttlMs=task.ttl_ms,
        pollIntervalMs=task.poll_interval_ms,
    )
    if not detailed:
        return wire
    if task.status == "completed":
        wire["result"] = {**(task.result or {}), "resultType": "complete"}
    elif task.status == "failed":
        wire["error"] = task.error or {"code": INTERNAL_ERROR, "message": task.status_message or "failed"}
    elif task.status == "input_required":
        wire["inputRequests"] = {
            key: {"method": question.method, "params": question.params}
            for key, question in task.input_requests.items()
        }
    return wire


class ExtCallContext(InlineContext):
    """The context of an ext ``tools/call``: inline (multi round-trip questions) until the call
    becomes a task, then the task's (questions as ``inputRequests``, reports as status messages)."""

    def __init__(
        self, ext: TasksExtension, request: Request2026, round_: Round, tool: Tool, may_become_task: bool
    ):
        super().__init__(request, round_)
        self._ext = ext
        self._tool = tool
        self._may_become_task = may_become_task
        self.task: TaskRecord | None = None
        self.became_task: asyncio.Future[TaskRecord] = asyncio.get_running_loop().create_future()

    def make_task(self) -> None:
        """Turn the call into a task now (once)."""
        if self.task is None and self._may_become_task:
            self.task = self._ext.create_task(self._tool)
            self.became_task.set_result(self.task)

    def report(self, message: str, progress: float | None = None, total: float | None = None) -> None:
        if self.task is None:
            super().report(message, progress, total)
        else:
            self._ext.store.update(self.task, message=message)

    def log(self, text: str) -> None:
        if self.task is None:
            super().log(text)  # a task has no request to carry log messages

    async def elicit(self, message: str, requested_schema: dict[str, Any]) -> dict[str, Any]:
        task = self.task
        if task is None:
            return await super().elicit(message, requested_schema)
        if not self.can_elicit:
            raise ElicitationFailed("the client did not declare the elicitation capability")
        params = {"mode": "form", "message": message, "requestedSchema": requested_schema}
        store = self._ext.store
        question = store.add_input(task, "elicitation/create", params, f"input required: {message}")
        try:
            answer: dict[str, Any] = await question.answer  # tasks/update checked it (check_answer)
            return answer
        finally:
            store.remove_input(task, question, "input received, continuing")

    async def background(self) -> None:
        self.make_task()


class TasksExtension:
    """The tasks extension of :class:`~.protocol_2026.Stateless2026` (see the module docstring)."""

    name = EXTENSION

    def __init__(self, store: TaskStore, ttl_ms: int, poll_interval_ms: int) -> None:
        self.store = store
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.methods = {"tasks/get": self._get, "tasks/update": self._update, "tasks/cancel": self._cancel}

    # -- tools/call --------------------------------------------------------------------------

    async def call_tool(
        self, base: Stateless2026, tool: Tool, arguments: dict[str, Any], request: Request2026, round_: Round
    ) -> dict[str, Any]:
        opted = request.declares(EXTENSION)
        if tool.task_support == "required" and not opted:
            raise missing_capability(
                f"Tool '{tool.name}' runs only as a task: declare the {EXTENSION} extension in this "
                "request's clientCapabilities",
                {"extensions": {EXTENSION: {}}},
            )
        ctx = ExtCallContext(self, request, round_, tool, may_become_task=opted and tool.allows_task)
        if not tool.starts_inline:
            ctx.make_task()  # before the body starts, so the answer can go out at once
        runner = asyncio.get_running_loop().create_task(self._run(base, tool, arguments, ctx))
        try:
            await asyncio.wait({runner, ctx.became_task}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if ctx.task is None:
                runner.cancel()  # the request was cancelled before the call became a task
            else:
                self.store.adopt(ctx.task, runner)  # the task lives on without its request
            raise
        if ctx.task is not None:
            self.store.adopt(ctx.task, runner)
            return {"resultType": "task", **task_to_wire(ctx.task, detailed=False)}
        return base.outcome(tool, arguments, round_, runner.result())

    def create_task(self, tool: Tool) -> TaskRecord:
        return self.store.create(
            tool_name=tool.name,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            status_message=f"{tool.name} started",
            dialect=DIALECT,
        )

    async def _run(self, base: Stateless2026, tool: Tool, arguments: dict[str, Any], ctx: ExtCallContext) -> Any:
        """The body, inline (its result, or None for a question) until it becomes a task; after
        that, its outcome goes into the task (the extension's rules: a tool error is completed)."""
        try:
            result = await (
                tool.body(arguments, ctx) if ctx.task is not None else base.run_body(tool, arguments, ctx)
            )
        except RpcError as exc:
            if ctx.task is None:
                raise
            self.store.finish(ctx.task, "failed", exc.message, error=exc.to_error())
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if ctx.task is None:
                raise
            if isinstance(exc, ElicitationFailed):
                error = missing_capability(f"Tool '{tool.name}' needs an answer: {exc}", {"elicitation": {}})
            else:
                logger.exception("tool %s crashed in task %s", tool.name, ctx.task.task_id)
                error = RpcError(INTERNAL_ERROR, f"Internal error: {exc}")
            self.store.finish(ctx.task, "failed", error.message, error=error.to_error())
        else:
            if ctx.task is None:
                return result
            assert result is not None  # only an inline question ends a body with None, never a task
            self.store.finish(ctx.task, "completed", first_text(result) or "completed", result=result)
        return None

    # -- tasks/* -----------------------------------------------------------------------------

    def _lookup(self, request: Request2026) -> TaskRecord:
        if not request.declares(EXTENSION):
            raise missing_capability(
                f"{request.method} needs the {EXTENSION} extension in this request's clientCapabilities",
                {"extensions": {EXTENSION: {}}},
            )
        task_id = request.params.get("taskId")
        if not isinstance(task_id, str):
            raise RpcError(INVALID_PARAMS, "params.taskId must be a string")
        try:
            return self.store.get(task_id, DIALECT)
        except TaskExpired:
            raise RpcError(INVALID_PARAMS, f"Failed to retrieve task: Task has expired: {task_id}") from None
        except TaskNotFound:
            raise RpcError(INVALID_PARAMS, f"Failed to retrieve task: Task not found: {task_id}") from None

    async def _get(self, request: Request2026) -> dict[str, Any]:
        return {"resultType": "complete", **task_to_wire(self._lookup(request), detailed=True)}

    async def _update(self, request: Request2026) -> dict[str, Any]:
        task = self._lookup(request)
        responses = request.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise RpcError(INVALID_PARAMS, "params.inputResponses must be an object")
        for key, answer in responses.items():
            question = task.input_requests.get(key)
            if question is None or question.answer.done():
                continue  # never asked, already answered, or withdrawn: ignored
            question.answer.set_result(check_answer(key, question.method, answer))
            self.store.remove_input(task, question, "input received, continuing")
        return {"resultType": "complete"}

    async def _cancel(self, request: Request2026) -> dict[str, Any]:
        task = self._lookup(request)
        if not task.terminal:
            self.store.cancel(task, "Cancelled by request")
        return {"resultType": "complete"}

    # -- subscriptions/listen ----------------------------------------------------------------

    def _watchable(self, task_id: Any) -> TaskRecord | None:
        try:
            return self.store.get(task_id, DIALECT)
        except LookupError:
            return None

    def watch(
        self, filter_value: Any, request: Request2026, send: Callable[[str, dict[str, Any]], None]
    ) -> tuple[Any, Callable[[], None]] | None:
        if not request.declares(EXTENSION) or not isinstance(filter_value, list):
            return None
        tasks = {task.task_id: task for task in map(self._watchable, filter_value) if task is not None}

        def changed(task: TaskRecord) -> None:
            send("notifications/tasks", task_to_wire(task, detailed=True))

        for task in tasks.values():
            task.listeners.append(changed)

        def stop() -> None:
            for task in tasks.values():
                if changed in task.listeners:
                    task.listeners.remove(changed)

        return list(tasks), stop

    def snapshot(self, honoured: Any, send: Callable[[str, dict[str, Any]], None]) -> None:
        for task_id in honoured:
            task = self._watchable(task_id)
            if task is not None:
                send("notifications/tasks", task_to_wire(task, detailed=True))
