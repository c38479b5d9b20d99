"""A recorded sweep (issue 33 item 4): ``client.map`` of N short tasks, limit 64, against the demo over HTTP,
recorded in a SQLite task index (each item claimed before it is sent, its end written in batches).

    python benchmarks/sweep.py [--items N] [--seconds D] [--big M] [--only run|kernel|big]
        [--layout shared|kernel|kernel-and-timer|main-thread] [--tiny]
        [--json]

Each row beside its anchor from the same run. The run (N items, default 10,000; 640 with --tiny):

* the sweep's wall time (from ``client.map`` to the last result) beside its ideal, N x D / 64;
  target: at most 1.15 x;
* the event loop's lag p99 while the sweep runs (a ticker sleeping 10 ms, late by how much) beside the same
  ticker's p99 on the idle loop just before, for as long as the sweep's ideal time: the loop's lag in this
  process, a stricter figure than a cell's;
* the process's RSS growth per item (after the sweep, its batch still held) beside a plain dict per item
  (``tracemalloc`` of N dicts of the item's arguments); target: at most 5 KB per item.

The kernel (the same N items, by ``%mcp_map -o VAR --limit 64`` in a real ipykernel, its batch view displayed,
recorded in the kernel's task index): its wall beside the ideal, and a trivial cell's latency (``1+1`` to its
``execute_reply``, median and p99) while the sweep runs beside the idle kernel's, timed for as long as the sweep
should take (N x D / 64), half of that before the sweep and half after; target: p99 at most 1.5 x. The anchor's
window is as long as the figure's: the host's speed drifts over tens of seconds, and a p99 over a longer window
catches more of its slow moments (on 2026-12-06, with no sweep at all, 3,000 idle cells had a p99 of 16.1 ms
where the 600 cells around them had 11.5 ms; 300-cell stretches of the same window ranged 7.7-24.1 ms).
Then the same sweep once more, run by another process (``client.map``, as in the first part) against the same
server while the kernel only times cells: that kernel's p99 beside the same idle anchor is what two cores shared
with a sweep's client and its server cost a kernel that does none of the sweep's work (the machine's share of
the ratio above, not the kernel's). Before all that, the ratio's own noise: with no sweep at all, an idle window
as long as the sweep's, between two idle halves as the sweep is between its anchor's, its p99 beside theirs.
``--layout`` (Linux, two cores or more) places the processes on the cores; on one core, A, and the others, B:

* ``shared`` (the default): nothing placed, everything shares every core;
* ``kernel`` (``--apart``): the kernel's threads on A; this script (the cell timer), the demo server and the
  other sweeper on B. The kernel shares no core with the sweep's server, but its own threads share one;
* ``kernel-and-timer``: the kernel's threads and the cell timer on A, the servers and the other sweeper on B:
  a user's machine with the server elsewhere, but for the cores it would have;
* ``main-thread``: the kernel's main thread (its loop: the sweep's work and the cells) alone on A; its other
  threads (the shell channel's and iopub's, which every cell passes through), the timer and the servers on B.

The ``shared`` rows are the issue's figure; the others tell the kernel's own work from the cores it shares.

The big sweep (M items, default 100,000; 2,000 with --tiny), every item ended, written through the index's
interface (``tests/support/ended_sweep.py``: running M calls is what the rows above measure): the time to
record it, ``mcp-tasks sweeps`` and ``mcp-tasks list --batch`` (each a process of its own), resuming it
(``client.map(..., resume=ID)``: every item from its record) and the RSS that adds per item, one
``batch.view()`` beside counting every handle's status, ``mtj.export`` (JSON Lines) and ``mtj.to_dataframe``
beside ``json.loads`` of the exported lines.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import dataclasses
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import ROOT, Row, demo_server, emit, parser
from _kernel import median_p99, running_kernel

import mcp_tasks_jupyter as mtj
from tests.support.ended_sweep import record_ended_sweep

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


def dict_bytes(items: list[dict[str, Any]]) -> float:
    """The anchor of memory per item: bytes per item of a plain dict of its arguments (``tracemalloc``)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    dicts = [dict(item) for item in items]
    per_dict = (tracemalloc.get_traced_memory()[0] - before) / len(items)
    tracemalloc.stop()
    del dicts
    return per_dict


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100)[98] if len(values) >= 100 else max(values)


