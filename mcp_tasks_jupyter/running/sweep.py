"""A batch's sweep: its record in the task index, the claim that goes before each send, and resuming it.

``client.map`` records its batch as a sweep (``index/sweeps.py`` has the tables, the states and why a
send is claimed durably before it goes out). :class:`SweepRun` is one batch's side of it, on the loop:

- Claims, a window ahead. The batch asks for the next queued items before it needs them: at most
  ``limit`` items may be claimed and not yet confirmed (their task id, or their end, written), so a slot
  that frees finds a claimed item to send at once, while the crash that would leave claimed items in doubt
  leaves at most ``limit`` of them. A claim's write runs on the store's thread; the loop awaits it.
- Marks. A sent item's task id and record, an ended item's status: kept for :data:`~..index.sweeps.MARK_BATCH_S`
  and written together (the same thread, after the claims submitted before them).
- A heartbeat every :data:`~..index.sweeps.HEARTBEAT_S`: the runner is alive, its items are its own.

:func:`plan` decides, before the batch exists, whether the call starts a sweep or resumes one, and for a
resumed one what each item is (:class:`Earlier`): ended before (its handle rebuilt from its record),
re-attached by task id (the server still has it), sent again (the server lost it, or its send was in flight
when its kernel stopped: noted in its record), queued, or held by another live runner (followed from the
index). Nothing here imports the notebook.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import TaskCancelled, TaskExpired, TaskFailed, TaskLost, TaskNotFound, UsageError
from ..index import sweeps as store
from ..index.task_index import Recorder, TaskIndex, TaskRecord, canonical_json, notebook_path, records_by_id
from ..tasks.control import control_of
from ..tasks.handle import TaskHandle
from ..tasks.results import ToolResult
from ..tasks.status import LOST

if TYPE_CHECKING:
    from ..protocol.types import Tool
    from .lifecycle import TaskLifecycle

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")

#: Task records read at once when a sweep is resumed (its handles are made from them a chunk at a time).
RECORDS_AT_ONCE = 2000
#: Items of a resumed sweep taken from their records between two turns of the loop: a handle made from its
#: record costs about 0.1 ms, and 2,000 of them held the loop 0.2 s.
RECORDS_PER_TURN = 100
#: Items worked on (their keys, their kept arguments) between two turns of the loop.
ITEMS_PER_TURN = 500
#: How often the items another live runner holds are looked up (seconds).
FOLLOW_EVERY_S = 1.0
#: What an item's record says when it is sent once more.
LOST_NOTE = "sent again: the server no longer had its task"
IN_DOUBT_NOTE = "sent again: its send was in flight when its kernel stopped (it may have reached the server)"


@dataclass(frozen=True)
class Resumed:
    """How a resumed sweep's items came back (what its view says)."""

    sweep: str
    before: int = 0  #: ended before, taken from their records
    reattached: int = 0  #: sent before, the server still had them
    lost: int = 0  #: sent before, the server had lost them: sent again
    in_doubt: int = 0  #: their send was in flight when the kernel stopped: sent again
    fresh: int = 0  #: queued, sent now
    elsewhere: int = 0  #: held by another live kernel: followed from the index
    taken_over: int = 0  #: of the counts above, taken over from another kernel that stopped while followed

    def text(self) -> str:
        """``resumed sweep 1a2b3c: 1,234 ended before, 60 re-attached, 2 sent again (...), ...``"""
        parts = [f"{self.before:,} ended before", f"{self.reattached:,} re-attached"]
        if self.lost:
            parts.append(f"{self.lost:,} sent again (the server lost them)")
        if self.in_doubt:
            parts.append(f"{self.in_doubt:,} sent again (in flight when the kernel stopped)")
        parts.append(f"{self.fresh:,} sent fresh")
        if self.elsewhere:
            parts.append(f"{self.elsewhere:,} run by another kernel")
        if self.taken_over:
            parts.append(f"{self.taken_over:,} taken over from a kernel that stopped")
        return f"resumed sweep {self.sweep}: " + ", ".join(parts)


