"""Client CPU per ``tasks/get`` poll, over HTTP and over stdio, each beside its floor from the same run.

    python benchmarks/poll_cost.py [--polls N] [--only http|stdio] [--tiny] [--json]

What is timed is this process's CPU (``time.process_time``: all of the client's work, its
background tasks included; the server's is not counted) per ``tasks/get`` of one long
``slow_compute`` task on the demo server in ``--dialect 2025-11-25`` mode:

* ours: ``client.dialect.get(task_id)``, what ``TaskHandle``'s poller awaits (session → dialect →
  transport → parse → TaskState);
* the anchor: a bare ``httpx.AsyncClient`` POST of the identical bytes and headers to the same
  server, answer read and ``json.loads``-ed (target: ours at most 0.4x of it);
* the candidate engines, the same POST: httpx over the ``httpx-aiohttp`` transport, and a bare
  ``aiohttp.ClientSession`` (the engine our transport uses: ours beside it is our own layers' cost);
* mcp 1.x: ``ClientSession.experimental.get_task(task_id)`` of the official SDK (what its
  ``poll_task`` / ``poll_until_terminal`` awaits between sleeps), same server, its own session;
* hand-written HTTP/1.1 (for scale, no target): the same POST written by hand on one keep-alive
  ``asyncio`` stream connection, the answer's headers and body read and ``json.loads``-ed: what
  the exchange costs without an HTTP library;
* stdio floor: a bare write of the same request line to another demo server's stdin and a
  ``readline`` + ``json.loads`` of its answer (the initialize handshake done by hand); and, for
  scale, the ``mcp`` 1.x client over stdio (``stdio_client``) on a third demo server process.

The figures are taken in interleaved rounds (ours, anchor, ours, anchor, ...) and each is the
median over the rounds, so that a machine that slows down for a while slows both alike.
Targets: over HTTP ours at most 0.4x bare httpx; over stdio at most 1.3x the bare pipe; at
most 0.5x mcp 1.x.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp
import httpx
import httpx_aiohttp
from _common import Row, demo_server, emit, parser

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.demo import server_command
from mcp_tasks_jupyter.protocol import jsonrpc

warnings.filterwarnings("ignore", message="The experimental tasks API is deprecated", category=DeprecationWarning)

FLOOR_RATIO = 1.3
HTTPX_RATIO = 0.4
MCP1_RATIO = 0.5
ROUNDS = 5
DIALECT = ("--dialect", "2025-11-25")

Call = Callable[[], Awaitable[Any]]


async def _cpu_per_call(call: Call, polls: int) -> float:
    """Microseconds of this process's CPU per ``await call()``, over ``polls`` calls."""
    began = time.process_time()
    for _ in range(polls):
        await call()
    return (time.process_time() - began) / polls * 1e6


