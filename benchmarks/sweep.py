"""A recorded sweep (issue 33 item 4): ``client.map`` of N short tasks, limit 64, against the demo over HTTP,
recorded in a SQLite task index (each item claimed before it is sent, its end written in batches).

    python benchmarks/sweep.py [--items N] [--seconds D] [--tiny] [--json]

Three rows, each beside its anchor from the same run:

* the sweep's wall time (from ``client.map`` to the last result) beside its ideal, N x D / 64;
  target: at most 1.15 x;
* the event loop's lag p99 while the sweep runs (a ticker sleeping 10 ms, late by how much: what a
  cell waits for the loop) beside the same ticker's p99 on the idle loop just before; target: at most 1.5 x.
  It is the loop's lag in this process, not a kernel's cell latency measured through Jupyter;
* the process's RSS growth per item (after the sweep, its batch still held) beside a plain dict per item
  (``tracemalloc`` of N dicts of the item's arguments); target: at most 5 KB per item.
"""

from __future__ import annotations

import asyncio
import gc
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import Row, demo_server, emit, parser

import mcp_tasks_jupyter as mtj

LIMIT = 64
TICK_S = 0.01
NOTE = "sweep: the loop's lag in this process (a 10 ms ticker), not a kernel's cell latency through Jupyter"


def rss_kb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize() / 1024


async def lag_p99(stop: asyncio.Event, lags: list[float]) -> None:
    while not stop.is_set():
        start = time.perf_counter()
        await asyncio.sleep(TICK_S)
        lags.append(time.perf_counter() - start - TICK_S)


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] if len(values) >= 100 else max(values)


async def rows(n: int, seconds: float) -> list[Row]:
    items = [{"seconds": seconds, "steps": 1, "label": f"i{i}"} for i in range(n)]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    dicts = [dict(item) for item in items]
    per_dict = (tracemalloc.get_traced_memory()[0] - before) / n
    tracemalloc.stop()
    del dicts
    with tempfile.TemporaryDirectory() as tmp, demo_server("--poll-interval", "100") as url:
        async with mtj.connect(url, index=f"{tmp}/tasks.sqlite3", protocol_version="2025-11-25") as client:
            await client.tool("slow_compute")
            idle: list[float] = []
            stop = asyncio.Event()
            ticker = asyncio.create_task(lag_p99(stop, idle))
            await asyncio.sleep(3.0)
            stop.set()
            await ticker
            gc.collect()
            rss_before = rss_kb()
            busy: list[float] = []
            stop = asyncio.Event()
            ticker = asyncio.create_task(lag_p99(stop, busy))
            started = time.perf_counter()
            batch = await client.map("slow_compute", items, limit=LIMIT)
            await batch.gather(timeout=max(120.0, 5 * n * seconds / LIMIT))
            wall = time.perf_counter() - started
            stop.set()
            await ticker
            gc.collect()
            grown = (rss_kb() - rss_before) / n
    ideal = n * seconds / LIMIT
    return [
        Row(f"sweep of {n:,} x {seconds:g} s, limit {LIMIT}", wall, "ideal N x D / limit", ideal, "s",
            "ratio <= 1.15", wall / ideal <= 1.15),
        Row("loop lag p99 during the sweep", p99(busy) * 1000, "idle loop p99", p99(idle) * 1000, "ms",
            "ratio <= 1.5", p99(busy) <= 1.5 * p99(idle), note=NOTE),
        Row("RSS growth per item", grown, "a dict per item (tracemalloc)", per_dict / 1024, "KB/item",
            "<= 5 KB", grown <= 5),
    ]  # fmt: skip


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--items", type=int, default=None, help="N (default 10000; 640 with --tiny)")
    p.add_argument("--seconds", type=float, default=0.5, help="each task's duration D (default 0.5)")
    args = p.parse_args()
    n = args.items or (640 if args.tiny else 10_000)
    emit(asyncio.run(rows(n, args.seconds)), args.json)
