"""AppViewWidget: an MCP Apps view (a tool's own HTML, ``io.modelcontextprotocol/ui``) live in its task's output.

The kernel's half of the host: it reads the view (``client.app_views``, once per connection), follows the
task (its arguments at once, its result when it completes, ``phase`` cancelled or failed with the reason)
and answers what the view asks through the browser's bridge (``labextension/src/widgets/app.ts``):

* ``tools/call`` of a tool on the same connection, refused before anything is sent when the tool's
  visibility leaves out ``"app"`` or the tool is unknown; ``resources/read`` of the same server;
* ``notifications/message`` from the view go to the task's log (scrubbed, cut).

Everything the browser sends is untrusted: a message is a dict of known shape, ids are small integers,
arguments a JSON object of bounded size, at most ``MAX_IN_FLIGHT`` calls at a time per view; errors sent
back are scrubbed of secrets. Nothing here blocks the kernel: each call is a job of the runtime.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets as t

from ...errors import MCPError, TaskCancelled
from ...protocol.apps import ToolUI
from ...redact import redact_arguments, scrub, scrub_data
from ...tasks.control import control_of
from . import front_end

if TYPE_CHECKING:
    from ...client import Client
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
#: How long ``teardown`` waits for the view to say it is done.
TEARDOWN_WAIT_S = 1.0
#: The JSON-RPC errors sent back to the view.
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REFUSED = -32000


class AppViewWidget(anywidget.AnyWidget):
    """The view of one app tool's task (made by :func:`app_view`; shown by ``jupyter/display.py``)."""

    _esm = front_end.esm("app")
    _css = front_end.css("app")

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

    def __init__(self, handle: TaskHandle, client: Client, tool: Tool) -> None:
        ui = tool.ui
        assert ui is not None and ui.resource_uri is not None
        super().__init__(
            server=handle.server,
            tool=tool.name,
            uri=ui.resource_uri,
            tool_info={k: v for k, v in tool.model_dump(by_alias=True, exclude_none=True).items() if k != "_meta"},
            # What the page and a saved widget state hold: secret-looking arguments (token, key, ...) redacted
            # and registered secrets scrubbed, as everywhere else a task's arguments are shown.
            tool_input=scrub_data(redact_arguments(dict(handle.arguments or {}))),
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
        self.on_msg(self._on_front_end_msg)
        handle.add_done_callback(self._ended)
        _VIEWS.add(self)
        from ..runtime import get_runtime

        self._runtime = get_runtime()
        #: The loop this view lives on: the browser's messages may be handled on another thread (ipykernel 7
        #: hands comm messages to a subshell's thread and loop), so they are passed over to this one.
        self._loop = asyncio.get_running_loop()
        self._runtime.spawn(self._read(ui.resource_uri), name=f"mcp-app-view {ui.resource_uri}")

    def __repr__(self) -> str:
        return f"<view {self.uri} of {self.tool} on {self.server}>"

    @property
    def handle(self) -> TaskHandle:
        """The task this view follows."""
        return self._handle

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
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._dispatch(content)
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._dispatch, content)

    def _dispatch(self, content: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind == "call":
            self._on_call(content)
        elif kind == "log":
            self._on_log(content)
        elif kind == "torn-down":
            self._torn_down.set()

    def _on_call(self, content: dict[str, Any]) -> None:
        call_id, method, params = content.get("id"), content.get("method"), content.get("params")
        if not isinstance(call_id, int) or isinstance(call_id, bool) or not 0 < call_id < 2**31:
            return
        if method not in ("tools/call", "resources/read") or not isinstance(params, dict):
            self._answer_error(call_id, INVALID_PARAMS, "only tools/call and resources/read reach the server")
            return
        if self._in_flight >= MAX_IN_FLIGHT:
            self._answer_error(call_id, REFUSED, f"more than {MAX_IN_FLIGHT} calls at a time")
            return
        self._in_flight += 1
        self._runtime.spawn(self._answer(call_id, method, params), name=f"mcp-app-call {method}")

    async def _answer(self, call_id: int, method: str, params: dict[str, Any]) -> None:
        try:
            if method == "tools/call":
                result = await self._call_tool(params)
            else:
                uri = params.get("uri")
                if not isinstance(uri, str):
                    raise ValueError("resources/read needs a uri")
                self.calls.append(f"resources/read {uri[:200]}")
                result = await self._client.app_views.read_for_view(uri)
            self.send({"type": "answer", "id": call_id, "result": scrub_data(result)})
        except (ValueError, PermissionError) as exc:
            self._answer_error(call_id, INVALID_PARAMS if isinstance(exc, ValueError) else REFUSED, str(exc))
        except MCPError as exc:
            self._answer_error(call_id, getattr(exc, "code", None) or INTERNAL_ERROR, str(exc))
        except TimeoutError:
            self._answer_error(call_id, INTERNAL_ERROR, f"no result within {CALL_TIMEOUT_S:g} s")
        except Exception as exc:  # the view gets an answer whatever happens; the log has the rest
            log.exception("%s: a call from the view of %s failed", self.server, self.tool)
            self._answer_error(call_id, INTERNAL_ERROR, type(exc).__name__)
        finally:
            self._in_flight -= 1

    async def _call_tool(self, params: dict[str, Any]) -> dict[str, Any]:
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
        dialect = self._client.dialect
        as_task = tool.task_support in ("optional", "required") and not dialect.unsolicited_tasks
        if as_task and dialect.runs_as_task(tool):
            # A task of its own, followed on a compact line under the view, recorded like any other.
            handle = await self._client.start_task(name, arguments)
            self.tasks.append(handle)
            if self.box is not None:
                from .compact_widget import compact

                self.box.children = (*self.box.children, compact(handle))
            return dict((await handle.wait(CALL_TIMEOUT_S)).raw)
        result = await self._client.call_tool(name, arguments, timeout=CALL_TIMEOUT_S)
        return dict(result.raw)

    def _answer_error(self, call_id: int, code: int, message: str) -> None:
        self.send({"type": "answer", "id": call_id, "error": {"code": code, "message": scrub(message)[:1000]}})

    def _on_log(self, content: dict[str, Any]) -> None:
        level, data = content.get("level"), content.get("data")
        if not isinstance(level, str) or not isinstance(data, str):
            return
        control_of(self._handle).logged({"level": level[:20], "logger": "view", "data": scrub(data)[:2000]})


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