def sweep_items(n: int, seconds: float) -> list[dict[str, Any]]:
    """The arguments of a sweep's ``n`` items (``slow_compute``, ``seconds`` each), as ``KERNEL_SETUP``'s."""
    return [{"seconds": seconds, "steps": 1, "label": f"i{i}"} for i in range(n)]


def cells_while(kernel: Any, running: Callable[[], bool], n: int, seconds: float, what: str) -> list[float]:
    """A trivial cell's latencies, 50 at a time, while ``running()`` says so: the sweep of ``n`` items goes on,
    or a window lasts (at most five times the sweep's ideal, or 300 s)."""
    times: list[float] = []
    deadline = time.monotonic() + max(300.0, 5 * n * seconds / LIMIT)
    while running():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not end in time")
        times += kernel.latencies(50)
    return times


async def rows(n: int, seconds: float) -> list[Row]:
    items = sweep_items(n, seconds)
    ideal = n * seconds / LIMIT
    per_dict = dict_bytes(items)
    with tempfile.TemporaryDirectory() as tmp, demo_server("--poll-interval", "100") as url:
        async with mtj.connect(url, index=f"{tmp}/tasks.sqlite3", protocol_version="2025-11-25") as client:
            await client.tool("slow_compute")
            idle: list[float] = []
            stop = asyncio.Event()
            ticker = asyncio.create_task(lag_p99(stop, idle))
            await asyncio.sleep(ideal)  # as long as the sweep's ideal time: the same window
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
    return [
        Row(f"sweep of {n:,} x {seconds:g} s, limit {LIMIT}", wall, "ideal N x D / limit", ideal, "s",
            "ratio <= 1.15", wall / ideal <= 1.15),
        Row("loop lag p99 during the sweep", p99(busy) * 1000, "idle loop p99", p99(idle) * 1000, "ms",
            "ratio <= 1.5", p99(busy) <= 1.5 * p99(idle), note=NOTE),
        Row("RSS growth per item", grown, "a dict per item (tracemalloc)", per_dict / 1024, "KB/item",
            "<= 5 KB", grown <= 5),
    ]  # fmt: skip


KERNEL_SETUP = """
%load_ext mcp_tasks_jupyter
import asyncio
from mcp_tasks_jupyter.jupyter.runtime import get_runtime
_client = await get_runtime().connect("demo", {url!r}, dialect="2025-11-25")
_items = [{{"seconds": {seconds}, "steps": 1, "label": f"i{{_i}}"}} for _i in range({n})]
"""
KERNEL_MAP = "%mcp_map -o _results --limit {limit} demo:slow_compute --over _items"


LAYOUTS = {
    "shared": "",
    "kernel": ", the kernel on a core of its own",
    "kernel-and-timer": ", the kernel and the cell timer on a core of their own",
    "main-thread": ", the kernel's main thread on a core of its own",
}


@dataclasses.dataclass(frozen=True)
class Layout:
    """Where a ``--layout`` puts the kernel's main thread, its other threads, the cell timer (this process) and
    the servers (the demo, the other sweeper)."""

    name: str
    main: set[int]
    threads: set[int]
    timer: set[int]
    servers: set[int]

    def before_servers(self) -> None:
        """This process on the servers' cores, so that what it starts now (the demo) inherits them."""
        os.sched_setaffinity(0, self.servers)

    def place(self, kernel_pid: int) -> None:
        """The kernel's threads (those it has started since as well) and this process where the layout says."""
        pin_threads(kernel_pid, self.threads)
        os.sched_setaffinity(kernel_pid, self.main)  # the main thread's id is the process's
        os.sched_setaffinity(0, self.timer)

    def other_sweeper(self, pid: int) -> None:
        """The other process's sweep where the servers are."""
        pin_threads(pid, self.servers)


