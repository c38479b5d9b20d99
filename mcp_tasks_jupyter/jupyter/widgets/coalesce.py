"""The throttle every live view uses: many change notices in, at most one redraw per interval out."""

from __future__ import annotations

import asyncio
import collections
import logging
import math
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class Coalescer:
    """Runs ``flush()`` at most once per ``interval`` seconds, however often :meth:`request` is called.

    Requests that arrive while a flush is pending collapse into that flush; the flush runs on the
    running asyncio loop through ``call_later`` (never a thread), so it always sees the latest state.
    ``request(now=True)`` flushes at once (the final state of a finished task must not wait).

    The budget counts those immediate flushes too: in any one second there are at most
    ``1 / interval`` flushes, because the scheduled ones leave room for one immediate flush per
    second (a task that changes all the time sends at most 9 messages a second at 0.1 s, and its
    final state makes the 10th).
    """

    def __init__(self, flush: Callable[[], None], interval: float) -> None:
        self._flush = flush
        self.interval = interval
        self._last = -math.inf
        #: Scheduled flushes allowed in any one second (0: no limit beyond the interval).
        self._per_second = round(1 / interval) - 1 if interval > 0 else 0
        #: When the latest flushes ran (as many as that budget).
        self._recent: collections.deque[float] = collections.deque(maxlen=max(1, self._per_second))
        self._timer: asyncio.TimerHandle | None = None
        #: How many times ``flush`` ran (tests and benchmarks read it).
        self.flushes = 0

    def request(self, *, now: bool = False) -> None:
        """Ask for a flush: at once if ``now``, else at the earliest moment the interval allows."""
        if now:
            self.cancel()
            self._run()
            return
        if self._timer is not None:
            return  # one is already scheduled; it will read the latest state
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a plain script): nothing can be scheduled, draw now
            self._run()
            return
        due = self._last + self.interval
        if self._per_second and len(self._recent) == self._per_second:
            due = max(due, self._recent[0] + 1.0)  # the second's scheduled budget is spent
        self._timer = loop.call_later(max(0.0, due - time.monotonic()), self._fire)

    def cancel(self) -> None:
        """Drop a scheduled flush, if any."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _fire(self) -> None:
        self._timer = None
        self._run()

    def _run(self) -> None:
        self._last = time.monotonic()
        self._recent.append(self._last)
        self.flushes += 1
        try:
            self._flush()
        except Exception:  # a broken view must not break the task or the loop
            log.exception("updating a task view failed")
