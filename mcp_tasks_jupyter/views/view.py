"""One snapshot of a task as every view shows it: the widget's state, the board's rows, the JupyterLab
channel's entries and the text summaries all read the same named fields, computed in one place.

No I/O and no Jupyter: a ``TaskView`` is plain data made from a ``TaskHandle`` (``view_of``) or, for a
task known only from the task index or a server's ``tasks/list``, from its last known status.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..protocol.task_state import INPUT_REQUIRED
from ..redact import registered
from ..tasks.status import FINISHED, in_words, shown_status
from .labels import arguments_label
from .render import failure_message, pending_questions, status_message, tool_error_text

if TYPE_CHECKING:
    from ..tasks.handle import TaskHandle

UNKNOWN_TOOL = "(unknown tool)"


@dataclass(frozen=True, slots=True)
class TaskView:
    """What a task looks like now. ``message`` is the status message as shown (the reconnecting note
    while its server is being reconnected); ``question`` the first question waiting for an answer;
    ``failure`` the server's words for why a finished task has no result; ``tool_error`` the start of
    the text of a result that is a tool error. ``status`` is the status as shown
    (``status.shown_status``: ``error`` or ``declined`` for a tool error). Times are epoch seconds."""

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


def view_of(handle: TaskHandle) -> TaskView:
    """The snapshot of ``handle`` now."""
    progress = handle.progress
    done = handle.done()
    questions = pending_questions(handle) if handle.pending_input else []
    return TaskView(
        tool=handle.tool or UNKNOWN_TOOL,
        server=handle.server,
        status=shown_status(handle),
        message=status_message(handle),
        task_id=handle.task_id,
        started=handle.started,
        finished=handle.finished,
        progress=None if progress is None else progress.progress,
        total=None if progress is None else progress.total,
        progress_message=None if progress is None else progress.message,
        question=questions[0] if questions else None,
        failure=failure_message(handle) if done else None,
        tool_error=tool_error_text(handle) if done else None,
        needs_input=bool(handle.pending_input) or handle.status == INPUT_REQUIRED,
        done=done,
        cached=bool(handle.cached),
        label=_label_of(handle),
    )


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


__all__ = ["ETA_MIN_SECONDS", "TaskView", "board_row", "epoch", "estimated_end", "record_view", "view_of"]
