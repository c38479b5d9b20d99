"""One snapshot of a task as every view shows it: the widget's state, the board's rows, the JupyterLab
channel's entries, the text forms (``text.py``) and the static HTML (``html.py``) all read the same named
fields, computed in one place. This is the one module of the views that reads a ``TaskHandle``.

No I/O and no Jupyter: a ``TaskView`` is plain data made from a ``TaskHandle`` (``view_of``) or, for a
task known only from the task index or a server's ``tasks/list``, from its last known status.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import MCPError, TaskError, TaskFailed
from ..protocol.task_state import INPUT_REQUIRED
from ..redact import registered
from ..tasks.status import FINISHED, in_words, shown_status
from .labels import arguments_label
from .plain import HEADLINE_CHARS, first_line, text_head

if TYPE_CHECKING:
    from ..tasks.handle import TaskHandle
    from ..tasks.results import ToolResult

UNKNOWN_TOOL = "(unknown tool)"


@dataclass(frozen=True, slots=True)
class TaskView:
    """What a task looks like now. ``message`` is the status message as shown (the reconnecting note
    while its server is being reconnected); ``question`` the first question waiting for an answer;
    ``failure`` the server's words for why a finished task has no result; ``tool_error`` the start of
    the text of a result that is a tool error. ``status`` is the status as shown
    (``status.shown_status``: ``error`` or ``declined`` for a tool error). Times are epoch seconds.
    A record's view (``record_view``) leaves the fields after ``label`` at their defaults."""

    tool: str
    server: str
    status: str
    message: str | None
    task_id: str | None
    started: float | None
    finished: float | None
    progress: float | None = None
    total: float | None = None
    progress_message: str | None = None
    question: str | None = None
    failure: str | None = None
    tool_error: str | None = None
    needs_input: bool = False
    done: bool = False
    cached: bool = False
    #: Followed by a live handle (its elapsed time ticks, it can be cancelled); False for a record.
    live: bool = True
    #: The arguments in a few words (``labels.arguments_label``): what tells twenty calls of a tool apart.
    label: str = ""
    #: Seconds from start to finish (or to the moment of the snapshot, while it runs).
    elapsed: float = 0.0
    #: The status message as the server sent it (``message`` is it as shown).
    status_message: str | None = None
    #: Its server stopped answering and the client is reconnecting (the task has not ended).
    reconnecting: bool = False
    #: What every question waiting for an answer asks (``question`` is the first).
    questions: tuple[str, ...] = ()
    #: The questions asked so far and how each was answered (``{question, source, action, content}``).
    asked: Sequence[Mapping[str, Any]] = ()
    #: The result of a task that ended with one (a tool error too); None otherwise.
    result: ToolResult | None = None

    @property
    def words(self) -> str:
        """The status in words: ``needs input``, ``tool error``."""
        return in_words(self.status)

    @property
    def board_message(self) -> str:
        """The one line a row has room for: the status message, else the waiting question, else why
        it failed (the failure or the tool error), else the progress message."""
        if self.message:
            return self.message
        if self.question:
            return f"waiting for input: {self.question}"
        return self.failure or self.tool_error or self.progress_message or ""

    @property
    def fraction(self) -> float | None:
        """How much is done (0 to 1) by the last progress notification; None without a total."""
        if self.progress is not None and self.total and self.total > 0:
            return max(0.0, min(1.0, self.progress / self.total))
        return None

    @property
    def failed(self) -> bool:
        """Ended without a result (``failure``) or with a tool error."""
        return self.failure is not None or (self.result is not None and self.result.is_error)


def view_of(handle: TaskHandle) -> TaskView:
    """The snapshot of ``handle`` now."""
    progress = handle.progress
    done = handle.done()
    questions = tuple(pending_questions(handle)) if handle.pending_input else ()
    reconnecting = handle.reconnecting
    failure = failure_message(handle) if done else None
    return TaskView(
        tool=handle.tool or UNKNOWN_TOOL,
        server=handle.server,
        status=shown_status(handle),
        message=RECONNECTING if reconnecting else handle.status_message,
        task_id=handle.task_id,
        started=handle.started,
        finished=handle.finished,
        progress=None if progress is None else progress.progress,
        total=None if progress is None else progress.total,
        progress_message=None if progress is None else progress.message,
        question=questions[0] if questions else None,
        failure=failure,
        tool_error=tool_error_text(handle) if done else None,
        needs_input=bool(handle.pending_input) or handle.status == INPUT_REQUIRED,
        done=done,
        cached=bool(handle.cached),
        label=_label_of(handle),
        elapsed=handle.elapsed,
        status_message=handle.status_message,
        reconnecting=reconnecting,
        questions=questions,
        asked=handle.questions,
        result=handle.result() if done and failure is None else None,
    )


#: What a task's views say in place of its status message while its server is being reconnected.
RECONNECTING = "reconnecting to the server…"


def pending_questions(handle: TaskHandle) -> list[str]:
    """What each pending server request asks, as text (elicitation message or the method)."""
    questions = []
    for request in handle.pending_input.values():
        params = request.get("params") if isinstance(request, dict) else None
        message = params.get("message") if isinstance(params, dict) else None
        questions.append(message if isinstance(message, str) else str(request.get("method", "a request")))
    return questions


