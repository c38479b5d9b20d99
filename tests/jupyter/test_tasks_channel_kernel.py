"""The JupyterLab extension's tasks channel in a REAL kernel, driven as the browser drives it: the
kernel opens the comm when the library loads, a front-end that comes later opens its own and gets
a snapshot, updates name the cell that started each task, and Cancel from the sidebar cancels the
task on the server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_tasks_jupyter.jupyter.comm import TARGET, UPDATE_INTERVAL_S
from tests.jupyter.kernel_harness import Notebook, running_kernel

# 2025-11-25: progress notifications keep coming after the task is created (ext has none)
DEMO = "{sys.executable} -m mcp_tasks_jupyter.demo --poll-interval 100 --dialect 2025-11-25"


def channel_data(message: dict[str, Any], comm_id: str) -> dict[str, Any] | None:
    """The data of a channel message on ``comm_id`` (None for any other message)."""
    if message["msg_type"] not in ("comm_open", "comm_msg") or message["content"].get("comm_id") != comm_id:
        return None
    return message["content"]["data"]


def hold(held: dict[str, dict[str, Any]], data: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Apply one channel message to the tasks a front-end holds (as ``store.ts`` does: a snapshot's
    entries, an update's whole entries, its changes laid over those held); the entries it touched."""
    if data is None or data.get("type") not in ("snapshot", "update"):
        return []
    if data["type"] == "snapshot":
        held.clear()
    touched = [t["key"] for t in data["tasks"]]
    held.update({t["key"]: t for t in data["tasks"]})
    for change in data.get("changes", []):
        held[change["key"]] = {**held[change["key"]], **change}
        touched.append(change["key"])
    return [dict(held[key]) for key in touched]


def task_seen(nb: Notebook, comm_id: str, since: int, what: str, **expected: Any) -> dict[str, Any]:
    """The first task, as the front-end on ``comm_id`` holds it after a message from iopub message
    ``since`` on, with the ``expected`` fields."""
    held: dict[str, dict[str, Any]] = {}
    for message in nb.iopub[:since]:
        hold(held, channel_data(message, comm_id))
    found: list[dict[str, Any]] = []

    def fits(message: dict[str, Any]) -> bool:
        touched = hold(held, channel_data(message, comm_id))
        found.extend(t for t in touched if all(t.get(k) == v for k, v in expected.items()))
        return bool(found)

    nb.wait(fits, what=what, since=since)
    return found[0]


def open_from_frontend(nb: Notebook) -> tuple[str, int]:
    """Open a comm to the kernel's target as the extension does after a page reload."""
    comm_id = uuid.uuid4().hex
    mark = len(nb.iopub)
    nb.send_shell("comm_open", {"comm_id": comm_id, "target_name": TARGET, "data": {"type": "hello"}})
    return comm_id, mark


@pytest.fixture(scope="module")
def nb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Notebook]:
    with running_kernel(tmp_path_factory.mktemp("channel-kernel")) as kernel:
        notebook = Notebook(kernel)
        notebook.run("%load_ext mcp_tasks_jupyter", cell_id="cell-load")  # as JupyterLab sends it
        notebook.run(f"%mcp_connect demo {DEMO}")
        yield notebook


def kernel_comm(nb: Notebook) -> str:
    """The comm the kernel opened when the library loaded; it starts with an empty snapshot."""
    (opened,) = [m for m in nb.iopub if m["msg_type"] == "comm_open" and m["content"]["target_name"] == TARGET]
    assert opened["content"]["data"] == {"type": "snapshot", "tasks": []}
    return opened["content"]["comm_id"]


def test_the_kernel_opens_the_channel_and_tells_of_each_task_with_its_cell(nb: Notebook) -> None:
    comm_id = kernel_comm(nb)
    mark = len(nb.iopub)
    nb.run("h = %mcp_task demo:slow_compute seconds=0.6 steps=3", cell_id="cell-compute")
    working = task_seen(nb, comm_id, mark, "the task, working", tool="slow_compute", status="working")
    assert working["cell_id"] == "cell-compute" and working["server"] == "demo" and working["task_id"]
    assert working["finished"] is None and working["needs_input"] is False
    done = task_seen(nb, comm_id, mark, "the task, completed", key=working["key"], status="completed")
    assert done["finished"] >= done["started"] and done["progress"] == done["total"] == 3
    updates = [d for m in nb.iopub[mark:] if (d := channel_data(m, comm_id)) is not None]
    assert all(d["type"] == "update" and d["removed"] == [] for d in updates)


