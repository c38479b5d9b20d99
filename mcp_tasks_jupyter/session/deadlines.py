"""Request timeouts that share one timer: what ``asyncio.timeout`` does, without arming and cancelling
a timer per request (issue 14: nothing per poll that can be done once).

``Deadlines.start(seconds)`` puts the running task's deadline in a heap and returns its ``Deadline``;
one timer is armed for the earliest deadline still running. When it fires, every task past its
deadline is cancelled (``Deadline.expired`` then says so), and the timer is armed again for the next
one. A finished request only marks its entry done (``Deadline.finish``), so a request costs a heap push
and no timer of its own. The next ``start`` takes finished entries off the top (requests mostly end
in the order they began), and when the heap still holds twice the entries its last rebuild left
(finished ones behind a long request) it is rebuilt without them: it holds about the requests in
flight, not every request of the last half minute. As with
``asyncio.timeout``, the owner turns the ``CancelledError`` of an expired deadline into its own
timeout error (``Deadline.timed_out`` tells a cancellation of ours from one from outside).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from typing import Generic, Protocol, TypeVar

__all__ = ["Deadline", "Deadlines", "TimerHeap"]


class _Entry(Protocol):
    @property
    def pending(self) -> bool: ...

    def fire(self) -> None: ...


E = TypeVar("E", bound=_Entry)

#: The heap is rebuilt without its finished entries once it holds this many (or twice as many as the
#: last rebuild left), so that it stays about the size of the requests in flight.
COMPACT_MIN = 64


class Deadline:
    """One request's deadline (see the module docstring)."""

    __slots__ = ("_cancelling", "_task", "expired", "running", "when")

    def __init__(self, when: float, task: asyncio.Task[object]) -> None:
        self.when = when
        self._task: asyncio.Task[object] | None = task
        self._cancelling = task.cancelling()
        self.running = True
        self.expired = False

    @property
    def pending(self) -> bool:
        return self.running

    def fire(self) -> None:
        self.expire()

    def finish(self) -> None:
        self.running = False
        self._task = None  # the entry may wait in the heap a while: it keeps nothing alive

    def timed_out(self) -> bool:
        """Called on the owner's ``CancelledError``: whether it is this deadline's own cancellation
        (and nobody else's), which the owner then turns into a timeout."""
        if not self.expired or self._task is None:
            return False
        return self._task.uncancel() <= self._cancelling

    def expire(self) -> None:
        """The time is up: cancel the owner (``timed_out`` then tells it so)."""
        self.expired = True
        self.running = False
        if self._task is not None:
            self._task.cancel()


class TimerHeap(Generic[E]):
    """Entries due at loop times, behind one timer armed for the earliest still pending: when it fires,
    every pending entry that is due fires (``fire()``), and the timer is armed for the next. An entry
    no longer pending leaves the heap lazily, when it reaches the top. ``PollClock`` shares it."""

    __slots__ = ("_armed_for", "_compact_at", "_heap", "_order", "_timer")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, E]] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._armed_for = 0.0
        self._compact_at = COMPACT_MIN

    def _push(self, when: float, entry: E, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Add ``entry`` due at ``when``; finished entries leave first (see the module docstring)."""
        heap = self._heap
        while heap and not heap[0][2].pending:
            heapq.heappop(heap)  # finished
        if len(heap) >= self._compact_at:
            heap[:] = [kept for kept in heap if kept[2].pending]
            heapq.heapify(heap)
            self._compact_at = max(COMPACT_MIN, 2 * len(heap))
        heapq.heappush(heap, (when, next(self._order), entry))
        if self._timer is None or when < self._armed_for:
            self._arm(loop if loop is not None else asyncio.get_running_loop())

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        heap = self._heap
        while heap and not heap[0][2].pending:
            heapq.heappop(heap)  # finished or withdrawn long ago
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if heap:
            self._armed_for = heap[0][0]
            self._timer = loop.call_at(self._armed_for, self._fire, loop)

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        heap, now = self._heap, loop.time()
        while heap and heap[0][0] <= now:
            entry = heapq.heappop(heap)[2]
            if entry.pending:
                entry.fire()
        self._arm(loop)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._heap.clear()


class Deadlines(TimerHeap[Deadline]):
    """The deadlines of one session's requests, behind one timer."""

    __slots__ = ()

    def start(self, seconds: float, loop: asyncio.AbstractEventLoop | None = None) -> Deadline:
        """The running task's deadline, ``seconds`` from now (``loop``: the running loop, when the
        caller knows it: ``asyncio.get_running_loop()`` costs a system call)."""
        if loop is None:
            loop = asyncio.get_running_loop()
        task = asyncio.current_task(loop)
        assert task is not None
        deadline = Deadline(loop.time() + seconds, task)
        self._push(deadline.when, deadline, loop)
        return deadline
