"""The kernel's half of an MCP Apps view (jupyter/widgets/app_widget.py), without a browser: the view read
and handed over, the task followed (input at once, result or cancellation at the end), and what a view
asks answered through the kernel's client, with the visibility rules and the bounds."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.demo.app_tools import VIEW_HTML, VIEW_URI
from mcp_tasks_jupyter.jupyter.widgets.app_host import bridge_host
from mcp_tasks_jupyter.jupyter.widgets.app_widget import MAX_IN_FLIGHT, AppViewWidget, app_view
from tests.jupyter.conftest import UpdateCounter, demo_client
from tests.support import eventually

pytestmark = pytest.mark.anyio

WAIT = 30
HOSTILE = [sys.executable, str(Path(__file__).with_name("hostile_server.py"))]


def from_browser(widget: AppViewWidget, content: dict[str, Any]) -> None:
    widget._handle_msg({"content": {"data": {"method": "custom", "content": content}}, "buffers": []})


def answers(counter: UpdateCounter) -> dict[int, dict[str, Any]]:
    return {
        m["content"]["id"]: m["content"]
        for m in counter.sent
        if m.get("method") == "custom" and m["content"].get("type") == "answer"
    }


async def test_the_view_follows_its_task_and_calls_back():
    async with demo_client("--poll-interval", "100") as demo:
        task = await demo.start_task("live_chart", {"label": "w1", "points": 6, "interval": 0.2})
        view = app_view(task, demo)
        assert isinstance(view, AppViewWidget)
        sent = UpdateCounter(view)
        assert view.tool_input == {"label": "w1", "points": 6, "interval": 0.2}  # at once
        assert view.phase == "running" and view.tool_result is None
        await eventually(lambda: view.html == VIEW_HTML, timeout=WAIT, what="the view")
        assert view.uri == VIEW_URI and view.prefers_border is True and view.csp == {}
        assert view.tool_info["name"] == "live_chart" and "inputSchema" in view.tool_info
        from_browser(
            view,
            {
                "type": "call",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "chart_points", "arguments": {"label": "w1"}},
            },
        )
        from_browser(view, {"type": "call", "id": 2, "method": "resources/read", "params": {"uri": VIEW_URI}})
        from_browser(
            view,
            {
                "type": "call",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "steer_chart", "arguments": {"label": "w1", "action": "stop"}},
            },
        )
        await eventually(lambda: len(answers(sent)) == 3, timeout=WAIT, what="three answers")
        got = answers(sent)
        assert "points" in got[1]["result"]["structuredContent"]
        assert got[2]["result"]["contents"][0]["text"] == VIEW_HTML
        assert got[3]["result"]["structuredContent"] == {"action": "stop"}
        result = await asyncio.wait_for(task, WAIT)
        await eventually(lambda: view.phase == "completed", timeout=WAIT, what="completed")
        assert view.tool_result is not None and view.tool_result["structuredContent"]["stopped"] is True
        assert result.structured["stopped"] is True  # the view's steering reached the server
        assert view.calls == ["tools/call chart_points", f"resources/read {VIEW_URI}", "tools/call steer_chart"]
        from_browser(view, {"type": "log", "level": "info", "data": '"hello from the view"'})
        assert task.logs[-1] == {"level": "info", "logger": "view", "data": '"hello from the view"'}


async def test_a_cancelled_task_tells_its_view():
    async with demo_client("--poll-interval", "100") as demo:
        task = await demo.start_task("live_chart", {"label": "w2", "points": 200, "interval": 0.2})
        view = app_view(task, demo)
        assert view is not None
        await task.cancel()
        await eventually(lambda: view.phase == "cancelled", timeout=WAIT, what="cancelled")
        assert view.tool_result is None and view.reason


async def test_no_view_without_apps_or_for_a_plain_tool():
    async with demo_client("--poll-interval", "100", apps=False) as demo:
        task = await demo.start_task("live_chart", {"points": 1, "interval": 0})
        assert app_view(task, demo) is None
        await asyncio.wait_for(task, WAIT)
    async with demo_client("--poll-interval", "100") as demo:
        task = await demo.start_task("echo", {"text": "x"})
        assert app_view(task, demo) is None
        await asyncio.wait_for(task, WAIT)


async def test_visibility_and_bounds_of_what_a_view_asks():
    async with mtj.connect(HOSTILE, name="hostile") as client:
        task = await client.start_task("escape", {})
        view = app_view(task, client)
        assert view is not None
        sent = UpdateCounter(view)
        calls = [
            (1, "tools/call", {"name": "model_only", "arguments": {}}),
            (2, "tools/call", {"name": "app_only", "arguments": {}}),
            (3, "tools/call", {"name": "plain", "arguments": {}}),
            (4, "tools/call", {"name": "nope", "arguments": {}}),
            (5, "tools/call", {"name": "plain", "arguments": {"big": "x" * 300_000}}),
            (6, "tools/call", {"name": "plain", "arguments": "not an object"}),
            (7, "sampling/createMessage", {}),
        ]
        for call_id, method, params in calls:
            from_browser(view, {"type": "call", "id": call_id, "method": method, "params": params})
        from_browser(view, {"type": "call", "id": True, "method": "tools/call", "params": {}})  # no answer
        from_browser(view, {"type": "call", "id": 2**40, "method": "tools/call", "params": {}})  # no answer
        await eventually(lambda: len(answers(sent)) == len(calls), timeout=WAIT, what="every answer")
        got = answers(sent)
        assert "visibility leaves out 'app'" in got[1]["error"]["message"]
        assert got[2]["result"]["structuredContent"]["ran"] == "app_only"
        assert got[3]["result"]["structuredContent"]["ran"] == "plain"
        assert "no tool named 'nope'" in got[4]["error"]["message"]
        assert "bounded size" in got[5]["error"]["message"] and "bounded size" in got[6]["error"]["message"]
        assert "only tools/call and resources/read" in got[7]["error"]["message"]
        assert view.calls == ["tools/call app_only", "tools/call plain"]  # refused calls never went out


async def test_too_many_calls_at_once_are_refused():
    async with mtj.connect(HOSTILE, name="hostile") as client:
        task = await client.start_task("escape", {})
        view = app_view(task, client)
        assert view is not None
        sent = UpdateCounter(view)
        for call_id in range(1, MAX_IN_FLIGHT + 3):
            from_browser(
                view, {"type": "call", "id": call_id, "method": "tools/call", "params": {"name": "plain"}}
            )
        await eventually(lambda: len(answers(sent)) == MAX_IN_FLIGHT + 2, timeout=WAIT, what="every answer")
        refused = [a for a in answers(sent).values() if "error" in a]
        assert len(refused) == 2 and all("calls at a time" in a["error"]["message"] for a in refused)


async def test_the_saved_output_keeps_the_summary_and_says_a_view_was_shown():
    """What a saved notebook keeps of a task shown with its view (item 6): no view runs from it; its summary
    and the tool's text result, and a note naming the view (escaped in HTML)."""
    from ipywidgets import VBox

    from mcp_tasks_jupyter.jupyter.display import app_output

    async with demo_client("--poll-interval", "100") as demo:
        task = await demo.start_task("live_chart", {"label": "<b>", "points": 2, "interval": 0})
        await asyncio.wait_for(task, WAIT)
        view = app_view(task, demo)
        assert view is not None
        bundle = app_output(VBox([view]), task, view.uri)
    plain, html = bundle["text/plain"], bundle["text/html"]
    assert plain.startswith("live_chart label=<b> points=2 interval=0 on demo: completed")
    note = f"an app view ({VIEW_URI}) was shown live here; run the cell with a kernel to draw it again"
    assert plain.endswith(note)
    assert "<b>:" not in html and "&lt;b&gt;" in html and f"an app view ({VIEW_URI}) was shown live" in html
    assert "application/vnd.jupyter.widget-view+json" in bundle and "<iframe" not in html and "<script" not in html


