"""The process-wide task store: task records, their status, retention (ttl) and listing.

One :class:`TaskStore` serves every session of the process, so a client that reconnects (say,
after a kernel restart) can still look its tasks up. The store also owns the background
coroutine ("body") of each task, keeping a strong reference until it ends, and cancels it when
the task is cancelled, expires, or the server shuts down.

The store is dialect-neutral: statuses are the five of the 2025-11-25 spec plus ``submitted``
(where a sep1686 task starts), times are kept as numbers, and turning a record into wire JSON is
the protocol module's job. Each record remembers the dialect that created it (``2025-11-25``,
``ext`` or ``sep1686``); a lookup or a listing that names a dialect sees only that dialect's tasks,
so one dialect's clients never see (or list) another's.

Retention: a task lives ``ttl_ms`` from creation (2025-11-25, ext) or, with ``keep_alive_ms``
(sep1686), until ``keep_alive_ms`` after it reaches a terminal status. Expiry is lazy: every store
operation first purges tasks whose time is up, remembering their ids in a bounded tombstone set
so lookups can say "expired" rather than "not found" (and an id is never issued twice); the tasks' expiry
times are kept in a heap, so that purge costs what expires, not what the store holds (a sweep of 10,000 tasks
made every operation walk them all). A timer
per task also runs that purge when its time runs out, so a body stops and ``tasks/result``
waiters wake even if nobody touches the store.

Questions a running task waits on (:class:`InputRequest`) are kept per task under keys that are
never reused within the task (``input-1``, ``input-2``, ...), so several can be open at once.

Listing is in creation order (oldest first); cursors carry the creation sequence number of the
last task returned, so pages stay stable while tasks come and go.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import math
import secrets
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .pagination import decode_cursor, encode_cursor

logger = logging.getLogger("mcp_tasks_jupyter.demo")

TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
STATUSES = frozenset({"submitted", "working", "input_required"}) | TERMINAL_STATUSES
MAX_TOMBSTONES = 100_000

TaskListener = Callable[["TaskRecord"], None]


class TaskNotFound(LookupError):
    """No task with that id (never existed, or forgotten long ago)."""


class TaskExpired(LookupError):
    """The task existed but its ttl has elapsed and it was purged."""


class TaskIdTaken(ValueError):
    """A caller-chosen task id (sep1686) names a task that exists or existed."""


class TaskAlreadyTerminal(ValueError):
    """The task already reached a terminal status (so it cannot be cancelled)."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


