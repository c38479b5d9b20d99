"""The task board (``%mcp_tasks``): 1,000 rows stay compact, and live handles, this notebook's task
index records and the server's ``tasks/list`` merge into one row per (server, task id).

Filtering, sorting and paging happen in the browser (``labextension/src/widgets/board.ts``) on the rows sent.
No kernel here: ipywidgets falls back to a dummy comm, whose ``send`` we count.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import shutil
import subprocess
import time
from typing import Any

import pytest

from mcp_tasks_jupyter.index.task_index import TaskIndex
from mcp_tasks_jupyter.jupyter.display import make_board
from mcp_tasks_jupyter.jupyter.runtime import Runtime
from mcp_tasks_jupyter.jupyter.widgets import BoardWidget, board_widget
from mcp_tasks_jupyter.jupyter.widgets.board_widget import BOARD_INTERVAL, ROWS_MESSAGE
from tests.support import demo_stdio_argv, eventually

from .conftest import DIALECT, WAIT, demo_client

pytestmark = pytest.mark.anyio

ROOT = pathlib.Path(__file__).parents[2]
# The board's front end: the widget module and its parts (rows, controls, table).
WIDGETS = ROOT / "labextension" / "src" / "widgets"
SOURCES = [WIDGETS / f"{name}.ts" for name in ("board", "boardrows", "boardcontrols", "boardtable")]
BUNDLE = ROOT / "mcp_tasks_jupyter" / "jupyter" / "widgets" / "static" / "board.js"


def payload(message: dict[str, Any]) -> int:
    return len(json.dumps(message["state"]))


async def test_1000_tasks_stay_compact_and_a_burst_of_1000_rows_is_one_update(count_updates):
    async with demo_client("--poll-interval", "60000") as client:
        tasks = []
        for chunk in range(10):
            tasks += await asyncio.gather(
                *(
                    client.start_task("slow_compute", {"seconds": 0.5, "steps": 2, "label": f"t{chunk}-{i}"})
                    for i in range(100)
                )
            )
        start = time.monotonic()
        board = BoardWidget(tasks)
        updates = count_updates(board)
        assert len(board.rows) == 1000 and board.total == 1000
        # named fields (view.board_row): ~280 bytes a row, the arguments' label ("args") included
        assert len(json.dumps(board.rows)) < 340_000
        await asyncio.wait_for(asyncio.gather(*(t.wait() for t in tasks)), 120)
        await asyncio.sleep(2 * BOARD_INTERVAL)
        took = time.monotonic() - start
        assert len(updates) <= took / BOARD_INTERVAL + 2, (len(updates), took)
        assert all(
            row["status"] == "completed" and row["finished"] is not None and row["live"] for row in board.rows
        )
        biggest = max(payload(m) for m in updates.messages)
        assert biggest < 340_000, biggest

        # 1,000 more rows in one burst (as a tasks/list answer brings them): one message, still compact.
        before = len(updates)
        for i in range(1000):
            board.add_static(
                tool=None,
                server="demo",
                status="working",
                message=f"listed {i}",
                task_id=f"listed-{i:04d}",
                created_at="2026-01-01T00:00:00+00:00",
            )
        await asyncio.sleep(2 * BOARD_INTERVAL)
        assert len(updates) == before + 1
        assert len(board.rows) == 2000 and board.total == 2000
        assert payload(updates.messages[-1]) < 600_000  # 2,000 rows: < 300 bytes a row
        first_static = board.rows[1000]
        assert [first_static[k] for k in ("key", "tool", "server", "status")] == [-1, "?", "demo", "working"]
        assert first_static["live"] is False


def replay(start: list[dict[str, Any]], sent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows a browser holds after ``sent``, from ``start``: a state update replaces them all, a
    rows message replaces the rows it carries (by key), as ``board.ts`` does."""
    rows = [dict(row) for row in start]
    for message in sent:
        if message["method"] == "update" and "rows" in message["state"]:
            rows = [dict(row) for row in message["state"]["rows"]]
        elif message["method"] == "custom" and message["content"].get("type") == ROWS_MESSAGE:
            at = {row["key"]: i for i, row in enumerate(rows)}
            for change in message["content"]["rows"]:
                rows[at[change["key"]]].update(change)
    return rows