def failure_message(handle: TaskHandle) -> str | None:
    """The server's words for why a finished task did not produce a result (None if it did), and,
    for a task started with ``-o VAR``, that VAR stays unbound (the next cell would meet a NameError)."""
    exc = handle.exception()
    if exc is None:
        return None
    words = _failure_words(exc)
    if handle.out_var:
        words += f"\n{handle.out_var} stays unbound: the task ended without a result"
    return words


def tool_error_text(handle: TaskHandle) -> str | None:
    """The first line of a finished task's result when it is a tool error (``isError``), else None."""
    if not handle.done() or handle.exception() is not None or not handle.result().is_error:
        return None
    text, _ = text_head(handle.result().content, HEADLINE_CHARS)
    return first_line(text) or "the tool reported an error"


def _failure_words(exc: BaseException) -> str:
    if isinstance(exc, TaskFailed):
        # The task's last status message, and the JSON-RPC error's own message when it says more.
        words = [exc.status_message] if exc.status_message else []
        error_message = (exc.error or {}).get("message")
        if isinstance(error_message, str) and error_message and error_message not in words:
            words.append(error_message)
        if words:
            return "\n".join(words)
    if isinstance(exc, TaskError):
        return _without_task_label(exc)
    if isinstance(exc, MCPError):
        return exc.detail  # without the "[server]" prefix
    return f"{type(exc).__name__}: {exc}"


def _without_task_label(exc: TaskError) -> str:
    """A task error's own words, without the "tool task <id>: " its message starts with."""
    label = f"task {exc.task_id}" if exc.task_id else "task"
    if exc.tool:
        label = f"{exc.tool} {label}"
    return exc.detail.removeprefix(f"{label}: ")


#: Each handle's arguments label, made once: (the arguments it was made from, how many secrets were
#: registered then, the label). A thousand live tasks redraw often; their arguments never change.
_labels: weakref.WeakKeyDictionary[TaskHandle, tuple[object, int, str]] = weakref.WeakKeyDictionary()


def _label_of(handle: TaskHandle) -> str:
    arguments, secrets = handle.arguments, registered()
    made = _labels.get(handle)
    if made is not None and made[0] is arguments and made[1] == secrets:
        return made[2]
    label = arguments_label(arguments)
    _labels[handle] = (arguments, secrets, label)
    return label


def record_view(
    *,
    tool: str | None,
    server: str,
    status: str,
    message: str | None,
    task_id: str | None,
    created_at: str | None = None,
    updated_at: str | None = None,
    arguments: dict[str, Any] | None = None,
    started: float | None = None,
    finished: float | None = None,
) -> TaskView:
    """A task known only from a record (the task index, a server's ``tasks/list``): its last known
    status, never ticking. ``started`` and ``finished`` are when the client that recorded it saw the
    task start and end (epoch s, the index's ``started_at``/``finished_at``); without them, its
    creation time and (once ended) its last update."""
    done = status in FINISHED
    if started is None:
        started = epoch(created_at)
    if finished is None and done:
        finished = epoch(updated_at)
    return TaskView(
        tool=tool or "?",
        server=server,
        status=status,
        message=message or None,
        task_id=task_id,
        started=started,
        finished=finished if done else None,
        done=done,
        live=False,
        label=arguments_label(arguments),
    )


def epoch(iso: str | None) -> float | None:
    """An ISO 8601 time (a server's) as epoch seconds; None when missing or unreadable."""
    if not iso:
        return None
    try:
        return datetime.fromisoformat(iso).timestamp()
    except (ValueError, TypeError):
        return None


def board_row(key: int, view: TaskView) -> dict[str, Any]:
    """One board row (named fields, times to the millisecond to keep rows short)."""
    return {
        "key": key,
        "tool": view.tool,
        "server": view.server,
        "status": view.status,
        "status_text": view.words,
        "message": view.board_message,
        "progress": view.progress,
        "total": view.total,
        "started": _ms(view.started),
        "finished": _ms(view.finished),
        "task_id": view.task_id or "",
        "live": view.live,
        "args": view.label,
    }


#: Seconds of progress an estimate needs at least (earlier, a rate says little).
ETA_MIN_SECONDS = 1.0


def estimated_end(started: float, first: tuple[float, float] | None, latest: tuple[float, float]) -> float | None:
    """When a task should end (epoch s), from its progress: ``first`` and ``latest`` are (when seen,
    fraction done). The rate is the one between the two samples, else (one sample) the one since
    ``started``; None when nothing allows an estimate (no progress yet, too little time, done)."""
    at, fraction = latest
    if not 0 < fraction < 1:
        return None
    if first is not None and first[1] < fraction and at - first[0] >= ETA_MIN_SECONDS:
        rate = (fraction - first[1]) / (at - first[0])
    elif at - started >= ETA_MIN_SECONDS:
        rate = fraction / (at - started)
    else:
        return None
    return at + (1 - fraction) / rate


def _ms(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


__all__ = [
    "ETA_MIN_SECONDS",
    "RECONNECTING",
    "TaskView",
    "board_row",
    "epoch",
    "estimated_end",
    "failure_message",
    "pending_questions",
    "record_view",
    "tool_error_text",
    "view_of",
]
