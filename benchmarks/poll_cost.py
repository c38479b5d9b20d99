"""Client CPU per ``tasks/get`` poll against the demo server, beside its floor, from the same run.

    python benchmarks/poll_cost.py [--polls N]

HTTP: our full path (session → dialect → transport → parse → TaskState) against a bare
``httpx.AsyncClient`` POST of the identical bytes to the same server. stdio: our path against a bare
write/readline on the same pipe. CPU is this process's (``time.process_time``): the server's work is
not counted. Machines here are noisy: read the ratio, not the absolute figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import subprocess
import sys
import time

import httpx

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.protocol import jsonrpc


async def _cpu_per_call(call, polls: int) -> float:
    for _ in range(min(50, polls)):
        await call()
    began = time.process_time()
    for _ in range(polls):
        await call()
    return (time.process_time() - began) / polls * 1e6


async def http_figures(polls: int) -> tuple[float, float]:
    server = subprocess.Popen([sys.executable, "-m", "mcp_tasks_jupyter.demo", "--http", "--port", "0"],
                              stdout=subprocess.PIPE, text=True)
    try:
        url = re.search(r"(http://\S+)", server.stdout.readline()).group(1)
        async with mtj.connect(url) as client:
            task = await client.start_task("slow_compute", {"seconds": 3600})
            ours = await _cpu_per_call(lambda: client.dialect.get(task.task_id), polls)
            transport = client.transport
            body = jsonrpc.encode(jsonrpc.request(1, "tasks/get", {"taskId": task.task_id}))
            headers = dict(transport._post_headers)
            async with httpx.AsyncClient() as bare:
                async def floor() -> None:
                    response = await bare.post(url, content=body, headers=headers)
                    response.json()
                base = await _cpu_per_call(floor, polls)
            await task.cancel()
        return ours, base
    finally:
        server.terminate()
        server.wait(5)


async def stdio_figures(polls: int) -> tuple[float, float]:
    async with mtj.connect([sys.executable, "-m", "mcp_tasks_jupyter.demo"]) as client:
        task = await client.start_task("slow_compute", {"seconds": 3600})
        ours = await _cpu_per_call(lambda: client.dialect.get(task.task_id), polls)
        proc = client.transport._proc
        reader_task = client.transport._readers[0]
        reader_task.cancel()  # take the pipe over for the floor measurement
        await asyncio.gather(reader_task, return_exceptions=True)
        line = jsonrpc.encode(jsonrpc.request(10**9, "tasks/get", {"taskId": task.task_id})) + b"\n"

        async def floor() -> None:
            proc.stdin.write(line)
            await proc.stdin.drain()
            while True:
                answer = json.loads(await proc.stdout.readline())
                if answer.get("id") == 10**9:
                    return

        base = await _cpu_per_call(floor, polls)
    return ours, base


async def main(polls: int) -> None:
    rows = [("HTTP  tasks/get", *await http_figures(polls)),
            ("stdio tasks/get", *await stdio_figures(polls))]
    print(f"client CPU per poll, {polls} polls each (µs; ratio = ours / floor)")
    print(f"{'path':<16} {'ours':>10} {'floor':>10} {'ratio':>7}")
    for name, ours, base in rows:
        print(f"{name:<16} {ours:10.1f} {base:10.1f} {ours / base:7.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--polls", type=int, default=2000)
    asyncio.run(main(parser.parse_args().polls))
