"""The 2025-11-25 dialect: experimental core tasks (``params.task``, ``tasks/get``, blocking ``tasks/result``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from ..errors import InvalidMessage, ProtocolError, RequestTimeout, TaskCancelled, TaskFailed, UsageError
from ..protocol import tasks_2025 as wire
from ..protocol.task_state import CANCELLED, FAILED, TaskState, parse_task
from ..protocol.types import Tool
from ..tasks.results import ToolResult
from .dialect import TaskDialect

if TYPE_CHECKING:
    from ..tasks.handle import TaskHandle


class Core2025Dialect(TaskDialect):
    """Tasks as specified in MCP 2025-11-25.

    ``input_required``: the client opens ``tasks/result`` at once; the server delivers its requests
    (tagged with the related-task meta) while that request is open, and the same request later carries
    the final result. Polling with ``tasks/get`` goes on meanwhile.
    """

    name = "2025-11-25"

    def __init__(self, session: Any, reason: str = "") -> None:
        super().__init__(session, reason)
        caps = session.initialize_result.capabilities if session.initialize_result else {}
        self.task_calls = wire.server_supports_task_calls(caps)
        self.supports_list = wire.server_supports(caps, "list")
        self.supports_cancel = wire.server_supports(caps, "cancel")
        self._fetches: dict[str, asyncio.Task[dict[str, Any]]] = {}
        #: The session (``Session.generation``) each open fetch was sent in.
        self._fetched_in: dict[str, int] = {}

    def runs_as_task(self, tool: Tool) -> bool:
        return self.task_calls and tool.task_support != "forbidden"

    def requires_task(self, tool: Tool) -> bool:
        return tool.task_support == "required"

    async def create(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        *,
        ttl_ms: int | None,
        progress_token: str,
        handle: TaskHandle | None = None,
    ) -> TaskState | ToolResult:
        raw = await self.session.request(
            "tools/call", wire.call_params(tool.name, arguments, ttl_ms, progress_token)
        )
        if "task" not in raw and "content" in raw:
            # Some servers run a call inline even when asked for a task; accept the result.
            return self.tool_result(raw, "tools/call")
        try:
            return wire.parse_create_result(raw)
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.server, method="tools/call", data=raw) from None

    async def get(self, task_id: str) -> TaskState:
        try:
            raw = await self.session.request("tasks/get", {"taskId": task_id})
        except ProtocolError as exc:
            raise self.task_error(exc, task_id) from None
        try:
            return parse_task(raw, "tasks/get result")
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.server, method="tasks/get", data=raw) from None

    def push_live(self, handle: TaskHandle) -> bool:
        """``notifications/tasks/status`` come on the server's own channel (the GET stream)."""
        return self.session.transport.push_channel_open and self.session.closed_error is None

    async def serve_input(self, handle: TaskHandle) -> None:
        self._open_fetch(handle.task_id)  # type: ignore[arg-type]

    def _open_fetch(self, task_id: str) -> asyncio.Task[dict[str, Any]]:
        """The task's ``tasks/result``, sent now unless one is open in the current session. One that
        failed is sent again; one still open from an older session is withdrawn and sent again in this
        one: the server asks a task's open question through the session that waits for the task, and
        the old one may stand on the server still (a 404 from a gateway ended it only here)."""
        session = self.session
        fetch = self._fetches.get(task_id)
        if fetch is not None and not fetch.done() and self._fetched_in.get(task_id) != session.generation:
            fetch.cancel()
            fetch = None
        if fetch is None or (fetch.done() and (fetch.cancelled() or fetch.exception() is not None)):
            # Blocks until the task is terminal: no timeout, cancelled through release()/cancel.
            fetch = session.background.future(
                session.request("tasks/result", {"taskId": task_id}, timeout=None), name=f"mcp-result {task_id}"
            )
            fetch.add_done_callback(_consume)
            self._fetches[task_id] = fetch
            self._fetched_in[task_id] = session.generation
        return fetch

    async def result(self, handle: TaskHandle) -> ToolResult:
        task_id = handle.task_id
        assert task_id is not None
        if handle.server_status == CANCELLED:
            raise TaskCancelled(
                handle.status_message or "the task was cancelled",
                server=self.server,
                task_id=task_id,
                tool=handle.tool,
            )
        try:
            # The task is terminal, so the server owes the answer now: wait a normal request's time.
            async with asyncio.timeout(self.session.request_timeout):
                raw = await asyncio.shield(self._open_fetch(task_id))
        except TimeoutError:
            raise RequestTimeout(
                f"tasks/result: no answer within {self.session.request_timeout} s for a finished task",
                server=self.server,
            ) from None
        except ProtocolError as exc:
            if isinstance(exc, InvalidMessage):
                raise
            known = self.task_error(exc, task_id)
            if known is not exc:  # the server no longer knows the task (it restarted, or dropped it)
                raise known from None
            raise TaskFailed(
                handle.status_message or exc.message,
                server=self.server,
                task_id=task_id,
                tool=handle.tool,
                status_message=handle.status_message,
                error=exc.error,
            ) from None
        finally:
            self._fetches.pop(task_id, None)
        if handle.server_status == FAILED and "content" not in raw:
            # Some servers (mcp 1.x) answer a failed task's tasks/result with only its _meta.
            raise TaskFailed(
                handle.status_message or "the task failed",
                server=self.server,
                task_id=task_id,
                tool=handle.tool,
                status_message=handle.status_message,
            )
        return self.tool_result(raw, "tasks/result")

    async def cancel(self, task_id: str) -> TaskState | None:
        if not self.supports_cancel:
            raise UsageError("this server does not offer tasks/cancel", server=self.server)
        try:
            raw = await self.session.request("tasks/cancel", {"taskId": task_id})
        except ProtocolError as exc:
            if exc.code == -32602:
                return None  # already terminal (or gone): the next poll tells which
            raise
        try:
            return parse_task(raw, "tasks/cancel result")
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.server, method="tasks/cancel", data=raw) from None

    async def list(self) -> list[TaskState]:
        return await self.list_pages(wire.parse_list_result) if self.supports_list else []

    def release(self, handle: TaskHandle) -> None:
        self._fetched_in.pop(handle.task_id or "", None)
        fetch = self._fetches.pop(handle.task_id or "", None)
        if fetch is not None and not fetch.done():
            fetch.cancel()


class CallOnlyDialect(TaskDialect):
    """A server without task support: every call is an ordinary request behind the same handle."""

    name = "none"

    def runs_as_task(self, tool: Tool) -> bool:
        return False

    def requires_task(self, tool: Tool) -> bool:
        return False

    async def create(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        *,
        ttl_ms: int | None,
        progress_token: str,
        handle: TaskHandle | None = None,
    ) -> TaskState | ToolResult:
        raise UsageError("this server has no tasks", server=self.server)

    async def get(self, task_id: str) -> TaskState:
        raise UsageError("this server has no tasks", server=self.server)

    async def result(self, handle: TaskHandle) -> ToolResult:
        raise UsageError("this server has no tasks", server=self.server)

    async def cancel(self, task_id: str) -> TaskState | None:
        raise UsageError("this server has no tasks", server=self.server)


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
