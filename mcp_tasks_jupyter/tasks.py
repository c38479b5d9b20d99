"""TaskHandle: one task's state and events, and the poller that keeps it current."""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Callable, Generator

from .errors import (AuthenticationFailed, ConnectionFailed, InvalidMessage, MCPError, ProtocolError,
                     RequestTimeout,
                     TaskCancelled, TaskError, TaskExpired, TaskFailed, TaskLost, TaskNotFound)
from .protocol.tasks import (CANCELLED, COMPLETED, FAILED, INPUT_REQUIRED, TERMINAL, WORKING,
                             TaskState)
from .redact import scrub_optional
from .results import ToolResult

if TYPE_CHECKING:
    from .client import Client
    from .dialects.base import TaskDialect

log = logging.getLogger(__name__)

DEFAULT_POLL_MS = 1000
#: The longest a task ever waits between two polls, whatever interval the server asks for.
MAX_POLL_WAIT_S = 60.0
#: Consecutive failed polls (connection trouble, nonsense answers) before a task is declared lost.
MAX_POLL_FAILURES = 6
MAX_BACKOFF_S = 30.0
LOG_LINES_KEPT = 500

#: Client-side statuses, beyond what servers report.
EXPIRED = "expired"
LOST = "lost"


@dataclass(frozen=True, slots=True)
class Progress:
    """The last ``notifications/progress`` for a task; ``fraction`` is None when the total is unknown."""

    progress: float
    total: float | None = None
    message: str | None = None

    @property
    def fraction(self) -> float | None:
        if self.total and self.total > 0:
            return max(0.0, min(1.0, self.progress / self.total))
        return None


