"""What a notebook run by nbclient (as papermill and nbconvert --execute do) saves: a board shown
before its tasks ran and a handle shown again while it ran both end in their tasks' final state, and
the board's saved table holds the history rows only when its history toggle was on (marked so)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tests.jupyter.kernel_harness import CELL_TIMEOUT, DEMO_COMMAND, kernel_env

WIDGET = "application/vnd.jupyter.widget-view+json"


def run_notebook(home: Path, cells: list[str]) -> nbformat.NotebookNode:
    """Run ``cells`` in a fresh kernel whose task index lives in ``home``; the notebook as saved."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    NotebookClient(
        nb, timeout=CELL_TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(home)}}
    ).execute(env=kernel_env(home))
    path = home / "saved.ipynb"
    nbformat.write(nb, path)
    return nbformat.read(path, as_version=4)


def test_a_board_and_a_handle_shown_while_tasks_run_are_saved_finished(tmp_path: Path) -> None:
    load, connect = "%load_ext mcp_tasks_jupyter", f"%mcp_connect demo {DEMO_COMMAND}"
    # An earlier kernel leaves a task in the index: history for the next one.
    run_notebook(
        tmp_path, [load, connect, "e = %mcp_task --wait demo:slow_compute seconds=0.1 steps=1 label=earlier"]
    )
    saved = run_notebook(
        tmp_path,
        [
            load,
            connect,
            "%mcp_tasks",  # the board, before any task of this kernel
            "%mcp_tasks --history",  # the same with the history shown
            "h = %mcp_task demo:slow_compute seconds=1 steps=5 label=late",
            "h",  # the handle shown again while it runs
            "batch = %mcp_map demo:slow_compute --over [{'seconds': 0.5, 'label': f'b{i}'} for i in range(3)]",
            # The last cell ends as the last task ends: nothing runs after it.
            "import mcp_tasks_jupyter as mtj\n_ = await mtj.gather(h, *batch)",
        ],
    )
    board, with_history, _, again, batch = (saved.cells[i].outputs for i in (2, 3, 4, 5, 6))
    assert len(board) == 1 and WIDGET in board[0].data
    html = board[0].data["text/html"]
    assert "late" in html  # this kernel's task, which joined the board after it was shown
    assert html.count(">completed</span>") == 4 and "running" not in html, html
    assert "earlier" not in html, "an earlier kernel's task sits in a board whose history was off"

    html = with_history[0].data["text/html"]
    assert html.count(">completed</span>") == 5 and "running" not in html, html
    assert "history: earlier kernel" in html, html

    assert len(again) == 1 and WIDGET in again[0].data, "a running handle shown again is its live view"
    assert again[0].data["text/plain"] == (
        "slow_compute label=late seconds=1 steps=5 on demo: completed — late: done in 5 steps, value=55"
    )
    assert [o.data["text/plain"] for o in batch] == ["slow_compute on demo: 3 tasks — 3 completed"]

    # The widget state saved with the notebook (what a reopened notebook draws) is the final one too.
    state = saved.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    for output in (board[0], batch[0], again[0]):
        model = state[output.data[WIDGET]["model_id"]]["state"]
        if "rows" in model:
            assert {row["status"] for row in model["rows"] if row["live"]} == {"completed"}, model["rows"]
        else:
            assert model["done"] is True, model
