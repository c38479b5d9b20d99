"""TaskControl: the only means to change a TaskHandle.

A ``TaskHandle`` is what users hold: what the task is and how it stands, read-only, and what they call
(``wait``, ``cancel``, ``on_change``). Everything that happens to the task (a state from the server, a
question, the end) is told to its ``TaskControl`` (``control_of(handle)``), which the lifecycle, the
task's poller, the dialects and the runtime hold. Each method records one event in the handle's state;
those a view shows tell the handle's observers (``on_change``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import TaskCancelled, TaskExpired, TaskLost, TaskNotFound
from ..protocol.task_state import CANCELLED, COMPLETED, FAILED, TERMINAL, WORKING, TaskState
from ..redact import scrub, scrub_data, scrub_optional
from .results import ToolResult
from .status import EXPIRED, LOST, QUEUED, lost_words, tool_error_outcome

if TYPE_CHECKING:
    from .handle import HandleControls, TaskHandle

log = logging.getLogger(__name__)


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


#: A log line kept compactly (``HandleState.lines``): a dict with these keys, in this order, becomes a tuple of
#: its values (a tuple of three takes 64 bytes, a dict of three 184: a sweep's handles each keep a few lines).
LINE_KEYS = ("level", "logger", "data")
SHORT_LINE_KEYS = ("level", "data")


class HandleState:
    """What a handle holds that happens to it: written by its ``TaskControl`` only, read by the handle.

    The containers that stay empty for nearly every task (questions, answers, observers) are made when the
    first item comes (None until then: a sweep's 10,000 handles would each hold five empty ones), and the
    log lines are kept compactly until the handle's ``logs`` are first read (``lines``, then ``logs``).
    """

    __slots__ = (
        "answered",
        "answers",
        "app_view",
        "arguments",
        "cached",
        "cached_from",
        "callbacks",
        "created_at",
        "finished",
        "future",
        "generation",
        "index_row",
        "last_updated_at",
        "lines",
        "logs",
        "logs_kept",
        "out_var",
        "outcome",
        "pending_input",
        "poll_interval_ms",
        "progress",
        "questions",
        "resumed",
        "runs_as_task",
        "started",
        "started_by",
        "status",
        "status_message",
        "task_id",
        "ttl_ms",
    )

    def __init__(
        self,
        arguments: dict[str, Any] | None,
        *,
        runs_as_task: bool,
        generation: int,
        queued: bool,
        logs_kept: int,
    ) -> None:
        self.arguments = arguments
        self.runs_as_task = runs_as_task
        self.generation = generation
        self.task_id: str | None = None
        self.status: str = QUEUED if queued else WORKING
        self.outcome: str | None = None  # set once at the end when the result is a tool error
        self.status_message: str | None = None
        self.progress: Progress | None = None
        self.poll_interval_ms: int | None = None
        self.ttl_ms: int | None = None
        self.created_at: str | None = None
        self.last_updated_at: str | None = None
        self.started: float = time.time()
        self.finished: float | None = None
        self.answers: dict[str, Any] | None = None
        self.cached = False
        self.cached_from: int | None = None
        self.resumed = False
        self.out_var: str | None = None
        self.index_row: int | None = None
        #: The task's MCP Apps view and what it called; the view that started this task (plain data of
        #: ``index/view_record.py``'s ViewRecord and StartedBy).
        self.app_view: dict[str, Any] | None = None
        self.started_by: dict[str, Any] | None = None
        #: Log notifications of the task, newest last (at most ``logs_kept``), in a list, which costs what it
        #: holds (a deque takes 600 bytes for its first line: a sweep's 100,000 handles each keep a few). Until
        #: the handle's ``logs`` are read, ``lines`` keeps them compactly (a line with ``LINE_KEYS`` or
        #: ``SHORT_LINE_KEYS`` as a tuple of its values, any other as its dict); from the first read on,
        #: ``logs`` keeps them as dicts, the same list each time (None until then).
        self.lines: list[tuple[Any, ...] | dict[str, Any]] | None = None
        self.logs: list[dict[str, Any]] | None = None
        self.logs_kept = logs_kept
        #: Server requests waiting on the client for the task, by request id (elicitation, sampling).
        self.pending_input: dict[Any, dict[str, Any]] | None = None
        #: How each question was answered: (message, source, action), in order.
        self.answered: list[tuple[str, str, str]] | None = None
        #: The same with the values given: {question, source, action, content} (registered secrets scrubbed).
        self.questions: list[dict[str, Any]] | None = None
        self.future: asyncio.Future[ToolResult] = asyncio.get_running_loop().create_future()
        #: The observers (``on_change``).
        self.callbacks: list[Callable[[TaskHandle], None]] | None = None

    def shown_logs(self) -> list[dict[str, Any]]:
        """The log lines as dicts, newest last: made from the compact ``lines`` on the first read, then kept
        (the same list, its lines the same dicts, at each read: a view may tell a new line by its identity)."""
        if self.logs is None:
            self.logs = [_line_dict(line) for line in self.lines or ()]
            self.lines = None
        return self.logs


def _line_tuple(line: dict[str, Any]) -> tuple[Any, ...] | dict[str, Any]:
    keys = tuple(line)
    return tuple(line.values()) if keys in (LINE_KEYS, SHORT_LINE_KEYS) else line


def _line_dict(line: tuple[Any, ...] | dict[str, Any]) -> dict[str, Any]:
    if type(line) is not tuple:
        return line  # type: ignore[return-value]
    if len(line) == len(LINE_KEYS):
        return {"level": line[0], "logger": line[1], "data": line[2]}
    return {"level": line[0], "data": line[1]}


class TaskControl:
    """Changes one handle's state (see the module docstring); made with the handle, one per handle."""

    __slots__ = ("_h", "_s", "controls")

    def __init__(self, handle: TaskHandle, state: HandleState, controls: HandleControls) -> None:
        self._h = handle
        self._s = state
        #: What the handle may ask of the connection that made it (shared by many handles).
        self.controls = controls

    def sent(self, generation: int, *, as_task: bool, answers: dict[str, Any] | None) -> None:
        """The call is being sent on session ``generation``: ``as_task`` says whether it asks for a
        task; a queued handle becomes ``working`` and its clock starts."""
        h, s = self._h, self._s
        s.runs_as_task = as_task
        s.answers = dict(answers) if answers else None
        if s.status == QUEUED and not h.done():
            s.status, s.started, s.generation = WORKING, time.time(), generation
            self.changed()

    def ran_inline(self) -> None:
        """The server answered the call itself instead of making it a task."""
        s = self._s
        s.runs_as_task = False

    def became_task(self, state: TaskState) -> None:
        """The server (which decides, ext/sep1686) made the call a task: ``state`` is its first state."""
        s = self._s
        s.runs_as_task = True
        self.apply(state)
        self.changed()

    def named(self, task_id: str | None) -> None:
        """The task's id is known before its first state (attached by id, or named by this client,
        sep1686); None withdraws a name the server never took."""
        s = self._s
        s.task_id = task_id

    def recorded(self, row: int) -> None:
        """The task index keeps this task in ``row``."""
        s = self._s
        s.index_row = row

    def viewed(self, app_view: dict[str, Any]) -> None:
        """The task's MCP Apps view, and what it has called so far (``index/view_record.py``'s shape)."""
        self._s.app_view = app_view

    def started_from_view(self, started_by: dict[str, Any]) -> None:
        """The task was started by an MCP Apps view (``tools/call``): which view, and whose task's it was."""
        self._s.started_by = started_by

    def resumed_from(self, row: int, arguments: dict[str, Any] | None, out_var: str | None) -> None:
        """Picked up again from the task index's ``row`` (its arguments and ``-o`` variable)."""
        s = self._s
        s.resumed, s.index_row, s.arguments, s.out_var = True, row, arguments, out_var

    def output_to(self, variable: str | None) -> None:
        """The result goes to ``variable`` (``-o VAR``); the index's record hears it as a change."""
        s = self._s
        if variable != s.out_var:
            s.out_var = variable
            self.changed()

    def from_cache(self, result: ToolResult, row: int, created_at: str | None) -> None:
        """End at once with the stored ``result`` of an identical earlier call (index ``row``)."""
        s = self._s
        s.cached, s.cached_from, s.created_at = True, row, created_at
        s.status_message = "cached result of an earlier identical call"
        self.settle(result)
        self.changed()

    def apply(self, state: TaskState) -> None:
        """A state of the task from the server (a poll answer or a push)."""
        h, s = self._h, self._s
        if s.status in TERMINAL:
            return  # a terminal task never changes again
        if s.task_id is not None and state.task_id != s.task_id:
            log.warning("%s: ignored a state of task %s given for task %s", h.server, state.task_id, s.task_id)
            return  # an answer about another task: the handle's id never changes
        if _older(state.last_updated_at, s.last_updated_at):
            return  # a poll answer that crossed a newer push on the wire
        state.status_message = scrub_optional(state.status_message)  # the server may echo a secret
        changed = (
            state.status != s.status
            or state.status_message != s.status_message
            or state.poll_interval_ms != s.poll_interval_ms
            or state.ttl_ms != s.ttl_ms
        )
        s.task_id = state.task_id
        s.status = state.status
        s.status_message = state.status_message
        s.poll_interval_ms = state.poll_interval_ms
        s.ttl_ms = state.ttl_ms
        s.created_at = state.created_at or s.created_at
        s.last_updated_at = state.last_updated_at
        if changed:
            self.changed()

    def progress_reported(self, params: dict[str, Any]) -> None:
        """A ``notifications/progress`` for this task (its progress listener)."""
        s = self._s
        progress = params.get("progress")
        if isinstance(progress, (int, float)) and not isinstance(progress, bool):
            total = params.get("total")
            message = params.get("message")
            s.progress = Progress(
                float(progress),
                float(total) if isinstance(total, (int, float)) else None,
                scrub_optional(message) if isinstance(message, str) else None,
            )
            self.changed()

    def logged(self, params: dict[str, Any]) -> None:
        """A log notification of this task (already scrubbed of secrets)."""
        s = self._s
        if s.logs is not None:  # read already: kept as the dicts its readers hold
            kept: list[Any] = s.logs
            kept.append(params)
        else:
            if s.lines is None:
                s.lines = []
            kept = s.lines
            kept.append(_line_tuple(params))
        if len(kept) > s.logs_kept:
            del kept[0]
        self.changed()

    def question_opened(self, key: Any, request: dict[str, Any]) -> None:
        """A question of this task waits for an answer under ``key`` (request id or input key)."""
        s = self._s
        if s.pending_input is None:
            s.pending_input = {}
        s.pending_input[key] = request
        self.changed()

    def question_closed(self, key: Any) -> None:
        s = self._s
        if s.pending_input is not None:
            s.pending_input.pop(key, None)

    def question_answered(self, message: str, source: str, action: str, content: Any = None) -> None:
        """How a question was answered: ``source`` is answers / handler / person / no handler;
        ``content`` the values given (an accepted elicitation's)."""
        s = self._s
        if s.answered is None or s.questions is None:
            s.answered, s.questions = s.answered or [], s.questions or []
        s.answered.append((message, source, action))
        s.questions.append(
            {"question": scrub(message), "source": source, "action": action, "content": scrub_data(content)}
        )
        self.changed()

    def open_questions_dropped(self) -> list[Any]:
        """The keys of the questions still open, which the task's end makes stale (now closed)."""
        s = self._s
        if not s.pending_input:
            return []
        keys = list(s.pending_input)
        s.pending_input.clear()
        return keys

    def settle(self, result: ToolResult | None = None, error: BaseException | None = None) -> bool:
        """End the handle with ``result`` or ``error`` (once: False when it had already ended).
        The observers are not told here: the lifecycle releases the task first, then ``changed()``."""
        s = self._s
        if s.future.done():
            return False
        s.finished = time.time()
        if error is not None:
            if isinstance(error, TaskCancelled):
                s.status = CANCELLED
            elif isinstance(error, TaskExpired):
                s.status = EXPIRED
            elif isinstance(error, (TaskLost, TaskNotFound)):
                s.status = LOST
            elif s.status not in TERMINAL:
                s.status = FAILED
            words = lost_words(error)
            if words is not None:  # the task's last headline ("step 23/30") no longer holds
                s.status_message = scrub(words)
            s.future.set_exception(error)
        else:
            assert result is not None
            if s.status not in TERMINAL:
                s.status = FAILED if result.is_error else COMPLETED
            if result.is_error:
                s.outcome = tool_error_outcome(s.answered or ())
            s.future.set_result(result)
        return True

    def observe(self, callback: Callable[[TaskHandle], None]) -> Callable[[], None]:
        """Call ``callback(handle)`` on every change (``TaskHandle.on_change``); returns its removal."""
        s = self._s
        if s.callbacks is None:
            s.callbacks = []
        callbacks = s.callbacks
        callbacks.append(callback)
        return lambda: callbacks.remove(callback) if callback in callbacks else None

    def changed(self) -> None:
        """Tell the observers (``on_change``) that something they show changed: after an event
        above, or when the connection's state (``reconnecting``) changed."""
        h, s = self._h, self._s
        if not s.callbacks:
            return
        for callback in tuple(s.callbacks):
            try:
                callback(h)
            except Exception:
                log.exception("on_change callback failed for %r", h)


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


def control_of(handle: TaskHandle) -> TaskControl:
    """The control of ``handle``: for the parts of the client that drive a task, never for its users."""
    return handle._control


__all__ = ["HandleState", "Progress", "TaskControl", "control_of"]
