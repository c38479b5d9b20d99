"""AppViewWidget: an MCP Apps view (a tool's own HTML, ``io.modelcontextprotocol/ui``) live in its task's output.

The kernel's half of the host: it reads the view (``client.app_views``, once per connection), follows the
task (its arguments at once, its result when it completes, ``phase`` cancelled or failed with the reason)
and answers what the view asks through the browser's bridge (``labextension/src/widgets/app.ts``):

* ``tools/call`` of a tool on the same connection, refused before anything is sent when the tool's
  visibility leaves out ``"app"`` or the tool is unknown; ``resources/read`` of the same server;
* ``notifications/message`` from the view go to the task's log (scrubbed, cut);
* a link the view asked to open (``ui/open-link``), and whether the person opened it, is noted.

What the view called is kept in its task's record in the index (``index/view_record.py``: names, times,
arguments redacted, bounded) and on the handle (``handle.app_view``); a task a view starts is marked as
started by it (``handle.started_by``, the record's ``started_by``).

:func:`redraw` draws a view again from its task's record (a saved notebook reopened with a kernel:
``mtj.redraw_app(RECORD)``, which the saved output's button runs): the resource is read again on a
connection to the same server, and the view gets the recorded arguments and result.

Everything the browser sends is untrusted: a message is a dict of known shape, ids are small integers,
arguments a JSON object of bounded size, at most ``MAX_IN_FLIGHT`` calls at a time per view; errors sent
back are scrubbed of secrets. Nothing here blocks the kernel: each call is a job of the runtime.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import weakref
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets as t

from ...errors import MCPError, TaskCancelled
from ...index.view_record import METHODS, StartedBy, ViewRecord, view_call
from ...protocol.apps import ToolUI
from ...redact import redact_arguments, scrub, scrub_data
from ...tasks.control import control_of
from ..kernel_loop import on_kernel_loop
from . import front_end
from .app_host import bridge_host

if TYPE_CHECKING:
    from ...client import Client
    from ...index.task_index import TaskRecord
    from ...protocol.types import Tool
    from ...tasks.handle import TaskHandle

log = logging.getLogger(__name__)

#: Every view alive in this kernel (weakly: a view closed and dropped leaves).
_VIEWS: weakref.WeakSet[AppViewWidget] = weakref.WeakSet()

#: Calls from one view being answered at a time; more are refused at once.
MAX_IN_FLIGHT = 8
#: A call's ``arguments`` larger than this (serialised) are refused.
MAX_ARGUMENT_CHARS = 256 * 1024
#: How long a view's tools/call may run (seconds).
CALL_TIMEOUT_S = 120.0
#: Links offered at a time whose answer is awaited (more are noted without it).
MAX_LINKS = 32
#: How long ``teardown`` waits for the view to say it is done.
TEARDOWN_WAIT_S = 1.0
#: The JSON-RPC errors sent back to the view.
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REFUSED = -32000


class AppViewWidget(anywidget.AnyWidget):
    """The view of one app tool's task (made by :func:`app_view`; shown by ``jupyter/display.py``)."""

    _esm = front_end.esm("appview")
    _css = front_end.css("appview")

    #: The kernel's one host of the code that draws views (``app_host.py``), which this view borrows.
    host = anywidget.WidgetTrait().tag(sync=True)
    server = t.Unicode("").tag(sync=True)
    tool = t.Unicode("").tag(sync=True)
    uri = t.Unicode("").tag(sync=True)
    html = t.Unicode("").tag(sync=True)
    problem = t.Unicode("").tag(sync=True)
    csp = t.Dict().tag(sync=True)
    prefers_border = t.Bool(None, allow_none=True).tag(sync=True)
    tool_info = t.Dict().tag(sync=True)
    tool_input = t.Dict(default_value=None, allow_none=True).tag(sync=True)
    tool_result = t.Dict(default_value=None, allow_none=True).tag(sync=True)
    phase = t.Unicode("running").tag(sync=True)
    reason = t.Unicode("").tag(sync=True)

    def __init__(
        self, handle: TaskHandle | None, client: Client, tool: Tool, *, record: TaskRecord | None = None
    ) -> None:
        """The view of ``handle``'s task, or (``handle`` None) of the task ``record`` keeps (:func:`redraw`)."""
        ui = tool.ui
        uri = ui.resource_uri if ui is not None else None
        if record is not None and record.app_view is not None:
            uri = record.app_view.uri  # the view that was drawn, whatever the listing says now
        assert uri is not None and (handle is not None or record is not None)
        arguments = handle.arguments if handle is not None else record.arguments if record is not None else {}
        super().__init__(
            host=bridge_host(),
            server=handle.server if handle is not None else record.server_name if record is not None else "",
            tool=tool.name,
            uri=uri,
            tool_info={k: v for k, v in tool.model_dump(by_alias=True, exclude_none=True).items() if k != "_meta"},
            # What the page and a saved widget state hold: secret-looking arguments (token, key, ...) redacted
            # and registered secrets scrubbed, as everywhere else a task's arguments are shown.
            tool_input=scrub_data(redact_arguments(dict(arguments or {}))),
        )
        self._handle = handle
        self._client = client
        self._in_flight = 0
        self._torn_down = asyncio.Event()
        #: What the view called (tool names and resource URIs, in order).
        self.calls: list[str] = []
        #: The tasks the view started (a tool it called that runs as a task here), in order.
        self.tasks: list[TaskHandle] = []
        #: The output's box (the task's line, this view): a task the view starts gets its own line there.
        self.box: Any = None
        #: The record of the task this view belongs to (None: not recorded), and what it keeps of the view.
        self._record_row = record.id if record is not None else None
        self._task_id = handle.task_id if handle is not None else record.task_id if record is not None else None
        self.record = record.app_view if record is not None and record.app_view is not None else ViewRecord(uri)
        #: Links the view asked to open and the person has not answered: the front end's id -> the call's position.
        self._links: dict[int, int] = {}
        self.on_msg(on_kernel_loop(self._on_front_end_msg))
        if handle is not None:
            handle.add_done_callback(self._ended)
        elif record is not None:
            self._from_record(record)
        _VIEWS.add(self)
        self._keep()
        from ..runtime import get_runtime

        self._runtime = get_runtime()
        self._runtime.spawn(self._read(uri), name=f"mcp-app-view {uri}")

    def __repr__(self) -> str:
        return f"<view {self.uri} of {self.tool} on {self.server}>"

    @property
    def handle(self) -> TaskHandle | None:
        """The task this view follows (None: a view drawn again from its record, :func:`redraw`)."""
        return self._handle

    @property
    def record_row(self) -> int | None:
        """The task index's record of this view's task (None: not recorded)."""
        if self._handle is not None:
            return self._handle.index_row
        return self._record_row

    # -- what the record keeps -------------------------------------------------------------------

    def _keep(self) -> None:
        """Write what the view called so far to its handle and its record (the whole record: the latest wins)."""
        if self._handle is not None:
            control_of(self._handle).viewed(self.record.as_data())
        index, row = self._client.index, self.record_row
        if index is not None and row is not None:
            index.note_view(row, app_view=self.record)

    def _note(self, method: str, **details: Any) -> int:
        """Note a call of the view (``view_record.view_call``); its position in the record (-1: not kept)."""
        before = len(self.record.calls)
        self.record = self.record.with_call(view_call(method, **details))
        self._keep()
        return before if len(self.record.calls) > before else -1

    def _noted(self, position: int, outcome: str, **more: Any) -> None:
        if position >= 0:
            self.record = self.record.with_outcome(position, outcome, **more)
            self._keep()

    def _from_record(self, record: TaskRecord) -> None:
        """The task's end as its record keeps it (a view drawn again)."""
        if record.result is not None and record.status in ("completed", "error", "declined"):
            self.tool_result = scrub_data(dict(record.result))
            self.phase = "completed"
        elif record.status == "cancelled":
            self.reason, self.phase = scrub(record.status_message or "cancelled")[:500], "cancelled"
        elif record.finished_at is not None or record.status in ("failed", "lost", "expired"):
            why = record.error or record.status_message or record.status
            self.reason, self.phase = scrub(why)[:500], "failed"

    # -- the view and the task -------------------------------------------------------------------

    async def _read(self, uri: str) -> None:
        try:
            resource = await self._client.app_views.read(uri)
        except MCPError as exc:
            self.problem = scrub(str(exc))
            return
        self.csp = dict(resource.ui.csp)
        self.prefers_border = resource.ui.prefers_border
        self.html = resource.html

    def _ended(self, handle: TaskHandle) -> None:
        exc = handle.exception()
        if exc is None:
            self.tool_result = scrub_data(dict(handle.result().raw))  # no registered secret crosses the bridge
            self.phase = "completed"
        elif isinstance(exc, TaskCancelled):
            self.reason, self.phase = scrub(str(exc))[:500], "cancelled"
        else:
            self.reason, self.phase = scrub(str(exc))[:500], "failed"

    async def teardown(self) -> None:
        """Ask the view to tear down (``ui/resource-teardown``) and wait for it, briefly."""
        self._torn_down.clear()
        self.send({"type": "teardown"})
        try:
            await asyncio.wait_for(self._torn_down.wait(), TEARDOWN_WAIT_S)
        except TimeoutError:
            log.info("%s: the view of %s did not answer its teardown", self.server, self.tool)

    # -- what the view asks ----------------------------------------------------------------------

    def _on_front_end_msg(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """The browser's message, on the kernel's loop whatever thread it came on (``kernel_loop.py``)."""
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "call":
            self._on_call(content)
        elif kind == "log":
            self._on_log(content)
        elif kind == "torn-down":
            self._torn_down.set()
        elif kind == "link":
            self._on_link(content)

    def _on_call(self, content: dict[str, Any]) -> None:
        call_id, method, params = content.get("id"), content.get("method"), content.get("params")
        if not isinstance(call_id, int) or isinstance(call_id, bool) or not 0 < call_id < 2**31:
            return
        if method not in ("tools/call", "resources/read") or not isinstance(params, dict):
            self._answer_error(call_id, INVALID_PARAMS, "only tools/call and resources/read reach the server")
            return
        if self._in_flight >= MAX_IN_FLIGHT:
            self._note(method, **_named(method, params), outcome="refused")
            self._answer_error(call_id, REFUSED, f"more than {MAX_IN_FLIGHT} calls at a time")
            return
        self._in_flight += 1
        self._runtime.spawn(self._answer(call_id, method, params), name=f"mcp-app-call {method}")

    async def _answer(self, call_id: int, method: str, params: dict[str, Any]) -> None:
        at = time.time()
        # Where the record keeps this call, once noted (-1: noted but not kept, past the bound).
        spot: dict[str, int] = {}
        try:
            if method == "tools/call":
                result = await self._call_tool(params, at, spot)
            else:
                uri = params.get("uri")
                if not isinstance(uri, str):
                    raise ValueError("resources/read needs a uri")
                self.calls.append(f"resources/read {uri[:200]}")
                spot["at"] = self._note(method, uri=uri, outcome="asked", at=at)
                result = await self._client.app_views.read_for_view(uri)
            self.send({"type": "answer", "id": call_id, "result": scrub_data(result)})
            self._noted(spot.get("at", -1), "answered")
        except (ValueError, PermissionError) as exc:
            self._refused(spot, method, params, at)
            self._answer_error(call_id, INVALID_PARAMS if isinstance(exc, ValueError) else REFUSED, str(exc))
        except MCPError as exc:
            if "at" in spot:
                self._noted(spot["at"], "failed")  # the server's failure
            else:
                self._refused(spot, method, params, at)  # before it was sent (an unknown tool)
            self._answer_error(call_id, getattr(exc, "code", None) or INTERNAL_ERROR, str(exc))
        except TimeoutError:
            self._noted(spot.get("at", -1), "failed")
            self._answer_error(call_id, INTERNAL_ERROR, f"no result within {CALL_TIMEOUT_S:g} s")
        except Exception as exc:  # the view gets an answer whatever happens; the log has the rest
            log.exception("%s: a call from the view of %s failed", self.server, self.tool)
            self._noted(spot.get("at", -1), "failed")
            self._answer_error(call_id, INTERNAL_ERROR, type(exc).__name__)
        finally:
            self._in_flight -= 1

    def _refused(self, spot: dict[str, int], method: str, params: dict[str, Any], at: float) -> None:
        if "at" in spot:
            self._noted(spot["at"], "refused")
        else:
            self._note(method, **_named(method, params), outcome="refused", at=at)

    async def _call_tool(self, params: dict[str, Any], at: float, spot: dict[str, int]) -> dict[str, Any]:
        name, arguments = params.get("name"), params.get("arguments", {})
        if not isinstance(name, str) or not name or len(name) > 200:
            raise ValueError("tools/call needs a tool name")
        if not isinstance(arguments, dict) or len(json.dumps(arguments)) > MAX_ARGUMENT_CHARS:
            raise ValueError("tools/call arguments must be an object of bounded size")
        tool = await self._client.tool(name)
        ui = tool.ui or ToolUI(resource_uri=None)
        if not ui.app_callable:
            raise PermissionError(f"tool {name!r} is not callable from a view (its visibility leaves out 'app')")
        self.calls.append(f"tools/call {name}")
        spot["at"] = position = self._note("tools/call", name=name, arguments=arguments, outcome="asked", at=at)
        dialect = self._client.dialect
        as_task = tool.task_support in ("optional", "required") and not dialect.unsolicited_tasks
        if as_task and dialect.runs_as_task(tool):
            # A task of its own, followed on a compact line under the view, recorded like any other, and
            # marked as started by this view (its record names the view and this view's task's record).
            handle = await self._client.start_task(name, arguments)
            started = StartedBy(self.uri, self.tool, self.record_row, self._task_id)
            control_of(handle).started_from_view(started.as_data())
            index = self._client.index
            if index is not None and handle.index_row is not None:
                index.note_view(handle.index_row, started_by=started)
            self._noted(position, "asked", record=handle.index_row)
            self.tasks.append(handle)
            if self.box is not None:
                from .compact_widget import compact

                self.box.children = (*self.box.children, compact(handle))
            return dict((await handle.wait(CALL_TIMEOUT_S)).raw)
        result = await self._client.call_tool(name, arguments, timeout=CALL_TIMEOUT_S)
        return dict(result.raw)

    def _answer_error(self, call_id: int, code: int, message: str) -> None:
        self.send({"type": "answer", "id": call_id, "error": {"code": code, "message": scrub(message)[:1000]}})

    def _on_link(self, content: dict[str, Any]) -> None:
        """``ui/open-link``: asked (the front end offers it), then opened or dismissed by the person."""
        link, url, answer = content.get("link"), content.get("url"), content.get("answer")
        if not isinstance(link, int) or isinstance(link, bool) or not isinstance(url, str) or len(url) > 4096:
            return
        if answer == "asked":
            position = self._note("ui/open-link", url=url, outcome="asked")
            if len(self._links) < MAX_LINKS:
                self._links[link] = position
        elif answer in ("opened", "dismissed") and link in self._links:
            self._noted(self._links.pop(link), answer)

    def _on_log(self, content: dict[str, Any]) -> None:
        level, data = content.get("level"), content.get("data")
        if not isinstance(level, str) or not isinstance(data, str):
            return
        entry = {"level": level[:20], "logger": "view", "data": scrub(data)[:2000]}
        if self._handle is not None:
            control_of(self._handle).logged(entry)
        else:
            log.info("%s: the view of %s says (%s): %s", self.server, self.tool, entry["level"], entry["data"])


def _named(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """What a record keeps to name a call the host refused at once (a tool's name, a resource's URI)."""
    if method not in METHODS:
        return {}
    key = "name" if method == "tools/call" else "uri"
    value = params.get(key)
    return {key: value} if isinstance(value, str) else {}


def views_of(handle: TaskHandle) -> list[AppViewWidget]:
    """The app views drawn for ``handle`` in this kernel (to tear them down: ``await view.teardown()``)."""
    return [view for view in list(_VIEWS) if view.handle is handle]


def app_view(handle: TaskHandle, client: Client) -> AppViewWidget | None:
    """The view of ``handle``'s tool when it has one and ``client`` draws apps (else None)."""
    if not getattr(client, "apps_enabled", False) or handle.tool is None:
        return None
    tools = client.cached_tools or []
    tool = next((t for t in tools if t.name == handle.tool), None)
    ui = tool.ui if tool is not None else None
    if tool is None or ui is None or ui.resource_uri is None:
        return None
    return AppViewWidget(handle, client, tool)


def redraw_app(record: int | str) -> None:
    """Draw again, below the cell, the MCP Apps view of the task the task index keeps as ``record`` (its
    record id; the saved output of an app task offers a button that runs this).

    The view's resource is read again on this kernel's connection to the same server (the one whose target
    the record names), and the view gets the recorded arguments (as recorded: secret-looking values redacted)
    and the recorded result (or that the task was cancelled or failed). What it calls now is added to the
    record. Where that cannot be done (no such record, no connection to that server, a task that drew no
    view) it says what to do instead. Returns None (the view is shown, not returned: a cell ending in this
    call would show it twice); ``views_of_record(record)`` gives it.
    """
    from IPython.display import display

    from ...index.task_index import default_index
    from ...protocol.types import Tool
    from ..runtime import get_runtime

    def say(text: str) -> None:
        display({"text/plain": text}, raw=True)

    try:
        row = int(record)
    except (TypeError, ValueError):
        say(f"redraw_app: {record!r} is not a record id (mcp-tasks list shows them)")
        return
    connections = list(get_runtime().connections.values())
    index = next((c.client.index for c in connections if c.client.index is not None), None) or default_index()
    found = index.get(row) if index is not None else None
    if found is None:
        where = index.describe() if index is not None else "the task index (it is off: MTJ_INDEX=off)"
        say(f"redraw_app: no record {row} in {where}: the view cannot be drawn again from it")
        return
    connection = next((c for c in connections if c.client.target == found.target), None)
    if connection is None:
        say(
            f"redraw_app: this kernel has no connection to the server {found.server_name!r} ({found.target}) "
            f"that ran {found.tool}: connect to it first (%mcp_connect {found.server_name} ..., or "
            f"mtj.connect), then run this again"
        )
        return
    client = connection.client
    listed = next((t for t in client.cached_tools or [] if t.name == found.tool), None)
    ui = listed.ui if listed is not None else None
    if found.app_view is None and (ui is None or ui.resource_uri is None):
        say(f"redraw_app: the task {found.tool} of record {row} drew no app view")
        return
    if not getattr(client, "apps_enabled", False):
        say(f"redraw_app: the connection {connection.name!r} draws no app views (apps=False): connect with apps")
        return
    tool = listed if listed is not None else Tool(name=found.tool)
    view = AppViewWidget(None, client, tool, record=found)
    from ..display import widget_output

    drawn = f"the app view of {found.tool} on {found.server_name}, drawn again from record {row}"
    display(widget_output(view, {"text/plain": drawn}), raw=True)


def views_of_record(record: int) -> list[AppViewWidget]:
    """The app views drawn again from task index record ``record`` in this kernel (:func:`redraw_app`)."""
    return [view for view in list(_VIEWS) if view.handle is None and view.record_row == record]
