"""The kernel's fleet without the kernel: N tasks started and polled by the library in plain asyncio.

    python benchmarks/_fleet.py URL --tasks N --seconds S --window W

The anchor of ``kernel_latency.py``'s CPU row: the same N ``slow_compute`` tasks (same arguments,
same demo server, a task index as the notebook runtime keeps one) started with ``Client.start_task``
under ``asyncio.run``, each polled by its own poller; after two poll intervals, this process's CPU
(``time.process_time``: every thread) over W seconds. Prints one JSON object:
``{"cpu": share of one core, "polls": polls/s made}``; the tasks are cancelled before it exits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import mcp_tasks_jupyter as mtj

POLL_S = 1.0


async def fleet(url: str, tasks: int, seconds: float, steps: int, window: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="mtj-fleet-") as home:
        async with mtj.connect(url, dialect="2025-11-25", index=Path(home) / "tasks.sqlite3") as client:
            polls = [0]
            real_get = client.dialect.get

            async def counting_get(task_id: str) -> mtj.TaskState:
                polls[0] += 1
                return await real_get(task_id)

            client.dialect.get = counting_get  # type: ignore[method-assign]
            args = {"seconds": seconds, "steps": steps}
            handles = [await client.start_task("slow_compute", {**args, "label": f"t{i}"}) for i in range(tasks)]
            await asyncio.sleep(2 * POLL_S)
            cpu0, polls0, began = time.process_time(), polls[0], time.monotonic()
            await asyncio.sleep(window)
            took = time.monotonic() - began
            figures = {"cpu": (time.process_time() - cpu0) / took, "polls": (polls[0] - polls0) / took}
            await asyncio.gather(*(h.cancel() for h in handles if not h.done()), return_exceptions=True)
            return figures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("url")
    p.add_argument("--tasks", type=int, required=True)
    p.add_argument("--seconds", type=float, required=True, help="each task's length on the server")
    p.add_argument("--steps", type=int, required=True, help="status changes over the task's length")
    p.add_argument("--window", type=float, required=True, help="seconds the CPU is measured over")
    a = p.parse_args()
    print(json.dumps(asyncio.run(fleet(a.url, a.tasks, a.seconds, a.steps, a.window))), flush=True)


if __name__ == "__main__":
    main()
