"""Memory per tracked TaskHandle, with N handles (default 10,000) on one real connection to the demo server.

    python benchmarks/memory_per_handle.py [--handles N] [--tiny] [--json]

The handles are made as ``client.attach`` makes them (a TaskHandle with a task id, kept in
``client.tasks``) for fake task ids, so the server is never asked about them and no result is ever
held. Two rows:

* without pollers (``attach`` minus its ``_start``): the handle object and what it owns, beside an
  empty dict per task id in a dict (the least a tracker can keep);
* with parked pollers (the poller started as ``attach`` starts it, but with a one-hour poll
  interval, so it sleeps without sending): beside a bare ``asyncio.Task`` per task id sleeping on
  an ``asyncio.Event`` (the least a per-task poller costs).

Measured with ``tracemalloc`` (traced bytes still allocated after building the N, divided by N).
Target: at most 20 KB per handle (with its poller).
"""

from __future__ import annotations

import asyncio
import gc
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import Row, demo_server, emit, parser

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.protocol.task_state import TaskState
from mcp_tasks_jupyter.tasks.control import control_of
from mcp_tasks_jupyter.tasks.handle import TaskHandle

TARGET_BYTES = 20 * 1024
PARKED_MS = 3_600_000


async def _measure_async(build, n: int) -> tuple[object, float]:
    """What ``build()`` returns, and the bytes per item still allocated after it (and 3 loop turns)."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = build()
        for _ in range(3):
            await asyncio.sleep(0)  # let pollers (or tasks) run up to their first wait
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return kept, (after - before) / n


def _handles(client, n: int, prefix: str, *, poll: bool) -> list[TaskHandle]:
    lifecycle = client.lifecycle
    made = []
    for i in range(n):
        handle = lifecycle._new_handle("slow_compute", None, runs_as_task=True, token=f"bench-{prefix}-{i}")
        control_of(handle).named(f"{prefix}-{i:08d}-0000-0000-0000-000000000000")
        lifecycle.tasks[handle.task_id] = handle
        if poll:
            control_of(handle).apply(TaskState(handle.task_id, "working", poll_interval_ms=PARKED_MS))
            lifecycle._run(handle, lifecycle._poll(handle))
        made.append(handle)
    return made


async def _stop(client) -> None:
    runners = list(client.lifecycle._runners.values())
    for runner in runners:
        runner.cancel()
    await asyncio.gather(*runners, return_exceptions=True)


async def rows(n: int) -> list[Row]:
    with demo_server() as url:
        return await _rows(url, n)


async def _rows(url: str, n: int) -> list[Row]:
    async with mtj.connect(url) as client:
        await client.list_tools()
        # warm up: first handles, first pollers (lazy imports, caches)
        _handles(client, 10, "warm", poll=True)
        await asyncio.sleep(0)
        await _stop(client)
        client.tasks.clear()

        # the anchor's ids are built inside the measurement, like the handles'
        _, empty_dicts = await _measure_async(
            lambda: {f"anchor-{i:08d}-0000-0000-0000-000000000000": {} for i in range(n)}, n
        )

        _, bare = await _measure_async(lambda: _handles(client, n, "bare", poll=False), n)
        client.tasks.clear()
        gc.collect()

        event_waiters: list[asyncio.Task] = []

        def sleepers() -> dict[str, asyncio.Task]:
            out = {}
            for i in range(n):
                event = asyncio.Event()
                task = asyncio.create_task(event.wait())
                event_waiters.append(task)
                out[f"sleeper-{i:08d}-0000-0000-0000-000000000000"] = task
            return out

        _, bare_tasks = await _measure_async(sleepers, n)
        for t in event_waiters:
            t.cancel()
        await asyncio.gather(*event_waiters, return_exceptions=True)

        _polled, with_poller = await _measure_async(lambda: _handles(client, n, "poll", poll=True), n)
        await _stop(client)
        client.tasks.clear()

    return [
        Row(
            f"TaskHandle, no poller (N={n})",
            bare / 1024,
            "empty dict per task id",
            empty_dicts / 1024,
            "KB/handle",
        ),
        Row(
            f"TaskHandle + parked poller (N={n})",
            with_poller / 1024,
            "asyncio.Task waiting on an Event",
            bare_tasks / 1024,
            "KB/handle",
            "<= 20 KB",
            with_poller <= TARGET_BYTES,
        ),
    ]


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--handles", type=int, default=None, help="N (default 10000; 500 with --tiny)")
    args = p.parse_args()
    n = args.handles or (500 if args.tiny else 10_000)
    emit(asyncio.run(rows(n)), args.json)
