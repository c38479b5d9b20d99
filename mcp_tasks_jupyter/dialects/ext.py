"""The ``ext`` dialect: the tasks extension ``io.modelcontextprotocol/tasks`` (SEP-2663) on the
stateless 2026-07-28 wire.

The extension is declared in every request's capabilities; the server decides per ``tools/call``
whether to answer with a task (``resultType: "task"``) or the result itself. ``tasks/get`` carries
the result, the error or the pending ``inputRequests`` inline; each request key is answered once,
through the client's one answering path, with ``tasks/update``. ``tasks/cancel`` is only an
acknowledgement: polling goes on and shows how the task really ended. Where the server accepts
``subscriptions/listen``, ``notifications/tasks`` wake the poller early (and, while they come, the
lifecycle polls only as a safety net): one subscription carries every live task's id, renewed as
that set grows (and when it has shrunk by half). No ``tasks/list``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import (
    ConnectionFailed,
    HTTPStatusError,
    InvalidMessage,
    MCPError,
    ProtocolError,
    RequestTimeout,
    TaskCancelled,
    TaskFailed,
)
from ..protocol import jsonrpc, modern, tasks_ext as wire
from ..protocol.task_state import CANCELLED, COMPLETED, FAILED, TaskState
from ..protocol.types import Tool
from ..tasks.results import ToolResult
from .dialect import Answers, TaskDialect, TaskEvents

if TYPE_CHECKING:
    from ..tasks.handle import TaskHandle

log = logging.getLogger(__name__)

#: Attempts to deliver one answer (``tasks/update``) through connection trouble.
UPDATE_ATTEMPTS = 4
#: The subscription is renewed at most once per this long: tasks started together make one
#: renewal, not one each.
RESUBSCRIBE_DELAY_S = 0.05
#: A subscription that failed (not refused) is tried again after this, doubled up to the maximum.
FIRST_LISTEN_RETRY_S = 1.0
MAX_LISTEN_RETRY_S = 30.0
#: A subscription that lasted this long resets the retry delay.
LISTEN_HEALTHY_S = 10.0
#: Errors that mean a server offers no ``subscriptions/listen`` for tasks.
_NO_LISTEN = frozenset(
    {
        jsonrpc.METHOD_NOT_FOUND,
        jsonrpc.INVALID_PARAMS,
        jsonrpc.INVALID_REQUEST,
        modern.MISSING_REQUIRED_CLIENT_CAPABILITY,
    }
)


@dataclass(slots=True)
class _Task:
    """What the dialect keeps per task: the inline payload of the last poll and the answering state."""

    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    requests: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Request keys answered (their answer sent or being sent): never answered or shown again.
    answered: set[str] = field(default_factory=set)
    #: Keys being answered now (the handler, a person or ``tasks/update`` at work).
    answering: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    #: Answers given whose ``tasks/update`` did not get through: sent again (nobody asked again) while
    #: the server still asks.
    undelivered: dict[str, Any] = field(default_factory=dict)


class ExtDialect(TaskDialect):
    name = "ext"
    supports_cancel = True
    server_decides = True
    unsolicited_tasks = True

    def __init__(self, session: Any, reason: str = "") -> None:
        super().__init__(session, reason)
        self._tasks: dict[str, _Task] = {}
        #: None until tried; False once the server refused ``subscriptions/listen``.
        self.listen_supported: bool | None = None
        #: The one ``subscriptions/listen`` request open now (None: none), and the task ids it names.
        self.subscription: asyncio.Task[None] | None = None
        self.subscribed: frozenset[str] = frozenset()
        #: Subscriptions made so far (each renewal is one).
        self.subscriptions_made = 0
        self._renewal: asyncio.TimerHandle | None = None
        self._renewed_at = float("-inf")
        self._retry_s = FIRST_LISTEN_RETRY_S

    def install(self, events: TaskEvents, answers: Answers) -> None:
        super().install(events, answers)
        self.session.declare_extension(wire.EXTENSION)
        self.session.server_requests.on_notification(wire.NOTIFICATION, self._on_task_push)

    def _on_task_push(self, params: dict[str, Any]) -> None:
        """``notifications/tasks``: the whole task, payload included; wakes its poller."""
        task_id = params.get("taskId")
        if not isinstance(task_id, str) or self.events.handle_of(task_id) is None:
            return
        try:
            state = self.on_push(params)
        except ValueError as exc:
            self.session.noise_received(InvalidMessage(str(exc), server=self.server))
            return
        self.events.pushed(task_id, state)

    def runs_as_task(self, tool: Tool) -> bool:
        return True  # any call may become a task: the server decides per call

    def requires_task(self, tool: Tool) -> bool:
        return False

    # -- creation ------------------------------------------------------------------------------

    async def create(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        *,
        ttl_ms: int | None,
        progress_token: str,
        handle: TaskHandle | None = None,
    ) -> TaskState | ToolResult:
        # No ttl to ask for: the extension lets the server choose the retention.
        params: dict[str, Any] = {"name": tool.name, "arguments": arguments}
        if progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        # May run inline for long: the caller's cancellation is the way out, not a timeout.
        raw = await self.session.request_complete("tools/call", params, timeout=None, context=handle)
        return self.accept(raw)

    def accept(self, raw: dict[str, Any]) -> TaskState | ToolResult:
        """A ``tools/call`` answer: a new task (``resultType: "task"``) or the result itself."""
        kind = modern.result_type(raw)
        try:
            if kind == modern.TASK:
                state = wire.parse_create_result(raw)
                self._record(state.task_id)
                return state
            if kind == modern.COMPLETE:
                return ToolResult.from_wire(raw)
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.server, method="tools/call", data=raw) from None
        raise InvalidMessage(
            f"unknown resultType {kind!r} in the answer to tools/call",
            server=self.server,
            method="tools/call",
            data=raw,
        )

    # -- polling -------------------------------------------------------------------------------

    async def get(self, task_id: str) -> TaskState:
        try:
            raw = await self.session.request("tasks/get", wire.get_params(task_id))
        except ProtocolError as exc:
            raise self.task_error(exc, task_id) from None
        try:
            detailed = wire.parse_detailed(raw)
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.server, method="tasks/get", data=raw) from None
        self._remember(detailed)
        return detailed.state

    def on_push(self, params: dict[str, Any]) -> TaskState:
        detailed = wire.parse_detailed(params, "notifications/tasks")
        if detailed.state.task_id in self._tasks:
            self._remember(detailed)
        return detailed.state

    def _record(self, task_id: str) -> _Task:
        record = self._tasks.get(task_id)
        if record is None:
            record = self._tasks[task_id] = _Task()
            self._follow_later()
        return record

    def _remember(self, detailed: wire.DetailedTask) -> None:
        record = self._record(detailed.state.task_id)
        if detailed.result is not None:
            record.result = detailed.result
        if detailed.error is not None:
            record.error = detailed.error
        record.requests = detailed.input_requests
        for key, job in list(record.answering.items()):
            if key not in record.requests and key not in record.answered:
                job.cancel()  # the server stopped asking: withdraw the question

    # -- questions -----------------------------------------------------------------------------

    async def serve_input(self, handle: TaskHandle) -> None:
        """Answer each pending request key once, in the background (a person may take a while;
        polling goes on). Questions the server stops asking are withdrawn as polls show it."""
        record = self._tasks.get(handle.task_id or "")
        if record is None:
            return
        for key, request in record.requests.items():
            if key not in record.answered and key not in record.answering:
                job = self.session.background.future(
                    self._answer(handle, record, key, request), name=f"mcp-task-input {handle.task_id} {key}"
                )
                record.answering[key] = job
                job.add_done_callback(functools.partial(self._settled, record, key))

    def _settled(self, record: _Task, key: str, job: asyncio.Task[None]) -> None:
        if record.answering.get(key) is job:
            del record.answering[key]
        if not job.cancelled() and job.exception() is not None:
            log.error("%s: answering %s failed", self.server, key, exc_info=job.exception())

    async def _answer(self, handle: TaskHandle, record: _Task, key: str, request: dict[str, Any]) -> None:
        if key in record.undelivered:
            response = record.undelivered.pop(key)
        else:
            responses = await self.answers.answer_inputs({key: request}, handle)
            if key not in responses:
                record.answered.add(key)
                return  # nothing here can answer this kind of request (logged once)
            response = responses[key]
        record.answered.add(key)  # settled: never asked again, whatever comes of it
        task_id = handle.task_id
        assert task_id is not None
        for attempt in range(1, UPDATE_ATTEMPTS + 1):
            try:
                await self.session.request("tasks/update", wire.update_params(task_id, {key: response}))
                break
            except (ConnectionFailed, RequestTimeout) as exc:
                if self.session.closed_error is not None:
                    return
                if attempt == UPDATE_ATTEMPTS:
                    # Kept, not dropped: while a poll shows the server still asking, it is sent again
                    # (``serve_input``); the task would otherwise wait for it until its retention ran out.
                    log.warning(
                        "%s: could not deliver the answer to %s of task %s yet: %s", self.server, key, task_id, exc
                    )
                    record.undelivered[key] = response
                    record.answered.discard(key)
                    return
                await asyncio.sleep(0.5 * 2**attempt)
            except ProtocolError as exc:
                log.warning("%s: tasks/update for %s of task %s refused: %s", self.server, key, task_id, exc)
                return
        self.events.wake(handle)  # poll at once to see what the answer changed

    # -- the end -------------------------------------------------------------------------------

    async def result(self, handle: TaskHandle) -> ToolResult:
        task_id = handle.task_id
        assert task_id is not None
        record = self._tasks.get(task_id) or _Task()
        if handle.server_status == COMPLETED:
            if record.result is None:  # known from a push without its payload: fetch it once
                await self.get(task_id)
                record = self._tasks.get(task_id) or record
            if record.result is None:
                raise InvalidMessage(
                    f"task {task_id} is completed but tasks/get carries no result",
                    server=self.server,
                    method="tasks/get",
                )
            return self.tool_result(record.result, "tasks/get")
        if handle.server_status == CANCELLED:
            raise TaskCancelled(
                handle.status_message or "the task was cancelled",
                server=self.server,
                task_id=task_id,
                tool=handle.tool,
            )
        error = record.error
        message = error.get("message") if isinstance(error, dict) else None
        raise TaskFailed(
            handle.status_message
            or (message if isinstance(message, str) else None)
            or f"the task ended {handle.server_status}",
            server=self.server,
            task_id=task_id,
            tool=handle.tool,
            status_message=handle.status_message,
            error=error if handle.server_status == FAILED else None,
        )

    async def cancel(self, task_id: str) -> TaskState | None:
        """Ask for cancellation; the server only acknowledges, so polling shows the outcome."""
        try:
            await self.session.request("tasks/cancel", wire.get_params(task_id))
        except ProtocolError as exc:
            if exc.code != jsonrpc.INVALID_PARAMS:
                raise
        return None

    def release(self, handle: TaskHandle) -> None:
        record = self._tasks.pop(handle.task_id or "", None)
        if record is None:
            return
        for job in record.answering.values():
            job.cancel()
        self._follow_later()

    # -- push notifications --------------------------------------------------------------------

    def push_live(self, handle: TaskHandle) -> bool:
        subscription = self.subscription
        return subscription is not None and not subscription.done() and handle.task_id in self.subscribed

    def _follow_later(self, delay: float | None = None) -> None:
        """Have the subscription follow the set of live tasks: at once (a new task's changes are
        pushed from its start), but at most one renewal per RESUBSCRIBE_DELAY_S (tasks started
        together share the next one)."""
        if self._renewal is None and self.listen_supported is not False and self.session.closed_error is None:
            loop = asyncio.get_running_loop()
            if delay is None:
                delay = max(0.0, self._renewed_at + RESUBSCRIBE_DELAY_S - loop.time())
            self._renewal = loop.call_later(delay, self._follow)

    def _follow(self) -> None:
        """Renew the subscription when live tasks are missing from it, or when it names twice as
        many as live; end it when no task is live."""
        self._renewal = None
        if self.listen_supported is False or self.session.closed_error is not None:
            return
        live = self._tasks.keys()
        current = self.subscription if self.subscription is not None and not self.subscription.done() else None
        if not live:
            if current is not None:
                current.cancel()
            self.subscription, self.subscribed = None, frozenset()
            return
        if current is not None and live <= self.subscribed and 2 * len(live) > len(self.subscribed):
            return
        # The new subscription's snapshot brings every named task's state: no change falls between.
        self.subscribed = frozenset(live)
        self.subscriptions_made += 1
        self._renewed_at = asyncio.get_running_loop().time()
        self.subscription = self.session.background.future(
            self._listen_to(sorted(self.subscribed)), name=f"mcp-subscription {self.server}"
        )
        self.subscription.add_done_callback(_consume)
        if current is not None:
            current.cancel()

    async def _listen_to(self, task_ids: list[str]) -> None:
        """Hold one ``subscriptions/listen`` open for ``task_ids`` until it is renewed or ended."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        graceful = False
        try:
            await self.session.request(modern.SUBSCRIPTIONS_LISTEN, wire.listen_params(task_ids), timeout=None)
            self.listen_supported = graceful = True  # the server ended it with its result: a graceful close
        except MCPError as exc:
            if (isinstance(exc, ProtocolError) and exc.code in _NO_LISTEN) or (
                isinstance(exc, HTTPStatusError) and 400 <= exc.status_code < 500
            ):
                self.listen_supported = False
            log.debug("%s: no task notifications through subscriptions/listen: %s", self.server, exc)
        # Ended, not renewed (a renewal cancels the old one): no pushes until another subscription.
        if self.subscription is asyncio.current_task():
            self.subscription, self.subscribed = None, frozenset()
            self.events.pushes_changed()  # meanwhile each task is polled at its own interval
            lasted = loop.time() - began
            if graceful and lasted >= FIRST_LISTEN_RETRY_S:
                # A server that rotates its streams: open the next one for the live tasks at once.
                self._retry_s = FIRST_LISTEN_RETRY_S
                self._follow_later()
                return
            self._retry_s = (
                FIRST_LISTEN_RETRY_S if lasted >= LISTEN_HEALTHY_S else min(MAX_LISTEN_RETRY_S, self._retry_s * 2)
            )
            self._follow_later(self._retry_s)


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