@dataclass
class Earlier:
    """What one item of a resumed sweep is: ``handle`` (ended before, or re-attached), or sent again with
    ``note``, or ``elsewhere`` (another live runner holds it), or None of these: queued."""

    handle: TaskHandle | None = None
    note: str | None = None
    elsewhere: bool = False
    #: ``handle`` was re-attached (it may end before the batch is made: its end is still to be recorded).
    attached: bool = False


@dataclass
class Plan:
    """What :func:`plan` found: the sweep to record or resume, the items' arguments, and for a resumed
    sweep what each item is (by place) and the counts its view shows; ``said``: the one line to show."""

    run: SweepRun
    items: list[dict[str, Any]]
    earlier: dict[int, Earlier] = field(default_factory=dict)
    resumed: Resumed | None = None
    said: str | None = None


class SweepRun:
    """One batch's link to its sweep's record (see the module docstring)."""

    def __init__(self, sweeps: store.SweepStore, sweep: store.SweepRow, owner: str) -> None:
        self.store = sweeps
        self.sweep = sweep
        self.id = sweep.id
        self.owner = owner
        #: Places claimed (or being claimed) whose task id or end is not written yet: at most ``limit``.
        self.unconfirmed: set[int] = set()
        #: Called (on the loop) when writes landed: the batch may claim more.
        self.on_confirmed: Callable[[], None] = lambda: None
        #: Called (on the loop) once a heartbeat finds this runner's items taken over (it was taken as dead).
        self.on_taken: Callable[[], None] = lambda: None
        self.taken = False
        self.broken: str | None = None
        self._marks: dict[int, dict[str, Any]] = {}
        self._mark_timer: asyncio.TimerHandle | None = None
        self._beat: asyncio.TimerHandle | None = None
        self._closed = False
        self._writes: set[asyncio.Future[Any]] = set()
        #: Places whose end was marked (a later "sent" never takes it back).
        self._ended: set[int] = set()

    # -- claims ------------------------------------------------------------------------------------

    async def claim(self, positions: list[int]) -> list[int]:
        """Claim ``positions`` durably (see the module docstring); the ones claimed. The index failing is
        logged once and the items go anyway, unrecorded (the index never stops a sweep)."""
        self.unconfirmed.update(positions)
        try:
            claimed = await self.store.call(store.claim, self.id, self.owner, positions)
        except Exception as exc:
            self.broke(exc)
            return positions
        if self.broken is not None:  # the sweep was never recorded (its items are not there): unrecorded
            return positions
        for lost in set(positions) - set(claimed):
            self.unconfirmed.discard(lost)
        return claimed

    def broke(self, exc: BaseException) -> None:
        if self.broken is None:
            self.broken = f"{type(exc).__name__}: {exc}"
            log.warning(
                "the sweep %s can no longer be recorded in the task index %s (%s): its tasks go on, unrecorded",
                self.id,
                self.store.where,
                self.broken,
            )

    # -- marks -------------------------------------------------------------------------------------

    def sent(self, position: int, handle: TaskHandle) -> None:
        sets = {"state": store.SENT, "task_id": handle.task_id, "record": handle.index_row}
        if position in self._ended:  # its end was heard first (a call the server answered at once)
            del sets["state"]
        self._mark(position, sets)

    def ended(self, position: int, handle: TaskHandle) -> None:
        self._ended.add(position)
        record = handle.index_row if handle.index_row is not None else handle.cached_from
        self._mark(
            position, {"state": store.ENDED, "task_id": handle.task_id, "record": record, "status": handle.status}
        )

    def noted(self, position: int, note: str) -> None:
        self._mark(position, {"note": note})

    def released(self, position: int) -> None:
        """A claimed item was not sent after all (its batch closed first): queued again."""
        self._mark(position, {"state": store.QUEUED})

    def forget(self, position: int) -> None:
        """An item left as it is in the record (lost with its connection: a resume asks the server)."""
        self.unconfirmed.discard(position)
        self.on_confirmed()

    def _mark(self, position: int, sets: dict[str, Any]) -> None:
        if self.broken is not None:
            self.unconfirmed.discard(position)
            return
        kept = self._marks.setdefault(position, {})
        kept.update({k: v for k, v in sets.items() if v is not None or k not in kept})
        if self._mark_timer is None:
            self._mark_timer = asyncio.get_running_loop().call_later(store.MARK_BATCH_S, self._write_marks)

    def _write_marks(self) -> asyncio.Future[Any] | None:
        self._mark_timer = None
        if not self._marks:
            return None
        changes, self._marks = list(self._marks.items()), {}
        done = asyncio.wrap_future(self.store.submit(store.mark, self.id, self.owner, changes))
        self._writes.add(done)

        def landed(future: asyncio.Future[Any]) -> None:
            self._writes.discard(future)
            if future.cancelled():
                return
            if future.exception() is not None:
                self.broke(future.exception())  # type: ignore[arg-type]
            for position, sets in changes:
                if sets.get("state") in (store.SENT, store.ENDED, store.QUEUED):
                    self.unconfirmed.discard(position)
            self.on_confirmed()

        done.add_done_callback(landed)
        return done

    async def flush(self) -> None:
        """Write what is kept now and wait for every write in flight."""
        if self._mark_timer is not None:
            self._mark_timer.cancel()
        self._write_marks()
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)

    # -- alive -------------------------------------------------------------------------------------

    def start(self) -> None:
        self._beat = asyncio.get_running_loop().call_later(store.HEARTBEAT_S, self._heartbeat)

    def _heartbeat(self) -> None:
        if self._closed:
            return
        loop = asyncio.get_running_loop()
        beat = self.store.submit(store.heartbeat, self.owner, self.id)
        beat.add_done_callback(_said_if_failed)
        beat.add_done_callback(lambda future: _on_loop(loop, self._heard, future))
        self._beat = loop.call_later(store.HEARTBEAT_S, self._heartbeat)

    def _heard(self, beat: concurrent.futures.Future[bool]) -> None:
        if beat.exception() is not None or beat.result() or self._closed or self.taken or self.broken is not None:
            return  # (a sweep the index could not record has no row to find: it goes on unrecorded)
        self.taken = True
        log.warning(
            "sweep %s: another kernel took this one as stopped and took its items over; it sends none of "
            "them from now on and follows them from the index",
            self.id,
        )
        self.on_taken()

    async def take_over_dead(self) -> tuple[list[store.ItemRow], dict[int, TaskRecord]]:
        """The items whose runner died, now this one's (``store.take_over_dead``), with their records."""

        def take(database: Any, db: Any) -> tuple[list[store.ItemRow], dict[int, TaskRecord]]:
            rows = store.take_over_dead(database, db, self.id, self.owner)
            return rows, records_by_id(database, db, [r.record for r in rows if r.record is not None])

        return await self.store.call(take)

    def end(self, finished: bool) -> concurrent.futures.Future[None] | None:
        """The batch ended (``finished``: every item ended) or its connection closed: what is kept is handed
        to the store's thread now, then the runner lets go of its items (a later resume takes over what is
        left). Handed over at once, not in a job of the loop's: a process that ends right after its batch
        still writes them (the thread's queue is worked off at exit)."""
        if self._closed:
            return None
        self._closed = True
        if self._beat is not None:
            self._beat.cancel()
        if self._mark_timer is not None:
            self._mark_timer.cancel()
        self._write_marks()
        store.owner_gone(self.owner)
        if self.broken is not None:
            return None
        return self.store.submit(store.finish, self.id, self.owner, finished)

    async def close(self, finished: bool) -> None:
        """:meth:`end`, and wait until it is written."""
        done = self.end(finished)
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        if done is not None:
            try:
                await asyncio.wrap_future(done)
            except Exception as exc:
                log.warning("the sweep %s could not be closed in the task index: %s", self.id, exc)

    async def ended_elsewhere(self, positions: list[int]) -> list[tuple[store.ItemRow, TaskRecord | None]]:
        """Which of ``positions`` (another runner's) ended, with their records (None: an item that ended with
        no record: its call failed before a task existed)."""

        def read(database: Any, db: Any) -> list[tuple[store.ItemRow, TaskRecord | None]]:
            rows = store.ended_since(database, db, self.id, positions)
            records = records_by_id(database, db, [r.record for r in rows if r.record is not None])
            found = [(r, records.get(r.record) if r.record is not None else None) for r in rows]
            # an end whose record is not written yet (the task records are batched apart) waits a round
            return [(r, record) for r, record in found if record is None or _finished(record)]

        return await self.store.call(read)


