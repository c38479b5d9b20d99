"""What every view says of a task (issue 15, items 2 and 8): a tool error or a declined question is an
error state in the widget, the board's row, the JupyterLab channel's entry and the summaries (in every
dialect, also ext, which reports a tool error as ``completed``); statuses read in words; markdown
results are rendered, records under a key of the structured content are a table, and the static
summary carries the result's images."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.jupyter.comm import task_entry
from mcp_tasks_jupyter.jupyter.display import summary_bundle
from mcp_tasks_jupyter.jupyter.widgets import bind
from mcp_tasks_jupyter.tasks import status
from mcp_tasks_jupyter.views import (
    html as views_html,
    markdown,
    preview as views_preview,
    preview_html as views_preview_html,
)
from mcp_tasks_jupyter.views.view import board_row, estimated_end, view_of
from tests.support.waiting import eventually

from .conftest import HOSTILE, WAIT, demo_client
from .test_render import Markup, assert_safe

pytestmark = pytest.mark.anyio

ALLOWED = {"h1", "h2", "ul", "ol", "li", "p", "strong", "em", "caption"}


def views(handle: mtj.TaskHandle) -> dict[str, Any]:
    """The status each view shows for ``handle``."""
    summary = summary_bundle(handle)
    return {
        "view": view_of(handle).status,
        "board": board_row(1, view_of(handle))["status"],
        "board_words": board_row(1, view_of(handle))["status_text"],
        "channel": task_entry("k", handle, None)["status"],
        "widget": bind(handle).status,
        "repr": repr(handle),
        "summary": summary["text/plain"],
        "summary_html": summary["text/html"],
    }


@pytest.mark.parametrize("dialect", ["2025-11-25", "ext", "sep1686"])
async def test_a_tool_error_is_an_error_in_every_view_and_every_dialect(dialect):
    async with demo_client("--poll-interval", "100", dialect=("--dialect", dialect)) as client:
        task = await client.start_task("failing_job", {"seconds": 0.2, "message": "row 7 is malformed"})
        result = await asyncio.wait_for(task, WAIT)
        assert result.is_error
        seen = views(task)
    assert {seen[k] for k in ("view", "board", "channel", "widget")} == {"error"}
    assert seen["board_words"] == "tool error"
    assert seen["repr"] == "<TaskHandle failing_job on demo: error>"
    assert seen["summary"] == (
        'failing_job seconds=0.2 message="row 7 is malformed" on demo: tool error — row 7 is malformed'
    )
    assert ">tool error</span>" in seen["summary_html"] and ">completed<" not in seen["summary_html"]
    assert "#cf222e" in seen["summary_html"]  # the error badge's colour, never the green of completed


async def test_a_declined_question_reads_declined():
    async def decline(_params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "decline"}

    async with demo_client("--poll-interval", "100", elicitation_handler=decline) as client:
        task = await client.start_task("research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0.05})
        await asyncio.wait_for(task, WAIT)
        seen = views(task)
        entry = task_entry("k", task, None)
    assert {seen[k] for k in ("view", "board", "channel", "widget")} == {"declined"}
    assert seen["summary"].startswith(
        "research topic=tides ambiguous=true stage_seconds=0.05 on demo: declined — The user declined"
    )
    assert seen["summary"].endswith("→ declined (handler)")  # the question asked and its answer
    # headed as what happened, not as a malfunction (issue 30)
    assert "the question was declined, and the tool stopped" in seen["summary_html"]
    assert "the tool reported an error" not in seen["summary_html"]
    assert entry["message"].startswith("The user declined")  # what a notification of it says


async def test_a_question_waiting_reads_needs_input_and_a_good_result_completed(demo):
    asked = asyncio.Event()

    async def wait(_params: dict[str, Any]) -> dict[str, Any]:
        asked.set()
        await asyncio.sleep(WAIT)
        return {"action": "cancel"}

    demo.elicitation_handler = wait
    task = await demo.start_task("research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0.05})
    await asyncio.wait_for(asked.wait(), WAIT)
    await eventually(lambda: view_of(task).needs_input, timeout=WAIT, what="the question")
    assert status.in_words("input_required") == "needs input"
    await task.cancel()
    good = await demo.start_task("slow_compute", {"seconds": 0.1, "steps": 2})
    await asyncio.wait_for(good, WAIT)
    assert views(good)["view"] == "completed" and views(good)["board_words"] == "completed"


# -- results as people read them -------------------------------------------------------------------


def test_markdown_text_is_rendered_and_plain_text_stays_preformatted():
    text = "# Report\n\n- **bold** point\n- a [link](https://example.org/x) and `code`\n\n1. one\n"
    preview = views_preview.result_preview(mtj.ToolResult.from_wire({"content": [{"type": "text", "text": text}]}))
    (block,) = preview["blocks"]
    assert block["kind"] == "markdown" and block["text"] == text
    markup = assert_safe(views_preview_html.preview_html(preview), extra=ALLOWED)
    tags = [t for t, _ in markup.tags]
    assert tags[:3] == ["div", "div", "h1"] and "strong" in tags and "ol" in tags and "pre" not in tags
    assert (
        "a",
        {"href": "https://example.org/x", "target": "_blank", "rel": "noopener noreferrer"},
    ) in markup.tags

    for plain in ("value = 3 * 4 * 5\nsecond line", "done in 10 steps, value=385"):
        preview = views_preview.result_preview(
            mtj.ToolResult.from_wire({"content": [{"type": "text", "text": plain}]})
        )
        assert preview["blocks"] == [{"kind": "text", "text": plain, "cut": 0}]


@pytest.mark.parametrize("bad", HOSTILE)
def test_markdown_from_a_server_is_never_markup_of_its_own(bad):
    text = f"# {bad}\n\n- {bad}\n- [x](javascript:alert(1)) [y]({bad}) ![img](https://evil.example/p.png)\n\n{bad}"
    tree = markdown.markdown_tree(text)
    assert tree is not None
    source = markdown.tree_html(tree)
    markup = assert_safe(f"<div>{source}</div>", extra=ALLOWED)
    assert bad in markup.text
    assert not [attrs for tag, attrs in markup.tags if tag == "img"]  # an image is a link, never fetched
    links = [attrs for tag, attrs in markup.tags if tag == "a"]
    assert links == [{"href": "https://evil.example/p.png", "target": "_blank", "rel": "noopener noreferrer"}]


def test_markdown_too_big_for_the_budget_is_its_text():
    text = "\n".join(f"- **item {i}**" for i in range(400))
    small = views_preview.result_preview(
        mtj.ToolResult.from_wire({"content": [{"type": "text", "text": text}]}), budget=9000
    )
    assert small["blocks"][0]["kind"] == "text"
    assert len(views_preview_html.preview_html(small).encode()) <= 9000


def test_records_under_one_key_of_the_structured_content_are_a_table():
    value = {"topic": "tides", "depth": 2, "sources": [{"title": "A", "url": "u1"}, {"title": "B", "url": "u2"}]}
    table = views_preview.structured_preview(value)
    assert table["kind"] == "table" and table["caption"] == "sources"
    assert table["columns"] == ["title", "url"] and table["rows"] == [["A", "u1"], ["B", "u2"]]
    assert table["fields"] == [["topic", "tides"], ["depth", "2"]]
    markup = Markup(views_html.result_html(mtj.ToolResult.from_wire({"content": [], "structuredContent": value})))
    assert "caption" in [t for t, _ in markup.tags] and "details" not in [t for t, _ in markup.tags]
    assert "topic: tides" in markup.text
    for other in ({"a": [{"x": 1}], "b": [{"y": 2}]}, {"a": [{"x": 1}], "b": {"c": 1}}, {"a": [1, 2]}):
        assert views_preview.structured_preview(other)["kind"] == "tree"


async def test_the_static_summary_shows_the_result_with_its_images(demo):
    task = await demo.start_task("make_chart", {"values": [3, 1, 2], "title": "chart", "seconds": 0.1})
    await asyncio.wait_for(task, WAIT)
    html = summary_bundle(task)["text/html"]
    markup = assert_safe(html)
    images = [attrs for tag, attrs in markup.tags if tag == "img"]
    assert len(images) == 1 and images[0]["src"].startswith("data:image/png;base64,")
    base64.b64decode(images[0]["src"].split(",", 1)[1], validate=True)
    assert "chart: bar chart of 3 values" in markup.text and "mtj-duration" in html


# -- progress and its ETA --------------------------------------------------------------------------


def test_an_eta_needs_progress_and_a_rate():
    assert estimated_end(100.0, None, (104.0, 0.5)) == 108.0  # half done in 4 s since the start
    assert estimated_end(100.0, (102.0, 0.2), (104.0, 0.6)) == pytest.approx(106.0)  # the rate between two samples
    assert estimated_end(100.0, None, (100.5, 0.5)) is None  # too soon to tell
    assert estimated_end(100.0, None, (104.0, 0.0)) is None  # no progress yet
    assert estimated_end(100.0, None, (104.0, 1.0)) is None  # done


@pytest.mark.parametrize(("dialect", "has_progress"), [("2025-11-25", True), ("ext", False)])
async def test_the_widget_has_an_eta_only_where_progress_allows_one(dialect, has_progress):
    async with demo_client("--poll-interval", "100", dialect=("--dialect", dialect)) as client:
        task = await client.start_task("slow_compute", {"seconds": 30, "steps": 30})
        widget = bind(task)
        try:
            if has_progress:
                await eventually(lambda: widget.eta is not None, timeout=WAIT, what="an ETA")
                assert widget.eta > task.started and widget.progress is not None
            else:
                await eventually(lambda: widget.task_id != "", timeout=WAIT, what="the task id")
                assert widget.progress is None and widget.eta is None  # the front end draws an activity bar
        finally:
            await task.cancel()
        await eventually(lambda: widget.done, timeout=WAIT, what="the end")
        assert widget.eta is None


@pytest.mark.parametrize("bad", HOSTILE)
def test_a_board_as_a_static_table_is_escaped_and_bounded(bad):
    row = {"tool": bad, "server": bad, "status": "error", "message": bad, "task_id": bad, "args": bad}
    rows = [{**row, "started": 1.0, "finished": 3.5}, {**row, "status": "working", "started": 1.0, "live": True}]
    markup = assert_safe(views_html.board_html(rows))
    assert markup.text.count(bad) == 10 and "tool error" in markup.text and "2.5 s" in markup.text
    assert "running" in markup.text
    many = Markup(views_html.board_html([rows[0]] * (views_html.BOARD_ROWS + 7)))
    assert [t for t, _ in many.tags].count("tr") == views_html.BOARD_ROWS + 1  # the head and the rows shown
    assert "7 more tasks not shown" in many.text
