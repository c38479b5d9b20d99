"""Bounded rendering end to end: huge results that came over a real pipe from a real server process.

The demo server's ``echo`` sends back whatever text it is given; a small scripted server (a Python
process speaking the 2025-11-25 dialect over stdio) runs one task whose result is everything at once
(``mixed_result``) and whose status message is a megabyte of markup. Every view of the task is
bounded: the notebook HTML, the saved-notebook summary, the text forms, and the live widget's state.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tracemalloc
from pathlib import Path

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.jupyter.display import summary_bundle
from mcp_tasks_jupyter.jupyter.widgets import bind
from mcp_tasks_jupyter.jupyter.widgets.state import TaskTraits
from mcp_tasks_jupyter.views import html as views_html, text as views_text
from mcp_tasks_jupyter.views.view import view_of
from tests.jupyter.conftest import demo_client
from tests.jupyter.test_render import assert_safe

from .test_render_bounds import BUDGET, MARKUP, mixed_result, views

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]
WAIT = 60  # seconds: a bound on every wait, never a speed claim

#: A task server over stdio: ``huge`` becomes a task that is done at its first poll; ``tasks/result``
#: answers with the ``result`` in the JSON file named by argv[1], ``tasks/get`` with its ``message``.
SERVER = r"""
import json, sys
script = json.loads(open(sys.argv[1]).read())
result, message = script["result"], script["message"]
TASK = {"taskId": "t-huge", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 60000, "pollInterval": 100}
def answer(msg, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if "id" not in msg or method is None:
        continue
    if method == "initialize":
        answer(msg, {"protocolVersion": "2025-11-25", "serverInfo": {"name": "huge", "version": "0"},
                     "capabilities": {"tools": {}, "tasks": {"list": {}, "cancel": {},
                                                              "requests": {"tools": {"call": {}}}}}})
    elif method == "tools/list":
        answer(msg, {"tools": [{"name": "huge", "inputSchema": {"type": "object"},
                                "execution": {"taskSupport": "optional"}}]})
    elif method == "tools/call":
        answer(msg, {"task": TASK})
    elif method == "tasks/get":
        answer(msg, {**TASK, "status": "completed", "statusMessage": message})
    elif method == "tasks/result":
        answer(msg, {**result, "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t-huge"}}})
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"],
                                     "error": {"code": -32601, "message": "no such method"}}) + "\n")
        sys.stdout.flush()
"""


async def test_a_five_megabyte_echo_from_the_demo_server_is_bounded_and_escaped():
    text = MARKUP * 90_000  # 5 MB of markup
    async with demo_client() as client:
        res = await asyncio.wait_for(client.call_tool("echo", {"text": text}), WAIT)
    assert res.text == text  # everything arrived and is kept
    _, preview, markup = views(res.raw)
    [block] = preview["blocks"]
    assert block["cut"] == len(text) - len(block["text"]) > 0 and block["text"] in markup.text
    assert "<script" not in views_html.result_html(res)


async def test_every_view_of_a_task_with_a_huge_result_is_bounded(tmp_path: Path):
    raw = mixed_result(repeat=300, big=100, nested=False)  # about 26 MB of JSON on the pipe
    message = MARKUP * 20_000  # a megabyte of status message
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"result": raw, "message": message}))
    argv = [sys.executable, "-c", SERVER, str(path)]
    async with mtj.connect(argv, name="huge", dialect="2025-11-25", protocol_version="2025-11-25") as client:
        task = await client.start_task("huge", {})
        widget = bind(task)  # following the task from the start: the result comes in its final update
        res = await asyncio.wait_for(task, WAIT)
    assert len(res.content) == len(raw["content"]) and res.content[0].text == raw["content"][0]["text"]

    tracemalloc.start()
    try:
        views_ = {
            "task_html": views_html.task_html(view_of(task)),
            "summary_html": summary_bundle(task)["text/html"],
            "summary_text": summary_bundle(task)["text/plain"],
            "task_text": repr(task),
            "bundle_html": task._repr_mimebundle_()["text/html"],
        }
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * BUDGET, f"{peak:,} bytes allocated at the peak"
    for name, source in views_.items():
        assert len(source.encode()) <= BUDGET, f"{name}: {len(source.encode()):,} bytes"
    for name in ("task_html", "summary_html", "bundle_html"):
        assert "<script" not in views_[name], name
    assert views_["task_html"] == views_["bundle_html"]
    markup = assert_safe(views_["task_html"])
    assert MARKUP in markup.text and "more blocks not shown" in markup.text
    # The summary is the result preview too (it is what a saved notebook shows), as bounded.
    summary = assert_safe(views_["summary_html"])
    assert MARKUP in summary.text and "more blocks not shown" in summary.text
    assert views_["summary_text"] == "huge on huge: tool error — x"

    # The live widget: what it holds is what it syncs to the browser.
    assert widget.done and widget.result is not None
    assert len(json.dumps(widget.result)) <= BUDGET
    synced = widget.get_state()
    own = {k: v for k, v in synced.items() if not k.startswith("_")}  # leave out the widget's own JS and CSS
    assert len(json.dumps(own)) <= BUDGET + 20_000, f"{len(json.dumps(own)):,} bytes of widget state"
    # cut twice at most (once on the wire, protocol/bounds.py; once for the view), never whole
    assert widget.status_message.endswith("…") and len(widget.status_message) <= views_text.MESSAGE_CHARS + 1
    assert message.startswith(widget.status_message[:-2])
    assert json.dumps(TaskTraits(task).traits()["result"]) == json.dumps(widget.result)
    widget.close()
