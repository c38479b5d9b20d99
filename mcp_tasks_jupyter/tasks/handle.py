"""TaskHandle: one task's state and its events. What happens to a task is ``lifecycle.py``'s job;
the handle is what it updates and what every view reads."""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import TaskCancelled, TaskExpired, TaskLost, TaskNotFound
from ..protocol.task_state import CANCELLED, COMPLETED, FAILED, TERMINAL, WORKING, TaskState
from ..redact import scrub, scrub_data, scrub_optional
from .results import ToolResult
from .status import EXPIRED, LOST

log = logging.getLogger(__name__)

LOG_LINES_KEPT = 500


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


class HandleControls:
    """What a handle may ask of the connection that owns it, as functions (the handle knows no client)."""

    __slots__ = ("cancel", "reconnecting")

    def __init__(self, cancel: Callable[[TaskHandle], Awaitable[None]], reconnecting: Callable[[], bool]) -> None:
        self.cancel = cancel
        self.reconnecting = reconnecting


class TaskHandle:
    """A task started (or attached to) by this client. Await it for the ToolResult.

    ``await handle`` returns the ToolResult (also a tool error: ``result.is_error``), or raises
    TaskFailed / TaskCancelled / TaskLost. Cancelling the code that awaits never cancels the task.
    """

    def __init__(
        self,
        server: str,
        tool: str | None,
        arguments: dict[str, Any] | None,
        *,
        runs_as_task: bool,
        progress_token: str,
        controls: HandleControls,
        generation: int = 0,
    ) -> None:
        self._controls = controls
        self.server: str = server
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
        #: The same with the values given: {question, source, action, content} (registered secrets scrubbed).
        self.questions: list[dict[str, Any]] = []
        self._future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        self._future.add_done_callback(_consume)
        self._callbacks: list[Callable[[TaskHandle], None]] = []
        #: The stored result of an identical earlier call (``start_task(..., cache=True)``): no server call.
        self.cached = False
        #: The task index row whose stored result a cached handle holds.
        self.cached_from: int | None = None
        #: Picked up again from the task index (``client.resume()``).
        self.resumed = False
        #: The variable that receives the result (``-o VAR``), kept in the task index.
        self.out_var: str | None = None
        #: This task's row in the task index (None: not recorded).
        self.index_row: int | None = None
        #: The connection's session when the task started (a later one may not know the task).
        self.generation = generation

    # -- what users call -----------------------------------------------------------------------

    def __await__(self) -> Generator[Any, None, ToolResult]:
        return asyncio.shield(self._future).__await__()

    def done(self) -> bool:
        return self._future.done()

    def ready(self) -> bool:
        """Whether the task has ended (ipyparallel's name for :meth:`done`)."""
        return self._future.done()

    async def wait(self, timeout: float | None = None) -> ToolResult:
        """The ToolResult once the task ends (or its error, as ``await handle`` raises it).

        After ``timeout`` seconds without an end, TimeoutError; the task goes on (it is never
        cancelled by a wait: ``await handle.cancel()`` does that).
        """
        async with asyncio.timeout(timeout):
            return await self

    def result(self) -> ToolResult:
        """The ToolResult of a finished task (raises its error; InvalidStateError while it runs)."""
        return self._future.result()

    def exception(self) -> BaseException | None:
        return self._future.exception() if self._future.done() else None

    @property
    def reconnecting(self) -> bool:
        """Whether this unfinished task's server stopped answering and the client is reconnecting."""
        return not self.done() and self._controls.reconnecting()

    @property
    def elapsed(self) -> float:
        """Seconds from start to finish (or to now, while it runs)."""
        return (self.finished or time.time()) - self.started

    def on_change(self, callback: Callable[[TaskHandle], None]) -> Callable[[], None]:
        """Call ``callback(handle)`` on every change of state; returns a function that unsubscribes."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def add_done_callback(self, callback: Callable[[TaskHandle], None]) -> Callable[[], None]:
        """Call ``callback(handle)`` once the task has ended (soon after, on the loop; at once
        scheduled when it already has); returns a function that removes it."""

        def done(_future: asyncio.Future[ToolResult]) -> None:
            callback(self)

        def remove() -> None:
            self._future.remove_done_callback(done)

        self._future.add_done_callback(done)
        return remove

    async def cancel(self) -> None:
        """Ask the server to cancel the task; the handle then ends with TaskCancelled."""
        if not self.done():
            await self._controls.cancel(self)

    # -- the task's questions (the answering path keeps these) ---------------------------------

    def question_opened(self, key: Any, request: dict[str, Any]) -> None:
        """A question of this task waits for an answer under ``key`` (request id or input key)."""
        self.pending_input[key] = request
        self._changed()

    def question_closed(self, key: Any) -> None:
        self.pending_input.pop(key, None)

    def question_answered(self, message: str, source: str, action: str, content: Any = None) -> None:
        """How a question was answered: ``source`` is answers / handler / person / no handler;
        ``content`` the values given (an accepted elicitation's)."""
        self.answered.append((message, source, action))
        self.questions.append(
            {"question": scrub(message), "source": source, "action": action, "content": scrub_data(content)}
        )
        self._changed()

    def __repr__(self) -> str:
        """Stable text: ``<TaskHandle research on demo: completed>`` (no id, no times; see render.py)."""
        from ..views.render import task_text

        return task_text(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """A snapshot for notebooks: stable text and a self-contained HTML box. For a live view
        use ``mcp_tasks_jupyter.jupyter.display.show_task``."""
        from ..views.render import task_html, task_text

        return {"text/plain": task_text(self), "text/html": task_html(self)}

    # -- state changes: called by lifecycle.py only ---------------------------------------------

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
            log.warning(
                "%s: ignored a state of task %s given for task %s", self.server, state.task_id, self.task_id
            )
            return  # an answer about another task: the handle's id never changes
        if _older(state.last_updated_at, self.last_updated_at):
            return  # a poll answer that crossed a newer push on the wire
        state.status_message = scrub_optional(state.status_message)  # the server may echo a secret
        changed = (
            state.status != self.status
            or state.status_message != self.status_message
            or state.poll_interval_ms != self.poll_interval_ms
            or state.ttl_ms != self.ttl_ms
        )
        self.task_id = state.task_id
        self.status = state.status
        self.status_message = state.status_message
        self.poll_interval_ms = state.poll_interval_ms
        self.ttl_ms = state.ttl_ms
        self.created_at = state.created_at or self.created_at
        self.last_updated_at = state.last_updated_at
        if changed:
            self._changed()

    def _on_progress(self, params: dict[str, Any]) -> None:
        progress = params.get("progress")
        if isinstance(progress, (int, float)) and not isinstance(progress, bool):
            total = params.get("total")
            message = params.get("message")
            self.progress = Progress(
                float(progress),
                float(total) if isinstance(total, (int, float)) else None,
                scrub_optional(message) if isinstance(message, str) else None,
            )
            self._changed()

    def _log(self, params: dict[str, Any]) -> None:
        self.logs.append(params)
        self._changed()

    def _settle(self, result: ToolResult | None = None, error: BaseException | None = None) -> bool:
        """End the handle with ``result`` or ``error`` (once: False when it had already ended)."""
        if self._future.done():
            return False
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
        return True


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


def _consume(future: asyncio.Future[Any]) -> None:
    # An unawaited failed handle must not print "exception was never retrieved".
    if not future.cancelled():
        future.exception()


__all__ = ["EXPIRED", "LOST", "HandleControls", "Progress", "TaskHandle", "TaskNotFound"]
