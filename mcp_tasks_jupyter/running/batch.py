"""Fan-out: one tool over many argument mappings, at most ``limit`` tasks running at once.

``client.map`` returns a :class:`Batch` at once: one handle per mapping, in order. The first
``limit`` are sent to the server straight away; the others wait with status ``queued`` and each is
sent as soon as another task of the batch ends (in the order given). A queued task is never sent
once it was cancelled, and never forgotten: closing the client ends it ``lost``.

A batch is a sequence of handles and waits like one (``gather``, ``as_completed``, ``wait``,
``ready``); its one view (``view()``, ``BatchView``) is what the grouped widget and the text repr show.

With a task index, a batch is a sweep recorded there (``sweep.py``, ``index/sweeps.py``): each queued
task is claimed in the index (a window of at most ``limit`` ahead, one write) before it is sent, and its
task id and end are written as they come, so that a later kernel can resume it (``client.map(...,
resume=True)``) without sending any task twice.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from ..errors import MCPError, TaskCancelled, TaskFailed, TaskLost
from ..protocol.task_state import CANCELLED
from ..tasks.control import control_of
from ..tasks.handle import TaskHandle
from ..tasks.results import ToolResult
from ..tasks.status import FAILURES, LOST, QUEUED, STATUSES
from ..tasks.waiting import as_completed, gather
from ..views.labels import arguments_label
from ..views.view import failure_message
from .batch_tally import EndTally

if TYPE_CHECKING:
    from ..protocol.types import Tool
    from .lifecycle import TaskLifecycle
    from .sweep import Plan, SweepRun

log = logging.getLogger(__name__)

DEFAULT_LIMIT = 8
#: Tasks listed by name in a batch's view: the failed ones, and the slowest ones.
FAILED_SHOWN = 20
SLOWEST_SHOWN = 5
#: Characters of a task's label (its arguments as ``key=value``) in a batch's view.
LABEL_CHARS = 80
#: A batch's first ``limit`` sends are spread evenly over this many seconds rather than sent in one burst:
#: tasks of a like length sent together end together, and a sweep's ends and the sends that follow them
#: would then come in waves of ``limit`` for its whole run, each wave holding the kernel's loop (a cell
#: waits behind it). Spread once, they stay spread. It costs a sweep at most this long once.
FIRST_WAVE_S = 0.5
#: Handles ``Batch.made`` makes (and ``Batch.cancel`` cancels unsent) between two turns of the loop.
HANDLES_PER_TURN = 500

#: The batch of each handle a ``client.map`` call took in that it did not make (an item of a resumed sweep,
#: made from its record or re-attached); weak, so a handle's entry goes with it. The handles a batch makes say
#: their batch themselves (the controls they share, ``TaskLifecycle.batch_controls``): no entry each.
_BATCH_OF: weakref.WeakKeyDictionary[TaskHandle, str] = weakref.WeakKeyDictionary()


def batch_of(handle: TaskHandle) -> str | None:
    """The id of the ``client.map`` batch ``handle`` was started by, or None (the front end counts a batch's
    tasks together)."""
    return control_of(handle).controls.batch or _BATCH_OF.get(handle)


@dataclass(frozen=True, slots=True)
class BatchTask:
    """One task of a batch as its view lists it (``index`` is its place in the batch)."""

    index: int
    label: str
    status: str
    started: float
    finished: float | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class BatchView:
    """What a batch looks like now: counts by status, the aggregate progress (0..1: an ended task
    counts whole, a running one by its own progress where it reports a total), the clock, and the
    failed and the slowest tasks. Times are epoch seconds; ``eta`` is seconds (None: unknown)."""

    tool: str
    server: str
    total: int
    limit: int
    counts: dict[str, int]
    ended: int
    fraction: float
    started: float
    finished: float | None
    eta: float | None
    failed: tuple[BatchTask, ...]
    slowest: tuple[BatchTask, ...]
    #: The sweep's id in the task index (None: not recorded), and how a resumed sweep came back.
    sweep: str | None = None
    resumed: str | None = None

    @property
    def done(self) -> bool:
        return self.ended == self.total

    def counts_text(self) -> str:
        """``42 completed, 3 failed, 5 queued`` (in the vocabulary's order)."""
        return ", ".join(f"{n} {status}" for status, n in self.counts.items()) or "no tasks"


class Batch(Sequence[TaskHandle]):
    """The tasks of one ``client.map`` call: a sequence of handles, in the order of the argument
    mappings, that waits like one handle.

    ``await batch.gather()`` (or ``mtj.gather(*batch)``) gives the results in order;
    ``async for handle in batch.as_completed()`` the handles as they end; ``await batch.wait(timeout)``
    the results, or TimeoutError without cancelling anything; ``batch.ready()`` whether all ended;
    ``await batch.cancel()`` cancels all (the queued ones are never sent).
    """

    def __init__(
        self, lifecycle: TaskLifecycle, spec: Tool, *, limit: int, ttl: int | None, total: int, plan: Plan | None
    ) -> None:
        """The batch's state, without its handles: :meth:`made` makes them and starts it."""
        self._lifecycle = lifecycle
        self._spec = spec
        self.limit = limit
        self._ttl = ttl
        self.tool = spec.name
        self.server = lifecycle.server
        self.started = time.time()
        self._queue: collections.deque[TaskHandle] = collections.deque()
        self._sent: set[TaskHandle] = set()  # sent and not ended: what counts against the limit
        self._starting: dict[TaskHandle, asyncio.Task[None]] = {}
        self._plan: dict[TaskHandle, tuple[dict[str, Any], dict[str, Any] | None]] = {}
        self._callbacks: list[Callable[[Batch], None]] = []
        self._on_end: list[Callable[[Batch], None]] = []
        self._ended = 0
        self._closed: str | None = None
        self._cancelling = False  # ``cancel()`` was called: nothing more is sent
        self._begun = False  # ``begin`` ran (it runs once)
        #: The sweep's record (None: no task index), and what a resumed one's items were.
        self._sweep = plan.run if plan is not None else None
        self.resumed = plan.resumed if plan is not None else None
        #: One line on how the call found its sweep (resumed, or none to resume), or None.
        self.said = plan.said if plan is not None else None
        self.id = self._sweep.id if self._sweep is not None else uuid.uuid4().hex[:12]
        self._position: dict[TaskHandle, int] = {}
        self._claimed: collections.deque[TaskHandle] = collections.deque()  # claimed in the index: sendable
        self._notes: dict[TaskHandle, str] = {}  # sent again, and why
        self._before: set[TaskHandle] = set()  # ended before a restart (from their records)
        self._elsewhere: dict[TaskHandle, int] = {}  # another live kernel sends these
        self._following = False
        #: The first wave's sends (``FIRST_WAVE_S``): how many were started, from when; those still waiting.
        self._wave = 0
        self._wave_start = 0.0
        self._paced: set[TaskHandle] = set()
        self._handles: list[TaskHandle] = []
        #: The ended tasks counted once each (what a view draws without visiting every handle), and the
        #: first place not known to have ended (``ready``).
        self._tally = EndTally(total, FAILED_SHOWN, SLOWEST_SHOWN)
        self._open = 0

    @classmethod
    async def made(
        cls,
        lifecycle: TaskLifecycle,
        spec: Tool,
        arguments: Sequence[dict[str, Any]],
        *,
        limit: int,
        ttl: int | None,
        answers: Sequence[dict[str, Any] | None],
        cached: Callable[[dict[str, Any]], TaskHandle | None] | None = None,
        plan: Plan | None = None,
    ) -> Batch:
        """The batch of ``arguments``, one handle each in order, its first tasks sent (``client.map``).

        The queued handles are made :data:`HANDLES_PER_TURN` at a time, the loop running between: a 10,000-item
        batch's took 0.2 s in one piece (a kernel's widgets and its next cell waited), a 100,000-item one's
        seconds. A queued handle cannot change or end before the batch sends it, so it is wired to the batch as it
        is made; one a resumed sweep's record says ended is counted as it is taken. The others (re-attached,
        cached) may be live, and are wired in one piece at the end.
        """
        batch = cls(lifecycle, spec, limit=limit, ttl=ttl, total=len(arguments), plan=plan)
        await batch.begin(arguments, answers, cached, plan)
        return batch

    async def begin(
        self,
        arguments: Sequence[dict[str, Any]],
        answers: Sequence[dict[str, Any] | None],
        cached: Callable[[dict[str, Any]], TaskHandle | None] | None,
        plan: Plan | None,
    ) -> None:
        """:meth:`made`'s work, once: the handles, in turns, then the sweep and the first sends."""
        if self._begun:
            raise RuntimeError("a batch begins once")
        self._begun = True
        lifecycle, spec = self._lifecycle, self._spec
        #: What the handles made here may ask (their ``cancel()``, their batch), one object for them all.
        controls = lifecycle.batch_controls(self._cancel_one, self.id)
        relay, task_ended = self._relay, self._task_ended  # one bound method each, kept by every handle
        earlier = plan.earlier if plan is not None else {}
        again: list[TaskHandle] = []
        taken: list[TaskHandle] = []  # not made here: wired at the end
        for position, (args, preset) in enumerate(zip(arguments, answers, strict=True)):
            early = earlier.get(position)
            if early is not None and early.handle is not None:
                handle = early.handle
                _BATCH_OF[handle] = self.id
                if not early.attached:
                    self._before.add(handle)  # ended before: its record holds it
                elif not handle.done():
                    self._sent.add(handle)  # re-attached: it runs, and counts against the limit
                if handle not in self._before or not handle.done():
                    taken.append(handle)
            elif cached is not None and (hit := cached(args)) is not None:
                handle = hit
                taken.append(handle)
            else:
                handle = lifecycle.queued(spec, args, controls=controls)
                handle.on_change(relay)
                handle.add_done_callback(task_ended)
                self._plan[handle] = (args, preset)  # another kernel's too: sent here if taken over
                if early is not None and early.elsewhere:
                    self._elsewhere[handle] = position
                elif early is not None and early.note is not None:
                    self._notes[handle] = early.note
                    again.append(handle)
                else:
                    self._queue.append(handle)
            self._position[handle] = position
            self._handles.append(handle)
            if handle in self._before and handle.done():
                # Counted here, not by a callback each: a 100,000-item resume's held the loop seconds.
                self._ended += 1
                self._count_end(handle)
            if position % HANDLES_PER_TURN == HANDLES_PER_TURN - 1:
                await asyncio.sleep(0)
        self._queue.extendleft(reversed(again))  # those sent again go first
        self._start(taken)

    def _start(self, taken: list[TaskHandle]) -> None:
        """Wire the handles not made here to the batch; start its sweep and its sends."""
        relay, task_ended = self._relay, self._task_ended
        for handle in taken:
            handle.on_change(relay)
            handle.add_done_callback(task_ended)
            if handle.done():
                self._count_end(handle)
        if self._sweep is not None:
            self._sweep.on_confirmed = self._fill
            self._sweep.on_taken = self._taken_from_here
            self._sweep.start()
            if self._elsewhere:
                self._start_following()
        self._fill()
        if self._handles and self._ended == len(self._handles):  # all ended before: no callback will say so
            asyncio.get_running_loop().call_soon(self._all_ended, self._handles[-1])

    # -- a sequence of handles -------------------------------------------------------------------

    @overload
    def __getitem__(self, index: int) -> TaskHandle: ...
    @overload
    def __getitem__(self, index: slice) -> list[TaskHandle]: ...
    def __getitem__(self, index: int | slice) -> TaskHandle | list[TaskHandle]:
        return self._handles[index]

    def __len__(self) -> int:
        return len(self._handles)

    def __iter__(self) -> Iterator[TaskHandle]:
        return iter(self._handles)

    @property
    def handles(self) -> list[TaskHandle]:
        """The handles, in the order of the argument mappings (a copy)."""
        return list(self._handles)

    # -- waiting ---------------------------------------------------------------------------------

    def ready(self) -> bool:
        """Whether every task of the batch has ended (the places before the first open one are not asked
        again: a handle that ended stays ended)."""
        handles = self._handles
        while self._open < len(handles) and handles[self._open].done():
            self._open += 1
        return self._open == len(handles)

    def done(self) -> bool:
        return self.ready()

    async def gather(self, *, return_exceptions: bool = False, timeout: float | None = None) -> list[Any]:
        """The results in order, as :func:`mcp_tasks_jupyter.gather` gives them."""
        return await gather(*self._handles, return_exceptions=return_exceptions, timeout=timeout)

    async def wait(self, timeout: float | None = None, *, return_exceptions: bool = False) -> list[Any]:
        """The results in order once all ended; TimeoutError after ``timeout`` seconds (nothing is
        cancelled: the batch goes on). A failed task raises its error unless ``return_exceptions``."""
        return await self.gather(return_exceptions=return_exceptions, timeout=timeout)

    def as_completed(self, *, timeout: float | None = None) -> AsyncIterator[TaskHandle]:
        """``async for handle in batch.as_completed()``: each handle as soon as it has ended."""
        return as_completed(self._handles, timeout=timeout)

    def results(self) -> list[ToolResult | BaseException | None]:
        """What each task ended with, in order: its ToolResult, its error, or None while it runs."""
        return [
            None if not h.done() else h.exception() if h.exception() is not None else h.result()
            for h in self._handles
        ]

    @property
    def finished(self) -> float | None:
        """When the last task ended (epoch seconds); None while one has not."""
        if not self._handles or not self.ready():
            return None
        if self._tally.ended < len(self._handles):  # an end not heard yet (its callback is on its way)
            for handle in self._handles:
                self._count_end(handle)
        return self._tally.last_end

    # -- cancelling ------------------------------------------------------------------------------

    async def cancel(self) -> None:
        """Cancel every task: the queued ones end ``cancelled`` without being sent, the others are
        cancelled on the server. Raises the first failure to cancel, after trying every task."""
        self._cancelling = True  # from now on, no slot freed starts a queued task
        ended = 0
        while self._queue or self._claimed:
            self._finish_unsent((self._queue or self._claimed).popleft())
            ended += 1
            if ended % HANDLES_PER_TURN == 0:
                await asyncio.sleep(0)  # a 10,000-item batch's queue held the loop 78 ms in one piece
        running = [handle for handle in self._handles if not handle.done()]
        outcomes = await asyncio.gather(*(handle.cancel() for handle in running), return_exceptions=True)
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                raise outcome

    async def _cancel_one(self, handle: TaskHandle) -> None:
        """What ``handle.cancel()`` does for a task of this batch."""
        if handle in self._queue:
            self._cancel_queued(handle)
            return
        if handle in self._paced:  # waiting for its moment in the first wave (FIRST_WAVE_S): never sent
            self._paced.discard(handle)
            self._finish_cancelled(handle)
            return
        unsent = handle in self._plan and handle not in self._sent
        if handle in self._claimed or handle in self._elsewhere or unsent:
            if handle in self._claimed:
                self._claimed.remove(handle)
            self._finish_unsent(handle)
            return
        starting = self._starting.get(handle)
        if starting is not None:
            # Its creation is on the wire: cancel the task once the server has it.
            await asyncio.shield(starting)
        if not handle.done():
            await self._lifecycle.cancel(handle)

    def _cancel_queued(self, handle: TaskHandle) -> None:
        self._queue.remove(handle)
        self._finish_unsent(handle)

    def _finish_unsent(self, handle: TaskHandle) -> None:
        """End ``handle``, taken out of the queue or the claimed items, cancelled: it is never sent."""
        self._plan.pop(handle, None)
        self._finish_cancelled(handle)

    def _finish_cancelled(self, handle: TaskHandle) -> None:
        self._lifecycle.finish(
            handle,
            error=TaskCancelled(
                "cancelled while queued: it was never sent to the server", server=self.server, tool=self.tool
            ),
        )

    # -- sending the queued tasks ----------------------------------------------------------------

    def _fill(self) -> None:
        # With a sweep, only what its record has claimed is sent (``sweep.py``); without, the queue.
        sendable = self._claimed if self._sweep is not None else self._queue
        while sendable and len(self._sent) < self.limit and self._closed is None and not self._cancelling:
            handle = sendable.popleft()
            self._sent.add(handle)
            args, preset = self._plan.pop(handle)
            note = self._notes.get(handle)
            if note is not None and self._sweep is not None:
                self._sweep.noted(self._position[handle], note)
            self._lifecycle.sending(handle)
            delay = self._wave_delay()
            if delay > 0:
                self._paced.add(handle)  # it counts as started; on the wire after the delay
            starter = self._lifecycle.jobs.spawn(
                self._send(handle, args, preset, delay), name=f"mcp-map {self.server}:{self.tool}"
            )
            self._starting[handle] = starter
        if self._sweep is not None and self._closed is None and not self._cancelling:
            self._claim_ahead(self._sweep)

    def _wave_delay(self) -> float:
        """Seconds the next send waits: the k-th of the first ``limit`` goes k/limit of ``FIRST_WAVE_S``
        after the first; the later ones go at once (they follow the spread ends)."""
        if self._wave >= self.limit:
            return 0.0
        now = asyncio.get_running_loop().time()
        if self._wave == 0:
            self._wave_start = now
        delay = self._wave_start + self._wave * FIRST_WAVE_S / self.limit - now
        self._wave += 1
        return max(0.0, delay)

    def _claim_ahead(self, sweep: SweepRun) -> None:
        """Claim the next queued tasks in the index, so that a slot that frees sends one at once: at most
        ``limit`` claimed and not yet confirmed (``sweep.py``), in one write."""
        want = min(self.limit - len(sweep.unconfirmed), len(self._queue))
        if want <= 0:
            return
        picked = [self._queue.popleft() for _ in range(want)]
        sweep.unconfirmed.update(self._position[handle] for handle in picked)
        self._lifecycle.jobs.spawn(self._claim(sweep, picked), name=f"mcp-map claim {self.id}")

    async def _claim(self, sweep: SweepRun, picked: list[TaskHandle]) -> None:
        claimed = set(await sweep.claim([self._position[handle] for handle in picked]))
        for handle in picked:
            if handle.done():
                continue  # cancelled meanwhile: its end is written
            if self._position[handle] in claimed:
                self._claimed.append(handle)
            else:  # another kernel took it over meanwhile: it sends it
                self._elsewhere[handle] = self._position[handle]
                self._start_following()
        self._fill()

    def _start_following(self) -> None:
        if not self._following:
            self._following = True
            self._lifecycle.jobs.spawn(self._follow(), name=f"mcp-map follow {self.id}")

    async def _follow(self) -> None:
        """The tasks another live kernel sends (two kernels resumed this sweep): each ends here as its
        record says, looked up every ``FOLLOW_EVERY_S``. When that kernel dies (its heartbeat older than
        the sweep's lease, ``index/sweeps.py``), this batch takes its items over and sends what is left."""
        from .sweep import FOLLOW_EVERY_S, finish_from_record

        sweep = self._sweep
        assert sweep is not None
        while self._closed is None:
            waiting = {position: handle for handle, position in self._elsewhere.items() if not handle.done()}
            if not waiting:
                self._following = False
                return
            await asyncio.sleep(FOLLOW_EVERY_S)
            try:
                ended = await sweep.ended_elsewhere(sorted(waiting))
            except Exception as exc:
                log.warning("sweep %s: the tasks another kernel runs cannot be looked up: %s", self.id, exc)
                continue
            for row, record in ended:
                finish_from_record(self._lifecycle, waiting[row.position], record, self.tool)
            if sweep.taken or len(ended) == len(waiting):
                continue
            try:
                rows, records = await sweep.take_over_dead()
            except Exception as exc:
                log.warning("sweep %s: the items of a stopped kernel cannot be taken over: %s", self.id, exc)
                continue
            if rows:
                await self._adopt(sweep, rows, records)

    async def _adopt(self, sweep: SweepRun, rows: list[Any], records: dict[int, Any]) -> None:
        """Items this batch followed and has now taken over from a kernel that died: each ends from its
        record, follows its task (the server still has it), or is sent (again, noted, where its send may
        have reached the server, or the server lost it), as a resume does (``sweep.sort_taken``)."""
        from ..index.task_index import Recorder
        from .sweep import IN_DOUBT_NOTE, Resumed, finish_from_record, sort_taken

        lifecycle = self._lifecycle
        followed = {position: handle for handle, position in self._elsewhere.items()}
        kinds: collections.Counter[str] = collections.Counter()
        again: list[TaskHandle] = []
        for one in await sort_taken(lifecycle, rows, records, self.limit):
            handle = followed.get(one.position)
            if handle is None or self._elsewhere.pop(handle, None) is None:
                continue
            kinds["taken_over"] += 1
            if handle.done():  # ended here meanwhile (cancelled while another kernel held it)
                self._before.add(handle)
                if one.record is None:
                    sweep.ended(one.position, handle)
                continue
            if one.record is not None or one.failed is not None:
                self._before.add(handle)  # its end is in the record already
                kinds["before"] += 1
                if one.record is not None:
                    finish_from_record(lifecycle, handle, one.record, self.tool)
                else:
                    words = f"its call ended {one.failed} in another kernel, with no task (no record was kept)"
                    lifecycle.finish(handle, error=TaskFailed(words, server=self.server, tool=self.tool))
            elif one.task_id is not None:
                self._plan.pop(handle, None)
                record = records.get(one.index_row) if one.index_row is not None else None
                lifecycle.adopt(handle, one.task_id)
                if record is not None and lifecycle.index is not None:
                    control_of(handle).resumed_from(record.id, handle.arguments, record.out_var)
                    handle.on_change(Recorder(lifecycle.index, record.id))
                else:
                    lifecycle.record(handle)
                self._sent.add(handle)
                kinds["reattached"] += 1
            elif one.note is not None:
                self._notes[handle] = one.note
                again.append(handle)
                kinds["in_doubt" if one.note == IN_DOUBT_NOTE else "lost"] += 1
            else:
                self._queue.append(handle)
                kinds["fresh"] += 1
        if not kinds:
            return
        self._queue.extendleft(reversed(again))
        was = self.resumed or Resumed(self.id)
        self.resumed = dataclasses.replace(
            was,
            **{kind: getattr(was, kind) + n for kind, n in kinds.items()},
            elsewhere=max(0, was.elsewhere - kinds["taken_over"]),
        )
        log.warning("sweep %s: took over %d items of a kernel that stopped", self.id, kinds["taken_over"])
        self._fill()
        self._relay(self._handles[0])

    def _taken_from_here(self) -> None:
        """Another kernel took this one as stopped and took its items over (``SweepRun.on_taken``): what is
        not sent yet is followed from the index instead, never sent here."""
        for pending in (self._claimed, self._queue):
            while pending:
                handle = pending.popleft()
                self._elsewhere[handle] = self._position[handle]
        if self._elsewhere:
            self._start_following()

    async def _send(
        self, handle: TaskHandle, args: dict[str, Any], preset: dict[str, Any] | None, delay: float = 0.0
    ) -> None:
        lifecycle = self._lifecycle
        if delay > 0 and not await self._turn(handle, delay):
            self._starting.pop(handle, None)
            return
        try:
            await lifecycle.start(self._spec, args, ttl=self._ttl, answers=preset, handle=handle)
            if self._sweep is not None:
                self._sweep.sent(self._position[handle], handle)
        except asyncio.CancelledError:
            why = self._closed or "its start was cancelled"
            lifecycle.finish(
                handle,
                error=TaskLost(
                    f"{why} while it was being sent; the task may run on the server",
                    server=self.server,
                    tool=self.tool,
                ),
            )
            raise
        except MCPError as exc:
            from .lifecycle import as_task_failure

            lifecycle.finish(handle, error=as_task_failure(exc, handle))
        except Exception as exc:  # never leave a handle unfinished
            log.exception("starting a task of %r failed", self)
            lifecycle.finish(handle, error=exc)
        finally:
            self._starting.pop(handle, None)

    async def _turn(self, handle: TaskHandle, delay: float) -> bool:
        """Wait ``delay`` for the handle's moment in the first wave (``FIRST_WAVE_S``); False when it was
        cancelled meanwhile (never sent). A wait cut short (the connection closing) ends it lost, unsent."""
        try:
            await asyncio.sleep(delay)
        except asyncio.CancelledError:
            self._paced.discard(handle)
            self._starting.pop(handle, None)
            self._lose_unsent(handle, self._closed or "its start was cancelled")
            raise
        if handle not in self._paced:
            return False
        self._paced.discard(handle)
        return True

    def _lose_unsent(self, handle: TaskHandle, why: str) -> None:
        self._lifecycle.finish(
            handle, error=TaskLost(f"{why} before this queued task was sent", server=self.server, tool=self.tool)
        )

    def _task_ended(self, handle: TaskHandle) -> None:
        self._ended += 1
        self._count_end(handle)
        self._sent.discard(handle)
        self._record_end(handle)
        self._fill()
        if self._ended == len(self._handles):
            self._all_ended(handle)

    def _all_ended(self, last: TaskHandle) -> None:
        """Every task has ended (``last`` the last one): the sweep's record, the end callbacks, the views."""
        if self._sweep is not None and self._closed is None:
            self._sweep.end(finished=True)
        for callback in tuple(self._on_end):
            try:
                callback(self)
            except Exception:
                log.exception("a batch end callback failed for %r", self)
        self._relay(last)

    def _record_end(self, handle: TaskHandle) -> None:
        """Write an item's end in the sweep's record: not one that ended before, nor another kernel's, nor
        one only this side lost (its connection, a closing client: the record keeps it for a resume)."""
        sweep = self._sweep
        if sweep is None or handle in self._before or handle in self._elsewhere:
            return
        position = self._position[handle]
        if self._closed is not None or handle.status == LOST:
            sweep.forget(position)
        else:
            sweep.ended(position, handle)

    async def aclose(self, why: str) -> None:
        """The connection is closing: queued tasks end ``lost`` (never sent), sends in flight stop
        (those handles end ``lost`` too). Sent tasks are left as the connection leaves them. A sweep's
        record keeps them all as they were, for a resume (claimed and not sent: queued again)."""
        self._closed = why
        if self._sweep is not None:
            for handle in self._claimed:
                self._sweep.released(self._position[handle])
        while self._claimed:
            self._queue.appendleft(self._claimed.pop())
        while self._queue:
            self._lose_unsent(self._queue.popleft(), why)
        if self._sweep is not None:
            for handle in self._paced:  # claimed, not sent: queued again in the record
                self._sweep.released(self._position[handle])
        starters = list(self._starting.values())
        for starter in starters:
            starter.cancel()
        await asyncio.gather(*starters, return_exceptions=True)
        if self._sweep is not None:
            await self._sweep.close(finished=False)

    @property
    def sweep(self) -> str | None:
        """The sweep's id in the task index (``client.map(..., resume=ID)``); None when not recorded."""
        return self._sweep.id if self._sweep is not None and self._sweep.broken is None else None

    # -- views -----------------------------------------------------------------------------------

    def on_change(self, callback: Callable[[Batch], None]) -> Callable[[], None]:
        """Call ``callback(batch)`` whenever one of its tasks changes; returns an unsubscribe function."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def on_end(self, callback: Callable[[Batch], None]) -> None:
        """Call ``callback(batch)`` once every task has ended (at once scheduled if they have)."""
        if self._ended == len(self._handles):
            asyncio.get_running_loop().call_soon(callback, self)
        else:
            self._on_end.append(callback)

    def _count_end(self, handle: TaskHandle) -> None:
        """Count an ended task in the view's tally (once; ``batch_tally.py``)."""
        place = self._position.get(handle)
        if place is None or self._tally.counted(place) or not handle.done():
            return
        timed = not handle.cached and handle not in self._before
        self._tally.count(place, handle, failed=_failed(handle), timed=timed)

    def _relay(self, handle: TaskHandle) -> None:
        if handle.done():
            self._count_end(handle)
        for callback in tuple(self._callbacks):
            try:
                callback(self)
            except Exception:
                log.exception("a batch on_change callback failed for %r", self)

    def view(self, now: float | None = None) -> BatchView:
        """The snapshot every view of this batch draws (see :class:`BatchView`). It costs what the running
        tasks cost: the ended ones are counted as they end (``batch_tally.py``), the others are queued."""
        now = time.time() if now is None else now
        tally = self._tally
        live: dict[TaskHandle, None] = {}
        for handle in (*self._sent, *self._elsewhere):
            if handle.done():
                self._count_end(handle)
            else:
                live[handle] = None
        counts: collections.Counter[str] = collections.Counter(tally.counts)
        progress = float(tally.ended)
        running: list[tuple[float, int]] = []
        for handle in live:
            counts[handle.status] += 1
            if handle.progress is not None and handle.progress.fraction is not None:
                progress += handle.progress.fraction
            if handle.status != QUEUED and not handle.cached and handle not in self._before:
                running.append((now - handle.started, self._position[handle]))
        total = len(self._handles)
        queued = total - tally.ended - len(live)
        if queued > 0:
            counts[QUEUED] += queued
        handles = self._handles
        failed = [
            self._entry(place, handles[place], failure_message(handles[place]) or "the tool reported an error")
            for place in tally.failed
        ]
        slowest = [self._entry(place, handles[place]) for place in tally.slowest_places(running)]
        fraction = progress / total if total else 1.0
        finished = self.finished
        elapsed = (finished or now) - self.started
        eta = None
        if finished is None and 0 < fraction < 1:
            eta = elapsed / fraction * (1 - fraction)
        order = {status: i for i, status in enumerate(STATUSES)}
        return BatchView(
            tool=self.tool,
            server=self.server,
            total=total,
            limit=self.limit,
            counts=dict(sorted(counts.items(), key=lambda item: order.get(item[0], len(order)))),
            ended=tally.ended,
            fraction=fraction,
            started=self.started,
            finished=finished,
            eta=eta,
            failed=tuple(failed),
            slowest=tuple(slowest),
            sweep=self.sweep,
            resumed=self.resumed.text() if self.resumed is not None else None,
        )

    @staticmethod
    def _entry(index: int, handle: TaskHandle, error: str | None = None) -> BatchTask:
        return BatchTask(
            index,
            arguments_label(handle.arguments) or "(no arguments)",
            handle.status,
            handle.started,
            handle.finished,
            error,
        )

    def __repr__(self) -> str:
        """``<Batch of 50 research tasks on demo: 50 completed>`` (no times: stable text)."""
        view = self.view()
        return f"<Batch of {view.total} {self.tool} tasks on {self.server}: {view.counts_text()}>"


def _failed(handle: TaskHandle) -> bool:
    """An ended task that did not give a result (cancelled ones are not failures), or a tool error."""
    if handle.status == CANCELLED:
        return False
    if handle.status in FAILURES or handle.exception() is not None:
        return True
    return handle.result().is_error


__all__ = ["DEFAULT_LIMIT", "Batch", "BatchTask", "BatchView", "arguments_label"]
