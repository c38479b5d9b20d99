"""The task index's writes: written at once when the database is free, kept and retried later when it is busy.

Row updates come from ``TaskHandle.on_change`` callbacks, on the kernel's event loop: a write must never
hold the loop while another kernel (or process) has the database locked. So on a running loop a write
waits at most :data:`HOT_BUSY_TIMEOUT_MS` for the lock; if it is still busy the change is kept and the
queue tries again from the loop (``call_later``), backing off from :data:`FIRST_RETRY_S` to
:data:`MAX_RETRY_S`. Kept changes are merged per row, so the row's latest state wins and an update of a
row whose insert is still waiting goes into that insert. A change that waited :data:`GIVE_UP_S` is given
up with a logged error, as are the oldest ones beyond :data:`MAX_PENDING_ROWS` rows; ``close()`` writes
what is left (waiting up to :data:`BLOCKING_BUSY_TIMEOUT_MS`). Without a running loop (plain scripts) a
write may block up to :data:`BLOCKING_BUSY_TIMEOUT_MS`, and a change still kept is retried with the next
write, read or ``close()``. A failure other than a busy database (a read-only file, a full disk) is
logged and the change dropped, as the index must never break a task.

On a running loop the changes are batched: a change is kept, and everything kept is written together
in one transaction :data:`BATCH_S` later (one timer for the batch; a read writes what is kept first), so
that a thousand tasks changing at once make one transaction, not a thousand.

Everything here runs on one thread (the loop's, or the script's): SQLite connections are per thread.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import random
import sqlite3
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .database import IndexDatabase, is_busy, transaction

log = logging.getLogger(__name__)

#: How long a write on a running event loop may wait for another connection's lock: short enough not to
#: be felt (one frame), long enough for the usual few-millisecond transaction of another kernel.
HOT_BUSY_TIMEOUT_MS = 20
#: How long a read on a running loop may wait: reads run on user actions (``%mcp_tasks``, a cached call).
READ_BUSY_TIMEOUT_MS = 1000
#: How long anything may wait without a running loop, and ``close()``.
BLOCKING_BUSY_TIMEOUT_MS = 5000
#: On a running loop, the changes made within this long are written in one transaction.
BATCH_S = 0.05
FIRST_RETRY_S = 0.05
MAX_RETRY_S = 5.0
#: How long a change may wait for a busy database before it is given up (logged as an error): ten minutes
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
            queue.flush(BLOCKING_BUSY_TIMEOUT_MS)
        except Exception:  # never fail the interpreter's exit
            log.exception("the task index %s: writing what was kept at exit failed", queue.database.path)


def flush_kept_for(path: Path) -> None:
    """Write what every index of this process on the file ``path`` keeps for its batch, so that a
    read through one of them (an export, ``mtj.to_dataframe``) sees what another one's tasks already
    did (the runtime's client and ``default_index()`` are two objects on one file)."""
    for queue in list(_queues):
        if queue.database.path == path:
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

    def statement(self) -> tuple[str, tuple[Any, ...]]:
        if self.insert is not None:
            columns = ", ".join(self.insert)
            marks = ", ".join("?" * len(self.insert))
            return f"INSERT INTO tasks (id, {columns}) VALUES (?, {marks})", (self.row, *self.insert.values())
        assignments = ", ".join(f"{column} = ?" for column in self.sets)
        return f"UPDATE tasks SET {assignments} WHERE id = ?", (*self.sets.values(), self.row)

    def describe(self) -> str:
        values = self.insert if self.insert is not None else self.sets
        task = values.get("task_id")
        what = f"row {self.row}" + (f" (task {task})" if task else "")
        return what + (": its record" if self.insert is not None else f": {', '.join(self.sets)}")


class WriteQueue:
    """The changes of an index's rows not written yet, and when to try again (see the module docstring)."""

    def __init__(self, database: IndexDatabase) -> None:
        self.database = database
        self._pending: dict[int, RowChange] = {}  # oldest first
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._delay = FIRST_RETRY_S
        #: The write of the batch kept on a running loop (and that loop).
        self._batch: asyncio.TimerHandle | None = None
        self._batch_loop: asyncio.AbstractEventLoop | None = None
        _queues.add(self)

    def __len__(self) -> int:
        return len(self._pending)

    def submit(
        self,
        row: int,
        *,
        insert: dict[str, Any] | None = None,
        sets: dict[str, Any] | None = None,
        keep: Iterable[str] = (),
    ) -> bool:
        """Record a change of ``row`` (its insert, or an update) and write what is pending unless a retry
        is already due. False if the change was dropped (a failure other than a busy database: logged);
        True if it was written or is kept for later."""
        if insert is None and not sets:
            return True
        change = self._pending.get(row)
        if change is None:
            if len(self._pending) >= MAX_PENDING_ROWS:
                self._give_up_oldest()
            change = self._pending[row] = RowChange(row, dict(insert) if insert is not None else None)
        elif insert is not None:
            log.warning(
                "the task index %s: row %d was recorded twice; the second record wins", self.database.path, row
            )
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
            self.flush(HOT_BUSY_TIMEOUT_MS)
        except Exception:  # never let a loop callback raise
            log.exception("the task index %s: a batched write failed", self.database.path)

    def _cancel_batch(self) -> None:
        if self._batch is not None:
            self._batch.cancel()
        self._batch = self._batch_loop = None

    def flush(self, timeout_ms: int) -> set[int]:
        """Write every pending change in one transaction, waiting at most ``timeout_ms`` for the lock;
        the rows whose changes were dropped. On a busy database the changes are kept and a retry is
        scheduled when a loop runs."""
        self._cancel_batch()  # whatever is kept is written now
        if not self._pending:
            return set()
        batch = list(self._pending.values())
        dropped: set[int] = set()
        try:
            db = self.database.connection(timeout_ms)
            with transaction(db):
                for change in batch:
                    try:
                        db.execute(*change.statement())
                    except sqlite3.OperationalError:
                        raise  # busy, or the file itself: the whole batch
                    except sqlite3.Error as exc:  # this row only (a constraint): the others go on
                        log.warning(
                            "the task index %s could not write %s: %s", self.database.path, change.describe(), exc
                        )
                        dropped.add(change.row)
        except (sqlite3.Error, OSError) as exc:
            if is_busy(exc):
                self._keep(exc)
                return set()
            log.warning(
                "the task index %s could not be written (%s): %d change(s) dropped: %s",
                self.database.path,
                exc,
                len(batch),
                "; ".join(c.describe() for c in batch[:5]),
            )
            dropped = {change.row for change in batch}
        for change in batch:
            del self._pending[change.row]  # nothing else ran meanwhile: one thread
        self._delay = FIRST_RETRY_S
        self._cancel_timer()
        return dropped

    def flush_unless_due(self) -> None:
        """Write what is pending now (a read is about to run) unless a retry is already scheduled."""
        if self._pending and not self._retry_due():
            self.flush(write_timeout_ms())

    def close(self) -> None:
        """Write what is pending, waiting up to :data:`BLOCKING_BUSY_TIMEOUT_MS`; give up (logged) what
        still cannot be written. The queue can be used again afterwards."""
        self._cancel_timer()
        self.flush(BLOCKING_BUSY_TIMEOUT_MS)
        self._cancel_timer()
        if self._pending:
            self._give_up(list(self._pending.values()), "the index was closed while its database was busy")

    # -- kept changes ----------------------------------------------------------------------------

    def _keep(self, exc: BaseException) -> None:
        now = time.monotonic()
        stale = [change for change in self._pending.values() if now - change.since >= GIVE_UP_S]
        if stale:
            self._give_up(stale, f"its database stayed busy for {GIVE_UP_S:.0f} s ({exc})")
        if not self._pending:
            return
        log.debug(
            "the task index %s is busy (%s): %d change(s) kept for later",
            self.database.path,
            exc,
            len(self._pending),
        )
        loop = running_loop()
        if loop is not None and not self._retry_due():
            delay = self._delay * random.uniform(0.5, 1.0)  # spread processes that met the same lock
            self._timer, self._timer_loop = loop.call_later(delay, self._retry), loop
            self._delay = min(self._delay * 2, MAX_RETRY_S)

    def _retry(self) -> None:
        self._timer = self._timer_loop = None
        try:
            self.flush(HOT_BUSY_TIMEOUT_MS)
        except Exception:  # never let a loop callback raise
            log.exception("the task index %s: a retried write failed", self.database.path)

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
        self._give_up([oldest], f"more than {MAX_PENDING_ROWS} rows were waiting for its busy database")

    def _give_up(self, changes: list[RowChange], why: str) -> None:
        for change in changes:
            self._pending.pop(change.row, None)
        log.error(
            "the task index %s gave up %d change(s) because %s: %s%s",
            self.database.path,
            len(changes),
            why,
            "; ".join(c.describe() for c in changes[:5]),
            " ..." if len(changes) > 5 else "",
        )
