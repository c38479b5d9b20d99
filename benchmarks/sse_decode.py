"""CPU to decode one poll-sized event stream (a ``tasks/get`` answer sent as SSE), beside its floors.

    python benchmarks/sse_decode.py [--streams N] [--tiny] [--json]

What is timed (``time.process_time`` per stream, median of interleaved rounds):

* ours: ``transport/sse.read_events`` over the stream's bytes as aiohttp hands them (one chunk), the
  event's data then ``json.loads``-ed: what the HTTP transport does with an SSE answer;
* the floor: ``json.loads`` of the same data alone (what any decoder must at least do);
* for scale, where it is installed (``pip install httpx-sse``; no longer a dependency): httpx-sse's
  ``EventSource`` over an ``httpx.Response`` made around the same bytes, the way the transport fed it
  before issue 31 (a made-up response for bytes aiohttp had already read).

No target: the figure shows what the reader costs beside the floor and beside what it replaced.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator

from _common import Row, emit, parser

from mcp_tasks_jupyter.transport.sse import StreamPosition, read_events

ANSWER = {
    "jsonrpc": "2.0",
    "id": 41,
    "result": {
        "taskId": "5f1c2d9e-7a4b-4c3e-9f0a-1b2c3d4e5f60",
        "status": "working",
        "statusMessage": "step 3/10: integrating the tidal model",
        "createdAt": "2026-12-05T05:00:00Z",
        "lastUpdatedAt": "2026-12-05T05:00:03Z",
        "ttl": 3600000,
        "pollInterval": 1000,
    },
}
DATA = json.dumps(ANSWER)
STREAM = f"event: message\nid: 41-1\ndata: {DATA}\n\n".encode()


async def _one_chunk() -> AsyncIterator[bytes]:
    yield STREAM


async def ours() -> None:
    async for event in read_events(_one_chunk(), StreamPosition()):
        json.loads(event.data)


def floor() -> None:
    json.loads(DATA)


def _httpx_sse() -> object | None:
    try:
        import httpx
        from httpx_sse import EventSource
    except ImportError:
        return None

    async def decode() -> None:
        response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=STREAM)
        async for event in EventSource(response).aiter_sse():
            json.loads(event.data)

    return decode


def _time_async(loop: asyncio.AbstractEventLoop, make: object, n: int) -> float:
    async def batch() -> None:
        for _ in range(n):
            await make()  # type: ignore[operator]

    start = time.process_time()
    loop.run_until_complete(batch())
    return (time.process_time() - start) / n


def _time_sync(fn: object, n: int) -> float:
    start = time.process_time()
    for _ in range(n):
        fn()  # type: ignore[operator]
    return (time.process_time() - start) / n


def rows(streams: int, rounds: int) -> list[Row]:
    loop = asyncio.new_event_loop()
    theirs = _httpx_sse()
    figures: dict[str, list[float]] = {"ours": [], "floor": [], "httpx-sse": []}
    for _ in range(rounds):
        figures["ours"].append(_time_async(loop, ours, streams))
        figures["floor"].append(_time_sync(floor, streams))
        if theirs is not None:
            figures["httpx-sse"].append(_time_async(loop, theirs, streams))
    loop.close()
    us = {name: statistics.median(values) * 1e6 for name, values in figures.items() if values}
    out = [
        Row(
            f"SSE answer decoded (read_events + json.loads, {len(STREAM)} bytes)",
            us["ours"],
            "json.loads of its data alone",
            us["floor"],
            "µs/stream",
        )
    ]
    if "httpx-sse" in us:
        out.append(
            Row(
                "SSE answer decoded (read_events + json.loads)",
                us["ours"],
                "httpx-sse over a made-up httpx.Response (before issue 31)",
                us["httpx-sse"],
                "µs/stream",
            )
        )
    return out


if __name__ == "__main__":
    p = parser(__doc__)
    p.add_argument("--streams", type=int, default=None, help="streams per round (default 5000; 200 with --tiny)")
    args = p.parse_args()
    n = args.streams or (200 if args.tiny else 5000)
    emit(rows(n, 3 if args.tiny else 9), args.json)
