"""The tasks channel with a thousand tasks changing (issue 24): an update is made a slice of entries per
pass of the event loop, so whatever else the loop has to do (a cell the person runs) waits for one slice,
not for the whole update; every change still reaches every front-end, once the update is sent, and a
snapshot sent while an update is being made does not leave older entries after it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mcp_tasks_jupyter.jupyter.comm import ENTRIES_PER_SLICE, TasksChannel
from mcp_tasks_jupyter.jupyter.runtime import Runtime
from mcp_tasks_jupyter.tasks.control import control_of
from mcp_tasks_jupyter.tasks.handle import HandleControls, TaskHandle

pytestmark = pytest.mark.anyio
WAIT = 20  # seconds: a bound on every wait, never a speed claim
TASKS = 8 * ENTRIES_PER_SLICE


class Frontend:
    """The front-end end of a comm: what the kernel sent on it."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []

    def send(self, data: dict[str, Any]) -> None:
        self.received.append(data)

    def on_msg(self, _callback: Any) -> None: ...

    def on_close(self, _callback: Any) -> None: ...

    def updates(self) -> list[dict[str, Any]]:
        return [d for d in self.received if d["type"] == "update"]

    def tasks(self) -> dict[str, dict[str, Any]]:
        """Every task as the front-end holds it now (``store.ts``): a snapshot's entries, an update's
        whole entries, and its changes laid over the entries held."""
        held: dict[str, dict[str, Any]] = {}
        for data in self.received:
            if data["type"] == "snapshot":
                held = {t["key"]: t for t in data["tasks"]}
            elif data["type"] == "update":
                held.update({t["key"]: t for t in data["tasks"]})
                for change in data["changes"]:
                    held[change["key"]] = {**held[change["key"]], **change}
        return held


async def _no_op(_handle: TaskHandle) -> None:
    return None


def tracked(runtime: Runtime, count: int) -> list[TaskHandle]:
    controls = HandleControls(_no_op, lambda: False)
    return [
        runtime.track(
            TaskHandle("demo", "tool", {"n": k}, runs_as_task=True, progress_token=f"p{k}", controls=controls)
        )
        for k in range(count)
    ]


async def sent(frontend: Frontend, count: int) -> None:
    async def wait() -> None:
        while len(frontend.updates()) < count:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(wait(), WAIT)


async def test_an_update_of_many_tasks_is_made_a_slice_per_loop_pass():
    runtime, frontend = Runtime(), Frontend()
    channel = TasksChannel(runtime)
    channel.open(frontend)
    handles = tracked(runtime, TASKS)
    channel._coalescer.request(now=True)  # the coalesced flush, now
    # The flush made one slice and gave the loop back: nothing sent yet, the rest comes pass by pass.
    assert frontend.updates() == []
    passes = 0
    while not frontend.updates():
        await asyncio.sleep(0)
        passes += 1
        assert passes <= TASKS, "the update was never sent"
    assert passes >= TASKS // ENTRIES_PER_SLICE - 1
    (update,) = frontend.updates()
    assert [t["label"] for t in update["tasks"]] == [f"n={k}" for k in range(TASKS)]

    # Later changes: one update with just those tasks, and of each only what changed.
    for k, handle in enumerate(handles[:3]):
        control_of(handle).progress_reported({"progress": k + 1, "total": 10})
    await sent(frontend, 2)
    assert frontend.updates()[1]["tasks"] == []
    assert frontend.updates()[1]["changes"] == [
        {"key": f"t{k + 1}", "progress": k + 1, "total": 10} for k in range(3)
    ]
    held = frontend.tasks()
    assert [(held[f"t{k}"]["label"], held[f"t{k}"]["progress"]) for k in (1, 2, 3, 4)] == [
        ("n=0", 1),
        ("n=1", 2),
        ("n=2", 3),
        ("n=3", None),
    ]


async def test_a_snapshot_while_an_update_is_made_leaves_no_older_entry_after_it():
    runtime, old, new = Runtime(), Frontend(), Frontend()
    channel = TasksChannel(runtime)
    channel.open(old)
    handles = tracked(runtime, TASKS)
    channel._coalescer.request(now=True)
    await asyncio.sleep(0)  # part of the update is made ...
    control_of(handles[0]).progress_reported({"progress": 5, "total": 10})
    channel.opened_by_frontend(new, {})  # ... when a front-end arrives and gets a snapshot
    assert new.received[0]["type"] == "snapshot" and new.received[0]["tasks"][0]["progress"] == 5
    await sent(old, 1)
    # The update is made again after the snapshot: both front-ends end with every task's latest state.
    for frontend in (old, new):
        latest = frontend.tasks()
        assert len(latest) == TASKS and latest["t1"]["progress"] == 5
    assert all(t["progress"] == 5 for d in new.updates() for t in d["tasks"] if t["key"] == "t1")
    # After the snapshot every entry goes whole once (the old front-end was never sent the
    # snapshot's), then only changes.
    control_of(handles[0]).progress_reported({"progress": 6, "total": 10})
    await sent(old, 2)
    assert [c for d in old.updates()[1:] for c in d["changes"]] == [{"key": "t1", "progress": 6}]
    for frontend in (old, new):
        assert frontend.tasks()["t1"]["progress"] == 6


async def test_a_front_end_that_missed_a_change_is_never_left_with_a_field_only_the_other_was_told():
    """Two front-ends: one gets a snapshot between the updates the other gets; a field that changes
    and changes back across that snapshot reaches both."""
    runtime, old, new = Runtime(), Frontend(), Frontend()
    channel = TasksChannel(runtime)
    channel.open(old)
    (handle,) = tracked(runtime, 1)
    channel._coalescer.request(now=True)
    await sent(old, 1)
    assert old.tasks()["t1"]["needs_input"] is False
    control_of(handle).question_opened(1, {"message": "which?"})
    channel.opened_by_frontend(new, {})  # snapshot: it needs input; the old front-end still says no
    control_of(handle).question_closed(1)
    control_of(handle).progress_reported({"progress": 3, "total": 10})
    channel._coalescer.request(now=True)
    await sent(old, 2)
    for frontend in (old, new):
        assert (frontend.tasks()["t1"]["progress"], frontend.tasks()["t1"]["needs_input"]) == (3, False)
