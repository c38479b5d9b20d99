"""Which live task widgets follow which task: where a task's question can be shown.

A :class:`~.task_widget.TaskWidget` registers itself when made and leaves when it is closed or
its task ends (a finished task asks nothing). Handles are held weakly, so the registry never keeps
a forgotten task alive.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...tasks.handle import TaskHandle

_widgets: weakref.WeakKeyDictionary[TaskHandle, list[Any]] = weakref.WeakKeyDictionary()


def register(handle: TaskHandle, widget: Any) -> None:
    widgets = _widgets.setdefault(handle, [])
    if all(w is not widget for w in widgets):
        widgets.append(widget)


def unregister(handle: TaskHandle, widget: Any) -> None:
    widgets = _widgets.get(handle)
    if widgets is None:
        return
    widgets[:] = [w for w in widgets if w is not widget]
    if not widgets:
        _widgets.pop(handle, None)


def live(handle: TaskHandle) -> list[Any]:
    """The open (not closed) task widgets of ``handle``, oldest first."""
    return [w for w in _widgets.get(handle, ()) if getattr(w, "comm", None) is not None]


def displayed(handle: TaskHandle) -> list[Any]:
    """Those of :func:`live` that were displayed in an output (not merely made)."""
    return [w for w in live(handle) if getattr(w, "displayed", False)]