def layout_of(name: str) -> Layout | None:
    """The cores for ``--layout name`` (one core, a, and the others, b); None for ``shared``, or where threads
    cannot be pinned (not Linux, a single core)."""
    if name == "shared" or not hasattr(os, "sched_setaffinity"):
        return None
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        return None
    a, b = {cores[0]}, set(cores[1:])
    main, threads, timer = {"kernel": (a, a, b), "kernel-and-timer": (a, a, a), "main-thread": (a, b, b)}[name]
    return Layout(name, main, threads, timer, servers=b)


def pin_threads(pid: int, cores: set[int]) -> None:
    """Every thread of process ``pid`` on ``cores`` (the threads it starts later inherit it)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(ProcessLookupError):  # a thread that has ended meanwhile
            os.sched_setaffinity(int(tid), cores)


def kernel_rows(n: int, seconds: float, *, layout: str = "shared") -> list[Row]:
    """The same sweep run by ``%mcp_map`` in a real kernel (its batch view displayed), recorded in the kernel's
    task index: a trivial cell's latency (``1+1`` to its reply) while it runs, beside the idle kernel's.

    ``layout``: where the kernel's threads, this process and the servers run (``LAYOUTS``; the module's
    docstring says what each tells); no rows where threads cannot be pinned."""
    cores = layout_of(layout)
    everywhere = os.sched_getaffinity(0) if cores is not None else None
    try:
        if cores is not None:
            cores.before_servers()
    except OSError:  # a container that forbids it
        cores = None
    if layout != "shared" and cores is None:
        print(f"sweep.py: no --layout {layout} here (threads cannot be pinned); its rows are left out",
              file=sys.stderr)  # fmt: skip
        return []
    try:
        return _kernel_rows(n, seconds, cores)
    finally:
        if everywhere is not None:
            os.sched_setaffinity(0, everywhere)


def _kernel_rows(n: int, seconds: float, cores: Layout | None) -> list[Row]:
    with demo_server("--poll-interval", "100") as url, running_kernel() as kernel:
        if cores is not None:
            cores.place(kernel.pid)
        kernel.run(KERNEL_SETUP.format(url=url, seconds=seconds, n=n))
        kernel.latencies(20)  # warm up
        ideal = n * seconds / LIMIT

        def for_half_the_ideal() -> Callable[[], bool]:
            until = time.monotonic() + ideal / 2
            return lambda: time.monotonic() < until

        # the noise floor: an idle window as long as the sweep's, between two idle halves, as the sweep is
        around = cells_while(kernel, for_half_the_ideal(), n, seconds, "the idle window")
        floor = cells_while(kernel, for_half_the_ideal(), n, seconds, "the idle window")
        floor += cells_while(kernel, for_half_the_ideal(), n, seconds, "the idle window")
        # the idle anchor's window as long as the sweep's: half before it, half after it
        idle = cells_while(kernel, for_half_the_ideal(), n, seconds, "the idle window")
        around += idle
        started = time.perf_counter()
        kernel.run(KERNEL_MAP.format(limit=LIMIT))
        if cores is not None:
            cores.place(kernel.pid)  # any thread the sweep has started

        def sweeping() -> bool:
            return not kernel.value("'_results' in globals()")

        busy = cells_while(kernel, sweeping, n, seconds, "the kernel's sweep")
        wall = time.perf_counter() - started  # to the nearest 50 cells
        assert kernel.value("len(_results)") == n
        idle += cells_while(kernel, for_half_the_ideal(), n, seconds, "the idle window")
        beside = latencies_beside_sweep(kernel, url, n, seconds, cores)
    idle_median, idle_p99 = median_p99(idle)
    busy_median, busy_p99 = median_p99(busy)
    beside_p99 = median_p99(beside)[1]
    floor_p99, around_p99 = median_p99(floor)[1], median_p99(around)[1]
    note = f"kernel: {len(busy)} cells timed during the sweep, {len(idle)} idle; its wall to the nearest 50 cells"
    rows = [
        Row(f"%mcp_map of {n:,} x {seconds:g} s in a kernel", wall, "ideal N x D / limit", ideal, "s",
            "ratio <= 1.15", wall / ideal <= 1.15),
        Row("kernel cell latency median during the sweep", busy_median * 1000, "idle kernel, median",
            idle_median * 1000, "ms"),
        Row("kernel cell latency p99 during the sweep", busy_p99 * 1000, "idle kernel, p99", idle_p99 * 1000, "ms",
            "ratio <= 1.5", busy_p99 <= 1.5 * idle_p99, note=note),
        Row("kernel cell p99, the sweep in another process", beside_p99 * 1000, "idle kernel, p99",
            idle_p99 * 1000, "ms", note=f"kernel: {len(beside)} cells timed beside another process's sweep"),
        Row("kernel cell p99, idle: no sweep at all", floor_p99 * 1000, "idle kernel, p99 around it",
            around_p99 * 1000, "ms", note=f"kernel: {len(floor)} idle cells timed where a sweep would be, "
            f"{len(around)} around them: the ratio's own noise on this host"),
    ]  # fmt: skip
    if cores is None:
        return rows
    where = LAYOUTS[cores.name]
    return [dataclasses.replace(row, name=row.name + where, note=row.note and row.note + where) for row in rows]


def latencies_beside_sweep(kernel: Any, url: str, n: int, seconds: float, cores: Layout | None) -> list[float]:
    """A trivial cell's latency while another process (this script, ``--client``) sweeps ``n`` items against
    ``url``: the kernel does none of the sweep's work. ``cores``: that process where the servers are."""
    argv = [sys.executable, __file__, "--client", url, "--items", str(n), "--seconds", str(seconds)]
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: its warnings can never fill it and block it
        client = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=errors, text=True)
        if cores is not None:
            cores.other_sweeper(client.pid)

        def failed(what: str) -> RuntimeError:
            errors.seek(0)
            return RuntimeError(f"the sweeping process {what}: {errors.read().decode(errors='replace')[-2000:]}")

        try:
            assert client.stdout is not None
            if client.stdout.readline().strip() != "sweeping":  # the sweep is under way: time cells now
                raise failed("did not start")
            times = cells_while(kernel, lambda: client.poll() is None, n, seconds, "the other process's sweep")
            if client.returncode != 0:
                raise failed(f"failed ({client.returncode})")
            return times
        finally:
            if client.poll() is None:
                client.kill()
            client.wait()