def _on_loop(loop: asyncio.AbstractEventLoop, callback: Callable[[Any], None], future: Any) -> None:
    try:
        loop.call_soon_threadsafe(callback, future)
    except RuntimeError:  # the loop closed meanwhile
        pass


def _said_if_failed(future: concurrent.futures.Future[Any]) -> None:
    failure = future.exception()
    if failure is not None:
        log.debug("a sweep's heartbeat could not be written: %s", failure)


@dataclass
class Adopted:
    """What a follower does with an item it took over from a runner that died (:func:`sort_taken`): finish
    it from ``record`` (it ended), or as ``failed`` (it ended with no task), follow ``task_id`` (the server
    still has it), send it again with ``note``, or, none of these, send it (it was queued)."""

    position: int
    record: TaskRecord | None = None
    failed: str | None = None
    task_id: str | None = None
    index_row: int | None = None
    note: str | None = None


async def sort_taken(
    lifecycle: TaskLifecycle, rows: list[store.ItemRow], records: dict[int, TaskRecord], limit: int
) -> list[Adopted]:
    """Each item taken over, as :func:`_resumed` sorts a resumed sweep's items: the server is asked about
    those sent with a task id (at most ``limit`` at once)."""
    sorted_: list[Adopted] = []
    gate = asyncio.Semaphore(limit)

    async def check(row: store.ItemRow) -> None:
        assert row.task_id is not None
        async with gate:
            kept = await _server_has(lifecycle, row.task_id)
        if kept:
            sorted_.append(Adopted(row.position, task_id=row.task_id, index_row=row.record))
        else:
            sorted_.append(Adopted(row.position, note=LOST_NOTE))

    checks = []
    for row in rows:
        record = records.get(row.record) if row.record is not None else None
        if row.state == store.ENDED and record is not None and _finished(record):
            sorted_.append(Adopted(row.position, record=record))
        elif row.state == store.ENDED and row.task_id is None and row.record is None:
            sorted_.append(Adopted(row.position, failed=row.status or "failed"))
        elif row.state in (store.SENT, store.ENDED) and row.task_id is not None:
            checks.append(check(row))
        elif row.state in (store.GOING, store.SENT, store.ENDED):
            sorted_.append(Adopted(row.position, note=IN_DOUBT_NOTE))
        else:
            sorted_.append(Adopted(row.position))
    await asyncio.gather(*checks)
    return sorted(sorted_, key=lambda one: one.position)


