"""BatchWidget follows a real batch (``client.map`` on the demo server): one view, its updates
coalesced, Cancel all from the browser's message. No kernel: ipywidgets' dummy comm is counted."""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest

from mcp_tasks_jupyter.jupyter.batch_display import summary_line
from mcp_tasks_jupyter.jupyter.widgets.batch_widget import UPDATE_INTERVAL, BatchWidget
from tests.support import eventually

from .conftest import HOSTILE, WAIT
from .test_widgets import click_cancel

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]


async def test_one_widget_follows_the_whole_batch_with_coalesced_updates(demo, count_updates):
    rows = [{"topic": f"t{i}", "stage_seconds": 0.05} for i in range(12)]
    batch = await demo.map("research", rows, limit=4)
    widget = BatchWidget(batch)
    updates = count_updates(widget)
    assert (widget.tool, widget.server, widget.total, widget.limit) == ("research", "demo", 12, 4)
    assert widget.counts == {"queued": 8, "working": 4} and widget.ended == 0 and not widget.done
    assert summary_line(batch) == "research on demo: 12 tasks…"
    await asyncio.wait_for(batch.gather(), WAIT)
    await eventually(lambda: widget.done, timeout=WAIT, what="the final state")
    assert widget.counts == {"completed": 12} and widget.ended == 12 and widget.fraction == 1.0
    assert widget.finished is not None and widget.failed == []
    assert len(widget.slowest) == 5 and all(t["finished"] is not None for t in widget.slowest)
    durations = [t["finished"] - t["started"] for t in widget.slowest]
    # slowest first (the widget rounds each time to 1 ms, so two durations within 2 ms may swap)
    assert all(a >= b - 0.002 for a, b in itertools.pairwise(durations))
    assert summary_line(batch) == "research on demo: 12 tasks — 12 completed"
    # coalesced: every update went through the view's coalescer (test_coalesce.py), not one per task change
    assert 1 <= len(updates) <= widget.flushes
    json.dumps([m["state"] for m in updates.messages])
    sent = len(updates)
    await asyncio.sleep(3 * UPDATE_INTERVAL)
    assert len(updates) == sent  # nothing after the end


async def test_failed_tasks_are_listed_with_the_servers_words_escaped_nowhere(demo):
    rows = [{"seconds": 0, "mode": "protocol_error", "message": HOSTILE[0]}, {"seconds": 0, "label": "ok"}]
    batch = await demo.map("failing_job", rows[:1], limit=1)
    widget = BatchWidget(batch)
    await asyncio.wait_for(batch.gather(return_exceptions=True), WAIT)
    await eventually(lambda: widget.done, timeout=WAIT, what="the final state")
    (failed,) = widget.failed
    assert failed["index"] == 0 and failed["status"] == "failed" and HOSTILE[0] in failed["error"]
    assert failed["label"].startswith("seconds=0 mode=protocol_error")


async def test_secrets_in_arguments_never_reach_the_view(demo):
    # The tools check argument names now (no made-up "api_token"): a registered secret as a value.
    from mcp_tasks_jupyter.redact import register

    register("hunter2-the-secret")
    batch = await demo.map("slow_compute", [{"seconds": 0, "steps": 1, "label": "hunter2-the-secret"}])
    widget = BatchWidget(batch)
    await asyncio.wait_for(batch.gather(), WAIT)
    await eventually(lambda: widget.done, timeout=WAIT, what="the final state")
    assert "hunter2" not in json.dumps(widget.slowest) and "label=***" in widget.slowest[0]["label"]


async def test_cancel_all_from_the_browser(demo):
    batch = await demo.map("slow_compute", [{"seconds": 30, "steps": 3}] * 5, limit=2)
    widget = BatchWidget(batch)
    await eventually(lambda: all(h.task_id for h in batch[:2]), timeout=WAIT, what="two tasks created")
    click_cancel(widget)
    assert widget.cancelling
    await asyncio.wait_for(batch.gather(return_exceptions=True), WAIT)
    await eventually(lambda: widget.done, timeout=WAIT, what="the final state")
    assert widget.counts == {"cancelled": 5} and not widget.cancelling and widget.failed == []
    assert all(h.task_id is None for h in batch[2:])  # the queued ones were never sent
