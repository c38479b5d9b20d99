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
from .renderers import RENDERERS, bundle, text_of_task
from .results import ToolResult
from .status import EXPIRED, LOST, QUEUED, lost_words, tool_error_outcome

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

    Its state is read through read-only attributes; it changes only through the methods under
    "what happens to the task", which the lifecycle, the dialects and the runtime call.
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
        queued: bool = False,
    ) -> None:
        self._controls = controls
        self._server = server
        self._tool = tool
        self._arguments = arguments
        self._runs_as_task = runs_as_task
        self._progress_token = progress_token
        self._task_id: str | None = None
        self._status: str = QUEUED if queued else WORKING
        self._outcome: str | None = None  # set once at the end when the result is a tool error
        self._status_message: str | None = None
        self._progress: Progress | None = None
        self._poll_interval_ms: int | None = None
        self._ttl_ms: int | None = None
        self._created_at: str | None = None
        self._last_updated_at: str | None = None
        self._started: float = time.time()
        self._finished: float | None = None
        self._answers: dict[str, Any] | None = None
        self._cached = False
        self._cached_from: int | None = None
        self._resumed = False
        self._out_var: str | None = None
        self._index_row: int | None = None
        self._generation = generation
        #: Log notifications of this task, newest last (at most LOG_LINES_KEPT).
        self.logs: collections.deque[dict[str, Any]] = collections.deque(maxlen=LOG_LINES_KEPT)
        #: Server requests waiting on the client for this task, by request id (elicitation, sampling).
        self.pending_input: dict[Any, dict[str, Any]] = {}
        #: How each question was answered: (message, source, action), in order.
        self.answered: list[tuple[str, str, str]] = []
        #: The same with the values given: {question, source, action, content} (registered secrets scrubbed).
        self.questions: list[dict[str, Any]] = []
        self._future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        self._future.add_done_callback(_consume)
        self._callbacks: list[Callable[[TaskHandle], None]] = []

    # -- what it is (read-only) ----------------------------------------------------------------

    @property
    def server(self) -> str:
        """The connection's name."""
        return self._server

    @property
    def tool(self) -> str | None:
        """The tool called (None: a task attached by id whose tool is unknown)."""
        return self._tool

    @property
    def arguments(self) -> dict[str, Any] | None:
        return self._arguments

    @property
    def runs_as_task(self) -> bool:
        """Whether the call runs as a server-side task (False: an ordinary call behind the handle)."""
        return self._runs_as_task

    @property
    def progress_token(self) -> str:
        return self._progress_token

    @property
    def task_id(self) -> str | None:
        return self._task_id

    @property
    def status(self) -> str:
        """How the task stands: while it runs, its status; once it ended, its outcome. A task that
        ended with a tool error (``isError``) is ``error``, or ``declined`` when one of its questions was
        declined or dismissed, whatever word the server used (see :attr:`server_status`; the whole
        vocabulary is in tasks/status.py). ``status == "completed"`` means it gave a result that is no error.
        """
        return self._outcome or self._status

    @property
    def server_status(self) -> str:
        """The server's own word for the task (``completed`` for an ``ext`` task whose tool reported an
        error), or how this client ended it (``lost``, ``expired``, ``cancelled``)."""
        return self._status

    @property
    def status_message(self) -> str | None:
        return self._status_message

    @property
    def progress(self) -> Progress | None:
        return self._progress

    @property
    def poll_interval_ms(self) -> int | None:
        return self._poll_interval_ms

    @property
    def ttl_ms(self) -> int | None:
        return self._ttl_ms

    @property
    def created_at(self) -> str | None:
        return self._created_at

    @property
    def last_updated_at(self) -> str | None:
        return self._last_updated_at

    @property
    def started(self) -> float:
        """When the call was sent (epoch seconds)."""
        return self._started

    @property
    def finished(self) -> float | None:
        """When the handle ended (epoch seconds; None while it runs)."""
        return self._finished

    @property
    def answers(self) -> dict[str, Any] | None:
        """Answers given in advance (``start_task(answers=...)``), used when they fit a question's schema."""
        return self._answers

    @property
    def cached(self) -> bool:
        """The stored result of an identical earlier call (``start_task(..., cache=True)``): no server call."""
        return self._cached

    @property
    def cached_from(self) -> int | None:
        """The task index row whose stored result a cached handle holds."""
        return self._cached_from

    @property
    def resumed(self) -> bool:
        """Picked up again from the task index (``client.resume()``)."""
        return self._resumed

    @property
    def out_var(self) -> str | None:
        """The variable that receives the result (``-o VAR``), kept in the task index."""
        return self._out_var

    @property
    def index_row(self) -> int | None:
        """This task's row in the task index (None: not recorded)."""
        return self._index_row

    @property
    def generation(self) -> int:
        """The connection's session when the task started (a later one may not know the task)."""
        return self._generation

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
        return (self._finished or time.time()) - self._started

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

    def __repr__(self) -> str:
        """Stable text: ``<TaskHandle research on demo: completed>`` (no id, no times; see render.py)."""
        return text_of_task(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """A snapshot for notebooks: stable text and a self-contained HTML box. For a live view
        use ``mcp_tasks_jupyter.jupyter.display.show_task``."""
        return bundle(text_of_task(self), RENDERERS.task_html, self)

    # -- what happens to the task (the lifecycle, the dialects, the runtime) ---------------------
    # Each method records one event; those a view shows tell the observers (``on_change``).

    def sent(self, generation: int, *, as_task: bool, answers: dict[str, Any] | None) -> None:
        """The call is being sent on session ``generation``: ``as_task`` says whether it asks for a
        task; a queued handle becomes ``working`` and its clock starts."""
        self._runs_as_task = as_task
        self._answers = dict(answers) if answers else None
        if self._status == QUEUED and not self.done():
            self._status, self._started, self._generation = WORKING, time.time(), generation
            self.changed()

    def ran_inline(self) -> None:
        """The server answered the call itself instead of making it a task."""
        self._runs_as_task = False

    def became_task(self, state: TaskState) -> None:
        """The server (which decides, ext/sep1686) made the call a task: ``state`` is its first state."""
        self._runs_as_task = True
        self.apply(state)
        self.changed()

    def named(self, task_id: str | None) -> None:
        """The task's id is known before its first state (attached by id, or named by this client,
        sep1686); None withdraws a name the server never took."""
        self._task_id = task_id

    def recorded(self, row: int) -> None:
        """The task index keeps this task in ``row``."""
        self._index_row = row

    def resumed_from(self, row: int, arguments: dict[str, Any] | None, out_var: str | None) -> None:
        """Picked up again from the task index's ``row`` (its arguments and ``-o`` variable)."""
        self._resumed, self._index_row, self._arguments, self._out_var = True, row, arguments, out_var

    def output_to(self, variable: str | None) -> None:
        """The result goes to ``variable`` (``-o VAR``); the index's record hears it as a change."""
        if variable != self._out_var:
            self._out_var = variable
            self.changed()

    def from_cache(self, result: ToolResult, row: int, created_at: str | None) -> None:
        """End at once with the stored ``result`` of an identical earlier call (index ``row``)."""
        self._cached, self._cached_from, self._created_at = True, row, created_at
        self._status_message = "cached result of an earlier identical call"
        self.settle(result)
        self.changed()

    def apply(self, state: TaskState) -> None:
        """A state of the task from the server (a poll answer or a push)."""
        if self._status in TERMINAL:
            return  # a terminal task never changes again
        if self._task_id is not None and state.task_id != self._task_id:
            log.warning(
                "%s: ignored a state of task %s given for task %s", self._server, state.task_id, self._task_id
            )
            return  # an answer about another task: the handle's id never changes
        if _older(state.last_updated_at, self._last_updated_at):
            return  # a poll answer that crossed a newer push on the wire
        state.status_message = scrub_optional(state.status_message)  # the server may echo a secret
        changed = (
            state.status != self._status
            or state.status_message != self._status_message
            or state.poll_interval_ms != self._poll_interval_ms
            or state.ttl_ms != self._ttl_ms
        )
        self._task_id = state.task_id
        self._status = state.status
        self._status_message = state.status_message
        self._poll_interval_ms = state.poll_interval_ms
        self._ttl_ms = state.ttl_ms
        self._created_at = state.created_at or self._created_at
        self._last_updated_at = state.last_updated_at
        if changed:
            self.changed()

    def progress_reported(self, params: dict[str, Any]) -> None:
        """A ``notifications/progress`` for this task (its progress listener)."""
        progress = params.get("progress")
        if isinstance(progress, (int, float)) and not isinstance(progress, bool):
            total = params.get("total")
            message = params.get("message")
            self._progress = Progress(
                float(progress),
                float(total) if isinstance(total, (int, float)) else None,
                scrub_optional(message) if isinstance(message, str) else None,
            )
            self.changed()

    def logged(self, params: dict[str, Any]) -> None:
        """A log notification of this task (already scrubbed of secrets)."""
        self.logs.append(params)
        self.changed()

    def question_opened(self, key: Any, request: dict[str, Any]) -> None:
        """A question of this task waits for an answer under ``key`` (request id or input key)."""
        self.pending_input[key] = request
        self.changed()

    def question_closed(self, key: Any) -> None:
        self.pending_input.pop(key, None)

    def question_answered(self, message: str, source: str, action: str, content: Any = None) -> None:
        """How a question was answered: ``source`` is answers / handler / person / no handler;
        ``content`` the values given (an accepted elicitation's)."""
        self.answered.append((message, source, action))
        self.questions.append(
            {"question": scrub(message), "source": source, "action": action, "content": scrub_data(content)}
        )
        self.changed()

    def open_questions_dropped(self) -> list[Any]:
        """The keys of the questions still open, which the task's end makes stale (now closed)."""
        keys = list(self.pending_input)
        self.pending_input.clear()
        return keys

    def settle(self, result: ToolResult | None = None, error: BaseException | None = None) -> bool:
        """End the handle with ``result`` or ``error`` (once: False when it had already ended).
        The observers are not told here: the lifecycle releases the task first, then ``changed()``."""
        if self._future.done():
            return False
        self._finished = time.time()
        if error is not None:
            if isinstance(error, TaskCancelled):
                self._status = CANCELLED
            elif isinstance(error, TaskExpired):
                self._status = EXPIRED
            elif isinstance(error, (TaskLost, TaskNotFound)):
                self._status = LOST
            elif self._status not in TERMINAL:
                self._status = FAILED
            words = lost_words(error)
            if words is not None:  # the task's last headline ("step 23/30") no longer holds
                self._status_message = scrub(words)
            self._future.set_exception(error)
        else:
            assert result is not None
            if self._status not in TERMINAL:
                self._status = FAILED if result.is_error else COMPLETED
            if result.is_error:
                self._outcome = tool_error_outcome(self.answered)
            self._future.set_result(result)
        return True

    def changed(self) -> None:
        """Tell the observers (``on_change``) that something they show changed: after an event
        above, or when the connection's state (``reconnecting``) changed."""
        for callback in tuple(self._callbacks):
            try:
                callback(self)
            except Exception:
                log.exception("on_change callback failed for %r", self)


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
