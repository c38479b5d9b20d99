"""The demo server's ``tasks/get`` throughput beside the ``mcp`` 1.x task server's, same run.

    python benchmarks/server_throughput.py [--seconds S] [--tiny] [--json]

Both servers over Streamable HTTP on 127.0.0.1, both speaking the 2025-11-25 task dialect (the demo
runs with ``--dialect 2025-11-25``; the other is tests/interop/mcp1_task_server.py, built on the
official ``mcp`` 1.x SDK). Our client opens the session and starts one long task on each; then a
bare ``httpx.AsyncClient`` POSTs the same ``tasks/get`` request (same session headers, a fresh id each
time) as fast as it can for S seconds: one request at a time, then 8 workers at once. Each answer is read in
full and checked (status 200, the task id in the body; the mcp 1.x server answers in SSE).
Requests per second; ratio = demo / mcp 1.x (higher is better). Client and server share the
machine's cores, so read the ratio rather than the absolute figures.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from _common import Row, demo_server, emit, mcp1_server, parser

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.protocol import jsonrpc

CONCURRENCY = 8


async def _rate(url: str, headers: dict[str, str], task_id: str, workers: int, seconds: float) -> float:
    ids = itertools.count(1000)
    limits = httpx.Limits(max_connections=workers, max_keepalive_connections=workers)
    async with httpx.AsyncClient(limits=limits, timeout=30) as bare:

        async def once() -> None:
            # a fresh request id each time: the mcp 1.x server routes answers by id within a session
            body = jsonrpc.encode(jsonrpc.request(next(ids), "tasks/get", {"taskId": task_id}))
            response = await bare.post(url, content=body, headers=headers)
            if response.status_code != 200 or task_id not in response.text:
                raise RuntimeError(f"bad answer {response.status_code}: {response.text[:200]}")

        for _ in range(20):
            await once()
        deadline = time.perf_counter() + seconds
        counts = [0] * workers

        async def worker(k: int) -> None:
            while time.perf_counter() < deadline:
                await once()
                counts[k] += 1

        began = time.perf_counter()
        await asyncio.gather(*(worker(k) for k in range(workers)))
        return sum(counts) / (time.perf_counter() - began)


async def _server_rates(url: str, tool: str, arguments: dict, seconds: float) -> tuple[float, float]:
    async with mtj.connect(url, dialect="2025-11-25") as client:
        task = await client.start_task(tool, arguments)
        headers = dict(client.transport._post_headers)
        sequential = await _rate(url, headers, task.task_id, 1, seconds)
        concurrent = await _rate(url, headers, task.task_id, CONCURRENCY, seconds)
        try:
            await task.cancel()
        except mtj.MCPError:
            pass
    return sequential, concurrent


async def rows(seconds: float) -> list[Row]:
    with demo_server("--dialect", "2025-11-25") as url:
        demo_seq, demo_conc = await _server_rates(url, "slow_compute", {"seconds": 3600}, seconds)
    with mcp1_server() as url:
        ref_seq, ref_conc = await _server_rates(url, "long_job", {"seconds": 3600, "steps": 1}, seconds)
    return [
        Row("demo server tasks/get, sequential", demo_seq, "mcp 1.x server, sequential", ref_seq, "req/s"),
        Row(
            f"demo server tasks/get, {CONCURRENCY} concurrent",
            demo_conc,
            f"mcp 1.x server, {CONCURRENCY} concurrent",
            ref_conc,
            "req/s",
        ),
    ]


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--seconds", type=float, default=None, help="per measurement (default 3; 1 with --tiny)")
    args = p.parse_args()
    emit(asyncio.run(rows(args.seconds or (1.0 if args.tiny else 3.0))), args.json)
