"""When each poller is next due, behind one timer (issue 24: nothing per task that can be done once).

A poller that sleeps until its next poll asks ``PollClock.at(when, event)`` to set its wake ``event``
at ``when`` and waits on the event. The clock keeps those alarms in a heap and arms one timer, for
the earliest: a thousand pollers sleeping cost one ``TimerHandle``, not a timer (and a task
cancellation and a ``TimeoutError``) each, as ``asyncio.timeout`` around every sleep did. When the
timer fires, every alarm that is due sets its event (those pollers run in the loop's next pass), and
the timer is armed again for the next one. A poller woken early (a push, a cancel) drops its alarm
(``Alarm.cancel``): the entry leaves the heap when it reaches the top, it keeps nothing alive and
sets nothing.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools

__all__ = ["Alarm", "PollClock"]


class Alarm:
    """One sleeping poller's due time (see the module docstring)."""

    __slots__ = ("event", "rang", "when")

    def __init__(self, when: float, event: asyncio.Event) -> None:
        self.when = when
        self.event: asyncio.Event | None = event
        #: The due time came (the event was set by the clock, not by someone else).
        self.rang = False

    def cancel(self) -> None:
        """The poller no longer waits for this alarm."""
        self.event = None

    def ring(self) -> None:
        if self.event is not None:
            self.rang = True
            self.event.set()
            self.event = None


class PollClock:
    """The due times of one connection's sleeping pollers, behind one timer."""

    __slots__ = ("_armed_for", "_heap", "_order", "_timer")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Alarm]] = []
        self._order = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._armed_for = 0.0

    def at(self, when: float, event: asyncio.Event) -> Alarm:
        """Set ``event`` at loop time ``when`` (unless the returned alarm is cancelled first)."""
        loop = asyncio.get_running_loop()
        alarm = Alarm(when, event)
        heapq.heappush(self._heap, (when, next(self._order), alarm))
        if self._timer is None or when < self._armed_for:
            self._arm(loop)
        return alarm

    @property
    def waiting(self) -> int:
        """Alarms not yet rung or cancelled (tests read it)."""
        return sum(1 for _, _, alarm in self._heap if alarm.event is not None)

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        heap = self._heap
        while heap and heap[0][2].event is None:
            heapq.heappop(heap)  # cancelled: its poller was woken otherwise
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
            heapq.heappop(heap)[2].ring()
        self._arm(loop)

    def close(self) -> None:
        """Drop every alarm and the timer (the pollers are being stopped)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._heap.clear()