async def test_a_tool_the_view_calls_runs_as_a_task_where_it_can():
    """Item 4: a tool the view calls that runs as a task here is started as one (recorded like any other, and
    on a compact line of its own under the view); its result is the view's answer."""
    from ipywidgets import VBox

    async with demo_client("--poll-interval", "100") as demo:
        task = await demo.start_task("live_chart", {"label": "outer", "points": 1, "interval": 0})
        view = app_view(task, demo)
        assert view is not None
        view.box = VBox([view])
        sent = UpdateCounter(view)
        params = {"name": "live_chart", "arguments": {"label": "inner", "points": 2, "interval": 0.05}}
        from_browser(view, {"type": "call", "id": 1, "method": "tools/call", "params": params})
        await eventually(lambda: 1 in answers(sent), timeout=WAIT, what="the answer")
        assert answers(sent)[1]["result"]["structuredContent"]["label"] == "inner"
        (inner,) = view.tasks
        assert inner.runs_as_task and inner.task_id and inner.status == "completed"
        assert type(view.box.children[-1]).__name__ == "CompactTaskWidget"


async def test_secret_arguments_never_reach_the_view():
    """A secret-looking argument (``api_key``, ``token``, ...) reaches the page's widget state redacted, as it
    does the index and every other view: the browser and a saved widget state never hold it."""
    async with mtj.connect(HOSTILE, name="hostile") as client:
        task = await client.start_task("escape", {"api_key": "sk-live-1234567890", "jupyter": "x"})
        view = app_view(task, client)
        assert view is not None
        assert view.tool_input == {"api_key": "<redacted>", "jupyter": "x"}
        assert "sk-live" not in str(view.get_state())
        await asyncio.wait_for(task, WAIT)