# -- deciding: a new sweep, or one resumed -----------------------------------------------------------


#: Each index's sweep store (its own thread and connection), made on first use.
_stores: weakref.WeakKeyDictionary[TaskIndex, store.SweepStore] = weakref.WeakKeyDictionary()


async def plan(
    lifecycle: TaskLifecycle,
    index: TaskIndex,
    spec: Tool,
    items: list[dict[str, Any]] | None,
    *,
    target: str,
    limit: int,
    ttl: int | None,
    resume: bool | str | None,
    restart: bool,
) -> Plan:
    """A new sweep of ``items`` recorded, or the earlier one resumed (see the module docstring).

    ``resume``: True resumes the newest unfinished sweep of the same items (none: a new one), a string the
    sweep of that id (``items`` None: its own items, unless one holds a secret), None does what True does
    and says so (the same line run again); ``restart`` always starts a new one."""
    sweeps = store_of(index)
    server = lifecycle.server
    owner = store.new_owner()
    key = index.key
    keys = await in_turns(items, index.arguments_key) if items is not None else None
    found: store.SweepRow | None = None
    if not restart and (resume is not False):
        sweep_id = resume if isinstance(resume, str) else None
        the_key = store.items_key(target, spec.name, keys, key) if keys is not None else None
        index.flush()  # this process's own records, before they are read
        found = await sweeps.call(store.find, sweep_id, target, spec.name, the_key)
        if found is None and sweep_id is not None:
            raise UsageError(f"no sweep {sweep_id!r} in the task index {index.describe()}", server=server)
        if found is not None and (found.target != target or found.tool != spec.name):
            raise UsageError(
                f"sweep {found.id} ran {found.tool} on {found.server_name}, not {spec.name} here",
                server=lifecycle.server,
            )
    if found is None:
        if items is None:
            raise UsageError("map: which items? Give them to start a sweep", server=lifecycle.server)
        assert keys is not None
        now = time.time()
        row = store.SweepRow(
            id=uuid.uuid4().hex[:12],
            server_name=lifecycle.server,
            target=target,
            tool=spec.name,
            items_key=store.items_key(target, spec.name, keys, key),
            total=len(items),
            limit=limit,
            ttl_ms=ttl,
            notebook=notebook_path(),
            out_var=None,
            created_at=now,
            updated_at=now,
            finished_at=None,
            username=None,
            hostname=None,
            pid=None,
        )
        kept_json = await in_turns(items, lambda args: canonical_json(store.kept_arguments(args, key)))
        kept = list(zip(kept_json, keys, strict=True))
        run = SweepRun(sweeps, row, owner)
        # Recorded before any claim: the store's one thread runs them in order.
        recorded = sweeps.submit(store.record_sweep, row, kept, owner)

        def landed(future: concurrent.futures.Future[None]) -> None:
            failure = future.exception()
            if failure is not None:
                run.broke(failure)

        recorded.add_done_callback(landed)
        said = "no earlier sweep of these items to resume: started a new one" if resume is True else None
        return Plan(run, items, said=said)
    return await _resumed(lifecycle, index, sweeps, found, owner, spec, items, keys, limit)


