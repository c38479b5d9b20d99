"""What a batch's view counts, kept as its tasks end: a view of a 100,000-item sweep costs what its running
tasks cost, not what its items do.

``Batch.view()`` is drawn every quarter second while a batch runs (its widget, ``%mcp_tasks``). Counting every
handle each time made a view of 10,000 items cost tens of milliseconds of the kernel's loop, four times a
second. Here an ended task is counted once, when it ends (its status, its end time, whether it failed, how
long it ran): the view then adds the tasks still running (at most the batch's limit, and those another kernel
runs) and counts the rest as queued. A batch keeps only each place's "counted" flag (one byte), the first
:data:`~.batch.FAILED_SHOWN` failed places and the :data:`~.batch.SLOWEST_SHOWN` slowest ended ones.
"""

from __future__ import annotations

import bisect
import collections
import heapq
from collections.abc import Iterable

from ..tasks.handle import TaskHandle


class EndTally:
    """The ended tasks of one batch of ``total`` places, counted once each (see the module docstring)."""

    def __init__(self, total: int, failed_kept: int, slowest_kept: int) -> None:
        self.total = total
        self._counted = bytearray(total)
        self.ended = 0
        #: Ended tasks by status.
        self.counts: collections.Counter[str] = collections.Counter()
        #: The latest end (epoch seconds) of the tasks counted.
        self.last_end: float | None = None
        #: The first failed places, in order (at most ``failed_kept``).
        self.failed: list[int] = []
        #: The slowest ended tasks timed, as (seconds, -place), a min-heap of at most ``slowest_kept``.
        self.slowest: list[tuple[float, int]] = []
        self._failed_kept = failed_kept
        self._slowest_kept = slowest_kept

    def counted(self, place: int) -> bool:
        return bool(self._counted[place])

    def count(self, place: int, handle: TaskHandle, *, failed: bool, timed: bool) -> None:
        """``handle``, at ``place``, ended (counted once: a second call does nothing). ``failed``: it is listed
        among the failed; ``timed``: its run counts among the slowest (not one cached or ended before)."""
        if self._counted[place]:
            return
        self._counted[place] = 1
        self.ended += 1
        self.counts[handle.status] += 1
        finished = handle.finished
        if finished is not None and (self.last_end is None or finished > self.last_end):
            self.last_end = finished
        if failed and (len(self.failed) < self._failed_kept or place < self.failed[-1]):
            bisect.insort(self.failed, place)
            del self.failed[self._failed_kept :]
        if timed:
            entry = ((finished if finished is not None else handle.started) - handle.started, -place)
            if len(self.slowest) < self._slowest_kept:
                heapq.heappush(self.slowest, entry)
            elif entry > self.slowest[0]:
                heapq.heapreplace(self.slowest, entry)

    def slowest_places(self, running: Iterable[tuple[float, int]]) -> list[int]:
        """The places of the slowest tasks: those counted, and ``running`` ((seconds so far, place) of the tasks
        still running), longest first (equal ones in order)."""
        timed = [(seconds, -minus) for seconds, minus in self.slowest]
        timed += running
        timed.sort(key=lambda one: (-one[0], one[1]))
        return [place for _seconds, place in timed[: self._slowest_kept]]


__all__ = ["EndTally"]
