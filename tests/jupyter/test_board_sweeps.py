"""The board shows the task index's sweeps and one sweep's items a page at a time (issue 33 item 2): the
widget's state, read from a real SQLite index whose sweep has 250 items in several states."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from mcp_tasks_jupyter.index import sweeps as store
from mcp_tasks_jupyter.index.task_index import TaskIndex
from mcp_tasks_jupyter.jupyter.widgets import BoardWidget
from mcp_tasks_jupyter.jupyter.widgets.board_widget import SWEEP_PAGE
from mcp_tasks_jupyter.running.sweep import store_of

pytestmark = pytest.mark.anyio
SIZE = 250


async def recorded_sweep(index: TaskIndex) -> str:
    """A sweep of ``SIZE`` items: 100 ended (one of them sent again), 20 going, the rest queued."""
    now = time.time()
    row = store.SweepRow(
        id="abc123def456", server_name="demo", target="http://x/mcp", tool="slow_compute", items_key="k",
        total=SIZE, limit=8, ttl_ms=None, notebook=None, out_var=None, created_at=now, updated_at=now,
        finished_at=None,
    )  # fmt: skip
    secret = store.kept_arguments({"api_key": "sk-live-0123456789"}, index.key)["api_key"]
    items = [(json.dumps({"label": f"i{i}", "api_key": secret}), f"k{i}") for i in range(SIZE)]
    sweeps, owner = store_of(index), store.new_owner()
    await sweeps.call(store.record_sweep, row, items, owner)
    await sweeps.call(store.claim, row.id, owner, list(range(120)))
    ended = [(i, {"state": "ended", "task_id": f"t{i}", "status": "completed"}) for i in range(100)]
    await sweeps.call(store.mark, row.id, owner, [*ended, (7, {"note": "sent again: the server lost it"})])
    return row.id


async def test_the_board_lists_sweeps_and_pages_one_sweep_s_items(tmp_path: Path) -> None:
    index = TaskIndex(tmp_path / "tasks.sqlite3")
    sweep = await recorded_sweep(index)
    board = BoardWidget([])
    await board.load_sweeps(index)
    [entry] = board.sweeps
    assert (entry["id"], entry["tool"], entry["server"], entry["total"]) == (sweep, "slow_compute", "demo", SIZE)
    assert entry["counts"] == {"ended": 100, "going": 20, "queued": 130} and entry["sent_again"] == 1
    assert entry["finished"] is False
    # the first page: SWEEP_PAGE items in order, with the whole sweep's counts
    await board.open_sweep(sweep[:6])
    page = board.sweep_page
    assert page["id"] == sweep and page["offset"] == 0 and page["counts"] == entry["counts"]
    assert [item["position"] for item in page["items"]] == list(range(SWEEP_PAGE))
    first, again = page["items"][0], page["items"][7]
    assert first["label"].startswith("label=i0") and first["state"] == "ended" and first["task_id"] == "t0"
    assert again["note"] == "sent again: the server lost it"
    assert all("sk-live" not in json.dumps(item) for item in page["items"])  # the secret only as its hash
    # the last page holds what is left; nothing beyond is asked
    await board.open_sweep(sweep, 200)
    assert [item["position"] for item in board.sweep_page["items"]] == list(range(200, SIZE))
    assert {item["state"] for item in board.sweep_page["items"]} == {"queued"}
    await board.open_sweep(None)
    assert board.sweep_page == {}
    await board.open_sweep("nothing")
    assert "no sweep 'nothing'" in board.error
    board.close()
