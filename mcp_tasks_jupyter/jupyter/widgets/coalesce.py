"""The throttle every live view uses: many change notices in, at most one redraw per interval out."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Callable

log = logging.getLogger(__name__)


class Coalescer:
    """Runs ``flush()`` at most once per ``interval`` seconds, however often :meth:`request` is called.

    Requests that arrive while a flush is pending collapse into that flush; the flush runs on the
    running asyncio loop through ``call_later`` (never a thread), so it always sees the latest state.
    ``request(now=True)`` flushes at once (the final state of a finished task must not wait).
    """

    def __init__(self, flush: Callable[[], None], interval: float) -> None:
        self._flush = flush
        self.interval = interval
        self._last = -math.inf
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
        delay = max(0.0, self._last + self.interval - time.monotonic())
        self._timer = loop.call_later(delay, self._fire)

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
        self.flushes += 1
        try:
            self._flush()
        except Exception:  # a broken view must not break the task or the loop
            log.exception("updating a task view failed")
