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

    # Later changes: one update with just those tasks, their latest state.
    for k, handle in enumerate(handles[:3]):
        handle.progress_reported({"progress": k + 1, "total": 10})
    await sent(frontend, 2)
    assert [(t["key"], t["progress"]) for t in frontend.updates()[1]["tasks"]] == [("t1", 1), ("t2", 2), ("t3", 3)]


async def test_a_snapshot_while_an_update_is_made_leaves_no_older_entry_after_it():
    runtime, old, new = Runtime(), Frontend(), Frontend()
    channel = TasksChannel(runtime)
    channel.open(old)
    handles = tracked(runtime, TASKS)
    channel._coalescer.request(now=True)
    await asyncio.sleep(0)  # part of the update is made ...
    handles[0].progress_reported({"progress": 5, "total": 10})
    channel.opened_by_frontend(new, {})  # ... when a front-end arrives and gets a snapshot
    assert new.received[0]["type"] == "snapshot" and new.received[0]["tasks"][0]["progress"] == 5
    await sent(old, 1)
    # The update is made again after the snapshot: both front-ends end with every task's latest state.
    for frontend in (old, new):
        latest = {t["key"]: t for d in frontend.received for t in d["tasks"]}
        assert len(latest) == TASKS and latest["t1"]["progress"] == 5
    assert all(t["progress"] == 5 for d in new.updates() for t in d["tasks"] if t["key"] == "t1")
