"""TaskHandle: one task as its user holds it: what it is, how it stands, and what they call. What
happens to a task is ``running/``'s job, told to the handle's ``TaskControl`` (``control.py``); the
handle is what every view reads."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Generator
from typing import Any

from ..errors import TaskNotFound
from .control import HandleState, Progress, TaskControl
from .renderers import RENDERERS, bundle, text_of_task
from .results import ToolResult
from .status import EXPIRED, LOST

log = logging.getLogger(__name__)

LOG_LINES_KEPT = 500


class HandleControls:
    """What a handle may ask of the connection that owns it, as functions (the handle knows no client); one
    object shared by many handles: a connection's, or a batch's. ``owner`` is the object that made it (a
    connection's ``TaskLifecycle``), ``batch`` the id of the ``client.map`` batch whose handles share it."""

    __slots__ = ("batch", "cancel", "owner", "reconnecting")

    def __init__(
        self,
        cancel: Callable[[TaskHandle], Awaitable[None]],
        reconnecting: Callable[[], bool],
        *,
        owner: object = None,
        batch: str | None = None,
    ) -> None:
        self.cancel = cancel
        self.reconnecting = reconnecting
        self.owner = owner
        self.batch = batch


class TaskHandle:
    """A task started (or attached to) by this client. Await it for the ToolResult.

    ``await handle`` returns the ToolResult (also a tool error: ``result.is_error``), or raises
    TaskFailed / TaskCancelled / TaskLost. Cancelling the code that awaits never cancels the task.

    Its state is read through read-only attributes; it changes only through its ``TaskControl``
    (``tasks/control.py``), which the lifecycle, the task's poller, the dialects and the runtime hold.
    """

    #: Slots, not a ``__dict__`` (a sweep holds 10,000 handles); weak references are taken to handles.
    __slots__ = ("__weakref__", "_control", "_progress_token", "_s", "_server", "_tool")

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
        self._server = server
        self._tool = tool
        self._progress_token = progress_token
        self._s = HandleState(
            arguments, runs_as_task=runs_as_task, generation=generation, queued=queued, logs_kept=LOG_LINES_KEPT
        )
        self._s.future.add_done_callback(_consume)
        self._control = TaskControl(self, self._s, controls)

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
        return self._s.arguments

    @property
    def runs_as_task(self) -> bool:
        """Whether the call runs as a server-side task (False: an ordinary call behind the handle)."""
        return self._s.runs_as_task

    @property
    def progress_token(self) -> str:
        return self._progress_token

    @property
    def task_id(self) -> str | None:
        return self._s.task_id

    @property
    def status(self) -> str:
        """How the task stands: while it runs, its status; once it ended, its outcome. A task that
        ended with a tool error (``isError``) is ``error``, or ``declined`` when one of its questions was
        declined or dismissed, whatever word the server used (see :attr:`server_status`; the whole
        vocabulary is in tasks/status.py). ``status == "completed"`` means it gave a result that is no error.
        """
        return self._s.outcome or self._s.status

    @property
    def server_status(self) -> str:
        """The server's own word for the task (``completed`` for an ``ext`` task whose tool reported an
        error), or how this client ended it (``lost``, ``expired``, ``cancelled``)."""
        return self._s.status

    @property
    def status_message(self) -> str | None:
        return self._s.status_message

    @property
    def progress(self) -> Progress | None:
        return self._s.progress

    @property
    def poll_interval_ms(self) -> int | None:
        return self._s.poll_interval_ms

    @property
    def ttl_ms(self) -> int | None:
        return self._s.ttl_ms

    @property
    def created_at(self) -> str | None:
        return self._s.created_at

    @property
    def last_updated_at(self) -> str | None:
        return self._s.last_updated_at

    @property
    def started(self) -> float:
        """When the call was sent (epoch seconds)."""
        return self._s.started

    @property
    def finished(self) -> float | None:
        """When the handle ended (epoch seconds; None while it runs)."""
        return self._s.finished

    @property
    def answers(self) -> dict[str, Any] | None:
        """Answers given in advance (``start_task(answers=...)``), used when they fit a question's schema."""
        return self._s.answers

    @property
    def cached(self) -> bool:
        """The stored result of an identical earlier call (``start_task(..., cache=True)``): no server call."""
        return self._s.cached

    @property
    def cached_from(self) -> int | None:
        """The task index row whose stored result a cached handle holds."""
        return self._s.cached_from

    @property
    def resumed(self) -> bool:
        """Picked up again from the task index (``client.resume()``)."""
        return self._s.resumed

    @property
    def out_var(self) -> str | None:
        """The variable that receives the result (``-o VAR``), kept in the task index."""
        return self._s.out_var

    @property
    def index_row(self) -> int | None:
        """This task's row in the task index (None: not recorded)."""
        return self._s.index_row

    @property
    def app_view(self) -> dict[str, Any] | None:
        """The task's MCP Apps view as its record keeps it (``uri``, ``calls``, ``more``), once drawn."""
        return self._s.app_view

    @property
    def started_by(self) -> dict[str, Any] | None:
        """The MCP Apps view that started this task (``view``, ``tool``, ``record``, ``task_id``), if one did."""
        return self._s.started_by

    @property
    def generation(self) -> int:
        """The connection's session when the task started (a later one may not know the task)."""
        return self._s.generation

    @property
    def logs(self) -> list[dict[str, Any]]:
        """Log notifications of this task, newest last (at most ``LOG_LINES_KEPT``): the same list at each
        read, which the task's next lines join."""
        return self._s.shown_logs()

    @property
    def pending_input(self) -> dict[Any, dict[str, Any]]:
        """Server requests waiting on the client for this task, by request id (elicitation, sampling); a new
        empty dict while there has been none."""
        pending = self._s.pending_input
        return pending if pending is not None else {}

    @property
    def answered(self) -> list[tuple[str, str, str]]:
        """How each question was answered: (message, source, action), in order (a new empty list while
        none was asked)."""
        answered = self._s.answered
        return answered if answered is not None else []

    @property
    def questions(self) -> list[dict[str, Any]]:
        """The same with the values given: {question, source, action, content} (secrets scrubbed; a new
        empty list while none was asked)."""
        questions = self._s.questions
        return questions if questions is not None else []

    # -- what users call -----------------------------------------------------------------------

    def __await__(self) -> Generator[Any, None, ToolResult]:
        return asyncio.shield(self._s.future).__await__()

    def done(self) -> bool:
        return self._s.future.done()

    def ready(self) -> bool:
        """Whether the task has ended (ipyparallel's name for :meth:`done`)."""
        return self._s.future.done()

    async def wait(self, timeout: float | None = None) -> ToolResult:
        """The ToolResult once the task ends (or its error, as ``await handle`` raises it).

        After ``timeout`` seconds without an end, TimeoutError; the task goes on (it is never
        cancelled by a wait: ``await handle.cancel()`` does that).
        """
        async with asyncio.timeout(timeout):
            return await self

    def result(self) -> ToolResult:
        """The ToolResult of a finished task (raises its error; InvalidStateError while it runs)."""
        return self._s.future.result()

    def exception(self) -> BaseException | None:
        return self._s.future.exception() if self._s.future.done() else None

    @property
    def reconnecting(self) -> bool:
        """Whether this unfinished task's server stopped answering and the client is reconnecting."""
        return not self.done() and self._control.controls.reconnecting()

    @property
    def elapsed(self) -> float:
        """Seconds from start to finish (or to now, while it runs)."""
        return (self._s.finished or time.time()) - self._s.started

    def on_change(self, callback: Callable[[TaskHandle], None]) -> Callable[[], None]:
        """Call ``callback(handle)`` on every change of state; returns a function that unsubscribes."""
        return self._control.observe(callback)

    def add_done_callback(self, callback: Callable[[TaskHandle], None]) -> Callable[[], None]:
        """Call ``callback(handle)`` once the task has ended (soon after, on the loop; at once
        scheduled when it already has); returns a function that removes it."""

        def done(_future: asyncio.Future[ToolResult]) -> None:
            callback(self)

        def remove() -> None:
            self._s.future.remove_done_callback(done)

        self._s.future.add_done_callback(done)
        return remove

    async def cancel(self) -> None:
        """Ask the server to cancel the task; the handle then ends with TaskCancelled."""
        if not self.done():
            await self._control.controls.cancel(self)

    def __repr__(self) -> str:
        """Stable text: ``<TaskHandle research on demo: completed>`` (no id, no times; see views/text.py)."""
        return text_of_task(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        """A snapshot for notebooks: stable text and a self-contained HTML box. For a live view
        use ``mcp_tasks_jupyter.jupyter.display.show_task``."""
        return bundle(text_of_task(self), RENDERERS.task_html, self)


def _consume(future: asyncio.Future[Any]) -> None:
    # An unawaited failed handle must not print "exception was never retrieved".
    if not future.cancelled():
        future.exception()


__all__ = ["EXPIRED", "LOST", "HandleControls", "Progress", "TaskHandle", "TaskNotFound"]
