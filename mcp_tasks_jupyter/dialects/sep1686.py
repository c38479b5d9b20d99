"""The ``sep1686`` dialect: the SEP-1686 tasks draft (client-named tasks, on the stateful wire).

``create`` names the task (an unguessable id in ``_meta["modelcontextprotocol.io/task"]``), sends
the ``tools/call`` and races its answer against ``notifications/tasks/created`` and, when neither
comes, a speculative ``tasks/get``. The call's answer is the final result, so it is kept waiting in
the background: whichever comes first, that answer or ``tasks/result`` after polling, ends the task.
Cancelling withdraws the original request (``notifications/cancelled`` for its id); polling then
confirms the outcome. ``tasks/list`` and ``tasks/delete`` are offered; the server's questions
arrive as ordinary server requests tagged with the draft's related-task meta.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import (
    InvalidMessage,
    ProtocolError,
    RequestTimeout,
    TaskCancelled,
    TaskFailed,
    TaskNotFound,
    UsageError,
)
from ..protocol import jsonrpc, tasks_sep1686 as wire
from ..protocol.task_state import CANCELLED, COMPLETED, FAILED, SUBMITTED, TaskState
from ..protocol.types import Tool
from ..tasks.control import control_of
from ..tasks.results import ToolResult
from .dialect import Answers, TaskDialect, TaskEvents

if TYPE_CHECKING:
    from ..tasks.handle import TaskHandle

log = logging.getLogger(__name__)

#: The first speculative ``tasks/get`` when neither the answer nor the created notification came;
#: later ones back off (doubling) up to SPECULATIVE_POLL_MAX_S.
SPECULATIVE_POLL_S = 1.0
SPECULATIVE_POLL_MAX_S = 8.0


@dataclass(slots=True)
class _Draft:
    """A task this client created: its original request (whose answer is the result) and creation."""

    call: asyncio.Task[dict[str, Any]]
    created: asyncio.Event = field(default_factory=asyncio.Event)
    handle: TaskHandle | None = None


class Sep1686Dialect(TaskDialect):
    name = "sep1686"
    supports_list = True
    supports_cancel = True
    supports_delete = True
    server_decides = True  # a server without tasks just answers the call, possibly much later

    def __init__(self, session: Any, reason: str = "") -> None:
        super().__init__(session, reason)
        self._drafts: dict[str, _Draft] = {}

    def install(self, events: TaskEvents, answers: Answers) -> None:
        super().install(events, answers)
        self.session.server_requests.on_notification(wire.CREATED_NOTIFICATION, self._on_created)

    def runs_as_task(self, tool: Tool) -> bool:
        return True  # the draft declares nothing per tool; a server without tasks answers the call

    def requires_task(self, tool: Tool) -> bool:
        # The draft declares nothing per tool; a server that lists 2025-11-25's hint is believed.
        return tool.task_support == "required"

    # -- creation: the race --------------------------------------------------------------------

    async def create(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        *,
        ttl_ms: int | None,
        progress_token: str,
        handle: TaskHandle | None = None,
    ) -> TaskState | ToolResult:
        task_id = wire.new_task_id()
        call = self.session.background.future(
            self.session.request(
                "tools/call", wire.call_params(tool.name, arguments, task_id, ttl_ms, progress_token), timeout=None
            ),
            name=f"mcp-call {task_id}",
        )
        draft = _Draft(call, handle=handle)
        self._drafts[task_id] = draft
        if handle is not None:
            control_of(handle).named(task_id)  # a question can name the task before its creation is confirmed
        try:
            created = await self._race(task_id, draft)
        except BaseException:
            self._drafts.pop(task_id, None)
            if handle is not None:
                control_of(handle).named(None)
            if not call.done():
                call.cancel()
            raise
        if created is None:  # the answer won: the server ran it as an ordinary call
            self._drafts.pop(task_id, None)
            if handle is not None:
                control_of(handle).named(None)
            return self.tool_result(call.result(), "tools/call")
        call.add_done_callback(lambda c: self._answered(task_id, c))
        return created

    async def _race(self, task_id: str, draft: _Draft) -> TaskState | None:
        """The task's first state once it exists, or None when the call's answer came first."""
        created = self.session.background.future(draft.created.wait(), name=f"mcp-created {task_id}")
        pause: float | None = SPECULATIVE_POLL_S
        try:
            while True:
                await asyncio.wait([draft.call, created], timeout=pause, return_when=asyncio.FIRST_COMPLETED)
                if draft.call.done() and not created.done():
                    return None
                try:
                    return await self.get(task_id)
                except (TaskNotFound, ProtocolError, RequestTimeout) as exc:
                    if created.done():  # announced but not readable yet: take it as submitted
                        return TaskState(task_id, SUBMITTED)
                    if isinstance(exc, InvalidMessage):
                        raise
                    if isinstance(exc, ProtocolError) and exc.code == jsonrpc.METHOD_NOT_FOUND:
                        pause = None  # no tasks/get here: only the answer or a notification can come
                        continue
                # not created (yet): keep waiting for the answer or the notification
                if pause is not None:
                    pause = min(SPECULATIVE_POLL_MAX_S, pause * 2)
        finally:
            created.cancel()

    def creating(self, task_id: str) -> TaskHandle | None:
        draft = self._drafts.get(task_id)
        return draft.handle if draft is not None else None

    def _on_created(self, params: dict[str, Any]) -> None:
        draft = self._drafts.get(wire.related_task_id(params) or "")
        if draft is not None:
            draft.created.set()

    def _answered(self, task_id: str, call: asyncio.Task[dict[str, Any]]) -> None:
        """The original request was answered: that is the result; wake the poller to take it."""
        draft = self._drafts.get(task_id)
        if draft is None or draft.handle is None or call.cancelled():
            return
        error = call.exception()
        if error is not None and not isinstance(error, ProtocolError):
            return  # the connection broke: polling tells what became of the task
        self.events.pushed(
            task_id, TaskState(task_id, FAILED if error is not None else COMPLETED, draft.handle.status_message)
        )

    # -- polling -------------------------------------------------------------------------------

    async def get(self, task_id: str) -> TaskState:
        try:
            raw = await self.session.request("tasks/get", wire.task_params(task_id))
        except ProtocolError as exc:
            raise self.task_error(exc, task_id) from None
        try:
            return wire.parse_task_state(raw)[0]
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.server, method="tasks/get", data=raw) from None

    def on_push(self, params: dict[str, Any]) -> TaskState:
        return wire.parse_task_state(params, "task status notification")[0]

    async def result(self, handle: TaskHandle) -> ToolResult:
        task_id = handle.task_id
        assert task_id is not None
        draft = self._drafts.get(task_id)
        if draft is not None and draft.call.done() and not draft.call.cancelled():
            error = draft.call.exception()
            if isinstance(error, ProtocolError):
                raise TaskFailed(
                    handle.status_message or error.message,
                    server=self.server,
                    task_id=task_id,
                    tool=handle.tool,
                    status_message=handle.status_message,
                    error=error.error,
                )
            if error is None:
                return self.tool_result(draft.call.result(), "tools/call")
        if handle.server_status == CANCELLED:
            raise TaskCancelled(
                handle.status_message or "the task was cancelled",
                server=self.server,
                task_id=task_id,
                tool=handle.tool,
            )
        if handle.server_status != COMPLETED:
            what = (
                "the server lost track of it (status unknown)"
                if handle.server_status == "unknown"
                else "the task failed"
            )
            raise TaskFailed(
                handle.status_message or what,
                server=self.server,
                task_id=task_id,
                tool=handle.tool,
                status_message=handle.status_message,
            )
        try:
            raw = await self.session.request("tasks/result", wire.task_params(task_id))
        except ProtocolError as exc:
            if isinstance(exc, InvalidMessage):
                raise
            raise TaskFailed(
                exc.message,
                server=self.server,
                task_id=task_id,
                tool=handle.tool,
                status_message=handle.status_message,
                error=exc.error,
            ) from None
        return self.tool_result(raw, "tasks/result")

    # -- cancel, list, delete ------------------------------------------------------------------

    async def cancel(self, task_id: str) -> TaskState | None:
        """Withdraw the original request (``notifications/cancelled``); polling confirms the outcome."""
        draft = self._drafts.get(task_id)
        if draft is None:
            raise UsageError(
                "a SEP-1686 task is cancelled through the request that created it, which "
                "this connection did not send",
                server=self.server,
            )
        if not draft.call.done():
            draft.call.cancel()
        return None

    async def list(self) -> list[TaskState]:
        return await self.list_pages(wire.parse_list_result)

    async def delete(self, task_id: str) -> None:
        try:
            await self.session.request("tasks/delete", wire.task_params(task_id))
        except ProtocolError as exc:
            raise self.task_error(exc, task_id) from None

    def release(self, handle: TaskHandle) -> None:
        draft = self._drafts.pop(handle.task_id or "", None)
        if draft is not None:
            # Never withdraw it here: that would cancel a task that may still run (the client
            # closing). Its late answer (or the connection's end) is simply dropped.
            draft.handle = None
            draft.call.add_done_callback(_consume)


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
