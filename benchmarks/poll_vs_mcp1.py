"""Client CPU per ``tasks/get`` poll: our client beside the ``mcp`` 1.x client, same server, same run.

    python benchmarks/poll_vs_mcp1.py [--polls N] [--tiny] [--json]

One demo server over Streamable HTTP in ``--dialect 2025-11-25`` mode (the dialect the ``mcp`` 1.x
SDK speaks). Each client opens its own session, starts one long ``slow_compute`` task and polls it
N times:

* ours: ``client.dialect.get(task_id)`` (what ``TaskHandle``'s poller awaits: session → dialect →
  transport → parse → TaskState);
* mcp 1.x: ``ClientSession.experimental.get_task(task_id)`` (what its ``poll_task`` /
  ``poll_until_terminal`` awaits between sleeps: pydantic request → streamable HTTP client → SSE
  or JSON answer → ``GetTaskResult``);
* a bare ``httpx.AsyncClient`` POST of the same request (the floor, for scale).

CPU is this process's (``time.process_time``), all of the client's work including its background
reader tasks; the server's is not counted. Target: ours at most 0.5x mcp 1.x.
"""

from __future__ import annotations

import asyncio
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from _common import Row, demo_server, emit, parser

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.protocol import jsonrpc

warnings.filterwarnings("ignore", message="The experimental tasks API is deprecated", category=DeprecationWarning)

TARGET_RATIO = 0.5


async def _cpu_per_call(call, polls: int) -> float:
    for _ in range(min(20, polls)):
        await call()
    began = time.process_time()
    for _ in range(polls):
        await call()
    return (time.process_time() - began) / polls * 1e6


async def _ours(url: str, polls: int) -> tuple[float, float]:
    async with mtj.connect(url, dialect="2025-11-25") as client:
        task = await client.start_task("slow_compute", {"seconds": 3600})
        ours = await _cpu_per_call(lambda: client.dialect.get(task.task_id), polls)
        body = jsonrpc.encode(jsonrpc.request(1, "tasks/get", {"taskId": task.task_id}))
        headers = dict(client.transport._post_headers)
        async with httpx.AsyncClient() as bare:
            async def floor() -> None:
                response = await bare.post(url, content=body, headers=headers)
                response.json()
            base = await _cpu_per_call(floor, polls)
        await task.cancel()
    return ours, base


async def _mcp1(url: str, polls: int) -> float:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async with streamablehttp_client(url) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        created = await session.experimental.call_tool_as_task("slow_compute", {"seconds": 3600})
        task_id = created.task.taskId
        cost = await _cpu_per_call(lambda: session.experimental.get_task(task_id), polls)
        await session.experimental.cancel_task(task_id)
    return cost


async def rows(polls: int) -> list[Row]:
    with demo_server("--dialect", "2025-11-25") as url:
        ref = await _mcp1(url, polls)
        ours, floor = await _ours(url, polls)
    return [
        Row(f"our client CPU per tasks/get (N={polls})", ours, "mcp 1.x ClientSession get_task", ref,
            "µs/poll", f"<= {TARGET_RATIO}x", ours <= TARGET_RATIO * ref),
        Row(f"our client CPU per tasks/get (N={polls})", ours, "bare httpx POST (floor)", floor, "µs/poll"),
    ]


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--polls", type=int, default=None, help="N (default 300; 50 with --tiny)")
    args = p.parse_args()
    emit(asyncio.run(rows(args.polls or (50 if args.tiny else 300))), args.json)
