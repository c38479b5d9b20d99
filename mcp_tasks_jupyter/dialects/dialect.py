"""The narrow interface a task dialect implements; the lifecycle only sees this.

A dialect owns its wire: it sequences its requests over the session, installs the handlers of what
its servers push (status notifications, questions, log lines) and decides which task each belongs to,
reporting to the lifecycle through ``TaskEvents`` and to the answering path through ``Answers``.
"""

from __future__ import annotations

import builtins
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InvalidMessage, ProtocolError, TaskExpired, TaskNotFound
from ..protocol import tasks_2025, tasks_sep1686
from ..protocol.bounds import MAX_LIST_PAGES
from ..protocol.jsonrpc import Request
from ..protocol.task_state import TaskState, parse_task
from ..protocol.types import Tool
from ..tasks.results import ToolResult

if TYPE_CHECKING:
    from ..session.session import Session
    from ..tasks.handle import TaskHandle

log = logging.getLogger(__name__)


class TaskEvents(Protocol):
    """What a dialect tells the lifecycle (implemented by ``lifecycle.TaskLifecycle``)."""

    def handle_of(self, task_id: str) -> TaskHandle | None: ...

    def awaits(self, task_id: str) -> bool:
        """Whether news of ``task_id`` matters: a live task's, or one a creation in flight may name."""
        ...

    def pushed(self, task_id: str, state: TaskState) -> None: ...

    def wake(self, handle: TaskHandle) -> None: ...

    def pushes_changed(self) -> None:
        """A push channel of the dialect's own (a subscription) opened or dropped."""

    def log(self, handle: TaskHandle | None, params: dict[str, Any]) -> None: ...

    async def task_asking(self, task_id: str) -> TaskHandle: ...


class Answers(Protocol):
    """The answering path (implemented by ``answering.Answerer``)."""

    async def elicit(self, params: dict[str, Any], handle: TaskHandle | None, key: Any) -> dict[str, Any]: ...

    async def sample(self, params: dict[str, Any], handle: TaskHandle | None) -> dict[str, Any]: ...

    async def answer_inputs(
        self, requests: dict[str, dict[str, Any]], handle: TaskHandle | None
    ) -> dict[str, Any]: ...


