"""CompactTaskWidget: one task on one line (status, tool and its arguments' label, progress,
message or outcome, elapsed, a cancel button), for cells that start many tasks.

``%mcp_task --compact`` asks for it; a cell that starts more than :data:`COMPACT_AFTER` tasks
(or starts them in a loop) gets it for all of them without asking. The full view of a task is
:class:`~.task_widget.TaskWidget`; a question a compact task asks is shown as its own form
(``questions.py`` finds no task widget to put it in).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets as t

from ...views.render import MESSAGE_CHARS, summary_line, task_text
from ...views.view import view_of
from ..runtime import get_runtime
from . import front_end
from .coalesce import Coalescer, SendsChangedTraits

if TYPE_CHECKING:
    from ...tasks.handle import TaskHandle

log = logging.getLogger(__name__)

#: A cell that starts more tasks than this shows them compact.
COMPACT_AFTER = 3
#: Seconds between two updates of one compact widget, at most (twenty of them stay quiet).
COMPACT_INTERVAL = 0.25


class CompactTaskWidget(SendsChangedTraits, anywidget.AnyWidget):
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
        self._cancelling = False
        self._coalescer = Coalescer(self._flush, interval)
        self._unsubscribe: Any = None
        super().__init__(**self._current_state(), sent_at=time.time())
        self.on_msg(self._on_front_end_msg)
        if not handle.done():
            self._unsubscribe = handle.on_change(self._on_change)

    @property
    def handle(self) -> TaskHandle:
        return self._handle

    def cancel(self) -> None:
        """What the cancel button does: ask the server to cancel, in the background."""
        if self._handle.done() or self._cancelling:
            return
        self._cancelling = True
        job = self._cancel()
        try:
            get_runtime().spawn(job, name=f"cancel {self._handle.tool}")
        except Exception as exc:  # no loop to run it on
            job.close()
            self._cancelling = False
            log.info("cancelling %r failed: %s", self._handle, exc)
        self._coalescer.request(now=True)

    def close(self) -> None:
        self._stop_following()
        self._coalescer.cancel()
        super().close()

    def __repr__(self) -> str:
        return f"CompactTaskWidget({task_text(self._handle)})"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            data = bundle[0] if isinstance(bundle, tuple) else bundle
            data["text/plain"] = task_text(self._handle)
        return bundle

    def _current_state(self) -> dict[str, Any]:
        seen = view_of(self._handle)
        if seen.done:
            text = seen.failure or summary_line(self._handle, timing=False).partition(" — ")[2]
        else:
            text = seen.board_message
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
            "failed": seen.failure is not None or (seen.done and self._handle.result().is_error),
            "cancelling": self._cancelling and not seen.done,
        }

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "cancel":
            self.cancel()

    def _on_change(self, handle: TaskHandle) -> None:
        if handle.done():
            self._stop_following()
            self._coalescer.request(now=True)
        else:
            self._coalescer.request()

    def _stop_following(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    async def _cancel(self) -> None:
        try:
            await self._handle.cancel()
        except Exception as exc:
            log.info("cancelling %r failed: %s", self._handle, exc)
        self._cancelling = False
        self._coalescer.request(now=True)


def compact(handle: TaskHandle, *, interval: float = COMPACT_INTERVAL) -> CompactTaskWidget:
    """A one-line CompactTaskWidget following ``handle`` until it ends."""
    return CompactTaskWidget(handle, interval=interval)


__all__ = ["COMPACT_AFTER", "CompactTaskWidget", "compact"]