async def _resumed(
    lifecycle: TaskLifecycle,
    index: TaskIndex,
    sweeps: store.SweepStore,
    found: store.SweepRow,
    owner: str,
    spec: Tool,
    items: list[dict[str, Any]] | None,
    keys: list[str] | None,
    limit: int,
) -> Plan:
    rows = await sweeps.call(store.take_over, found.id, owner)
    server = lifecycle.server
    if len(rows) != found.total:
        raise UsageError(f"sweep {found.id}: {len(rows)} of its {found.total} items are recorded", server=server)
    if items is None:
        items = []
        for row in rows:
            if store.holds_secret(row.arguments):
                raise UsageError(
                    f"sweep {found.id}: item {row.position} has a secret argument, which the index keeps only as "
                    "a hash: resume with the same items (--over)",
                    server=server,
                )
            items.append(row.arguments)
    elif keys is not None:
        if len(items) != found.total:
            raise UsageError(f"sweep {found.id} has {found.total} items, not {len(items)}", server=server)
        for row, one in zip(rows, keys, strict=True):
            if row.args_key != one:
                raise UsageError(
                    f"sweep {found.id}: item {row.position} differs from what the sweep sent", server=server
                )
    run = SweepRun(sweeps, found, owner)
    earlier: dict[int, Earlier] = {}
    counts = dict.fromkeys(("before", "reattached", "lost", "in_doubt", "fresh", "elsewhere"), 0)
    came: dict[str, list[int]] = {kind: [] for kind in store.CAME_BACK}  # written for the export to tell
    checks: list[tuple[store.ItemRow, TaskRecord | None]] = []
    async for row, record in _with_records(sweeps, rows):
        if row.owner != owner and not (row.state == store.ENDED and record is not None and _finished(record)):
            earlier[row.position] = Earlier(elsewhere=True)  # another live runner's: followed
            counts["elsewhere"] += 1
            continue
        if row.state == store.ENDED and record is not None and _finished(record):
            earlier[row.position] = Earlier(handle=_from_record(lifecycle, spec, items[row.position], record))
            counts["before"] += 1
            came["before"].append(row.position)
        elif row.state == store.ENDED and row.task_id is None and row.record is None:
            # its call failed before any task existed (no record kept of it)
            earlier[row.position] = Earlier(handle=_failed_before(lifecycle, spec, items[row.position], row))
            counts["before"] += 1
            came["before"].append(row.position)
        elif row.state in (store.SENT, store.ENDED) and row.task_id is not None:
            checks.append((row, record))
        elif row.state in (store.GOING, store.SENT, store.ENDED):
            earlier[row.position] = Earlier(note=IN_DOUBT_NOTE)
            counts["in_doubt"] += 1
            came["in_doubt"].append(row.position)
        else:
            counts["fresh"] += 1
            came["fresh"].append(row.position)
    # Does the server still have the tasks sent before? (at most ``limit`` asked at once)
    gate = asyncio.Semaphore(limit)

    async def check(row: store.ItemRow, record: TaskRecord | None) -> None:
        assert row.task_id is not None
        async with gate:
            kept = await _server_has(lifecycle, row.task_id)
        if not kept:
            earlier[row.position] = Earlier(note=LOST_NOTE)
            counts["lost"] += 1
            came["lost"].append(row.position)
            return
        handle = lifecycle.attach(row.task_id, tool=spec.name)
        if record is not None:
            control_of(handle).resumed_from(record.id, items[row.position], record.out_var)
            handle.on_change(Recorder(index, record.id))
        else:
            control_of(handle).resumed_from(0, items[row.position], None)
            lifecycle.record(handle)
        earlier[row.position] = Earlier(handle=handle, attached=True)
        counts["reattached"] += 1
        came["reattached"].append(row.position)

    await asyncio.gather(*(check(row, record) for row, record in checks))
    await sweeps.call(store.came_back, found.id, came)
    resumed = Resumed(found.id, **counts)
    return Plan(run, items, earlier, resumed, said=resumed.text())


