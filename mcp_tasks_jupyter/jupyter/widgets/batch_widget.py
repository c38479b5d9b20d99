"""BatchWidget: one live view for all the tasks of a ``client.map`` batch (``%mcp_map``): counts by
status, one aggregate progress bar, elapsed time and ETA, the failed and the slowest tasks
(expandable), and Cancel all. Never one widget per task."""

from __future__ import annotations

import time
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets as t

from ...views.text import MESSAGE_CHARS
from . import front_end
from .live import LiveWidget

if TYPE_CHECKING:
    from ...running.batch import Batch, BatchTask

#: Seconds between two updates of a batch view, at most (the browser ticks the clocks itself).
UPDATE_INTERVAL = 0.25


class BatchWidget(LiveWidget, anywidget.AnyWidget):
    """A live view of a :class:`~mcp_tasks_jupyter.running.batch.Batch`. Its state is data (the browser
    draws it with ``textContent``); changes of any of its tasks are coalesced into at most one
    message per ``UPDATE_INTERVAL`` (the final state at once)."""

    _esm = front_end.esm("batch")
    _css = front_end.css("batch")

    tool = t.Unicode("").tag(sync=True)
    server = t.Unicode("").tag(sync=True)
    total = t.Int(0).tag(sync=True)
    limit = t.Int(0).tag(sync=True)
    #: Tasks by status, in the vocabulary's order: ``{"completed": 42, "queued": 8}``.
    counts = t.Dict().tag(sync=True)
    ended = t.Int(0).tag(sync=True)
    #: The aggregate progress, 0..1 (an ended task counts whole, a running one by its progress).
    fraction = t.Float(0.0).tag(sync=True)
    started = t.Float(0.0).tag(sync=True)
    finished = t.Float(None, allow_none=True).tag(sync=True)
    done = t.Bool(False).tag(sync=True)
    #: ``{index, label, status, started, finished, error}`` of the failed tasks (the first 20).
    failed = t.List(t.Dict()).tag(sync=True)
    #: The same of the slowest tasks (the longest running or run, the first 5).
    slowest = t.List(t.Dict()).tag(sync=True)
    cancelling = t.Bool(False).tag(sync=True)
    cancel_error = t.Unicode("").tag(sync=True)
    #: How a resumed sweep's tasks came back (``Resumed.text``: ended before, re-attached, sent again, fresh).
    resumed = t.Unicode("").tag(sync=True)
    #: The kernel's clock (epoch s) when this state was sent: the browser corrects its own by it.
    sent_at = t.Float(0.0).tag(sync=True)

    def __init__(self, batch: Batch, *, interval: float = UPDATE_INTERVAL) -> None:
        self._batch = batch
        self._live_init(interval)
        super().__init__(**self._current_state(), sent_at=time.time())
        self._follow(batch)

    @property
    def batch(self) -> Batch:
        return self._batch

    def __repr__(self) -> str:
        return f"BatchWidget({self._batch!r})"

    def _ended(self) -> bool:
        return self._batch.ready()

    def _cancel_subject(self) -> Coroutine[Any, Any, Any]:
        return self._batch.cancel()

    def _plain_text(self) -> str:
        return f"<{self._batch.tool} on {self._batch.server}: {len(self._batch)} tasks>"

    def _current_state(self) -> dict[str, Any]:
        view = self._batch.view()
        return {
            "tool": view.tool,
            "server": view.server,
            "total": view.total,
            "limit": view.limit,
            "counts": view.counts,
            "ended": view.ended,
            "fraction": round(view.fraction, 4),
            "started": view.started,
            "finished": view.finished,
            "done": view.done,
            "failed": [_task(task) for task in view.failed],
            "slowest": [_task(task) for task in view.slowest],
            "cancelling": self._cancelling and not view.done,
            "cancel_error": self._cancel_error,
            "resumed": view.resumed or "",
        }


def _task(task: BatchTask) -> dict[str, Any]:
    error = task.error
    if error is not None and len(error) > MESSAGE_CHARS:
        error = error[:MESSAGE_CHARS] + "…"
    return {
        "index": task.index,
        "label": task.label,
        "status": task.status,
        "started": round(task.started, 3),
        "finished": None if task.finished is None else round(task.finished, 3),
        "error": error,
    }


__all__ = ["UPDATE_INTERVAL", "BatchWidget"]