async def test_a_registered_secret_in_a_result_never_crosses_the_bridge():
    """A secret the client knows (a header or env value, registered with redact.register) that a server
    echoes in a result is scrubbed before the view gets it, in the task's result and in a call's answer."""
    from mcp_tasks_jupyter.redact import register

    secret = "hostile-secret-0123456789"
    register(secret)
    async with mtj.connect(HOSTILE, name="hostile") as client:
        task = await client.start_task("escape", {"jupyter": secret})
        view = app_view(task, client)
        assert view is not None
        sent = UpdateCounter(view)
        await asyncio.wait_for(task, WAIT)
        await eventually(lambda: view.phase == "completed", timeout=WAIT, what="completed")
        params = {"name": "echo_back", "arguments": {"text": secret}}
        from_browser(view, {"type": "call", "id": 1, "method": "tools/call", "params": params})
        await eventually(lambda: 1 in answers(sent), timeout=WAIT, what="the answer")
    assert secret not in json.dumps(view.get_state(), default=str) and secret not in json.dumps(answers(sent))
    assert answers(sent)[1]["result"]["structuredContent"]["ran"] == "echo_back"


async def test_views_borrow_one_host_of_their_code_and_stay_small():
    """The code that draws views (most of a megabyte) goes to the page once per kernel, in the one
    AppBridgeHost; each view's own state names that host and holds a module of a few hundred bytes."""
    async with demo_client("--poll-interval", "100") as demo:
        tasks = [
            await demo.start_task("live_chart", {"label": f"w{n}", "points": 2, "interval": 0.1}) for n in range(2)
        ]
        views = [app_view(task, demo) for task in tasks]
        assert all(isinstance(v, AppViewWidget) for v in views)
        first, second = (v.get_state() for v in views if v is not None)
        host = bridge_host()
        assert first["host"] == second["host"] == f"anywidget:{host.model_id}"
        assert len(host.get_state()["_esm"]) > 100_000  # the bridge and its schemas, once
        for state in (first, second):
            assert len(json.dumps(state)) < 20_000, "a view carries the drawing code itself"
        await asyncio.wait_for(mtj.gather(*tasks, return_exceptions=True), WAIT)
