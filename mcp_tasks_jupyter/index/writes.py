"""The task index's writes: batched, never holding the event loop, kept and retried while the database is
busy (SQLite) or out of reach (PostgreSQL).

Row updates come from ``TaskHandle.on_change`` callbacks, on the kernel's event loop: a write must never
hold the loop. On a running loop a change is kept, and everything kept is written together in one
transaction :data:`BATCH_S` later (one timer for the batch; a read writes what is kept first), so that a
thousand tasks changing at once make one transaction, not a thousand. The batch is written on a
thread of its own (one per index, :class:`Writer`), and the loop only hands it over and hears how it went:
a PostgreSQL statement waits there on the network (``backend.blocking``), a SQLite one for another
process's lock (at most :data:`HOT_BUSY_TIMEOUT_MS`, through a connection the writer opens and closes on its
thread: a SQLite connection never crosses threads). A read on the loop writes what is kept first, so it may
wait for the batch in flight (at most :data:`READ_BUSY_TIMEOUT_MS`; for SQLite the batch itself waits no
longer than :data:`HOT_BUSY_TIMEOUT_MS`).

A batch that meets a busy or unreachable database (``backend.is_transient``) is kept, merged per row (the
row's latest state wins; an update of a row whose insert waits goes into that insert), and tried again from
the loop (``call_later``), backing off from :data:`FIRST_RETRY_S` to :data:`MAX_RETRY_S`. Bounds: at most
:data:`MAX_PENDING_ROWS` rows wait (each may hold a task's result); past it the oldest row's change is given
up, logged as an error naming it. A SQLite change that waited :data:`GIVE_UP_S` is given up too (someone's
transaction left open); an unreachable PostgreSQL server only ever costs the bound: its rows wait until it is
back, and one warning says so (and one line when it is back), not one per write. ``close()`` writes what is
left, waiting up to :data:`BLOCKING_BUSY_TIMEOUT_MS`; what it still cannot write to an unreachable database
goes to a file of this user's (``unwritten.py``), which the next process opening that index writes; anything
else it cannot write is given up, logged. Without a running loop (plain scripts) a write may block up to
:data:`BLOCKING_BUSY_TIMEOUT_MS`, and a change still kept is retried with the next write, read or ``close()``.
A failure that does not pass by itself (a read-only file, a wrong password) drops the rows it concerns (a
batch that fails so is written again row by row, so only the failing rows go), logged, as the index must never
break a task.

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
from pathlib import Path
from typing import Any

from . import unwritten
from .backend import IndexBackend
from .database import IndexDatabase
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
    """The one thread of an index on which its batches are written, so that the loop never waits on the
    database: a network server's answer (PostgreSQL) or another process's lock (SQLite). A SQLite file is
    written through a connection of the writer's own, opened and closed on its thread (a SQLite
    connection never crosses threads); a backend whose connection may (PostgreSQL) is used as it is."""

    def __init__(self) -> None:
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None
        #: The writer thread's own SQLite backend (only ever touched on that thread).
        self._own: IndexDatabase | None = None

    def submit(self, database: IndexBackend, batch: list[RowChange]) -> concurrent.futures.Future[Outcome]:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="mtj-index-writer")
        return self._pool.submit(self._write, database, batch)

    def _write(self, database: IndexBackend, batch: list[RowChange]) -> Outcome:
        if isinstance(database, IndexDatabase):
            if self._own is None or self._own.path != database.path:
                self._close_own()
                self._own = IndexDatabase(database.path)
            # As short a wait as on the loop before: a read on the loop may wait for this batch to land,
            # and a busy file is retried with backoff (and given up after GIVE_UP_S) as before.
            return write(self._own, batch, HOT_BUSY_TIMEOUT_MS)
        return write(database, batch, BLOCKING_BUSY_TIMEOUT_MS)

    def _close_own(self) -> None:
        if self._own is not None:
            own, self._own = self._own, None
            try:
                own.close()
            except Exception:  # closing never fails the index
                log.debug("the task index writer's connection did not close cleanly", exc_info=True)

    def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            try:
                pool.submit(self._close_own)  # on the thread that opened it
            except RuntimeError:  # the interpreter is exiting: its connection closes with the process
                pass
            pool.shutdown(wait=False)


@dataclass
class InFlight:
    """A batch being written on the writer's thread."""

    batch: list[RowChange]
    future: concurrent.futures.Future[Outcome]


class WriteQueue:
    """The changes of an index's rows not written yet, and when to try again (see the module docstring)."""

    def __init__(self, database: IndexBackend, unwritten_file: Path | None = None) -> None:
        """``unwritten_file``: where what cannot be written at :meth:`close` waits for the next process
        (``unwritten.py``; None: it is given up, logged). What waits there already is taken in now."""
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
        self._unwritten_file = unwritten_file
        #: The files whose changes were taken in, deleted once nothing is pending.
        self._taken: list[Path] = []
        if unwritten_file is not None:
            self._take_unwritten(unwritten_file)
        _queues.add(self)

    def _take_unwritten(self, path: Path) -> None:
        try:
            changes, self._taken = unwritten.take(path)
        except OSError as exc:
            log.warning("the task index %s: the records kept in %s cannot be read: %s", self.where, path, exc)
            return
        for kept in changes:
            change = self._pending.get(kept.row)
            if change is None:
                self._pending[kept.row] = RowChange(kept.row, kept.insert, dict(kept.sets))
            else:
                self._pending[kept.row] = change.then(RowChange(kept.row, kept.insert, dict(kept.sets)))
        if changes:
            log.warning(
                "the task index %s: %d record change(s) an earlier process could not write before it closed "
                "are written now",
                self.where,
                len(changes),
            )

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
            self._write_off_loop()
        except Exception:  # never let a loop callback raise
            log.exception("the task index %s: a batched write failed", self.where)

    def _cancel_batch(self) -> None:
        if self._batch is not None:
            self._batch.cancel()
        self._batch = self._batch_loop = None

    # -- off the loop (the writer's thread) ----------------------------------------------------

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
        if self._pending and self.unreachable_since is not None and self._unwritten_file is not None:
            self._keep_unwritten(self._unwritten_file)
        if self._pending:
            what = "unreachable" if self.unreachable_since is not None else "busy"
            self._give_up(list(self._pending.values()), f"the index was closed while its database was {what}")
        self._writer.close()

    def _keep_unwritten(self, path: Path) -> None:
        """Put what is pending into ``path`` for the next process that opens this index (see ``unwritten.py``)."""
        changes = [unwritten.Unwritten(c.row, c.insert, c.sets) for c in self._pending.values()]
        try:
            unwritten.keep(path, changes)
        except (OSError, TypeError, ValueError) as exc:
            log.error("the task index %s: what it could not write cannot be kept in %s: %s", self.where, path, exc)
            return
        self._pending.clear()
        unwritten.done(self._taken)  # what they held is in the file again, with what came later
        self._taken = []
        log.warning(
            "the task index %s could not be reached when it closed: %d record change(s) are kept in %s and "
            "written the next time this index is opened (a kernel, or mcp-tasks list)",
            self.where,
            len(changes),
            path,
        )

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
        if self._taken and not self._pending and self._inflight is None:
            unwritten.done(self._taken)
            self._taken = []

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
            self._write_off_loop()
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
