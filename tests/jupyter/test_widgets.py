"""TaskWidget and BoardWidget follow real tasks on the demo server, with their updates coalesced.

No kernel here: ipywidgets falls back to a dummy comm, whose ``send`` we count.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.jupyter.widgets import BoardWidget, TaskWidget, bind
from mcp_tasks_jupyter.jupyter.widgets.board_widget import BOARD_INTERVAL
from mcp_tasks_jupyter.jupyter.widgets.task_widget import UPDATE_INTERVAL
from mcp_tasks_jupyter.tasks.control import control_of
from tests.support import eventually

from .conftest import HOSTILE, WAIT, demo_client

pytestmark = pytest.mark.anyio


def click_cancel(widget: Any, **content: Any) -> None:
    """What the browser's Cancel button does: a custom comm message, handled as ipywidgets does."""
    widget._handle_msg(
        {"content": {"data": {"method": "custom", "content": {"type": "cancel", **content}}}, "buffers": []}
    )


async def test_widget_follows_a_task_to_its_result(demo, count_updates):
    task = await demo.start_task("slow_compute", {"seconds": 1.0, "steps": 5, "label": "sq"}, ttl=60_000)
    widget = bind(task)
    updates = count_updates(widget)
    assert isinstance(widget, TaskWidget) and (widget.tool, widget.server) == ("slow_compute", "demo")
    assert widget.started == task.started and widget.ttl_ms == 60_000 and not widget.done
    await eventually(
        lambda: widget.progress is not None and widget.progress[0] >= 2,
        timeout=WAIT,
        what="progress in the widget",
    )
    assert widget.status == "working" and widget.progress[1] == 5 and widget.status_message.startswith("step ")
    assert widget.poll_interval_ms == 100 and widget.created is not None and widget.finished is None
    assert widget.result is None and not widget.error
    await asyncio.wait_for(task, WAIT)
    # The final state is sent at once, from the handle's own change callback.
    assert widget.done and widget.status == "completed" and widget.finished == task.finished
    assert widget.progress == [5.0, 5.0, task.progress.message]
    assert widget.status_message == task.status_message
    blocks = widget.result["blocks"]
    assert blocks == [{"kind": "text", "text": "sq: done in 5 steps, value=55", "cut": 0}]
    assert widget.result["structured"]["kind"] == "tree"
    assert widget.log_count == len(task.logs) > 0 and widget.logs[-1].startswith("info demo: sq: step 5/5")
    sent = len(updates)
    # every update went through the view's coalescer (whose pacing tests/jupyter/test_coalesce.py holds)
    assert 1 <= sent <= widget.flushes
    json.dumps([m["state"] for m in updates.messages])  # everything sent is plain JSON
    await asyncio.sleep(3 * UPDATE_INTERVAL)
    assert len(updates) == sent  # nothing after the end: unsubscribed
    assert task._s.callbacks == []  # unsubscribed from the handle too
    assert widget._repr_mimebundle_()[0]["text/plain"] == "<TaskHandle slow_compute on demo: completed>"


async def test_widget_shows_a_chart_as_image_and_structured_content(demo):
    task = await demo.start_task("make_chart", {"values": [3, 1, 2], "title": HOSTILE[0], "seconds": 0.1})
    widget = bind(task)
    await asyncio.wait_for(task, WAIT)
    kinds = [b["kind"] for b in widget.result["blocks"]]
    assert kinds == ["image", "text"] and widget.result["blocks"][0]["mime"] == "image/png"
    structured = widget.result["structured"]
    assert structured["kind"] == "tree"
    assert ["title", {"t": "v", "v": HOSTILE[0], "cut": 0}] in structured["node"]["items"]


async def test_widget_shows_the_servers_words_when_a_task_fails(demo):
    tool_error = await demo.start_task("failing_job", {"seconds": 0.2, "message": "disk full"})
    protocol_error = await demo.start_task(
        "failing_job", {"seconds": 0.2, "mode": "protocol_error", "message": "backend down"}
    )
    first, second = bind(tool_error), bind(protocol_error)
    await asyncio.wait_for(tool_error, WAIT)
    with pytest.raises(mtj.TaskFailed):
        await asyncio.wait_for(protocol_error, WAIT)
    await eventually(lambda: second.done, timeout=WAIT, what="the failure in the widget")
    # A tool error shows as one (the server's word is kept beside it), a protocol error as a failure.
    assert tool_error.status == "error" and tool_error.server_status == "failed"
    assert (
        first.status == "error" and first.result["is_error"] and first.result["blocks"][0]["text"] == "disk full"
    )
    assert second.status == "failed" and second.error == "backend down" and second.result is None