def isoformat_utc(timestamp: float) -> str:
    """ISO 8601 UTC with milliseconds and a ``Z``, e.g. ``2025-11-25T10:30:00.123Z``."""
    moment = datetime.fromtimestamp(timestamp, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(eq=False)
class InputRequest:
    """A question a running task waits on (e.g. ``elicitation/create``), dialect-neutral.

    ``answer`` resolves with the client's result (or an exception). The protocol layer asks
    it through a session; ``asked_via`` is that session and ``withdraw`` retracts the ask
    (so it can be asked again through another session, say after a client reconnects).
    """

    method: str
    params: dict[str, Any]
    answer: asyncio.Future[Any]
    asked_via: object | None = None
    withdraw: Callable[[], None] | None = None
    key: str = ""  # set by TaskStore.add_input; unique within its task


@dataclass(eq=False)
class TaskRecord:
    """One task: its status and, once terminal, its outcome (a result or a JSON-RPC error)."""

    task_id: str
    seq: int
    tool_name: str
    status: str
    status_message: str | None
    created_at: float
    last_updated_at: float
    ttl_ms: int
    poll_interval_ms: int
    expires_at: float  # on the store's monotonic clock
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    dialect: str = "2025-11-25"
    keep_alive_ms: int | None = None  # sep1686: retention counts from the end instead of creation
    done: asyncio.Event = field(default_factory=asyncio.Event)
    listeners: list[TaskListener] = field(default_factory=list)
    body: asyncio.Task[Any] | None = None
    input_requests: dict[str, InputRequest] = field(default_factory=dict)  # open questions, by key
    input_count: int = 0  # questions ever asked: the source of fresh keys

    @property
    def terminal(self) -> bool:
        """True once completed, failed or cancelled (and then it never changes again)."""
        return self.status in TERMINAL_STATUSES


class TaskStore:
    """All tasks of the process; see the module docstring for retention and ordering."""

    def __init__(
        self,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        wallclock: Callable[[], float] = time.time,
    ) -> None:
        self._monotonic = monotonic
        self._wallclock = wallclock
        self._tasks: dict[str, TaskRecord] = {}
        self._tombstones: dict[str, bool] = {}  # id -> True if it expired (False: deleted)
        self._seq = itertools.count(1)
        self._bodies: set[asyncio.Task[None]] = set()
        #: (expires_at, seq, task_id) of the tasks with a set expiry, earliest first; an entry whose task is gone
        #: or expires at another time now is stale and skipped.
        self._expiry: list[tuple[float, int, str]] = []

    # -- creation and lookup -------------------------------------------------------------

    def create(
        self,
        *,
        tool_name: str,
        ttl_ms: int,
        poll_interval_ms: int,
        status_message: str | None,
        dialect: str = "2025-11-25",
        task_id: str | None = None,
        status: str = "working",
        keep_alive_ms: int | None = None,
    ) -> TaskRecord:
        """A new task, in ``working`` status unless ``status`` says ``submitted``.

        The id is unguessable (128 random bits) unless the caller chose one (``task_id``, sep1686),
        which must never have been used: :class:`TaskIdTaken` otherwise. With ``keep_alive_ms``
        the task is kept until that long after it ends (``ttl_ms`` is then what gets reported
        and nothing more); otherwise it is kept ``ttl_ms`` from creation.
        """
        if status not in ("submitted", "working"):
            raise ValueError(f"a task cannot start in status {status!r}")
        self.purge_expired()
        if task_id is None:
            task_id = secrets.token_urlsafe(16)
            while task_id in self._tasks or task_id in self._tombstones:
                task_id = secrets.token_urlsafe(16)  # pragma: no cover - 128 random bits
        elif task_id in self._tasks or task_id in self._tombstones:
            raise TaskIdTaken(task_id)
        now = self._wallclock()
        task = TaskRecord(
            task_id=task_id,
            seq=next(self._seq),
            tool_name=tool_name,
            status=status,
            status_message=status_message,
            created_at=now,
            last_updated_at=now,
            ttl_ms=ttl_ms,
            poll_interval_ms=poll_interval_ms,
            expires_at=math.inf if keep_alive_ms is not None else self._monotonic() + ttl_ms / 1000,
            dialect=dialect,
            keep_alive_ms=keep_alive_ms,
        )
        self._tasks[task_id] = task
        if keep_alive_ms is None:
            heapq.heappush(self._expiry, (task.expires_at, task.seq, task_id))
            asyncio.get_running_loop().call_later(ttl_ms / 1000 + 0.01, self.purge_expired)
        logger.info("task %s created for %s (%s, ttl %d ms)", task_id, tool_name, dialect, ttl_ms)
        return task

    def get(self, task_id: object, dialect: str | None = None) -> TaskRecord:
        """The live task with this id (of this dialect, if one is named); :class:`TaskExpired`
        or :class:`TaskNotFound` otherwise."""
        self.purge_expired()
        if not isinstance(task_id, str):
            raise TaskNotFound(str(task_id))
        task = self._tasks.get(task_id)
        if task is not None and (dialect is None or task.dialect == dialect):
            return task
        if task is None and self._tombstones.get(task_id):
            raise TaskExpired(task_id)
        raise TaskNotFound(task_id)

    def delete(self, task: TaskRecord) -> None:
        """Forget a task now (cancelling it first if it still runs); its id is never reused."""
        if not task.terminal:
            self.cancel(task, "Deleted by request")
        if self._tasks.pop(task.task_id, None) is not None:
            self._tombstones[task.task_id] = False
            task.listeners.clear()
            logger.info("task %s deleted", task.task_id)

    def list_page(
        self, cursor: object, limit: int, dialect: str | None = None
    ) -> tuple[list[TaskRecord], str | None]:
        """One page of tasks (of this dialect, if one is named) in creation order, and the cursor
        of the next page (None: last page).

        Raises :class:`~.pagination.InvalidCursor` for a cursor this store did not issue.
        """
        self.purge_expired()
        after = 0 if cursor is None else decode_cursor("tasks", cursor)
        remaining = (
            task
            for task in self._tasks.values()
            if task.seq > after and (dialect is None or task.dialect == dialect)
        )
        page = list(itertools.islice(remaining, limit + 1))
        if len(page) > limit:
            page = page[:limit]
            return page, encode_cursor("tasks", page[-1].seq)
        return page, None

    # -- running ---------------------------------------------------------------------------

    def start(self, task: TaskRecord, body: Coroutine[Any, Any, Any]) -> None:
        """Run ``body`` in the background for ``task``; the store keeps it alive and cancels it
        when the task is cancelled, expires, or on :meth:`shutdown`."""
        self.adopt(task, asyncio.get_running_loop().create_task(body, name=f"demo-task-{task.task_id}"))

    def adopt(self, task: TaskRecord, runner: asyncio.Task[Any]) -> None:
        """Like :meth:`start`, for a body that already runs (one that became a task midway)."""
        task.body = runner
        self._bodies.add(runner)

        def finished(done: asyncio.Task[Any]) -> None:
            self._bodies.discard(done)
            if task.body is done:
                task.body = None
            if not done.cancelled() and done.exception() is not None:
                logger.error("task body %s crashed", task.task_id, exc_info=done.exception())

        runner.add_done_callback(finished)

    # -- status changes ----------------------------------------------------------------------

    _UNSET: Any = object()

    def update(self, task: TaskRecord, *, status: str | None = None, message: str | None = _UNSET) -> bool:
        """Change a live task's status and/or status message; tells its listeners if anything
        changed. Terminal tasks never change: returns False."""
        if task.terminal:
            return False
        if status is not None and (status not in STATUSES or status in TERMINAL_STATUSES):
            raise ValueError(f"use finish() or cancel() for status {status!r}")
        changed = False
        if status is not None and status != task.status:
            task.status = status
            changed = True
        if message is not self._UNSET and message != task.status_message:
            task.status_message = message
            changed = True
        if changed:
            self._touch(task)
        return changed

    def finish(
        self,
        task: TaskRecord,
        status: str,
        message: str | None,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> bool:
        """Move a task to ``completed`` or ``failed`` with its outcome; False if it was already
        terminal (a cancelled task stays cancelled)."""
        if status not in ("completed", "failed"):
            raise ValueError(f"finish() cannot set status {status!r}")
        if task.terminal:
            return False
        task.status = status
        task.status_message = message
        task.result = result
        task.error = error
        logger.info("task %s %s", task.task_id, status)
        self._touch(task)
        self._ended(task)
        return True

    def cancel(self, task: TaskRecord, message: str = "Cancelled by request") -> TaskRecord:
        """Move a task to ``cancelled`` and stop its body; :class:`TaskAlreadyTerminal` if it
        had already finished."""
        if task.terminal:
            raise TaskAlreadyTerminal(task.status)
        task.status = "cancelled"
        task.status_message = message
        logger.info("task %s cancelled", task.task_id)
        self._touch(task)
        self._ended(task)
        if task.body is not None:
            task.body.cancel()
        return task

    def _ended(self, task: TaskRecord) -> None:
        """A task just became terminal: wake its waiters, drop its open questions, and start
        its keep-alive clock (sep1686)."""
        task.done.set()
        for question in list(task.input_requests.values()):
            if question.withdraw is not None:
                question.withdraw()
            if not question.answer.done():
                question.answer.cancel()
        task.input_requests.clear()
        if task.keep_alive_ms is not None:
            task.expires_at = self._monotonic() + task.keep_alive_ms / 1000
            heapq.heappush(self._expiry, (task.expires_at, task.seq, task.task_id))
            asyncio.get_running_loop().call_later(task.keep_alive_ms / 1000 + 0.01, self.purge_expired)

    # -- questions ---------------------------------------------------------------------------

    def add_input(
        self, task: TaskRecord, method: str, params: dict[str, Any], message: str | None = _UNSET
    ) -> InputRequest:
        """Open a question for a running task under a fresh key; the task goes ``input_required``
        (with ``message`` as its status message, if given)."""
        task.input_count += 1
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        question = InputRequest(method, params, answer, key=f"input-{task.input_count}")
        task.input_requests[question.key] = question
        self.update(task, status="input_required", message=message)
        return question

    def remove_input(self, task: TaskRecord, question: InputRequest, message: str | None = _UNSET) -> None:
        """Close a question (answered or abandoned); with none left open, a live task goes back
        to ``working`` (with ``message``)."""
        if task.input_requests.pop(question.key, None) is None:
            return
        if not task.input_requests and not task.terminal:
            self.update(task, status="working", message=message)

    def _touch(self, task: TaskRecord) -> None:
        task.last_updated_at = max(self._wallclock(), task.last_updated_at)
        for listener in list(task.listeners):
            try:
                listener(task)
            except Exception:  # a listener must not break the store
                logger.exception("task listener failed for %s", task.task_id)

    # -- retention ---------------------------------------------------------------------------

    def purge_expired(self) -> None:
        """Forget every task whose ttl has elapsed (cancelling its body, waking its waiters)."""
        now = self._monotonic()
        expiry = self._expiry
        while expiry and expiry[0][0] <= now:
            expires_at, _seq, task_id = heapq.heappop(expiry)
            task = self._tasks.get(task_id)
            if task is None or task.expires_at != expires_at:
                continue  # deleted already, or its retention counts from its end now
            del self._tasks[task_id]
            self._tombstones[task.task_id] = True
            logger.info("task %s expired", task.task_id)
            if task.body is not None:
                task.body.cancel()
            task.listeners.clear()
            task.done.set()
        while len(self._tombstones) > MAX_TOMBSTONES:
            del self._tombstones[next(iter(self._tombstones))]

    async def shutdown(self, timeout: float = 2.0) -> None:
        """Cancel every running body and wait (briefly) for them to unwind."""
        bodies = list(self._bodies)
        for body in bodies:
            body.cancel()
        if bodies:
            await asyncio.wait(bodies, timeout=timeout)
