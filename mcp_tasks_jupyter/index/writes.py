"""The task index's writes: batched, never holding the event loop, kept and retried while the database is
busy (SQLite) or out of reach (PostgreSQL).

Row updates come from ``TaskHandle.on_change`` callbacks, on the kernel's event loop: a write must never
hold the loop. On a running loop a change is kept, and everything kept is written together in one
transaction :data:`BATCH_S` later (one timer for the batch; a read writes what is kept first), so that a
thousand tasks changing at once make one transaction, not a thousand. Where the database is a file
(SQLite) the batch is written on the loop's thread, waiting at most :data:`HOT_BUSY_TIMEOUT_MS` for
another process's lock; where a statement waits on the network (PostgreSQL: ``backend.blocking``) it is
written on a thread of its own (one per index, :class:`Writer`), and the loop only hears how it went.

A batch that meets a busy or unreachable database (``backend.is_transient``) is kept, merged per row (the
row's latest state wins; an update of a row whose insert waits goes into that insert), and tried again
from the loop (``call_later``), backing off from :data:`FIRST_RETRY_S` to :data:`MAX_RETRY_S`. Bounds:
at most :data:`MAX_PENDING_ROWS` rows wait (each may hold a task's result); past it the oldest row's
change is given up, logged as an error naming it. A SQLite change that waited :data:`GIVE_UP_S` is given
up too (someone's transaction left open); an unreachable PostgreSQL server only ever costs the bound: its
rows wait until it is back, and one warning says so (and one line when it is back), not one per write.
``close()`` writes what is left, waiting up to :data:`BLOCKING_BUSY_TIMEOUT_MS`; what it still cannot
write is given up, logged. Without a running loop (plain scripts) a write may block up to
:data:`BLOCKING_BUSY_TIMEOUT_MS`, and a change still kept is retried with the next write, read or
``close()``. A failure that does not pass by itself (a read-only file, a wrong password) drops the rows it
concerns (a batch that fails so is written again row by row, so only the failing rows go), logged, as
the index must never break a task.

Inserts are upserts (``ON CONFLICT (id) DO UPDATE``): a batch sent again after a connection broke
before its commit was confirmed leaves each row once.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import random
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .backend import IndexBackend
from .location import IndexLocation

log = logging.getLogger(__name__)

#: How long a write on a running event loop may wait for another connection's lock: short enough not to
#: be felt (one frame), long enough for the usual few-millisecond transaction of another kernel.
HOT_BUSY_TIMEOUT_MS = 20
#: How long a read on a running loop may wait: reads run on user actions (``%mcp_tasks``, a cached call).
READ_BUSY_TIMEOUT_MS = 1000
#: How long anything may wait without a running loop, and ``close()``; a network write off the loop too.
BLOCKING_BUSY_TIMEOUT_MS = 5000
#: On a running loop, the changes made within this long are written in one transaction.
BATCH_S = 0.05
FIRST_RETRY_S = 0.05
MAX_RETRY_S = 5.0
#: How long a change may wait for a busy SQLite file before it is given up (logged as an error): ten minutes
#: covers someone's long transaction in another kernel or a ``sqlite3`` shell left open for a while.
GIVE_UP_S = 600.0
#: Rows with a kept change at most (each may hold a task's result); beyond it the oldest are given up.
MAX_PENDING_ROWS = 10_000


#: Every queue, so that what a loop kept for its batch is written when the interpreter exits.
_queues: weakref.WeakSet[WriteQueue] = weakref.WeakSet()


@atexit.register
def _write_kept() -> None:
    for queue in list(_queues):
        try:
            queue.close()
        except Exception:  # never fail the interpreter's exit
            log.exception("the task index %s: writing what was kept at exit failed", queue.where)


def flush_kept_for(location: IndexLocation) -> None:
    """Write what every index of this process on ``location`` keeps for its batch, so that a read
    through one of them (an export, ``mtj.to_dataframe``) sees what another one's tasks already did
    (the runtime's client and ``default_index()`` are two objects on one file or database)."""
    for queue in list(_queues):
        if queue.database.location == location:
            queue.flush_unless_due()


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def write_timeout_ms() -> int:
    return HOT_BUSY_TIMEOUT_MS if running_loop() is not None else BLOCKING_BUSY_TIMEOUT_MS


def read_timeout_ms() -> int:
    return READ_BUSY_TIMEOUT_MS if running_loop() is not None else BLOCKING_BUSY_TIMEOUT_MS


@dataclass
class RowChange:
    """What is still to be written to one row: its insert (all columns) if that is waiting too, and the
    columns to update after it."""

    row: int
    insert: dict[str, Any] | None
    sets: dict[str, Any] = field(default_factory=dict)
    since: float = field(default_factory=time.monotonic)

    def merge(self, sets: dict[str, Any], keep: Iterable[str] = ()) -> None:
        """Apply a later update: ``sets`` columns take their new values, except that a None for a
        ``keep`` column leaves the column as it is (SQL ``COALESCE(?, column)``)."""
        kept = set(keep)
        for column, value in sets.items():
            if value is None and column in kept:
                continue
            if self.insert is not None:
                self.insert[column] = value
            else:
                self.sets[column] = value

    def then(self, later: RowChange) -> RowChange:
        """This (older) change followed by ``later`` (kept while this one was being written)."""
        if later.insert is not None:
            return later
        merged = RowChange(
            self.row, dict(self.insert) if self.insert is not None else None, dict(self.sets), self.since
        )
        merged.merge(later.sets)
        return merged

    def statement(self) -> tuple[str, tuple[Any, ...]]:
        if self.insert is not None:
            columns = ", ".join(self.insert)
            marks = ", ".join("?" * len(self.insert))
            again = ", ".join(f"{column} = excluded.{column}" for column in self.insert)
            return (
                f"INSERT INTO tasks (id, {columns}) VALUES (?, {marks}) ON CONFLICT (id) DO UPDATE SET {again}",
                (self.row, *self.insert.values()),
            )
        assignments = ", ".join(f"{column} = ?" for column in self.sets)
        return f"UPDATE tasks SET {assignments} WHERE id = ?", (*self.sets.values(), self.row)

    def describe(self) -> str:
        values = self.insert if self.insert is not None else self.sets
        task = values.get("task_id")
        what = f"row {self.row}" + (f" (task {task})" if task else "")
        return what + (": its record" if self.insert is not None else f": {', '.join(self.sets)}")


@dataclass
class Outcome:
    """How writing a batch went: the changes still to keep (the database was busy or away, ``why``) and
    those dropped (each with the reason)."""

    kept: list[RowChange] = field(default_factory=list)
    why: BaseException | None = None
    dropped: list[tuple[RowChange, str]] = field(default_factory=list)


def write(database: IndexBackend, batch: list[RowChange], timeout_ms: int) -> Outcome:
    """Write ``batch`` in one transaction (on whichever thread calls it: it touches no queue); a batch that
    fails for good is written again row by row, so that only the failing rows are dropped."""
    try:
        db = database.connection(timeout_ms)
        with database.transaction(db):
            for change in batch:
                database.execute(db, *change.statement())
        return Outcome()
    except database.errors as exc:
        if database.is_transient(exc):
            return Outcome(batch, exc)
        if len(batch) == 1:
            return Outcome(dropped=[(batch[0], database.describe_error(exc))])
    outcome = Outcome()
    for i, change in enumerate(batch):
        try:
            db = database.connection(timeout_ms)
            with database.transaction(db):
                database.execute(db, *change.statement())
        except database.errors as exc:
            if database.is_transient(exc):
                return Outcome(batch[i:], exc, outcome.dropped)
            outcome.dropped.append((change, database.describe_error(exc)))
    return outcome


class Writer:
    """The one thread of an index whose statements wait on the network (``backend.blocking``)."""

    def __init__(self) -> None:
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def submit(self, database: IndexBackend, batch: list[RowChange]) -> concurrent.futures.Future[Outcome]:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mtj-index-writer")
        return self._pool.submit(write, database, batch, BLOCKING_BUSY_TIMEOUT_MS)

    def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.shutdown(wait=False)


@dataclass
class InFlight:
    """A batch being written on the writer's thread."""

    batch: list[RowChange]
    future: concurrent.futures.Future[Outcome]


class WriteQueue:
    """The changes of an index's rows not written yet, and when to try again (see the module docstring)."""

    def __init__(self, database: IndexBackend) -> None:
        self.database = database
        self.where = database.location.shown
        self._pending: dict[int, RowChange] = {}  # oldest first
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._delay = FIRST_RETRY_S
        #: The write of the batch kept on a running loop (and that loop).
        self._batch: asyncio.TimerHandle | None = None
        self._batch_loop: asyncio.AbstractEventLoop | None = None
        self._writer = Writer()
        self._inflight: InFlight | None = None
        #: Since when the database has been out of reach (None: it is not known to be), and why.
        self.unreachable_since: float | None = None
        _queues.add(self)

    def __len__(self) -> int:
        return len(self._pending) + (len(self._inflight.batch) if self._inflight is not None else 0)

    def submit(
        self,
        row: int,
        *,
        insert: dict[str, Any] | None = None,
        sets: dict[str, Any] | None = None,
        keep: Iterable[str] = (),
    ) -> bool:
        """Record a change of ``row`` (its insert, or an update) and write what is pending unless a retry
        is already due. False if the change was dropped (a failure that does not pass by itself: logged);
        True if it was written or is kept for later."""
        if insert is None and not sets:
            return True
        change = self._pending.get(row)
        if change is None:
            if len(self._pending) >= MAX_PENDING_ROWS:
                self._give_up_oldest()
            change = self._pending[row] = RowChange(row, dict(insert) if insert is not None else None)
        elif insert is not None:
            log.warning("the task index %s: row %d was recorded twice; the second record wins", self.where, row)
            change.insert = dict(insert)
        if sets:
            change.merge(sets, keep)
        if self._retry_due():
            return True
        loop = running_loop()
        if loop is not None:
            if not self._batch_due(loop):
                self._batch, self._batch_loop = loop.call_later(BATCH_S, self._write_batch), loop
            return True
        return row not in self.flush(write_timeout_ms())

    def _batch_due(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether the batch's write is scheduled on ``loop`` (one on a closed or other loop never runs)."""
        if self._batch is not None and self._batch_loop is loop and not loop.is_closed():
            return True
        self._cancel_batch()
        return False

    def _write_batch(self) -> None:
        self._batch = self._batch_loop = None
        if self._retry_due():
            return
        try:
            if self.database.blocking:
                self._write_off_loop()
            else:
                self.flush(HOT_BUSY_TIMEOUT_MS)
        except Exception:  # never let a loop callback raise
            log.exception("the task index %s: a batched write failed", self.where)

    def _cancel_batch(self) -> None:
        if self._batch is not None:
            self._batch.cancel()
        self._batch = self._batch_loop = None

    # -- off the loop (a database on the network) ----------------------------------------------------

    def _write_off_loop(self) -> None:
        """Hand what is pending to the writer's thread; the loop hears back in :meth:`_landed`."""
        loop = running_loop()
        if self._inflight is not None or not self._pending or loop is None:
            return  # what is pending now goes when the batch in flight has landed
        batch = list(self._pending.values())
        self._pending.clear()
        future = self._writer.submit(self.database, batch)
        inflight = self._inflight = InFlight(batch, future)

        def done(_: concurrent.futures.Future[Outcome]) -> None:
            try:
                loop.call_soon_threadsafe(self._landed, inflight)
            except RuntimeError:  # the loop closed meanwhile: the next use (or close) settles it
                pass

        future.add_done_callback(done)

    def _landed(self, inflight: InFlight) -> None:
        if self._inflight is not inflight:
            return  # settled already (a read or close waited for it)
        self._settle_inflight(0)
        if self._pending and not self._retry_due():
            loop = running_loop()
            if loop is not None and not self._batch_due(loop):
                self._batch, self._batch_loop = loop.call_later(BATCH_S, self._write_batch), loop

    def _settle_inflight(self, timeout_ms: int) -> bool:
        """Take in the outcome of the batch in flight, waiting up to ``timeout_ms`` for it; False if it
        is still being written."""
        inflight = self._inflight
        if inflight is None:
            return True
        try:
            outcome = inflight.future.result(timeout=timeout_ms / 1000)
        except concurrent.futures.TimeoutError:
            return False
        except Exception as exc:  # the writer's thread itself failed (it never should): keep the batch
            outcome = Outcome(inflight.batch, exc)
        self._inflight = None
        # What was kept meanwhile is newer than the batch: it goes after it.
        newer, self._pending = self._pending, {}
        for change in outcome.kept:
            self._pending[change.row] = change
        for row, later in newer.items():
            earlier = self._pending.get(row)
            self._pending[row] = earlier.then(later) if earlier is not None else later
        self._report(outcome, len(inflight.batch) - len(outcome.kept))
        return True

    # -- on the calling thread ---------------------------------------------------------------------

    def flush(self, timeout_ms: int) -> set[int]:
        """Write every pending change in one transaction, waiting at most ``timeout_ms`` for the lock (or
        the connection); the rows whose changes were dropped. On a busy or unreachable database the
        changes are kept and a retry is scheduled when a loop runs."""
        self._cancel_batch()  # whatever is kept is written now
        if not self._settle_inflight(timeout_ms):
            return set()  # the writer's thread still has the batch: it lands on the loop
        if not self._pending:
            return set()
        batch = list(self._pending.values())
        self._pending.clear()
        outcome = write(self.database, batch, timeout_ms)
        for change in outcome.kept:  # nothing else ran meanwhile: one thread
            self._pending[change.row] = change
        self._report(outcome, len(batch) - len(outcome.kept))
        return {change.row for change, _ in outcome.dropped}

    def flush_unless_due(self) -> None:
        """Write what is pending now (a read is about to run, or the loop is about to stop) unless a retry is
        already scheduled; a batch the writer's thread has is waited for first (as long as a read may wait)."""
        if not (self._pending or self._inflight is not None) or self._retry_due():
            return
        self._settle_inflight(read_timeout_ms())
        if self._pending and not self._retry_due():
            self.flush(write_timeout_ms())

    def close(self) -> None:
        """Write what is pending, waiting up to :data:`BLOCKING_BUSY_TIMEOUT_MS`; give up (logged) what
        still cannot be written. The queue can be used again afterwards."""
        self._cancel_timer()
        self.flush(BLOCKING_BUSY_TIMEOUT_MS)
        if self._pending and self.database.blocking:
            self.flush(
                BLOCKING_BUSY_TIMEOUT_MS
            )  # once more: the first may have met a connection the server closed
        self._cancel_timer()
        self._settle_inflight(BLOCKING_BUSY_TIMEOUT_MS)
        if self._pending:
            what = "unreachable" if self.unreachable_since is not None else "busy"
            self._give_up(list(self._pending.values()), f"the index was closed while its database was {what}")
        self._writer.close()

    # -- outcomes ----------------------------------------------------------------------------------

    def _report(self, outcome: Outcome, written: int) -> None:
        if outcome.dropped:
            log.warning(
                "the task index %s could not be written: %d change(s) dropped: %s",
                self.where,
                len(outcome.dropped),
                "; ".join(f"{change.describe()} ({why})" for change, why in outcome.dropped[:5]),
            )
        if outcome.why is not None:
            self._keep(outcome.why)
            return
        if self.unreachable_since is not None:
            log.warning(
                "the task index %s can be reached again after %.0f s: the changes it kept are written",
                self.where,
                time.monotonic() - self.unreachable_since,
            )
            self.unreachable_since = None
        if written or outcome.dropped:
            self._delay = FIRST_RETRY_S
            self._cancel_timer()

    def _keep(self, exc: BaseException) -> None:
        if self.database.gives_up:
            now = time.monotonic()
            stale = [change for change in self._pending.values() if now - change.since >= GIVE_UP_S]
            if stale:
                self._give_up(stale, f"its database stayed busy for {GIVE_UP_S:.0f} s ({exc})")
        if not self._pending:
            return
        if self.database.blocking and self.unreachable_since is None:
            self.unreachable_since = time.monotonic()
            log.warning(
                "the task index %s cannot be reached (%s): tasks go on, and their records wait (at most %d rows; "
                "past that the oldest are given up) until it is back or the index is closed",
                self.where,
                self.database.describe_error(exc),
                MAX_PENDING_ROWS,
            )
        else:
            log.debug("the task index %s is busy (%s): %d change(s) kept for later", self.where, exc, len(self))
        loop = running_loop()
        if loop is not None and not self._retry_due():
            delay = self._delay * random.uniform(0.5, 1.0)  # spread processes that met the same lock
            self._timer, self._timer_loop = loop.call_later(delay, self._retry), loop
            self._delay = min(self._delay * 2, MAX_RETRY_S)

    def _retry(self) -> None:
        self._timer = self._timer_loop = None
        try:
            if self.database.blocking:
                self._write_off_loop()
            else:
                self.flush(HOT_BUSY_TIMEOUT_MS)
        except Exception:  # never let a loop callback raise
            log.exception("the task index %s: a retried write failed", self.where)

    def _retry_due(self) -> bool:
        """Whether a retry is scheduled on the loop running now (one on a closed or other loop never runs)."""
        if self._timer is None:
            return False
        if self._timer_loop is running_loop() and not self._timer_loop.is_closed():  # type: ignore[union-attr]
            return True
        self._cancel_timer()
        return False

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._timer_loop = None

    def _give_up_oldest(self) -> None:
        oldest = next(iter(self._pending.values()))
        self._give_up([oldest], f"more than {MAX_PENDING_ROWS} rows were waiting for its database")

    def _give_up(self, changes: list[RowChange], why: str) -> None:
        for change in changes:
            self._pending.pop(change.row, None)
        log.error(
            "the task index %s gave up %d change(s) because %s: %s%s",
            self.where,
            len(changes),
            why,
            "; ".join(c.describe() for c in changes[:5]),
            " ..." if len(changes) > 5 else "",
        )
