"""BoardWidget: many tasks in one table (tool and its arguments' label, server, status, message,
progress, start time, elapsed).

The browser filters (search, status, server), sorts and pages the rows it has, shows the history
rows (``live`` False) only when the person asks for them, and sends cancels (one row, the selected
rows, every running one); the kernel only sends the compact rows, at most once per ``BOARD_INTERVAL``,
and of those only the rows that changed while the board's rows stay the same ones
(:data:`ROWS_MESSAGE`): a thousand running tasks cost the browser what changed, not the whole table
four times a second.
A board made by :func:`~..display.make_board` follows the runtime: a task started after it was
shown appears on it (:meth:`BoardWidget.follow`).

Sweeps (``%mcp_map`` batches recorded in the task index, issue 33): the board lists the index's sweeps
with their items' counts by state (``sweeps``, at most :data:`SWEEPS_SHOWN`), and one sweep's items a page
at a time (``sweep_page``: :data:`SWEEP_PAGE` items with the whole sweep's counts), read from the index on
its sweep store's thread when the browser asks (``{"type": "sweep", "id": ID, "offset": N}``), never
100,000 rows at once.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets as t

from ...views.html import board_html
from ...views.labels import arguments_label
from ..kernel_loop import on_kernel_loop
from ..runtime import get_runtime
from . import front_end
from .coalesce import Coalescer
from .state import board_row, changed_fields, static_board_row

if TYPE_CHECKING:
    from ...tasks.handle import TaskHandle

log = logging.getLogger(__name__)

#: Seconds between two updates of the whole board, at most.
BOARD_INTERVAL = 0.25
#: Seconds between two sends of every row, at most, while only rows' contents change: between them
#: the rows that changed go alone, as a custom message (``{"type": ROWS_MESSAGE, "rows": [{"key": K,
#: field: value, ...}, ...], "sent_at": t}``: each row's key and the fields that changed), and the
#: widget's synced ``rows`` (what a notebook saved meanwhile keeps, and what a view opened later
#: starts from) lags by at most this much until the board settles.
FULL_EVERY_S = 10.0
#: The custom message that carries the rows that changed (of each, its key and its changed fields).
ROWS_MESSAGE = "rows"
#: Sweeps listed on a board (the newest), and a sweep's items shown at once (a page).
SWEEPS_SHOWN = 50
SWEEP_PAGE = 100
#: Characters of a sweep's id the browser may ask for (ids are 12 hex digits; a start of one is enough).
SWEEP_ID_CHARS = 64


class BoardWidget(anywidget.AnyWidget):
    """A live table of tasks, filtered by server name and/or status (the filter applies to the
    current status, so a row leaves a ``status="working"`` board when its task ends).

    Rows travel as named fields (see ``view.board_row``); only rows whose task changed are
    rebuilt, and the whole board sends at most one message per ``BOARD_INTERVAL``.

    Besides the followed handles the board can hold static rows (:meth:`add_static`: tasks known only
    from the task index or the server's ``tasks/list``), keyed by negative numbers; they never tick
    and have no Cancel button. They are the board's *history* (earlier kernels, other notebooks,
    the server's own list): the browser hides them until the person turns on "history"
    (``show_history`` is its initial state). Each says where it comes from (``origin``).
    ``select_server``/``select_status`` pre-select the browser's filters (which the person can
    change), unlike ``server``/``status``, which filter in the kernel.
    """

    _esm = front_end.esm("board")
    _css = front_end.css("board")

    rows: t.List[dict[str, Any]] = t.List().tag(sync=True)
    filter_server = t.Unicode(None, allow_none=True).tag(sync=True)
    filter_status = t.Unicode(None, allow_none=True).tag(sync=True)
    #: How many tasks the board follows (before filtering).
    total = t.Int(0).tag(sync=True)
    error = t.Unicode("").tag(sync=True)
    #: Remarks about the board itself (e.g. a server's ``tasks/list`` that failed), one a line.
    note = t.Unicode("").tag(sync=True)
    #: The browser's initial filters (None: all).
    select_server = t.Unicode(None, allow_none=True).tag(sync=True)
    select_status = t.Unicode(None, allow_none=True).tag(sync=True)
    sent_at = t.Float(0.0).tag(sync=True)
    #: Whether the history rows (``live`` False) show at first (the person toggles it).
    show_history = t.Bool(False).tag(sync=True)
    #: The task index's sweeps, newest first (at most :data:`SWEEPS_SHOWN`): ``id``, ``tool``,
    #: ``server``, ``total``, ``counts`` (by item state), ``sent_again``, ``finished``.
    sweeps: t.List[dict[str, Any]] = t.List().tag(sync=True)
    #: The sweep the person opened, one page of it ({}: none): the fields of a ``sweeps`` entry and
    #: ``offset``, ``size``, ``items`` (``position``, ``label``, ``state``, ``status``, ``task_id``, ``note``).
    sweep_page: t.Dict[str, Any] = t.Dict().tag(sync=True)

    def __init__(
        self,
        handles: Iterable[TaskHandle] = (),
        *,
        server: str | None = None,
        status: str | None = None,
        interval: float = BOARD_INTERVAL,
        select_server: str | None = None,
        select_status: str | None = None,
        show_history: bool = False,
    ) -> None:
        self._handles: list[TaskHandle] = []
        #: Static rows replaced by a live handle of the same task (attached or resumed later).
        self._replaced: set[int] = set()
        self._stop_following: Callable[[], None] | None = None
        self._rows: list[dict[str, Any]] = []
        #: Static rows (keys -1, -2, ...) and where each (server, task id) is among them.
        self._static: list[dict[str, Any]] = []
        self._static_at: dict[tuple[str, str], int] = {}
        #: Background jobs filling the board (``tasks/list``); tests may await them.
        self.jobs: list[Any] = []
        self._live_ids: set[tuple[str, str]] | None = None
        self._dirty: set[int] = set()
        self._unsubscribe: dict[int, Callable[[], None]] = {}
        self._server, self._status = server, status
        #: Where the board's saved table goes when its tasks end (:meth:`publish_to`).
        self._publish: Callable[[], None] | None = None
        self._published = ""
        self._coalescer = Coalescer(self._flush, interval)
        #: The task index whose sweeps the board lists (:meth:`load_sweeps`), and the job reading them.
        self._sweep_index: Any = None
        self.sweeps_job: Any = None
        #: While set, a change of ``rows`` stays in the kernel (:meth:`_should_send_property`).
        self._rows_unsent = False
        #: When every row was last sent (monotonic seconds): the widget's first state carries them.
        self._full_at = time.monotonic()
        for handle in handles:
            self._track(handle)
        super().__init__(
            rows=self._visible_rows(),
            filter_server=server,
            filter_status=status,
            select_server=select_server,
            select_status=select_status,
            total=self._total(),
            sent_at=time.time(),
            show_history=show_history,
        )
        self.on_msg(on_kernel_loop(self._on_front_end_msg))
        self.observe(lambda _change: self._publish_if_settled(), names="show_history")

    @property
    def flushes(self) -> int:
        return self._coalescer.flushes

    def add(self, handle: TaskHandle) -> None:
        """Follow one more task (shown on the next update); a history row of the same task goes."""
        if any(h is handle for h in self._handles):
            return
        if handle.task_id and (handle.server, handle.task_id) in self._static_at:
            self._replaced.add(self._static_at[(handle.server, handle.task_id)])
        self._track(handle)
        self._coalescer.request()

    def follow(self, runtime: Any) -> None:
        """Add every task ``runtime`` tracks from now on (until :meth:`close`): a board already on
        screen picks up the tasks started after it."""
        if self._stop_following is not None:
            return
        listener = self.add
        runtime.on_track.append(listener)

        def stop() -> None:
            if listener in runtime.on_track:
                runtime.on_track.remove(listener)

        self._stop_following = stop

    def knows(self, server: str, task_id: str | None) -> bool:
        """Whether a followed handle or a static row is the task ``task_id`` on ``server``."""
        if not task_id:
            return False
        if (server, task_id) in self._static_at:
            return True
        if self._live_ids is None:
            self._live_ids = {(h.server, h.task_id) for h in self._handles if h.task_id}
        return (server, task_id) in self._live_ids

    def add_static(
        self,
        *,
        tool: str | None,
        server: str,
        status: str,
        message: str | None = None,
        task_id: str | None = None,
        created_at: str | None = None,
        updated_at: str | None = None,
        refresh: bool = False,
        arguments: dict[str, Any] | None = None,
        origin: str = "",
        started: float | None = None,
        finished: float | None = None,
    ) -> bool:
        """Show a task no handle here follows, with its last known status (``tool`` None: "?").

        ``origin`` says where the row comes from (``"earlier kernel"``, a notebook's name, ``"the
        server's list"``); ``started``/``finished`` when the task ran (epoch s: its elapsed time). A
        task already on the board (same server and task id) is not added again; with ``refresh`` a
        static row of it takes the newer ``status`` and ``message``. Whether a row was added.
        """
        if task_id and (server, task_id) in self._static_at:
            if refresh:
                at = self._static_at[(server, task_id)]
                old = self._static[at]
                row = static_board_row(
                    old["key"],
                    tool=old["tool"],
                    server=server,
                    status=status,
                    message=message,
                    task_id=task_id,
                    created_at=created_at,
                    updated_at=updated_at,
                )
                row["args"], row["origin"] = old["args"], old["origin"]
                if row["started"] is None:
                    row["started"] = old["started"]
                if row != old:
                    self._static[at] = row
                    self._coalescer.request()
            return False
        if self.knows(server, task_id):
            return False
        key = -1 - len(self._static)
        if task_id:
            self._static_at[(server, task_id)] = len(self._static)
        row = static_board_row(
            key,
            tool=tool,
            server=server,
            status=status,
            message=message,
            task_id=task_id,
            created_at=created_at,
            updated_at=updated_at,
            arguments=arguments,
            started=started,
            finished=finished,
        )
        row["origin"] = origin
        self._static.append(row)
        self._coalescer.request()
        return True

    async def load_sweeps(self, index: Any) -> None:
        """List the sweeps of ``index`` (a ``TaskIndex``) on the board, read on its sweep store's thread."""
        from ...index import sweeps as store
        from ...running.sweep import store_of

        self._sweep_index = index
        listed = await store_of(index).call(store.listing)
        self.sweeps = [_sweep_entry(one) for one in listed[:SWEEPS_SHOWN]]

    async def open_sweep(self, sweep_id: str | None, offset: int = 0) -> None:
        """Show the items of sweep ``sweep_id`` (an id or the start of one) from place ``offset``, one page
        (:data:`SWEEP_PAGE`), with its counts; None closes it. Its listing entry is refreshed too."""
        from ...index import sweeps as store
        from ...running.sweep import store_of

        index = self._sweep_index
        if sweep_id is None or index is None:
            self.sweep_page = {}
            return
        found = await store_of(index).call(store.page, sweep_id, max(0, offset), SWEEP_PAGE)
        if found is None:
            self.error = f"no sweep {sweep_id[:SWEEP_ID_CHARS]!r} in the task index"
            return
        counts, items = found
        entry = _sweep_entry(counts)
        self.sweep_page = {
            **entry,
            "offset": max(0, offset),
            "size": SWEEP_PAGE,
            "items": [_item_entry(item) for item in items],
        }
        self.sweeps = [entry if one["id"] == entry["id"] else one for one in self.sweeps]

    def refresh(self) -> None:
        """Send the current rows now (not at the next interval)."""
        self._coalescer.request(now=True)

    def publish_to(self, publish: Callable[[], None]) -> None:
        """Call ``publish`` whenever the saved table (:meth:`saved_html`) changed and no task on the
        board still runs (``display.show_board`` replaces the board's output then), and when the
        person turns the history on or off: a notebook saved afterwards holds each task's end."""
        self._publish, self._published = publish, self.saved_html()

    def saved_html(self) -> str:
        """The static table a saved notebook keeps: this kernel's tasks, and the history rows only
        when the history is on (each marked as history)."""
        rows = self._visible_rows()
        if not self.show_history:
            rows = [row for row in rows if row.get("live")]
        return board_html(rows)

    def add_note(self, text: str) -> None:
        """Add one line to the board's note (shown above the table)."""
        self.note = f"{self.note}\n{text}" if self.note else text

    def close(self) -> None:
        """Stop following every task (and the runtime) and close the comm."""
        if self._stop_following is not None:
            self._stop_following()
            self._stop_following = None
        for unsubscribe in self._unsubscribe.values():
            unsubscribe()
        self._unsubscribe.clear()
        self._coalescer.cancel()
        super().close()

    def __repr__(self) -> str:
        where = "".join(f" {k}={v}" for k, v in (("server", self._server), ("status", self._status)) if v)
        history = len(self._static) - len(self._replaced)
        more = f" (+{history} in the history)" if history else ""
        return f"<BoardWidget of {len(self._handles)} tasks{where}{more}>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is not None:
            data = bundle[0] if isinstance(bundle, tuple) else bundle
            data["text/plain"] = repr(self)
            # What places without a kernel show instead (a saved notebook, nbconvert HTML).
            data["text/html"] = self.saved_html()
        return bundle

    # -- following the handles -------------------------------------------------------------------

    def _track(self, handle: TaskHandle) -> None:
        key = len(self._handles)
        self._handles.append(handle)
        self._live_ids = None
        self._rows.append(board_row(key, handle))
        if not handle.done():
            self._unsubscribe[key] = handle.on_change(functools.partial(self._on_change, key))

    def _on_change(self, key: int, handle: TaskHandle) -> None:
        self._dirty.add(key)
        self._live_ids = None
        if handle.done():
            unsubscribe = self._unsubscribe.pop(key, None)
            if unsubscribe is not None:
                unsubscribe()
            if not self._unsubscribe:
                # The last task ended: the final rows (and the saved table) go out now, before the
                # cell awaiting that task ends, not at the next interval after the notebook's last cell.
                self._coalescer.request(now=True)
                return
        self._coalescer.request()

    def _total(self) -> int:
        return len(self._handles) + len(self._static)

    def _visible_rows(self) -> list[dict[str, Any]]:
        server, status = self._server, self._status
        static = (
            self._static
            if not self._replaced
            else [r for i, r in enumerate(self._static) if i not in self._replaced]
        )
        rows = self._rows + static
        if server is None and status is None:
            return rows
        return [
            row
            for row in rows
            if (server is None or row["server"] == server) and (status is None or row["status"] == status)
        ]

    def _flush(self) -> None:
        if self.comm is None:
            return
        for key in self._dirty:
            self._rows[key] = board_row(key, self._handles[key])
        self._dirty.clear()
        rows, total = self._visible_rows(), self._total()
        changed = self._changed_rows(rows, total)
        if changed == []:
            return
        if changed is not None and time.monotonic() - self._full_at < FULL_EVERY_S and self._unsubscribe:
            self._rows_unsent = True
            try:
                self.rows = rows
            finally:
                self._rows_unsent = False
            self.send({"type": ROWS_MESSAGE, "rows": changed, "sent_at": time.time()})
            return
        with self.hold_sync():
            self.rows, self.total = rows, total
            self.sent_at = time.time()
        self._full_at = time.monotonic()
        self._publish_if_settled()

    def _changed_rows(self, rows: list[dict[str, Any]], total: int) -> list[dict[str, Any]] | None:
        """Of each row that differs from the one last sent, its key and the fields that changed,
        when the board's rows are the same ones in the same order (else None: every row goes)."""
        sent = self.rows
        if total != self.total or len(rows) != len(sent):
            return None
        changed = []
        for row, old in zip(rows, sent, strict=True):
            if row is old:
                continue
            if row["key"] != old["key"]:
                return None
            change = changed_fields(old, row)
            if change:
                change["key"] = row["key"]
                changed.append(change)
        return changed

    def _should_send_property(self, key: str, value: Any) -> bool:
        # The rows that changed went as a custom message: the state keeps them without sending all.
        if key == "rows" and self._rows_unsent:
            return False
        return bool(super()._should_send_property(key, value))

    def _publish_if_settled(self) -> None:
        if self._publish is None or any(not h.done() for h in self._handles):
            return
        html = self.saved_html()
        if html != self._published:
            self._published = html
            self._publish()

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        # {"type": "cancel", "key": K} (one row's button), {"type": "cancel", "keys": [K, ...]}
        # (the selected rows), {"type": "cancel_running"} (every running task on the board).
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "cancel":
            keys = content.get("keys") if "keys" in content else [content.get("key")]
            if isinstance(keys, list):
                self.cancel_keys(keys)
        elif kind == "cancel_running":
            self.cancel_keys(range(len(self._handles)))
        elif kind == "sweep":
            sweep_id, offset = content.get("id"), content.get("offset", 0)
            if sweep_id is not None and (not isinstance(sweep_id, str) or len(sweep_id) > SWEEP_ID_CHARS):
                return
            if not isinstance(offset, int) or isinstance(offset, bool):
                offset = 0
            if self._sweep_index is not None:  # on the kernel's loop already (``kernel_loop.py``)
                get_runtime().spawn(self.open_sweep(sweep_id, offset), name="board sweep page")

    def cancel_keys(self, keys: Iterable[Any]) -> int:
        """Ask the server to cancel the followed tasks of row ``keys`` that still run (other keys
        are ignored); how many were asked."""
        chosen = {
            k for k in keys if isinstance(k, int) and not isinstance(k, bool) and 0 <= k < len(self._handles)
        }
        asked = 0
        for key in sorted(chosen):
            handle = self._handles[key]
            if not handle.done():
                get_runtime().spawn(self._cancel(handle), name=f"cancel {handle.tool}")
                asked += 1
        return asked

    async def _cancel(self, handle: TaskHandle) -> None:
        try:
            await handle.cancel()
        except Exception as exc:
            self.error = f"cancelling {handle.tool} failed: {exc}"


def _sweep_entry(one: Any) -> dict[str, Any]:
    """A ``sweeps`` entry of the board from an ``index.sweeps.SweepCounts``."""
    sweep = one.sweep
    return {
        "id": sweep.id,
        "tool": sweep.tool,
        "server": sweep.server_name,
        "total": sweep.total,
        "counts": dict(one.counts),
        "sent_again": one.sent_again,
        "finished": sweep.finished_at is not None,
        "created": sweep.created_at,
    }


def _item_entry(item: Any) -> dict[str, Any]:
    """One item of a sweep's page: its arguments as a label (the index keeps a secret only as a hash)."""
    return {
        "position": item.position,
        "label": arguments_label(item.arguments) or "(no arguments)",
        "state": item.state,
        "status": item.status,
        "task_id": item.task_id,
        "note": item.note,
    }