async def test_while_the_rows_stay_the_same_ones_only_those_that_changed_are_sent(count_updates, monkeypatch):
    async with demo_client("--poll-interval", "100") as client:
        tasks = [
            # the first changes every 0.25 s (a board's interval), the others every second
            await client.start_task("slow_compute", {"seconds": s, "steps": n, "label": f"t{i}"})
            for i, (s, n) in enumerate(((1.5, 6), (6.0, 6), (6.0, 6)))
        ]
        board = BoardWidget(tasks)
        start = json.loads(json.dumps(board.rows))
        updates = count_updates(board)
        await eventually(lambda: tasks[0].done(), timeout=WAIT, what="the first task's end")
        await asyncio.sleep(2 * BOARD_INTERVAL)
        running = list(updates.sent)
        # While the three rows stay on the board, only rows that changed go, one message a flush:
        # never every row, and no state update carrying rows.
        deltas = [m["content"] for m in running if m["method"] == "custom"]
        assert len(deltas) >= 3, running
        assert all(m["type"] == ROWS_MESSAGE and 1 <= len(m["rows"]) <= 3 for m in deltas)
        assert any(len(m["rows"]) < 3 for m in deltas)
        # ... and of a row only its key and what changed (a tick: the progress and the message)
        assert all("tool" not in row and "args" not in row for m in deltas for row in m["rows"])
        assert not [m for m in running if m["method"] == "update" and "rows" in m["state"]]
        # ... the first task's end among them; the kernel's state is current all along.
        assert any(row["key"] == 0 and row.get("status") == "completed" for m in deltas for row in m["rows"])
        assert replay(start, running) == board.rows == board.get_state()["rows"]

        # A row's changes are sent whole at least every FULL_EVERY_S (what a notebook saved meanwhile keeps).
        monkeypatch.setattr(board_widget, "FULL_EVERY_S", 0.3)
        await asyncio.sleep(1.0)
        assert [m for m in updates.sent[len(running) :] if m["method"] == "update" and "rows" in m["state"]]

        # When the last task ends every row goes in a state update (nbclient and papermill save those).
        await asyncio.wait_for(asyncio.gather(*(t.wait() for t in tasks)), WAIT)
        await asyncio.sleep(2 * BOARD_INTERVAL)
        last = updates.sent[-1]
        assert last["method"] == "update"
        assert [row["status"] for row in last["state"]["rows"]] == ["completed"] * 3
        assert replay(start, updates.sent) == board.rows
        board.close()


async def test_board_merges_live_handles_index_records_and_tasks_list(index_location):
    runtime = Runtime()
    runtime.index = TaskIndex(index_location)
    client = await runtime.connect("demo", demo_stdio_argv(*DIALECT, "--poll-interval", "100"))
    try:
        assert client.dialect.supports_list and client.index is runtime.index
        live = await runtime.start_task("demo", "slow_compute", {"seconds": 30, "steps": 30})
        done = await runtime.start_task("demo", "slow_compute", {"seconds": 0.1, "steps": 1})
        await asyncio.wait_for(done, WAIT)
        # Started by this client but not followed by the runtime: as if from an earlier kernel.
        earlier = await client.start_task("slow_compute", {"seconds": 30, "steps": 30, "label": "earlier"})
        # Not recorded anywhere: only the server's tasks/list knows it.
        client.index = None
        hidden = await client.start_task("slow_compute", {"seconds": 30, "steps": 30, "label": "hidden"})
        client.index = runtime.index
        # Finished in an earlier kernel (the server has forgotten it), and one of another notebook.
        runtime.index.add(
            client.identity,
            "old_tool",
            {},
            task_id="gone-1",
            status="completed",
            status_message="done long ago",
            created_at="2026-01-01T00:00:00+00:00",
        )
        runtime.index.add(
            client.identity, "not_mine", {}, task_id="other-1", status="completed", notebook="other.ipynb"
        )
        for handle in (live, done, earlier):
            await eventually(lambda h=handle: h.task_id is not None, timeout=WAIT, what="a task id")

        board = make_board(runtime=runtime, server="demo", status="working")
        assert (board.select_server, board.select_status) == ("demo", "working")
        assert board.filter_server is None and board.filter_status is None  # the browser filters
        assert len(board.jobs) == 1
        await asyncio.wait_for(asyncio.gather(*board.jobs), WAIT)
        await eventually(lambda: len(board.rows) == 6, timeout=WAIT, what="the listed rows")
        by_id = {row["task_id"]: row for row in board.rows}
        assert len(by_id) == 6 and {row["server"] for row in board.rows} == {"demo"}

        def fields(task_id, *names):
            return [by_id[task_id][name] for name in names]

        assert fields(live.task_id, "tool", "server", "status", "live") == [
            "slow_compute",
            "demo",
            "working",
            True,
        ]
        assert fields(done.task_id, "status", "live") == ["completed", True]
        assert fields(earlier.task_id, "tool", "live") == ["slow_compute", False]
        assert fields(hidden.task_id, "tool", "server", "status", "live") == ["?", "demo", "working", False]
        assert fields("gone-1", "tool", "server", "status", "message") == [
            "old_tool",
            "demo",
            "completed",
            "done long ago",
        ]
        # History rows say where they come from; the browser shows them only behind its toggle.
        assert [by_id[i].get("origin", "") for i in ("gone-1", "other-1", hidden.task_id, live.task_id)] == [
            "earlier kernel",
            "other.ipynb",
            "the server's list",
            "",
        ]
        assert by_id[earlier.task_id]["args"] == "label=earlier seconds=30 steps=30"  # as the index keeps them
        assert by_id[live.task_id]["args"] == "seconds=30 steps=30"
        assert board.show_history is False
        assert [row["key"] for row in board.rows][:2] == [0, 1] and all(row["key"] < 0 for row in board.rows[2:])
        assert board.total == 6 and board.note == ""
        # Static rows never tick and cannot be cancelled from the board.
        assert by_id[hidden.task_id]["finished"] is None and by_id["gone-1"]["started"] is not None

        # A failing tasks/list is a note on the board, never an exception.
        async def broken() -> list[Any]:
            raise RuntimeError("boom\nsecond line")

        client.list_tasks = broken
        failing = make_board(runtime=runtime)
        await asyncio.wait_for(asyncio.gather(*failing.jobs), WAIT)
        assert failing.note == "tasks/list on demo failed: boom second line"
        assert len(failing.rows) == 5  # live handles and index records are still there
        del client.list_tasks

        # Without tasks/list support only handles and index records are shown, and nothing is spawned.
        client.dialect.supports_list = False
        quiet = make_board(runtime=runtime)
        assert quiet.jobs == [] and len(quiet.rows) == 5
        client.dialect.supports_list = True
        for widget in (board, failing, quiet):
            widget.close()
    finally:
        await runtime.aclose()
        runtime.index.close()


