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

from ..session.deadlines import TimerHeap

__all__ = ["Alarm", "PollClock"]


class Alarm:
    """One sleeping poller's due time (see the module docstring)."""

    __slots__ = ("event", "rang", "when")

    def __init__(self, when: float, event: asyncio.Event) -> None:
        self.when = when
        self.event: asyncio.Event | None = event
        #: The due time came (the event was set by the clock, not by someone else).
        self.rang = False

    @property
    def pending(self) -> bool:
        return self.event is not None

    def cancel(self) -> None:
        """The poller no longer waits for this alarm."""
        self.event = None

    def fire(self) -> None:
        """The due time came: wake the poller."""
        if self.event is not None:
            self.rang = True
            self.event.set()
            self.event = None


class PollClock(TimerHeap[Alarm]):
    """The due times of one connection's sleeping pollers, behind one timer."""

    __slots__ = ()

    def at(self, when: float, event: asyncio.Event) -> Alarm:
        """Set ``event`` at loop time ``when`` (unless the returned alarm is cancelled first)."""
        alarm = Alarm(when, event)
        self._push(when, alarm)
        return alarm

    @property
    def waiting(self) -> int:
        """Alarms not yet rung or cancelled (tests read it)."""
        return sum(1 for _, _, alarm in self._heap if alarm.pending)