async def in_turns(items: Sequence[T], work: Callable[[T], R]) -> list[R]:
    """``[work(item) for item in items]``, letting the loop run other work (a cell, a poll) every
    :data:`ITEMS_PER_TURN` items: a 100,000-item sweep's keys take seconds, which the loop must not wait."""
    out: list[R] = []
    for place, item in enumerate(items):
        out.append(work(item))
        if place % ITEMS_PER_TURN == ITEMS_PER_TURN - 1:
            await asyncio.sleep(0)
    return out


async def _with_records(
    sweeps: store.SweepStore, rows: list[store.ItemRow]
) -> AsyncIterator[tuple[store.ItemRow, TaskRecord | None]]:
    """Each of ``rows`` with its task record (None: none), the records read :data:`RECORDS_AT_ONCE` at a time on
    the store's thread: a resumed 100,000-item sweep never holds all its records at once, and the loop runs
    other work (a cell) between two reads."""
    for start in range(0, len(rows), RECORDS_AT_ONCE):
        chunk = rows[start : start + RECORDS_AT_ONCE]
        records = await sweeps.call(records_by_id, [r.record for r in chunk if r.record is not None])
        for place, row in enumerate(chunk):
            yield row, records.get(row.record) if row.record is not None else None
            if place % RECORDS_PER_TURN == RECORDS_PER_TURN - 1:
                await asyncio.sleep(0)


