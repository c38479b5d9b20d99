"""One task's poller: the one place where a task's polling pace, its backoff and its end are decided.

A ``Poller`` is made by the connection's ``TaskLifecycle`` for each task it follows and runs in the
lifecycle's group of jobs until the task ends. It asks the server at the task's interval (bounded),
counted from the start of one poll to the start of the next, so a poll's own round trip does not
stretch the interval and the end is seen at most one interval late. It sleeps until then, or until
a push wakes it (``wake``). While a push channel is open and delivering the task's changes, the task
is polled only as a safety net (``PUSHED_POLL_FACTOR`` intervals, at most ``MAX_PUSHED_POLL_WAIT_S``,
after the last news of it: a poll or a push, which brings the whole task); it goes back to its own
interval when the channel drops (``TaskLifecycle.pushes_changed``) or falls silent (a poll shows a
change no push brought). While the session reconnects to a server that went away it waits for it;
other connection trouble, timeouts and garbage answers are retried with backoff; after
``max_poll_failures`` in a row, or when the connection is gone for good, the task ends ``lost``. A
task that needs input has its questions served by the dialect between polls.

Sleeping costs no timer of its own: the due time is an alarm on the connection's ``PollClock`` (one
timer for every sleeping poller, ``poll_clock.py``).
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import TYPE_CHECKING

from ..errors import (
    AuthenticationFailed,
    ConnectionFailed,
    InvalidMessage,
    MCPError,
    RequestTimeout,
    TaskError,
    TaskExpired,
    TaskLost,
    TaskNotFound,
)
from ..protocol.task_state import INPUT_REQUIRED, TERMINAL
from ..tasks.control import control_of
from ..tasks.handle import TaskHandle

if TYPE_CHECKING:
    from .lifecycle import TaskLifecycle

log = logging.getLogger(__name__)

DEFAULT_POLL_MS = 1000
#: The longest a task ever waits between two polls, whatever interval the server asks for.
MAX_POLL_WAIT_S = 60.0
#: While a push channel delivers a task's changes, the task is polled only this many intervals
#: apart (a safety net: a push lost on the way is still seen) ...
PUSHED_POLL_FACTOR = 10
#: ... and at most this long apart (never less often than its own interval, though).
MAX_PUSHED_POLL_WAIT_S = 30.0
#: A task's first poll comes at a random moment between this fraction of its interval and one interval
#: after the task started, so that tasks started together (``client.map``) do not poll in the same moment
#: every interval: their polls stay spread, each one interval after its own last.
FIRST_POLL_SPREAD = 0.5
#: Consecutive failed polls (connection trouble, garbage answers) before a task is declared lost.
MAX_POLL_FAILURES = 6
MAX_BACKOFF_S = 30.0


class Poller:
    """Follows one task until it ends (see the module docstring)."""

    __slots__ = ("_control", "_lifecycle", "_wake", "handle", "pushed_at")

    def __init__(self, lifecycle: TaskLifecycle, handle: TaskHandle) -> None:
        self.handle = handle
        self._control = control_of(handle)  # what each poll's answer is told to
        self._lifecycle = lifecycle
        self._wake = asyncio.Event()
        #: When the last push about the task came, while its pushes are trusted (None: polls pace it).
        self.pushed_at: float | None = None

    def wake(self) -> None:
        """Look at the task now (a push made it terminal or needy, an answer may have changed it)."""
        self._wake.set()

    @property
    def interval(self) -> float:
        """Seconds between two polls: the server's interval, bounded."""
        return min(MAX_POLL_WAIT_S, (self.handle.poll_interval_ms or DEFAULT_POLL_MS) / 1000)

    def due(self, last_poll: float) -> float:
        """When the task is next polled: its interval (bounded) after ``last_poll``; or, while the push
        channel delivers its changes, the safety net's wait after the last news of it."""
        interval = self.interval
        if self.pushed_at is not None and self._lifecycle.dialect.push_live(self.handle):
            safety = max(interval, min(PUSHED_POLL_FACTOR * interval, MAX_PUSHED_POLL_WAIT_S))
            return max(last_poll, self.pushed_at) + safety
        return last_poll + interval

    async def run(self, poll_now: bool = False) -> None:
        """Poll until terminal, then fetch the result and finish the task (its error, if it failed)."""
        lifecycle, handle = self._lifecycle, self.handle
        dialect, session = lifecycle.dialect, lifecycle.session
        failures = 0
        loop = asyncio.get_running_loop()
        # The poller starts with the task: its first poll is at most one interval on (FIRST_POLL_SPREAD).
        last_poll = loop.time() - random.random() * FIRST_POLL_SPREAD * self.interval
        try:
            while not handle.done():
                try:
                    if handle.server_status in TERMINAL:
                        if failures:
                            await asyncio.sleep(min(MAX_BACKOFF_S, 2.0**failures))
                        lifecycle.finish(handle, await dialect.result(handle))
                        return
                    if handle.server_status == INPUT_REQUIRED:
                        await dialect.serve_input(handle)
                    if not poll_now:
                        backoff_until = loop.time() + min(MAX_BACKOFF_S, 2.0**failures) if failures else 0.0
                        await self.sleep_until(last_poll, backoff_until)
                        if handle.server_status in TERMINAL:
                            continue
                    poll_now = False
                    assert handle.task_id is not None
                    last_poll = loop.time()
                    seen = handle.server_status, handle.status_message
                    self._control.apply(await dialect.get(handle.task_id))
                    if (handle.server_status, handle.status_message) != seen:
                        lifecycle.distrust(self)  # a change no push brought: the channel fell silent
                    failures = 0
                except AuthenticationFailed as exc:  # never transient: the same credentials are refused again
                    lifecycle.finish(handle, error=exc)
                    return
                except (ConnectionFailed, RequestTimeout, InvalidMessage) as exc:
                    if session.closed_error is None and session.reconnecting:
                        await session.wait_reachable()
                        poll_now = True
                        continue
                    if session.closed_error is not None or failures + 1 >= lifecycle.max_poll_failures:
                        why = (session.closed_error or exc).detail
                        raise TaskLost(
                            f"lost contact with the server: {why}",
                            server=lifecycle.server,
                            task_id=handle.task_id,
                            tool=handle.tool,
                        ) from exc
                    failures += 1
                except TaskNotFound as exc:
                    if isinstance(exc, TaskExpired) or session.generation <= handle.generation:
                        raise
                    raise TaskNotFound(
                        "the server no longer knows this task: a new session was started after "
                        "the server ended the old one (it restarted, or forgot its sessions)",
                        server=lifecycle.server,
                        task_id=handle.task_id,
                        tool=handle.tool,
                    ) from exc
        except asyncio.CancelledError:
            raise  # the client is closing; the task stays on the server
        except TaskError as exc:
            lifecycle.finish(handle, error=exc)
        except MCPError as exc:
            from .lifecycle import as_task_failure

            lifecycle.finish(handle, error=as_task_failure(exc, handle))
        except Exception as exc:  # never leave a handle unfinished
            log.exception("poller for %r failed", handle)
            lifecycle.finish(handle, error=exc)
        finally:
            dialect.release(handle)

    async def sleep_until(self, last_poll: float, not_before: float) -> None:
        """Sleep until the next poll is due (``due``, and not before ``not_before``), reckoned again at
        each wake: the push channel may have dropped or begun delivering. Return early when a push makes
        the task terminal or needy."""
        loop = asyncio.get_running_loop()
        handle, wake, clock = self.handle, self._wake, self._lifecycle.clock
        while (due := max(self.due(last_poll), not_before)) > loop.time():
            # Looked at before each sleep: a push may have ended the task in the same loop pass as the
            # alarm rang (both set the event), and the next due time is then ten intervals away.
            if handle.server_status in TERMINAL:
                return
            wake.clear()
            alarm = clock.at(due, wake)
            try:
                await wake.wait()
            finally:
                alarm.cancel()  # woken otherwise (or stopped): the clock forgets it
            if alarm.rang:
                continue  # the due time may have moved on meanwhile (pushes began): look again
            if handle.server_status in TERMINAL or handle.server_status == INPUT_REQUIRED:
                return


__all__ = [
    "DEFAULT_POLL_MS",
    "FIRST_POLL_SPREAD",
    "MAX_BACKOFF_S",
    "MAX_POLL_FAILURES",
    "MAX_POLL_WAIT_S",
    "MAX_PUSHED_POLL_WAIT_S",
    "PUSHED_POLL_FACTOR",
    "Poller",
]