class TaskDialect(ABC):
    """How one family of servers creates, polls, answers, cancels and lists tasks.

    Adapters sequence the requests of their dialect over the session; the wire encoding and
    validation live in ``protocol/`` (no I/O there).
    """

    name: str = "?"
    #: Why this dialect was chosen (shown by ``%mcp_servers``).
    reason: str = ""

    def __init__(self, session: Session, reason: str = "") -> None:
        self.session = session
        self.reason = reason

    @property
    def server(self) -> str:
        return self.session.name

    # -- what the server allows ----------------------------------------------------------------

    @abstractmethod
    def runs_as_task(self, tool: Tool) -> bool:
        """Whether ``start_task`` on this tool creates a server-side task (else: an ordinary call)."""

    @abstractmethod
    def requires_task(self, tool: Tool) -> bool:
        """Whether the tool can only be called as a task."""

    def tool_listed(self, tool: Tool) -> None:
        """Called for each tool of ``tools/list``: where the server decides per call, a tool that declares
        no task support reads ``task_support`` None (not "forbidden")."""
        if self.server_decides and (tool.execution or {}).get("taskSupport") is None:
            tool.decided_per_call()

    supports_list: bool = False
    supports_cancel: bool = False
    supports_delete: bool = False
    #: The server decides per call whether it becomes a task, and may run it inline instead:
    #: ``start_task`` then runs ``create`` in the background and waits only briefly for it.
    server_decides: bool = False
    #: The server may answer any ``tools/call`` with a task, asked or not (so ``call_tool`` too
    #: must be ready to poll one).
    unsolicited_tasks: bool = False

    def install(self, events: TaskEvents, answers: Answers) -> None:
        """Wire what the dialect needs into the session (capabilities, the handlers of what its
        servers push and ask); called once by the Client that uses it. Dialects extend it."""
        self.events = events
        self.answers = answers
        session = self.session
        session.server_requests.on_notification(tasks_2025.STATUS_NOTIFICATION, self._on_status)
        session.server_requests.on_notification("notifications/message", self._on_log)
        session.server_requests.on_request("elicitation/create", self._on_elicit)
        session.server_requests.on_request("sampling/createMessage", self._on_sampling)

    # -- routing what the server pushes and asks -------------------------------------------------

    def task_named(self, params: dict[str, Any]) -> str | None:
        """The task a server message names (its related-task tag), if any."""
        return tasks_2025.related_task_id(params) or tasks_sep1686.related_task_id(params)

    def _on_status(self, params: dict[str, Any]) -> None:
        """``notifications/tasks/status``: the whole task."""
        task_id = params.get("taskId")
        if not isinstance(task_id, str) or not self.events.awaits(task_id):
            return
        try:
            state = parse_task(params, "notifications/tasks/status")
        except ValueError as exc:
            self.session.noise_received(InvalidMessage(str(exc), server=self.server))
            return
        self.events.pushed(task_id, state)

    def _on_log(self, params: dict[str, Any]) -> None:
        task_id = self.task_named(params)
        self.events.log(self.events.handle_of(task_id) if task_id else None, params)

    async def _asking(self, params: dict[str, Any]) -> TaskHandle | None:
        """The task a server request belongs to (None: a question of the server's own); a request
        naming a task that ended or is unknown here is refused by ``task_asking``."""
        task_id = self.task_named(params)
        return await self.events.task_asking(task_id) if task_id else None

    async def _on_elicit(self, params: dict[str, Any], request: Request) -> dict[str, Any]:
        return await self.answers.elicit(params, await self._asking(params), request.id)

    async def _on_sampling(self, params: dict[str, Any], request: Request) -> dict[str, Any]:
        return await self.answers.sample(params, await self._asking(params))

    # -- the task's life -----------------------------------------------------------------------

    @abstractmethod
    async def create(
        self,
        tool: Tool,
        arguments: dict[str, Any],
        *,
        ttl_ms: int | None,
        progress_token: str,
        handle: TaskHandle | None = None,
    ) -> TaskState | ToolResult:
        """Start the tool as a task; a server that answers at once gives a ToolResult instead.

        ``handle`` is the handle the task will have (questions asked before the task exists
        belong to it)."""

    @abstractmethod
    async def get(self, task_id: str) -> TaskState: ...

    @abstractmethod
    async def result(self, handle: TaskHandle) -> ToolResult:
        """The result of a terminal task; raise TaskFailed / TaskCancelled when there is none."""

    async def serve_input(self, handle: TaskHandle) -> None:
        """The task is ``input_required``: make sure its pending requests reach the client's handlers."""

    @abstractmethod
    async def cancel(self, task_id: str) -> TaskState | None: ...

    async def list(self) -> list[TaskState]:
        return []

    async def delete(self, task_id: str) -> None:
        """Ask the server to forget a task and its result (only where ``supports_delete``)."""
        from ..errors import UsageError

        raise UsageError(f"the {self.name} task dialect has no way to delete a task", server=self.server)

    def on_push(self, params: dict[str, Any]) -> TaskState:
        """A pushed task status (notification params) → TaskState (raises ValueError)."""
        return parse_task(params, "task status notification")

    def release(self, handle: TaskHandle) -> None:
        """The handle is finished: drop any per-task state the dialect kept."""

    def push_live(self, handle: TaskHandle) -> bool:
        """Whether a push channel that carries ``handle``'s changes is open now (the lifecycle then
        polls the task only as a safety net, once pushes for it came)."""
        return False

    def creating(self, task_id: str) -> TaskHandle | None:
        """The handle of a task whose id is known while it is still being created (a client-chosen
        id): a question can name it before the client has the creation's answer."""
        return None

    # -- shared helpers ------------------------------------------------------------------------

    async def list_pages(
        self, parse: Callable[[dict[str, Any]], tuple[builtins.list[TaskState], str | None]]
    ) -> builtins.list[TaskState]:
        """Every page of ``tasks/list`` (a cursor seen twice ends the walk), parsed by ``parse``."""
        states: builtins.list[TaskState] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _page in range(MAX_LIST_PAGES):
            raw = await self.session.request("tasks/list", {"cursor": cursor} if cursor else {})
            try:
                page, cursor = parse(raw)
            except ValueError as exc:
                raise InvalidMessage(str(exc), server=self.server, method="tasks/list", data=raw) from None
            states.extend(page)
            if not cursor or cursor in seen:
                return states
            seen.add(cursor)
        log.warning(
            "%s: tasks/list still had more after %d pages; listing stopped there", self.server, MAX_LIST_PAGES
        )
        return states

    def tool_result(self, raw: dict[str, Any], method: str) -> ToolResult:
        """A tool result from an answer to ``method`` (an invalid one is an InvalidMessage)."""
        try:
            return ToolResult.from_wire(raw)
        except ValueError as exc:
            raise InvalidMessage(str(exc), server=self.server, method=method, data=raw) from None

    def task_error(self, exc: ProtocolError, task_id: str) -> Exception:
        """Map an 'invalid params' answer about a task id to TaskNotFound / TaskExpired."""
        if exc.code == -32602:
            cls = TaskExpired if "expire" in exc.message.lower() else TaskNotFound
            return cls(exc.message, server=self.server, task_id=task_id)
        return exc
