"""The kernel end of the JupyterLab extension's tasks channel: comm target ``mcp_tasks_jupyter.tasks``.

Either side opens the channel. The kernel opens it when the library loads under a front end that may
follow it (a front-end that runs the extension has registered the target): a kernel a Jupyter server
started for a notebook or console (``JPY_SESSION_NAME``), or a cell sent with JupyterLab's ``cellId``
(:func:`front_end_follows`). A headless run (papermill, nbconvert, nbclient, which log "No handler found
for comm target" for a comm they do not know) is never sent one. The front-end opens it when it starts
following a kernel that already runs the library (page reload, notebook opened later), and the kernel
answers with a snapshot. Messages, kernel to front-end::

    {"type": "snapshot", "tasks": [TASK, ...]}                 every task of this kernel
    {"type": "update", "tasks": [TASK, ...], "changes": [CHANGE, ...], "removed": []}
                                                               tasks that changed, coalesced
    {"type": "cancel_result", "key": K, "ok": bool, "error": str | None}

front-end to kernel: ``{"type": "hello"}`` (send a snapshot), ``{"type": "cancel", "key": K}``,
``{"type": "oauth", "callback": URL | null}`` (the Jupyter server's sign-in route as the browser sees
it, or none: ``sign_in_route.py``).
TASK is :func:`task_entry`; a CHANGE is ``{"key": K, ...}`` with only the fields of a task's entry
that differ from its entry in the previous update (a task's first entry in an update after a
snapshot is whole, in ``tasks``): a thousand tasks ticking send their progress, not their names, four
times a second. A front-end told of a change to a task it does not know asks for a snapshot.
Updates are coalesced to at most one message per :data:`UPDATE_INTERVAL_S` for all tasks together,
whatever the servers send.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import MCPError
from ..running.batch import batch_of
from ..tasks.handle import TaskHandle
from ..views.view import view_of
from .kernel_loop import call_on
from .sign_in_route import REPORT_WAIT_S, SignInRoute
from .widgets.coalesce import Coalescer
from .widgets.state import changed_fields

if TYPE_CHECKING:
    from ..oauth.sign_in import Relay
    from .runtime import Runtime

log = logging.getLogger(__name__)

TARGET = "mcp_tasks_jupyter.tasks"
#: At most one update message per this many seconds (all tasks of the kernel together).
UPDATE_INTERVAL_S = 0.25
#: An update's entries are made this many per pass of the event loop: with a thousand tasks changing,
#: a cell the person runs meanwhile waits for one slice, not for the whole update (issue 24).
ENTRIES_PER_SLICE = 50


def task_entry(key: str, handle: TaskHandle, cell_id: str | None) -> dict[str, Any]:
    """What the front-end is told about one task (plain JSON values only)."""
    seen = view_of(handle)
    return {
        "key": key,
        "task_id": seen.task_id,
        "tool": handle.tool,
        "label": seen.label,
        "server": seen.server,
        "status": seen.status,
        "message": seen.message if seen.message is not None or not seen.done else seen.failure or seen.tool_error,
        "started": seen.started,
        "finished": seen.finished,
        "progress": seen.progress,
        "total": seen.total,
        "cell_id": cell_id,
        "needs_input": seen.needs_input,
        "cached": seen.cached,
        "batch": batch_of(handle),
    }


class TasksChannel:
    """Keeps every open front-end comm told about the runtime's tasks, and cancels on request.

    ``cell_of`` names the notebook cell running now (JupyterLab's ``cellId``), read when a task is
    first tracked so the sidebar can jump to the cell that started it.
    """

    def __init__(self, runtime: Runtime, cell_of: Callable[[], str | None] = lambda: None) -> None:
        self.runtime = runtime
        self._cell_of = cell_of
        self._comms: list[Any] = []
        self._keys: dict[int, str] = {}
        self._cells: dict[str, str | None] = {}
        self._handles: dict[str, TaskHandle] = {}
        self._dirty: dict[str, TaskHandle] = {}
        self._coalescer = Coalescer(self._flush, UPDATE_INTERVAL_S)
        #: Bumped by every snapshot: an update still being made from before it is dropped (its
        #: entries may be older than the snapshot's).
        self._epoch = 0
        self._making = False
        #: Each task's entry as the last update sent it (a snapshot clears them: every front-end
        #: then gets whole entries, so none of them relies on an entry only another one was sent).
        self._told: dict[str, dict[str, Any]] = {}
        #: Messages sent, by type (tests and benchmarks read it).
        self.sent: dict[str, int] = {}
        #: What the front end said about the Jupyter server's sign-in route.
        self.route = SignInRoute()
        self._opened_at: float | None = None
        runtime.on_track.append(self.track)
        for handle in runtime.handles:
            self.track(handle)

    # -- the runtime's side ----------------------------------------------------------------------

    def track(self, handle: TaskHandle) -> None:
        """A handle the runtime started tracking: tell the front-ends now and on every change."""
        if id(handle) in self._keys:
            return
        key = f"t{len(self._keys) + 1}"
        self._keys[id(handle)] = key
        self._handles[key] = handle
        self._cells[key] = self._cell_of()
        handle.on_change(functools.partial(self._changed, key))
        self._changed(key, handle)

    def _changed(self, key: str, handle: TaskHandle) -> None:
        self._dirty[key] = handle
        if self._comms:
            self._coalescer.request()

    def _flush(self) -> None:
        if not self._comms or not self._dirty or self._making:
            return  # (an update being made picks up, when sent, what changed meanwhile)
        pending = list(self._dirty.items())
        self._dirty.clear()
        self._make(pending, [], self._epoch)

    def _entry(self, key: str, handle: TaskHandle) -> tuple[bool, dict[str, Any]]:
        """``(True, entry)``: the task's whole entry, when no update since the last snapshot told
        it; else ``(False, change)``: its fields that changed since."""
        entry = task_entry(key, handle, self._cells[key])
        told = self._told.get(key)
        self._told[key] = entry
        if told is None:
            return True, entry
        change = changed_fields(told, entry)
        change["key"] = key
        return False, change

    def _make(
        self, pending: list[tuple[str, TaskHandle]], tasks: list[tuple[bool, dict[str, Any]]], epoch: int
    ) -> None:
        """Make the update's entries ``ENTRIES_PER_SLICE`` at a time, one slice per loop pass, then send it."""
        if epoch != self._epoch:
            # A snapshot went out meanwhile (to one front-end): entries made before it may be older
            # than its own, so they are made again, for every front-end, in the next update.
            self._making = False
            for key, handle in pending:
                self._dirty.setdefault(key, handle)
            self._coalescer.request()
            return
        start = len(tasks)
        tasks.extend(self._entry(key, handle) for key, handle in pending[start : start + ENTRIES_PER_SLICE])
        if len(tasks) < len(pending):
            self._making = True
            try:
                asyncio.get_running_loop().call_soon(self._make, pending, tasks, epoch)
                return
            except RuntimeError:  # no running loop (a plain script): make the rest now
                tasks.extend(self._entry(key, handle) for key, handle in pending[len(tasks) :])
        self._making = False
        whole = [entry for is_whole, entry in tasks if is_whole]
        changes = [entry for is_whole, entry in tasks if not is_whole and len(entry) > 1]
        if whole or changes:
            self._send({"type": "update", "tasks": whole, "changes": changes, "removed": []})
        if self._dirty:
            self._coalescer.request()  # changed while this update was being made

    def snapshot(self) -> dict[str, Any]:
        """Every task of this kernel, oldest first (an update still being made is made again)."""
        self._epoch += 1
        self._told.clear()
        return {
            "type": "snapshot",
            "tasks": [task_entry(key, handle, self._cells[key]) for key, handle in self._handles.items()],
        }

    # -- the front-end's side --------------------------------------------------------------------

    def open(self, comm: Any) -> None:
        """Adopt an open comm (opened by either side): it gets every later update."""
        # on the loop the runtime's tasks live on, whatever thread the message came on (``kernel_loop.py``)
        comm.on_msg(lambda msg, comm=comm: call_on(self.runtime.loop, self._received, comm, msg))
        comm.on_close(lambda _msg, comm=comm: self._closed(comm))
        self._comms.append(comm)
        if self._opened_at is None:
            self._opened_at = time.monotonic()

    async def relay(self) -> Relay | None:
        """The relay a sign-in starting now uses (None: the loopback listener)."""
        opened = self._opened_at if self._comms else None
        wait = 0.0 if opened is None else opened + REPORT_WAIT_S - time.monotonic()
        return await self.route.relay(wait)

    def opened_by_frontend(self, comm: Any, _open_msg: dict[str, Any]) -> None:
        """The comm target's handler: the front-end asked to follow this kernel."""
        self.open(comm)
        # The snapshot carries everything; what is dirty stays so (the other front-ends have not
        # been told yet: the new one hears it twice, harmlessly).
        self._send_to(comm, self.snapshot())

    def _closed(self, comm: Any) -> None:
        if comm in self._comms:
            self._comms.remove(comm)

    def _received(self, comm: Any, msg: dict[str, Any]) -> None:
        data = (msg.get("content") or {}).get("data")
        fields = data if isinstance(data, dict) else {}
        kind, key = fields.get("type"), fields.get("key")
        if kind == "hello":
            self._send_to(comm, self.snapshot())
        elif kind == "cancel" and isinstance(key, str):
            self._cancel(comm, key)
        elif kind == "oauth":
            self.route.reported(fields.get("callback"))
        else:
            log.debug("ignored a message on %s: %r", TARGET, data)

    def _cancel(self, comm: Any, key: str) -> None:
        handle = self._handles.get(key)
        if handle is None:
            self._send_to(
                comm,
                {"type": "cancel_result", "key": key, "ok": False, "error": "this kernel does not know that task"},
            )
            return

        async def cancel() -> None:
            try:
                await handle.cancel()
            except Exception as exc:  # said in the sidebar's row; the task view shows the rest
                self._send_to(
                    comm,
                    {
                        "type": "cancel_result",
                        "key": key,
                        "ok": False,
                        "error": exc.detail if isinstance(exc, MCPError) else str(exc),
                    },
                )
                return
            self._send_to(comm, {"type": "cancel_result", "key": key, "ok": True, "error": None})

        self.runtime.spawn(cancel(), name=f"mcp-cancel {handle.server}:{handle.tool}")

    def _send(self, data: dict[str, Any]) -> None:
        for comm in list(self._comms):
            self._send_to(comm, data)

    def _send_to(self, comm: Any, data: dict[str, Any]) -> None:
        try:
            comm.send(data)
        except Exception as exc:  # a closed or broken comm: forget it
            log.debug("sending on %s failed: %s", TARGET, exc)
            self._closed(comm)
            return
        self.sent[data["type"]] = self.sent.get(data["type"], 0) + 1


#: The channel each runtime serves (one per kernel; weakly, so a runtime dropped takes it along).
_served: weakref.WeakKeyDictionary[Runtime, TasksChannel] = weakref.WeakKeyDictionary()


def served(runtime: Runtime) -> TasksChannel | None:
    """The tasks channel ``runtime`` serves, once ``install`` ran (``%load_ext``)."""
    return _served.get(runtime)


def install(shell: Any, runtime: Runtime) -> TasksChannel | None:
    """Serve the tasks channel in ``shell``'s kernel (None outside a kernel, e.g. plain IPython)."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    existing = _served.get(runtime)
    if existing is not None:
        return existing
    from comm import create_comm, get_comm_manager

    channel = TasksChannel(runtime, lambda: _cell_id(kernel))
    get_comm_manager().register_target(TARGET, channel.opened_by_frontend)
    if front_end_follows(kernel):
        channel.open(create_comm(target_name=TARGET, data=channel.snapshot()))
    _served[runtime] = channel
    return channel


def front_end_follows(kernel: Any) -> bool:
    """Whether a front end that may run the extension follows this kernel: a Jupyter server started it
    for a notebook or console (``JPY_SESSION_NAME``), or the cell running now came with JupyterLab's
    ``cellId``. A headless runner (papermill, nbclient, nbconvert) sends neither."""
    return bool(os.environ.get("JPY_SESSION_NAME")) or _cell_id(kernel) is not None


def _cell_id(kernel: Any) -> str | None:
    """JupyterLab's id of the cell being run (its execute_request metadata), if any."""
    try:
        parent = kernel.get_parent()
    except Exception:
        return None
    cell_id = ((parent or {}).get("metadata") or {}).get("cellId")
    return cell_id if isinstance(cell_id, str) else None


__all__ = ["TARGET", "UPDATE_INTERVAL_S", "TasksChannel", "front_end_follows", "install", "served", "task_entry"]