async def test_cancel_button_cancels_the_task(demo, count_updates):
    task = await demo.start_task("slow_compute", {"seconds": 30, "steps": 30})
    widget = bind(task)
    updates = count_updates(widget)
    await eventually(lambda: bool(widget.status_message), timeout=WAIT, what="a running task")
    calls = []
    real_cancel = demo.dialect.cancel

    async def counting_cancel(task_id: str) -> Any:
        calls.append(task_id)
        return await real_cancel(task_id)

    demo.dialect.cancel = counting_cancel
    await asyncio.sleep(2 * UPDATE_INTERVAL)  # no update pending: the click's shows at once
    click_cancel(widget)
    click_cancel(widget)  # a second click while cancelling does nothing
    with pytest.raises(mtj.TaskCancelled):
        await asyncio.wait_for(task, WAIT)
    await eventually(lambda: widget.done, timeout=WAIT, what="the end in the widget")
    assert calls == [task.task_id]
    assert any(m["state"].get("cancelling") is True for m in updates.messages)  # the button was disabled
    assert widget.status == "cancelled" and not widget.cancelling and not widget.cancel_error
    assert "cancel" in widget.error.lower()
    click_cancel(widget)  # after the end: nothing happens, nothing breaks
    assert calls == [task.task_id]


async def test_a_failed_cancel_shows_in_the_widget(demo):
    task = await demo.start_task("slow_compute", {"seconds": 30, "steps": 30})
    widget = bind(task)

    async def broken_cancel(task_id: str) -> None:
        raise mtj.ConnectionFailed("the line is down", server=demo.name)

    demo.dialect.cancel = broken_cancel
    click_cancel(widget)
    await eventually(lambda: bool(widget.cancel_error), timeout=WAIT, what="the cancel error")
    assert "the line is down" in widget.cancel_error and not widget.cancelling and not widget.done
    del demo.dialect.cancel
    click_cancel(widget)  # the button works again
    with pytest.raises(mtj.TaskCancelled):
        await asyncio.wait_for(task, WAIT)


async def test_widget_shows_a_pending_question():
    release = asyncio.Event()

    async def answer(params: dict) -> dict:
        await release.wait()
        return {"action": "accept", "content": {"interpretation": "tides (history)"}}

    async with demo_client("--poll-interval", "100", elicitation_handler=answer) as client:
        task = await client.start_task("research", {"topic": "tides", "ambiguous": True, "stage_seconds": 0.1})
        widget = bind(task)
        await eventually(lambda: bool(widget.pending), timeout=WAIT, what="the question in the widget")
        assert "tides" in widget.pending[0] and widget.status == "input_required"
        release.set()
        await asyncio.wait_for(task, WAIT)
        assert widget.pending == [] and widget.status == "completed"


@pytest.mark.parametrize("dialect", ["auto", "2025-11-25", "ext", "sep1686"])
async def test_widget_follows_a_task_in_every_dialect(dialect):
    async with demo_client("--poll-interval", "100", dialect=("--dialect", dialect)) as client:
        task = await client.start_task("slow_compute", {"seconds": 0.4, "steps": 2, "label": "sq"})
        widget = bind(task)
        await asyncio.wait_for(task, WAIT)
        assert widget.done and (widget.status, widget.status_message) == (task.status, task.status_message or "")
        assert widget.result["blocks"][0]["text"] == "sq: done in 2 steps, value=5"
        assert widget.progress == (
            None if task.progress is None else [task.progress.progress, task.progress.total, task.progress.message]
        )


# -- throttling -----------------------------------------------------------------------------------


async def test_a_fast_real_task_sends_at_most_ten_updates_a_second(count_updates):
    async with demo_client("--poll-interval", "100") as client:
        changes = 0

        def seen(_: Any) -> None:
            nonlocal changes
            changes += 1

        task = await client.start_task("slow_compute", {"seconds": 2.0, "steps": 500})
        task.on_change(seen)
        start = time.monotonic()
        widget = bind(task)
        updates = count_updates(widget)
        await asyncio.wait_for(task, WAIT)
        took = time.monotonic() - start
        assert changes >= 500
        assert len(updates) <= took * 10 + 2, (len(updates), took)
        assert widget.done and widget.progress == [500.0, 500.0, task.progress.message]
        assert widget.status_message == task.status_message and widget.logs[-1].endswith("step 500/500 done")


