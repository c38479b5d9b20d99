"""Trivial-cell latency in a real kernel: idle, with hundreds of live tasks polled, with live widgets.

    python benchmarks/kernel_latency.py [--tasks N] [--widgets W] [--cells C] [--tiny] [--json]

One ipykernel (jupyter_client, this checkout), one demo server over Streamable HTTP on 127.0.0.1
(``--dialect 2025-11-25 --poll-interval 1000``: each task is polled once a second). The figure is
the time from sending ``1+1`` to its ``execute_reply`` (median and p99 of C cells, a varying
gap of about 20 ms between them, so they land at every phase of the polling):

1. idle: ``%load_ext mcp_tasks_jupyter`` done, nothing connected (the anchor: half of its cells
   before the other phases, half after them, once disconnected, so that it spans the run);
2. N live tasks (default 500): connected, then N ``slow_compute`` tasks of an hour started
   through the kernel's runtime (what ``%mcp_task`` does, without the display), each polled once a
   second by its poller; measured after two poll intervals;
3. W live widgets updating (default 100): those tasks cancelled, then W tasks whose server
   changes them 5 times a second (status message, progress and a log line per step), each shown
   with ``show_task`` (what ``%mcp_task`` displays: the live widget and its summary).

Notes give the kernel's CPU (share of one core, from /proc) and the polls per second it made.
Target: p99 at most 1.5x idle.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, demo_server, emit, parser
from _kernel import BenchKernel, median_p99, running_kernel

TARGET_RATIO = 1.5
POLL_MS = 1000
WIDGET_STEPS_PER_S = 5

SETUP = """
%load_ext mcp_tasks_jupyter
import asyncio, time
from mcp_tasks_jupyter.jupyter.runtime import get_runtime
from mcp_tasks_jupyter.jupyter import display as _mtj_display
_rt = get_runtime()
"""

CONNECT = """
_client = await _rt.connect("demo", {url!r}, dialect="2025-11-25")
_polls = [0]
_real_get = _client.dialect.get
async def _counting_get(task_id):
    _polls[0] += 1
    return await _real_get(task_id)
_client.dialect.get = _counting_get
"""

START = """
_bench = []
for _i in range({n}):
    _args = {{"seconds": {seconds}, "steps": {steps}, "label": f"t{{_i}}"}}
    _bench.append(await _rt.start_task("demo", "slow_compute", _args))
for _h in _bench[-{show}:] if {show} else []:
    _mtj_display.show_task(_h)
"""

DISCONNECT = 'await _rt.disconnect("demo")'

STOP = """
await asyncio.gather(*(_h.cancel() for _h in _bench if not _h.done()), return_exceptions=True)
await asyncio.wait_for(asyncio.gather(*(asyncio.shield(_h._future) for _h in _bench), return_exceptions=True), 60)
"""


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    import os

    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _measure(kernel: BenchKernel, cells: int) -> tuple[float, float, float, float]:
    """(median s, p99 s, kernel CPU share, polls/s) over ``cells`` timed cells."""
    cpu0, polls0, began = _cpu_seconds(kernel.pid), kernel.value("_polls[0]"), time.monotonic()
    median, p99 = median_p99(kernel.latencies(cells))
    took = time.monotonic() - began
    cpu = (_cpu_seconds(kernel.pid) - cpu0) / took
    polls = (kernel.value("_polls[0]") - polls0) / took
    return median, p99, cpu, polls


def _comm_msgs(kernel: BenchKernel, since: int) -> int:
    return sum(1 for m in kernel.iopub[since:] if m["msg_type"] == "comm_msg")


def rows(tasks: int, widgets: int, cells: int) -> list[Row]:
    with (
        demo_server("--dialect", "2025-11-25", "--poll-interval", str(POLL_MS)) as url,
        running_kernel() as kernel,
    ):
        kernel.run(SETUP)
        kernel.latencies(min(20, cells))  # warm up
        cpu0, began = _cpu_seconds(kernel.pid), time.monotonic()
        idle = kernel.latencies(cells // 2)
        idle_cpu = (_cpu_seconds(kernel.pid) - cpu0) / (time.monotonic() - began)

        kernel.run(CONNECT.format(url=url))
        kernel.run(START.format(n=tasks, seconds=3600, steps=1000, show=0), timeout=600)
        time.sleep(2 * POLL_MS / 1000)
        t_median, t_p99, t_cpu, t_polls = _measure(kernel, cells)
        kernel.run(STOP, timeout=300)
        if kernel.value("sum(not _h.done() for _h in _bench)"):
            raise RuntimeError("some tasks did not end after cancel")

        seconds = 600
        kernel.run(
            START.format(n=widgets, seconds=seconds, steps=min(1000, seconds * WIDGET_STEPS_PER_S), show=widgets),
            timeout=600,
        )
        time.sleep(2 * POLL_MS / 1000)
        mark, began = len(kernel.iopub), time.monotonic()
        w_median, w_p99, w_cpu, w_polls = _measure(kernel, cells)
        msgs = _comm_msgs(kernel, mark) / (time.monotonic() - began)
        kernel.run(STOP, timeout=300)

        kernel.run(DISCONNECT)
        idle += kernel.latencies(cells - cells // 2)  # idle again: the anchor spans the whole run
        idle_median, idle_p99 = median_p99(idle)

    ms = 1000
    idle_note = f"idle kernel: CPU {idle_cpu:.0%} of a core while timing cells"
    t_note = f"{tasks} tasks: kernel CPU {t_cpu:.0%} of a core, {t_polls:.0f} polls/s"
    w_note = (
        f"{widgets} widgets: kernel CPU {w_cpu:.0%} of a core, {w_polls:.0f} polls/s, "
        f"{msgs:.0f} widget comm messages/s"
    )
    return [
        Row(
            f"cell latency median, {tasks} tasks polled at 1 s",
            t_median * ms,
            "idle kernel, median",
            idle_median * ms,
            "ms",
            note=idle_note,
        ),
        Row(
            f"cell latency p99, {tasks} tasks polled at 1 s",
            t_p99 * ms,
            "idle kernel, p99",
            idle_p99 * ms,
            "ms",
            f"<= {TARGET_RATIO}x",
            t_p99 <= TARGET_RATIO * idle_p99,
            note=t_note,
        ),
        Row(
            f"tasks/get polls/s the kernel made, {tasks} tasks",
            t_polls,
            "polls/s asked (1 per task per s)",
            tasks * 1000 / POLL_MS,
            "polls/s",
        ),
        Row(
            f"cell latency median, {widgets} live widgets",
            w_median * ms,
            "idle kernel, median",
            idle_median * ms,
            "ms",
            note=w_note,
        ),
        Row(
            f"cell latency p99, {widgets} live widgets",
            w_p99 * ms,
            "idle kernel, p99",
            idle_p99 * ms,
            "ms",
            f"<= {TARGET_RATIO}x",
            w_p99 <= TARGET_RATIO * idle_p99,
        ),
    ]


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--tasks", type=int, default=None, help="live tasks (default 500; 50 with --tiny)")
    p.add_argument("--widgets", type=int, default=None, help="live widgets (default 100; 10 with --tiny)")
    p.add_argument("--cells", type=int, default=None, help="timed cells per phase (default 300; 40 with --tiny)")
    args = p.parse_args()
    emit(
        rows(
            args.tasks or (50 if args.tiny else 500),
            args.widgets or (10 if args.tiny else 100),
            args.cells or (40 if args.tiny else 300),
        ),
        args.json,
    )