async def sweep_as_client(url: str, n: int, seconds: float) -> None:
    """``--client``: sweep ``n`` items against ``url`` as the first part does; says ``sweeping`` when sent."""
    items = sweep_items(n, seconds)
    with tempfile.TemporaryDirectory() as tmp:
        async with mtj.connect(url, index=f"{tmp}/tasks.sqlite3", protocol_version="2025-11-25") as client:
            await client.tool("slow_compute")
            batch = await client.map("slow_compute", items, limit=LIMIT)
            print("sweeping", flush=True)
            await batch.gather(timeout=max(120.0, 5 * n * seconds / LIMIT))


def cli_seconds(index_path: str, *argv: str) -> float:
    """Wall seconds of ``mcp-tasks --index PATH ARGV`` (a process of its own, its start included)."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "mcp_tasks_jupyter", "--index", index_path, *argv],
        check=True, stdout=subprocess.DEVNULL, timeout=600, cwd=ROOT,
    )  # fmt: skip
    return time.perf_counter() - started


async def big_rows(n: int) -> list[Row]:
    """A sweep of ``n`` ended items written through the index's interface (records and sweep rows: running
    ``n`` calls is what the 10,000-item rows measure), then listed, resumed, viewed and exported."""
    items = sweep_items(n, 0.01)
    per_dict = dict_bytes(items)
    with tempfile.TemporaryDirectory() as tmp, demo_server("--poll-interval", "100") as url:
        path = f"{tmp}/tasks.sqlite3"
        async with mtj.connect(url, index=path, protocol_version="2025-11-25") as client:
            index = client.index
            assert index is not None
            await client.tool("slow_compute")
            started = time.perf_counter()
            sweep_id = record_ended_sweep(client, "slow_compute", items, LIMIT)
            recorded = time.perf_counter() - started
            listed = cli_seconds(path, "sweeps")
            listed_items = cli_seconds(path, "list", "--batch", sweep_id)
            gc.collect()
            rss_before = rss_kb()
            started = time.perf_counter()
            batch = await client.map("slow_compute", items, resume=sweep_id)
            results = await batch.gather(timeout=600)
            resumed = time.perf_counter() - started
            assert len(results) == n and batch.resumed is not None and batch.resumed.before == n
            await asyncio.sleep(0.1)  # what the resume read is let go once its last callbacks ran
            gc.collect()
            grown = (rss_kb() - rss_before) / n
            batch.view()  # the first view walks the places once (``Batch.ready``); a live batch, as they end
            started = time.perf_counter()
            view = batch.view()
            viewed = time.perf_counter() - started
            assert view.ended == n
            started = time.perf_counter()
            every = collections.Counter(handle.status for handle in batch)
            counted = time.perf_counter() - started
            assert every == view.counts
            started = time.perf_counter()
            written = mtj.export(batch, f"{tmp}/sweep.jsonl", index=index)
            exported = time.perf_counter() - started
            assert written == n
            started = time.perf_counter()
            frame = mtj.to_dataframe(batch)
            framed = time.perf_counter() - started
            assert len(frame) == n
            started = time.perf_counter()
            loaded = [json.loads(line) for line in Path(f"{tmp}/sweep.jsonl").read_text().splitlines()]
            read_back = time.perf_counter() - started
            assert len(loaded) == n
    big = f"{n:,} items"
    return [
        Row(f"record a sweep of {big} (records + sweep rows)", recorded, "-", float("nan"), "s"),
        Row(f"mcp-tasks sweeps ({big})", listed, "-", float("nan"), "s"),
        Row(f"mcp-tasks list --batch ({big})", listed_items, "-", float("nan"), "s"),
        Row("resume it (all from records, gathered)", resumed, "-", float("nan"), "s"),
        Row("RSS per item of the resumed batch", grown, "a dict per item (tracemalloc)", per_dict / 1024,
            "KB/item", "<= 5 KB", grown <= 5),
        Row(f"batch.view() of {big}", viewed * 1000, "counting every handle's status", counted * 1000, "ms"),
        Row(f"mtj.export JSON Lines ({big})", exported, "json.loads of its lines", read_back, "s"),
        Row(f"mtj.to_dataframe ({big})", framed, "json.loads of the export's lines", read_back, "s"),
    ]  # fmt: skip


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--items", type=int, default=None, help="N (default 10000; 640 with --tiny)")
    p.add_argument("--seconds", type=float, default=0.5, help="each task's duration D (default 0.5)")
    p.add_argument("--big", type=int, default=None, help="the recorded sweep's items (100000; --tiny: 2000)")
    p.add_argument("--only", choices=("run", "kernel", "big"), default=None, help="only one part's rows")
    p.add_argument(
        "--layout",
        choices=tuple(LAYOUTS),
        default="shared",
        help="the kernel's part: which processes share which cores (the docstring says)",
    )
    p.add_argument("--apart", action="store_true", help="--layout kernel (the name of 2026-12-07's runs)")
    # the kernel part's other process, sweeping while the kernel only times cells
    p.add_argument("--client", metavar="URL", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    n = args.items or (640 if args.tiny else 10_000)
    if args.client is not None:
        asyncio.run(sweep_as_client(args.client, n, args.seconds))
        sys.exit(0)
    out: list[Row] = []
    if args.only in (None, "run"):
        out += asyncio.run(rows(n, args.seconds))
    if args.only in (None, "kernel"):
        out += kernel_rows(n, args.seconds, layout="kernel" if args.apart else args.layout)
    if args.only in (None, "big"):
        out += asyncio.run(big_rows(args.big or (2_000 if args.tiny else 100_000)))
    emit(out, args.json)