async def _server_has(lifecycle: TaskLifecycle, task_id: str) -> bool:
    """Whether the server still has ``task_id`` (asking failed otherwise: taken as yes, its poller asks again)."""
    try:
        await lifecycle.dialect.get(task_id)
    except (TaskNotFound, TaskExpired):
        return False
    except Exception as exc:
        log.debug("asking for task %s failed: %s", task_id, exc)
    return True


def _finished(record: TaskRecord) -> bool:
    """Whether a record holds how its task ended (a result, or a failure with no result to fetch)."""
    if record.result is not None:
        return True
    return record.finished_at is not None and record.status not in ("completed", "working", "input_required", LOST)


def _from_record(lifecycle: TaskLifecycle, spec: Tool, args: dict[str, Any], record: TaskRecord) -> TaskHandle:
    """A finished handle of an item that ended before, as its record tells."""

    async def nothing(_handle: TaskHandle) -> None:
        return None

    handle = lifecycle.queued(spec, args, cancel=nothing)
    finish_from_record(lifecycle, handle, record, spec.name)
    return handle


def finish_from_record(lifecycle: TaskLifecycle, handle: TaskHandle, record: TaskRecord | None, tool: str) -> None:
    """End ``handle`` (not sent here) as ``record`` says its task ended (None: no record was found)."""
    if record is None:
        words = "it ended in another kernel, whose record of it was not found"
        lifecycle.finish(handle, error=TaskFailed(words, server=lifecycle.server, tool=tool))
        return
    control = control_of(handle)
    control.resumed_from(record.id, handle.arguments, record.out_var)
    control.named(record.task_id)
    if record.result is not None:
        try:
            lifecycle.finish(handle, ToolResult.from_wire(record.result))
            return
        except ValueError:
            pass
    words = record.status_message or record.error or f"it ended {record.status}"
    kinds: dict[str, type[TaskFailed] | type[TaskCancelled] | type[TaskExpired] | type[TaskLost]] = {
        "cancelled": TaskCancelled,
        "expired": TaskExpired,
        "lost": TaskLost,
    }
    kind = kinds.get(record.status, TaskFailed)
    lifecycle.finish(handle, error=kind(words, server=lifecycle.server, task_id=record.task_id, tool=tool))


def _failed_before(lifecycle: TaskLifecycle, spec: Tool, args: dict[str, Any], row: store.ItemRow) -> TaskHandle:
    async def nothing(_handle: TaskHandle) -> None:
        return None

    handle = lifecycle.queued(spec, args, cancel=nothing)
    words = f"its call ended {row.status or 'failed'} before the restart, with no task (no record was kept)"
    lifecycle.finish(handle, error=TaskFailed(words, server=lifecycle.server, tool=spec.name))
    return handle


def store_of(index: TaskIndex) -> store.SweepStore:
    """The sweep store of ``index`` (one per index object, made on first use)."""
    sweeps = _stores.get(index)
    if sweeps is None:
        sweeps = _stores[index] = store.SweepStore(index.location, index.describe())
    return sweeps


def listing(index: TaskIndex, target: str | None = None) -> list[store.SweepCounts]:
    """Every sweep of ``index`` with its counts (waits for the store's thread: not for the loop's hot path)."""
    index.flush()
    return store_of(index).now(store.listing, target)


def sweep_items(index: TaskIndex, sweep_id: str) -> tuple[store.SweepRow, list[store.ItemRow]] | None:
    """One sweep and its items, in order (None: no such sweep, or the id names more than one)."""

    def read(database: Any, db: Any) -> tuple[store.SweepRow, list[store.ItemRow]] | None:
        found = store.find(database, db, sweep_id, "", "", None)
        return None if found is None else (found, store.items(database, db, found.id))

    return store_of(index).now(read)


__all__ = [
    "Adopted",
    "Earlier",
    "Plan",
    "Resumed",
    "SweepRun",
    "finish_from_record",
    "listing",
    "plan",
    "sort_taken",
    "store_of",
    "sweep_items",
]