async def _interleaved(calls: dict[str, Call], polls: int) -> dict[str, float]:
    """Median CPU per call of each of ``calls``, measured in ROUNDS interleaved rounds after a warm-up."""
    for call in calls.values():
        for _ in range(min(30, polls)):
            await call()
    per_round = max(1, polls // ROUNDS)
    samples: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(ROUNDS):
        for name, call in calls.items():
            samples[name].append(await _cpu_per_call(call, per_round))
    return {name: statistics.median(values) for name, values in samples.items()}


async def http_rows(polls: int) -> list[Row]:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    with demo_server(*DIALECT) as url:
        async with (
            mtj.connect(url, dialect="2025-11-25") as client,
            httpx.AsyncClient() as bare,
            httpx.AsyncClient(transport=httpx_aiohttp.AiohttpTransport()) as over_aiohttp,
            aiohttp.ClientSession() as bare_aiohttp,
            streamablehttp_client(url) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            task = await client.start_task("slow_compute", {"seconds": 3600})
            body = jsonrpc.encode(jsonrpc.request(1, "tasks/get", {"taskId": task.task_id}))
            headers = dict(client.transport._post_headers)
            by_hand = await _HandWritten(url, headers, body).__aenter__()

            async def floor() -> None:
                response = await bare.post(url, content=body, headers=headers)
                json.loads(response.content)

            async def httpx_on_aiohttp() -> None:
                response = await over_aiohttp.post(url, content=body, headers=headers)
                json.loads(response.content)

            async def plain_aiohttp() -> None:
                async with bare_aiohttp.post(url, data=body, headers=headers) as response:
                    json.loads(await response.read())

            await session.initialize()
            created = await session.experimental.call_tool_as_task("slow_compute", {"seconds": 3600})
            mcp1_id = created.task.taskId
            cost = await _interleaved(
                {
                    "ours": lambda: client.dialect.get(task.task_id),
                    "floor": floor,
                    "httpx_aiohttp": httpx_on_aiohttp,
                    "aiohttp": plain_aiohttp,
                    "mcp1": lambda: session.experimental.get_task(mcp1_id),
                    "by_hand": by_hand.post,
                },
                polls,
            )
            await by_hand.__aexit__()
            await session.experimental.cancel_task(mcp1_id)
            await task.cancel()
    name = f"our client CPU per tasks/get, HTTP (N={polls})"
    return [
        Row(
            name,
            cost["ours"],
            "bare httpx POST, same bytes",
            cost["floor"],
            "µs/poll",
            f"<= {HTTPX_RATIO}x",
            cost["ours"] <= HTTPX_RATIO * cost["floor"],
        ),
        Row(name, cost["ours"], "httpx over httpx-aiohttp POST, same bytes", cost["httpx_aiohttp"], "µs/poll"),
        Row(name, cost["ours"], "bare aiohttp POST, same bytes (our engine)", cost["aiohttp"], "µs/poll"),
        Row(
            name,
            cost["ours"],
            "mcp 1.x ClientSession get_task",
            cost["mcp1"],
            "µs/poll",
            f"<= {MCP1_RATIO}x",
            cost["ours"] <= MCP1_RATIO * cost["mcp1"],
        ),
        Row(name, cost["ours"], "hand-written HTTP/1.1 POST, asyncio stream", cost["by_hand"], "µs/poll"),
    ]


class _HandWritten:
    """One keep-alive HTTP/1.1 connection on an asyncio stream, requests and answers by hand."""

    def __init__(self, url: str, headers: dict[str, str], body: bytes) -> None:
        parts = httpx.URL(url)
        self.host, self.port = parts.host, parts.port or 80
        lines = [
            f"POST {parts.raw_path.decode()} HTTP/1.1",
            f"Host: {self.host}:{self.port}",
            *(f"{k}: {v}" for k, v in headers.items()),
            f"Content-Length: {len(body)}",
            "",
            "",
        ]
        self.request = "\r\n".join(lines).encode() + body

    async def __aenter__(self) -> _HandWritten:
        self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.writer.close()

    async def post(self) -> Any:
        self.writer.write(self.request)
        reader = self.reader
        status = await reader.readline()
        if not status.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"unexpected answer {status!r}")
        length, chunked = None, False
        while (line := await reader.readline()) != b"\r\n":
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
        if not chunked:
            return json.loads(await reader.readexactly(length or 0))
        chunks = []
        while size := int((await reader.readline()).split(b";")[0], 16):
            chunks.append(await reader.readexactly(size))
            await reader.readline()
        await reader.readline()
        return json.loads(b"".join(chunks))


class _BarePipe:
    """A demo server over stdio driven by hand: initialize, one task, then raw request lines."""

    async def __aenter__(self) -> _BarePipe:
        self.proc = await asyncio.create_subprocess_exec(
            *server_command(*DIALECT), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 24
        )
        await self.ask(
            jsonrpc.request(
                0,
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            )
        )
        self.proc.stdin.write(jsonrpc.encode(jsonrpc.notification("notifications/initialized", None)) + b"\n")
        created = await self.ask(
            jsonrpc.request(
                1, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 3600}, "task": {"ttl": 600_000}}
            )
        )
        self.task_id = created["result"]["task"]["taskId"]
        return self

    async def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send ``message`` and return the answer with its id (skipping notifications)."""
        self.proc.stdin.write(jsonrpc.encode(message) + b"\n")
        await self.proc.stdin.drain()
        while True:
            answer = json.loads(await asyncio.wait_for(self.proc.stdout.readline(), 30))
            if answer.get("id") == message["id"]:
                return answer

    async def __aexit__(self, *exc: object) -> None:
        self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()


async def stdio_rows(polls: int) -> list[Row]:
    from mcp import StdioServerParameters
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    command = server_command(*DIALECT)
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with (
        mtj.connect(command, dialect="2025-11-25") as client,
        _BarePipe() as pipe,
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        created = await session.experimental.call_tool_as_task("slow_compute", {"seconds": 3600})
        mcp1_id = created.task.taskId
        task = await client.start_task("slow_compute", {"seconds": 3600})
        line = jsonrpc.encode(jsonrpc.request(10**9, "tasks/get", {"taskId": pipe.task_id})) + b"\n"
        stdin, stdout = pipe.proc.stdin, pipe.proc.stdout

        async def floor() -> None:
            stdin.write(line)
            await stdin.drain()
            while json.loads(await stdout.readline()).get("id") != 10**9:
                pass

        cost = await _interleaved(
            {
                "ours": lambda: client.dialect.get(task.task_id),
                "floor": floor,
                "mcp1": lambda: session.experimental.get_task(mcp1_id),
            },
            polls,
        )
        await session.experimental.cancel_task(mcp1_id)
        await task.cancel()
    name = f"our client CPU per tasks/get, stdio (N={polls})"
    return [
        Row(
            name,
            cost["ours"],
            "bare pipe write + readline (floor)",
            cost["floor"],
            "µs/poll",
            f"<= {FLOOR_RATIO}x",
            cost["ours"] <= FLOOR_RATIO * cost["floor"],
        ),
        Row(name, cost["ours"], "mcp 1.x ClientSession get_task, stdio", cost["mcp1"], "µs/poll"),
    ]


async def rows(http_polls: int, stdio_polls: int, only: str | None = None) -> list[Row]:
    http = await http_rows(http_polls) if only != "stdio" else []
    return http + (await stdio_rows(stdio_polls) if only != "http" else [])


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument(
        "--polls",
        type=int,
        default=None,
        help="N over HTTP (default 500; 50 with --tiny); stdio polls 10x as many",
    )
    p.add_argument("--only", choices=["http", "stdio"], help="measure one transport only")
    args = p.parse_args()
    n = args.polls or (50 if args.tiny else 500)
    emit(asyncio.run(rows(n, 10 * n, args.only)), args.json)
