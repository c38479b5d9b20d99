"""The process-wide task store: task records, their status, retention (ttl) and listing.

One :class:`TaskStore` serves every session of the process, so a client that reconnects (say,
after a kernel restart) can still look its tasks up. The store also owns the background
coroutine ("body") of each task, keeping a strong reference until it ends, and cancels it when
the task is cancelled, expires, or the server shuts down.

The store is dialect-neutral: statuses are the five of the 2025-11-25 spec, times are kept as
numbers, and turning a record into wire JSON is the protocol module's job.

Expiry is lazy: every store operation first purges tasks whose ttl (counted from creation) has
elapsed, remembering their ids in a bounded tombstone set so lookups can say "expired" rather
than "not found". A timer per task also runs that purge when its ttl runs out, so a body stops
and ``tasks/result`` waiters wake even if nobody touches the store.

Listing is in creation order (oldest first); cursors carry the creation sequence number of the
last task returned, so pages stay stable while tasks come and go.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .pagination import decode_cursor, encode_cursor

logger = logging.getLogger("mcp_tasks_jupyter.demo")

TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
STATUSES = frozenset({"working", "input_required"}) | TERMINAL_STATUSES
MAX_TOMBSTONES = 100_000

TaskListener = Callable[["TaskRecord"], None]


class TaskNotFound(LookupError):
    """No task with that id (never existed, or forgotten long ago)."""


class TaskExpired(LookupError):
    """The task existed but its ttl has elapsed and it was purged."""


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
    done: asyncio.Event = field(default_factory=asyncio.Event)
    listeners: list[TaskListener] = field(default_factory=list)
    body: asyncio.Task[None] | None = None
    input_request: InputRequest | None = None

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
        self._tombstones: dict[str, None] = {}
        self._seq = itertools.count(1)
        self._bodies: set[asyncio.Task[None]] = set()

    # -- creation and lookup -------------------------------------------------------------

    def create(self, *, tool_name: str, ttl_ms: int, poll_interval_ms: int, status_message: str) -> TaskRecord:
        """A new task in ``working`` status with an unguessable id."""
        self.purge_expired()
        now = self._wallclock()
        task_id = secrets.token_urlsafe(16)
        while task_id in self._tasks or task_id in self._tombstones:
            task_id = secrets.token_urlsafe(16)  # pragma: no cover - 128 random bits
        task = TaskRecord(
            task_id=task_id,
            seq=next(self._seq),
            tool_name=tool_name,
            status="working",
            status_message=status_message,
            created_at=now,
            last_updated_at=now,
            ttl_ms=ttl_ms,
            poll_interval_ms=poll_interval_ms,
            expires_at=self._monotonic() + ttl_ms / 1000,
        )
        self._tasks[task_id] = task
        asyncio.get_running_loop().call_later(ttl_ms / 1000 + 0.01, self.purge_expired)
        logger.info("task %s created for %s (ttl %d ms)", task_id, tool_name, ttl_ms)
        return task

    def get(self, task_id: object) -> TaskRecord:
        """The live task with this id; :class:`TaskExpired` or :class:`TaskNotFound` otherwise."""
        self.purge_expired()
        if not isinstance(task_id, str):
            raise TaskNotFound(str(task_id))
        task = self._tasks.get(task_id)
        if task is not None:
            return task
        if task_id in self._tombstones:
            raise TaskExpired(task_id)
        raise TaskNotFound(task_id)

    def list_page(self, cursor: object, limit: int) -> tuple[list[TaskRecord], str | None]:
        """One page of tasks in creation order, and the cursor of the next page (None: last page).

        Raises :class:`~.pagination.InvalidCursor` for a cursor this store did not issue.
        """
        self.purge_expired()
        after = 0 if cursor is None else decode_cursor("tasks", cursor)
        remaining = (task for task in self._tasks.values() if task.seq > after)
        page = list(itertools.islice(remaining, limit + 1))
        if len(page) > limit:
            page = page[:limit]
            return page, encode_cursor("tasks", page[-1].seq)
        return page, None

    # -- running ---------------------------------------------------------------------------

    def start(self, task: TaskRecord, body: Coroutine[Any, Any, None]) -> None:
        """Run ``body`` in the background for ``task``; the store keeps it alive and cancels it
        when the task is cancelled, expires, or on :meth:`shutdown`."""
        runner = asyncio.get_running_loop().create_task(body, name=f"demo-task-{task.task_id}")
        task.body = runner
        self._bodies.add(runner)

        def finished(done: asyncio.Task[None]) -> None:
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
        task.done.set()
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
        task.done.set()
        if task.body is not None:
            task.body.cancel()
        return task

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
        expired = [task for task in self._tasks.values() if task.expires_at <= now]
        for task in expired:
            del self._tasks[task.task_id]
            self._tombstones[task.task_id] = None
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