class TaskHandle:
    """A task started (or attached to) by this client. Await it for the ToolResult.

    ``await handle`` returns the ToolResult (also a tool error: ``result.is_error``), or raises
    TaskFailed / TaskCancelled / TaskLost. Cancelling the code that awaits never cancels the task.
    """

    def __init__(self, client: "Client", tool: str | None, arguments: dict[str, Any] | None, *,
                 runs_as_task: bool, progress_token: str) -> None:
        self.client = client
        self.server: str = client.name
        self.tool = tool
        self.arguments = arguments
        self.runs_as_task = runs_as_task
        self.progress_token = progress_token
        self.task_id: str | None = None
        self.status: str = WORKING
        self.status_message: str | None = None
        self.progress: Progress | None = None
        self.poll_interval_ms: int | None = None
        self.ttl_ms: int | None = None
        self.created_at: str | None = None
        self.last_updated_at: str | None = None
        self.started: float = time.time()
        self.finished: float | None = None
        self.logs: collections.deque[dict[str, Any]] = collections.deque(maxlen=LOG_LINES_KEPT)
        #: Server requests waiting on the client for this task, by request id (elicitation, sampling).
        self.pending_input: dict[Any, dict[str, Any]] = {}
        #: Answers given in advance (``start_task(answers=...)``), used when they fit a question's schema.
        self.answers: dict[str, Any] | None = None
        #: How each question was answered: (message, source, action), in order.
        self.answered: list[tuple[str, str, str]] = []
        self._future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        self._future.add_done_callback(_consume)
        self._wake = asyncio.Event()
        self._callbacks: list[Callable[["TaskHandle"], None]] = []
        self._runner: asyncio.Task[None] | None = None
        #: The stored result of an identical earlier call (``start_task(..., cache=True)``): no server call.
        self.cached = False
        #: Picked up again from the task index (``client.resume()``).
        self.resumed = False
        #: The variable that receives the result (``-o VAR``), kept in the task index.
        self.out_var: str | None = None
        #: This task's row in the task index (None: not recorded).
        self.index_row: int | None = None
        #: The connection's session when the task started (a later one may not know the task).
        self.generation = client.session.generation

    # -- what users call -----------------------------------------------------------------------

    def __await__(self) -> Generator[Any, None, ToolResult]:
        return asyncio.shield(self._future).__await__()

    def done(self) -> bool:
        return self._future.done()

    def result(self) -> ToolResult:
        """The ToolResult of a finished task (raises its error; InvalidStateError while it runs)."""
        return self._future.result()

    def exception(self) -> BaseException | None:
        return self._future.exception() if self._future.done() else None

    @property
    def reconnecting(self) -> bool:
        """Whether this unfinished task's server stopped answering and the client is reconnecting."""
        return not self.done() and self.client.session.reconnecting

    @property
    def elapsed(self) -> float:
        """Seconds from start to finish (or to now, while it runs)."""
        return (self.finished or time.time()) - self.started

    def on_change(self, callback: Callable[["TaskHandle"], None]) -> Callable[[], None]:
        """Call ``callback(handle)`` on every change of state; returns a function that unsubscribes."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    async def cancel(self) -> None:
        """Ask the server to cancel the task; the handle then ends with TaskCancelled."""
        if self.done():
            return
        if not self.runs_as_task:
            if self._runner is not None:
                self._runner.cancel()
            return
        assert self.task_id is not None
        state = await self.client.dialect.cancel(self.task_id)
        if state is not None:
            self._apply(state)
        else:
            self._wake.set()  # it was already terminal: poll now to learn how it ended

    def __repr__(self) -> str:
        """Stable text: ``<TaskHandle research on demo: completed>`` (no id, no times; see render.py)."""
        from .render import task_text
        return task_text(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """A snapshot for notebooks: stable text and a self-contained HTML box. For a live view
        use ``mcp_tasks_jupyter.jupyter.display.show_task``."""
        from .render import task_html, task_text
        return {"text/plain": task_text(self), "text/html": task_html(self)}

    # -- state changes (the poller, push notifications, the client) ----------------------------

    def _changed(self) -> None:
        for callback in tuple(self._callbacks):
            try:
                callback(self)
            except Exception:
                log.exception("on_change callback failed for %r", self)

    def _apply(self, state: TaskState) -> None:
        if self.status in TERMINAL:
            return  # a terminal task never changes again
        if self.task_id is not None and state.task_id != self.task_id:
            log.warning("%s: ignored a state of task %s given for task %s", self.server, state.task_id,
                        self.task_id)
            return  # an answer about another task: the handle's id never changes
        if _older(state.last_updated_at, self.last_updated_at):
            return  # a poll answer that crossed a newer push on the wire
        state.status_message = scrub_optional(state.status_message)  # the server may echo a secret
        changed = (state.status != self.status or state.status_message != self.status_message
                   or state.poll_interval_ms != self.poll_interval_ms or state.ttl_ms != self.ttl_ms)
        self.task_id = state.task_id
        self.status = state.status
        self.status_message = state.status_message
        self.poll_interval_ms = state.poll_interval_ms
        self.ttl_ms = state.ttl_ms
        self.created_at = state.created_at or self.created_at
        self.last_updated_at = state.last_updated_at
        if changed:
            self._changed()

    def _push(self, state: TaskState) -> None:
        """A status notification arrived: take it and wake the poller if it matters now."""
        self._apply(state)
        if state.status in TERMINAL or state.status == INPUT_REQUIRED:
            self._wake.set()

    def _on_progress(self, params: dict[str, Any]) -> None:
        progress = params.get("progress")
        if isinstance(progress, (int, float)) and not isinstance(progress, bool):
            total = params.get("total")
            message = params.get("message")
            self.progress = Progress(float(progress),
                                     float(total) if isinstance(total, (int, float)) else None,
                                     scrub_optional(message) if isinstance(message, str) else None)
            self._changed()

    def _log(self, params: dict[str, Any]) -> None:
        self.logs.append(params)
        self._changed()

    def _finish(self, result: ToolResult | None = None, error: BaseException | None = None) -> None:
        if self._future.done():
            return
        self.finished = time.time()
        if error is not None:
            if isinstance(error, TaskCancelled):
                self.status = CANCELLED
            elif isinstance(error, TaskExpired):
                self.status = EXPIRED
            elif isinstance(error, (TaskLost, TaskNotFound)):
                self.status = LOST
            elif self.status not in TERMINAL:
                self.status = FAILED
            self._future.set_exception(error)
        else:
            assert result is not None
            if self.status not in TERMINAL:
                self.status = FAILED if result.is_error else COMPLETED
            self._future.set_result(result)
        self.client._release(self)  # withdraws any question still open for this task
        self.pending_input.clear()
        self._changed()

    # -- the poller ----------------------------------------------------------------------------

    def _start(self, coro: Any) -> None:
        self._runner = asyncio.create_task(coro, name=f"mcp-task {self.tool} {self.task_id or ''}")

    async def _run_call(self, request: Any) -> None:
        """An ordinary (non-task) call behind the handle."""
        try:
            self._finish(await request)
        except asyncio.CancelledError:
            self._finish(error=TaskCancelled("the call was cancelled", server=self.server, tool=self.tool))
        except MCPError as exc:
            self._finish(error=_as_task_failure(exc, self))
        except Exception as exc:  # never leave a handle unfinished
            self._finish(error=exc)

    async def _poll(self, dialect: "TaskDialect", poll_now: bool = False) -> None:
        """Poll until terminal, then fetch the result. Never faster than the task's pollInterval,
        counted from the start of one poll to the start of the next (so a poll's own round trip
        does not stretch the interval, and the end is seen at most one interval late).

        Connection trouble and timeouts are retried with backoff; after MAX_POLL_FAILURES in a row,
        or when the connection is gone for good, the handle ends with TaskLost.
        """
        failures = 0
        loop = asyncio.get_running_loop()
        last_poll = loop.time()  # the poller starts with the task: its first poll is one interval on
        try:
            while not self._future.done():
                try:
                    if self.status in TERMINAL:
                        if failures:
                            await asyncio.sleep(min(MAX_BACKOFF_S, 2.0 ** failures))
                        self._finish(await dialect.result(self))
                        return
                    if self.status == INPUT_REQUIRED:
                        await dialect.serve_input(self)
                    if not poll_now:
                        interval = min(MAX_POLL_WAIT_S, (self.poll_interval_ms or DEFAULT_POLL_MS) / 1000)
                        deadline = last_poll + interval
                        if failures:
                            deadline = max(deadline, loop.time() + min(MAX_BACKOFF_S, 2.0 ** failures))
                        await self._sleep_until(deadline)
                        if self.status in TERMINAL:
                            continue
                    poll_now = False
                    assert self.task_id is not None
                    last_poll = loop.time()
                    self._apply(await dialect.get(self.task_id))
                    failures = 0
                except AuthenticationFailed as exc:  # never transient: the same credentials are refused again
                    self._finish(error=exc)
                    return
                except (ConnectionFailed, RequestTimeout, InvalidMessage) as exc:
                    # Transient until proven otherwise: a server that went away is waited for while
                    # the session reconnects; other trouble (garbage answers too) is retried with backoff.
                    session = dialect.session
                    if session.closed_error is None and session.reconnecting:
                        await session.wait_reachable()
                        poll_now = True
                        continue
                    if session.closed_error is not None or failures + 1 >= self.client.max_poll_failures:
                        why = (session.closed_error or exc).detail
                        raise TaskLost(f"lost contact with the server: {why}",
                                       server=self.server, task_id=self.task_id, tool=self.tool) from exc
                    failures += 1
                except TaskNotFound as exc:
                    if isinstance(exc, TaskExpired) or session_renewed(dialect, self) is False:
                        raise
                    raise TaskNotFound("the server no longer knows this task: a new session was started after "
                                       "the server ended the old one (it restarted, or forgot its sessions)",
                                       server=self.server, task_id=self.task_id, tool=self.tool) from exc
        except asyncio.CancelledError:
            raise  # the client is closing; the task stays on the server
        except TaskError as exc:
            self._finish(error=exc)
        except MCPError as exc:
            self._finish(error=_as_task_failure(exc, self))
        except Exception as exc:  # never leave a handle unfinished
            log.exception("poller for %r failed", self)
            self._finish(error=exc)
        finally:
            dialect.release(self)

    async def _sleep_until(self, deadline: float) -> None:
        """Sleep until ``deadline``; return early only when a push makes the task terminal or needy."""
        loop = asyncio.get_running_loop()
        while (remaining := deadline - loop.time()) > 0:
            self._wake.clear()
            try:
                async with asyncio.timeout(remaining):
                    await self._wake.wait()
            except TimeoutError:
                return
            if self.status in TERMINAL or self.status == INPUT_REQUIRED:
                return


def session_renewed(dialect: "TaskDialect", handle: TaskHandle) -> bool:
    """Whether the connection started a new session since ``handle``'s task was created."""
    return dialect.session.generation > handle.generation


def _older(new: str | None, current: str | None) -> bool:
    """Whether timestamp ``new`` is strictly before ``current`` (unknown or unparseable: no)."""
    if not new or not current or new == current:
        return False
    if len(new) == len(current):
        return new < current  # one server writes one format: ISO strings then sort as times
    try:
        return datetime.fromisoformat(new) < datetime.fromisoformat(current)
    except (ValueError, TypeError):  # unparseable, or naive beside aware
        return False


def _as_task_failure(exc: MCPError, handle: TaskHandle) -> TaskError:
    if isinstance(exc, TaskError):
        return exc
    if isinstance(exc, ConnectionFailed):
        return TaskLost(f"lost the connection: {exc.detail}", server=handle.server,
                        task_id=handle.task_id, tool=handle.tool)
    error = exc.error if isinstance(exc, ProtocolError) else None
    return TaskFailed(exc.detail, server=handle.server, task_id=handle.task_id, tool=handle.tool,
                      status_message=handle.status_message, error=error)


def _consume(future: asyncio.Future[Any]) -> None:
    # An unawaited failed handle must not print "exception was never retrieved".
    if not future.cancelled():
        future.exception()


__all__ = ["TaskHandle", "Progress", "TaskNotFound", "EXPIRED", "LOST"]