async def test_500_changes_over_two_seconds_are_coalesced_and_the_last_one_is_exact(demo, count_updates):
    task = await demo.start_task("slow_compute", {"seconds": 60, "steps": 1})
    await eventually(lambda: bool(task.status_message), timeout=WAIT, what="the task running")
    widget = bind(task)
    updates = count_updates(widget)
    start = time.monotonic()
    for i in range(1, 501):
        control_of(task).progress_reported(
            {"progress": i, "total": 500, "message": f"p{i}"}
        )  # as notifications arrive
        await asyncio.sleep(0.004)
    await asyncio.sleep(2 * UPDATE_INTERVAL)
    took = time.monotonic() - start
    assert widget.progress == [500.0, 500.0, "p500"]
    assert len(updates) <= took * 10 + 2, (len(updates), took)
    assert len(updates) >= took * 10 * 0.5  # it does keep the view moving meanwhile
    await task.cancel()
    with pytest.raises(mtj.TaskCancelled):
        await asyncio.wait_for(task, WAIT)
    assert widget.status == "cancelled" and widget.done


async def test_a_burst_in_one_tick_is_one_message(demo, count_updates):
    task = await demo.start_task("slow_compute", {"seconds": 60, "steps": 1})
    widget = bind(task)
    updates = count_updates(widget)
    await asyncio.sleep(2 * UPDATE_INTERVAL)
    before = len(updates)
    for i in range(1000):
        control_of(task).progress_reported({"progress": i, "total": 1000})
    await asyncio.sleep(2 * UPDATE_INTERVAL)
    assert len(updates) == before + 1 and widget.progress == [999.0, 1000.0, None]
    await task.cancel()


# -- the board ------------------------------------------------------------------------------------


async def test_board_follows_500_tasks_with_a_few_messages_a_second(count_updates):
    async with demo_client("--poll-interval", "60000") as client:
        tasks = [
            await client.start_task("slow_compute", {"seconds": 1.5, "steps": 3, "label": f"t{i}"})
            for i in range(500)
        ]
        start = time.monotonic()
        board = BoardWidget(tasks)
        updates = count_updates(board)
        assert len(board.rows) == 500 and board.total == 500
        await asyncio.wait_for(asyncio.gather(*(t.wait() for t in tasks)), 60)
        await asyncio.sleep(2 * BOARD_INTERVAL)
        took = time.monotonic() - start
        assert len(updates) <= took / BOARD_INTERVAL + 2, (len(updates), took)
        assert all(row["status"] == "completed" and row["finished"] is not None for row in board.rows)
        assert [row["progress"] for row in board.rows] == [3.0] * 500
        biggest = max(len(json.dumps(m["state"])) for m in updates.messages)
        assert biggest < 170_000, biggest  # compact rows: ~ 250 bytes a task, the arguments label included


async def test_board_filters_by_server_and_status_and_cancels_a_row(demo):
    async with demo_client("--poll-interval", "100", name="other") as other:
        short = await demo.start_task("slow_compute", {"seconds": 0.3, "steps": 2})
        long = await demo.start_task("slow_compute", {"seconds": 30, "steps": 30})
        elsewhere = await other.start_task("slow_compute", {"seconds": 0.3, "steps": 2})
        tasks = [short, long, elsewhere]
        by_server = BoardWidget(tasks, server="demo")
        working = BoardWidget(tasks, status="working")
        assert [row["key"] for row in by_server.rows] == [0, 1] and len(working.rows) == 3
        await asyncio.wait_for(asyncio.gather(short, elsewhere), WAIT)
        await eventually(
            lambda: [row["key"] for row in working.rows] == [1], timeout=WAIT, what="finished rows gone"
        )
        click_cancel(working, key=1)
        with pytest.raises(mtj.TaskCancelled):
            await asyncio.wait_for(long, WAIT)
        await eventually(
            lambda: working.rows == [] and by_server.rows[1]["status"] == "cancelled",
            timeout=WAIT,
            what="the cancelled row",
        )
        assert repr(by_server) == "<BoardWidget of 3 tasks server=demo>"
