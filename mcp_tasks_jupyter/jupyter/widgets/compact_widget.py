"""CompactTaskWidget: one task on one line (status, tool and its arguments' label, progress,
message or outcome, elapsed, a cancel button), for cells that start many tasks.

``%mcp_task --compact`` asks for it; a cell that starts more than :data:`COMPACT_AFTER` tasks
(or starts them in a loop) gets it for all of them without asking. The full view of a task is
:class:`~.task_widget.TaskWidget`; a question a compact task asks is shown as its own form
(``questions.py`` finds no task widget to put it in).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets as t

from ...views.text import MESSAGE_CHARS, outcome_line, task_text
from ...views.view import view_of
from . import front_end
from .live import LiveTaskView

if TYPE_CHECKING:
    from ...tasks.handle import TaskHandle

#: A cell that starts more tasks than this shows them compact.
COMPACT_AFTER = 3
#: Seconds between two updates of one compact widget, at most (twenty of them stay quiet).
COMPACT_INTERVAL = 0.25


class CompactTaskWidget(LiveTaskView, anywidget.AnyWidget):
    """A one-line live view of a TaskHandle (make one with :func:`compact`)."""

    _esm = front_end.esm("compact")
    _css = front_end.css("compact")

    tool = t.Unicode("").tag(sync=True)
    server = t.Unicode("").tag(sync=True)
    #: The arguments in a few words.
    label = t.Unicode("").tag(sync=True)
    status = t.Unicode("working").tag(sync=True)
    #: The status message while it runs; the outcome (first line of the result or the error) once done.
    message = t.Unicode("").tag(sync=True)
    #: ``[progress, total or None]`` or None when the server sent no progress.
    progress: t.List[Any] = t.List(default_value=None, allow_none=True).tag(sync=True)
    started = t.Float(0.0).tag(sync=True)
    finished = t.Float(None, allow_none=True).tag(sync=True)
    done = t.Bool(False).tag(sync=True)
    failed = t.Bool(False).tag(sync=True)
    cancelling = t.Bool(False).tag(sync=True)
    sent_at = t.Float(0.0).tag(sync=True)

    def __init__(self, handle: TaskHandle, *, interval: float = COMPACT_INTERVAL) -> None:
        self._handle = handle
        self._live_init(interval)
        super().__init__(**self._current_state(), sent_at=time.time())
        self._follow(handle)

    def __repr__(self) -> str:
        return f"CompactTaskWidget({task_text(view_of(self._handle))})"

    def _current_state(self) -> dict[str, Any]:
        seen = view_of(self._handle)
        text = (seen.failure or outcome_line(seen)) if seen.done else seen.board_message
        if len(text) > MESSAGE_CHARS:
            text = text[:MESSAGE_CHARS] + "…"
        return {
            "tool": seen.tool,
            "server": seen.server,
            "label": seen.label,
            "status": seen.status,
            "message": text,
            "progress": None if seen.progress is None else [seen.progress, seen.total],
            "started": seen.started or 0.0,
            "finished": seen.finished,
            "done": seen.done,
            "failed": seen.failed,
            "cancelling": self._cancelling and not seen.done,
        }


def compact(handle: TaskHandle, *, interval: float = COMPACT_INTERVAL) -> CompactTaskWidget:
    """A one-line CompactTaskWidget following ``handle`` until it ends."""
    return CompactTaskWidget(handle, interval=interval)


__all__ = ["COMPACT_AFTER", "CompactTaskWidget", "compact"]