async def test_a_history_row_keeps_the_arguments_order_and_shows_how_long_it_took(index_location):
    # issue 30, item 6: a row of an earlier kernel listed its arguments sorted and no elapsed time.
    runtime = Runtime()
    runtime.index = TaskIndex(index_location)
    client = await runtime.connect("demo", demo_stdio_argv(*DIALECT, "--poll-interval", "100"))
    try:
        arguments = {"topic": "tides", "depth": 2, "ambiguous": False}
        row = runtime.index.add(client.identity, "research", arguments, task_id="old-1", started_at=1000.0)
        assert row is not None
        runtime.index.update(row, task_id="old-1", status="completed", status_message="done", finished_at=1012.5)
        await eventually(
            lambda: any(r.status == "completed" for r in runtime.index.records(client.target)),
            timeout=WAIT,
            what="the record written",
        )
        board = make_board(runtime=runtime, listing=False, history=True)
        (history,) = [r for r in board.rows if r["task_id"] == "old-1"]
        assert history["args"] == "topic=tides depth=2 ambiguous=false"  # as given, not sorted
        assert (history["started"], history["finished"]) == (1000.0, 1012.5)
        assert "12.5 s" in board.saved_html() and "topic=tides depth=2" in board.saved_html()
        board.close()
    finally:
        await runtime.aclose()
        runtime.index.close()


def test_the_board_front_end_sets_text_only_and_filters_sorts_and_pages_itself():
    source = "\n".join(path.read_text() for path in SOURCES)
    for code in (source, BUNDLE.read_text()):
        assert "innerHTML" not in code and "outerHTML" not in code and "insertAdjacentHTML" not in code
    for needed in (
        "h('input'",
        "h('select'",
        "aria-sort",
        "rows ${first + 1}",
        "const PAGE = 50",
        "model.get('select_status')",
        "model.get('select_server')",
    ):
        assert needed in source, needed
    # Only cancelling talks to the kernel (one row, the selected rows, every running one), and asking for a
    # page of a sweep's items (issue 33: the kernel reads it from the task index).
    assert source.count("model.send(") == 4 and all(
        f"type: '{kind}'" in source for kind in ("cancel", "cancel_running", "sweep")
    )


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_board_front_end_parses(tmp_path):
    module = tmp_path / "board.mjs"
    module.write_text(BUNDLE.read_text())
    subprocess.run(["node", "--check", str(module)], check=True, timeout=60)


async def test_a_board_on_screen_picks_up_new_tasks_and_cancels_many(tmp_path):
    runtime = Runtime()
    runtime.index = TaskIndex(tmp_path / "tasks.sqlite3")
    await runtime.connect("demo", demo_stdio_argv(*DIALECT, "--poll-interval", "100"))
    try:
        first = await runtime.start_task("demo", "slow_compute", {"seconds": 30, "label": "first"})
        board = make_board(runtime=runtime, listing=False)
        assert [row["args"] for row in board.rows] == ["label=first seconds=30"]
        later = [
            await runtime.start_task("demo", "slow_compute", {"seconds": 30, "label": f"later{i}"})
            for i in range(3)
        ]
        await eventually(lambda: len(board.rows) == 4, timeout=WAIT, what="the later tasks on the board")
        assert [row["args"].split()[0] for row in board.rows] == [
            "label=first",
            *(f"label=later{i}" for i in range(3)),
        ]
        # The selected rows (keys 1 and 3), then every running one; unknown keys are ignored.
        assert board.cancel_keys([1, 3, 99, -1, "x", True]) == 2
        await eventually(lambda: later[0].done() and later[2].done(), timeout=WAIT, what="the selected cancelled")
        assert not first.done() and not later[1].done()
        board._on_front_end_msg(board, {"type": "cancel_running"}, [])
        await eventually(lambda: first.done() and later[1].done(), timeout=WAIT, what="every running cancelled")
        assert {h.status for h in (first, *later)} == {"cancelled"}
        await eventually(
            lambda: [row["status"] for row in board.rows] == ["cancelled"] * 4, timeout=WAIT, what="the rows"
        )
        board.close()
        assert board.add not in runtime.on_track  # a closed board stops following
    finally:
        await runtime.aclose()