def test_a_frontend_that_comes_later_gets_a_snapshot(nb: Notebook) -> None:
    nb.run("done = await h")
    comm_id, mark = open_from_frontend(nb)
    snapshot = nb.wait(lambda m: channel_data(m, comm_id) is not None, what="the snapshot", since=mark)
    tasks = channel_data(snapshot, comm_id)["tasks"]  # type: ignore[index]
    assert snapshot["msg_type"] == "comm_msg" and [t["status"] for t in tasks] == ["completed"]
    assert tasks[0]["cell_id"] == "cell-compute"
    # asking again ("hello") gives it again
    mark = len(nb.iopub)
    nb.send_shell("comm_msg", {"comm_id": comm_id, "data": {"type": "hello"}})
    again = nb.wait(
        lambda m: (channel_data(m, comm_id) or {}).get("type") == "snapshot", since=mark, what="a second snapshot"
    )
    assert channel_data(again, comm_id)["tasks"] == tasks  # type: ignore[index]


def test_cancel_from_the_sidebar_cancels_the_task_on_the_server(nb: Notebook) -> None:
    comm_id, mark = open_from_frontend(nb)
    nb.run("long = %mcp_task demo:slow_compute seconds=30", cell_id="cell-long")
    entry = task_seen(nb, comm_id, mark, "the long task", tool="slow_compute", cell_id="cell-long")
    mark = len(nb.iopub)
    nb.send_shell("comm_msg", {"comm_id": comm_id, "data": {"type": "cancel", "key": entry["key"]}})
    result = nb.wait(
        lambda m: (channel_data(m, comm_id) or {}).get("type") == "cancel_result",
        what="the cancel result",
        since=mark,
    )
    assert channel_data(result, comm_id) == {
        "type": "cancel_result",
        "key": entry["key"],
        "ok": True,
        "error": None,
    }
    task_seen(nb, comm_id, mark, "the cancelled task", key=entry["key"], status="cancelled")
    nb.run("import asyncio\nfor _ in range(100):\n    if long.done(): break\n    await asyncio.sleep(0.05)")
    nb.run(
        "from mcp_tasks_jupyter.jupyter.runtime import get_runtime\n"
        "state = await get_runtime().client('demo').dialect.get(long.task_id)\n"
        "assert long.status == 'cancelled' and state.status == 'cancelled', (long.status, state)"
    )


def test_cancel_of_an_unknown_task_says_so(nb: Notebook) -> None:
    comm_id, mark = open_from_frontend(nb)
    nb.send_shell("comm_msg", {"comm_id": comm_id, "data": {"type": "cancel", "key": "t999"}})
    result = nb.wait(
        lambda m: (channel_data(m, comm_id) or {}).get("type") == "cancel_result",
        what="the cancel result",
        since=mark,
    )
    assert channel_data(result, comm_id) == {
        "type": "cancel_result",
        "key": "t999",
        "ok": False,
        "error": "this kernel does not know that task",
    }


def test_updates_are_coalesced_however_often_the_task_changes(nb: Notebook) -> None:
    comm_id, mark = open_from_frontend(nb)
    # 200 progress steps in 1 s: hundreds of changes, a handful of messages
    nb.run("busy = %mcp_task demo:slow_compute seconds=1 steps=200", cell_id="cell-busy")
    entry = task_seen(nb, comm_id, mark, "the busy task", cell_id="cell-busy", status="completed")
    changes = int(nb.stdout(nb.run("print(int(busy.progress.progress))")))
    updates = [m for m in nb.iopub[mark:] if (channel_data(m, comm_id) or {}).get("type") == "update"]
    assert changes == 200 and entry["progress"] == 200
    # at most one message per interval over the span they were sent in (the kernel's own clock)
    span = (updates[-1]["header"]["date"] - updates[0]["header"]["date"]).total_seconds()
    assert 2 <= len(updates) <= span / UPDATE_INTERVAL_S + 1.5, (len(updates), span)


def test_a_kernel_without_the_library_closes_the_channel(tmp_path: Path) -> None:
    with running_kernel(tmp_path) as kernel:
        nb = Notebook(kernel)
        comm_id, mark = open_from_frontend(nb)
        closed = nb.wait(
            lambda m: m["msg_type"] == "comm_close" and m["content"]["comm_id"] == comm_id,
            what="the comm closed by the kernel",
            since=mark,
        )
        assert closed["content"]["comm_id"] == comm_id
