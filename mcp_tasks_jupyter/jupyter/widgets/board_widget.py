"""BoardWidget: many tasks in one table (tool, server, status, message, progress, elapsed)."""

from __future__ import annotations

import logging
import pathlib
import time
from typing import TYPE_CHECKING, Any, Callable, Iterable

import anywidget
import traitlets as t

from ..runtime import get_runtime
from .coalesce import Coalescer
from .state import board_row

if TYPE_CHECKING:
    from ...tasks import TaskHandle

log = logging.getLogger(__name__)

_HERE = pathlib.Path(__file__).parent
#: Seconds between two updates of the whole board, at most.
BOARD_INTERVAL = 0.25


class BoardWidget(anywidget.AnyWidget):
    """A live table of tasks, filtered by server name and/or status (the filter applies to the
    current status, so a row leaves a ``status="working"`` board when its task ends).

    Rows travel as compact arrays (see ``state.board_row``); only rows whose task changed are
    rebuilt, and the whole board sends at most one message per ``BOARD_INTERVAL``.
    """

    _esm = _HERE / "board_widget.js"
    _css = _HERE / "board_widget.css"

    rows = t.List().tag(sync=True)
    filter_server = t.Unicode(None, allow_none=True).tag(sync=True)
    filter_status = t.Unicode(None, allow_none=True).tag(sync=True)
    #: How many tasks the board follows (before filtering).
    total = t.Int(0).tag(sync=True)
    error = t.Unicode("").tag(sync=True)
    sent_at = t.Float(0.0).tag(sync=True)

    def __init__(self, handles: Iterable["TaskHandle"] = (), *, server: str | None = None,
                 status: str | None = None, interval: float = BOARD_INTERVAL) -> None:
        self._handles: list["TaskHandle"] = []
        self._rows: list[list[Any]] = []
        self._dirty: set[int] = set()
        self._unsubscribe: dict[int, Callable[[], None]] = {}
        self._server, self._status = server, status
        self._coalescer = Coalescer(self._flush, interval)
        for handle in handles:
            self._track(handle)
        super().__init__(rows=self._visible_rows(), filter_server=server, filter_status=status,
                         total=len(self._handles), sent_at=time.time())
        self.on_msg(self._on_front_end_msg)

    @property
    def flushes(self) -> int:
        return self._coalescer.flushes

    def add(self, handle: "TaskHandle") -> None:
        """Follow one more task (shown on the next update)."""
        if any(h is handle for h in self._handles):
            return
        self._track(handle)
        self._coalescer.request()

    def close(self) -> None:
        """Stop following every task and close the comm."""
        for unsubscribe in self._unsubscribe.values():
            unsubscribe()
        self._unsubscribe.clear()
        self._coalescer.cancel()
        super().close()

    def __repr__(self) -> str:
        where = "".join(f" {k}={v}" for k, v in (("server", self._server), ("status", self._status)) if v)
        return f"<BoardWidget of {len(self._handles)} tasks{where}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            data = bundle[0] if isinstance(bundle, tuple) else bundle
            data["text/plain"] = repr(self)
        return bundle

    # -- following the handles -------------------------------------------------------------------

    def _track(self, handle: "TaskHandle") -> None:
        key = len(self._handles)
        self._handles.append(handle)
        self._rows.append(board_row(key, handle))
        if not handle.done():
            self._unsubscribe[key] = handle.on_change(lambda h, key=key: self._on_change(key, h))

    def _on_change(self, key: int, handle: "TaskHandle") -> None:
        self._dirty.add(key)
        if handle.done():
            unsubscribe = self._unsubscribe.pop(key, None)
            if unsubscribe is not None:
                unsubscribe()
        self._coalescer.request()

    def _visible_rows(self) -> list[list[Any]]:
        server, status = self._server, self._status
        if server is None and status is None:
            return list(self._rows)
        return [row for row in self._rows
                if (server is None or row[2] == server) and (status is None or row[3] == status)]

    def _flush(self) -> None:
        if self.comm is None:
            return
        for key in self._dirty:
            self._rows[key] = board_row(key, self._handles[key])
        self._dirty.clear()
        rows, total = self._visible_rows(), len(self._handles)
        if rows == self.rows and total == self.total:
            return
        with self.hold_sync():
            self.rows, self.total = rows, total
            self.sent_at = time.time()

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("type") == "cancel":
            key = content.get("key")
            if isinstance(key, int) and 0 <= key < len(self._handles):
                handle = self._handles[key]
                if not handle.done():
                    get_runtime().spawn(self._cancel(handle), name=f"cancel {handle.tool}")

    async def _cancel(self, handle: "TaskHandle") -> None:
        try:
            await handle.cancel()
        except Exception as exc:
            self.error = f"cancelling {handle.tool} failed: {exc}"
