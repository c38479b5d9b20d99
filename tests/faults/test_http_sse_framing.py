"""SSE answers over a real socket: lines end only at CR, LF or CRLF, wherever the chunks happen to split.

Python's ``str.splitlines`` (behind httpx's ``aiter_lines``) also ends lines at U+2028, U+2029, U+0085
and \\x1c-\\x1e, which broke events and lost their messages; Node's ``JSON.stringify`` writes U+2028
raw inside strings.
"""

import asyncio
import itertools
import json

import pytest

import mcp_tasks_jupyter as mtj
from mcp_tasks_jupyter.protocol import jsonrpc
from mcp_tasks_jupyter.transport.sse import MAX_EVENT_BYTES

from .http_bytes_server import bytes_server, http_transport
from .server import Raw, http_fault_server

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]

TRICKY = "line\u2028separator\u2029paragraph\u0085next-line é €𝄞"
SSE = {"Content-Type": "text/event-stream"}


def tricky_stream(msg_id) -> bytes:
    """An SSE answer whose JSON holds the tricky characters raw, with every line ending there is."""
    head = json.dumps({"jsonrpc": "2.0", "id": msg_id}, ensure_ascii=False)[:-1]
    tail = json.dumps({"result": {"text": TRICKY, "n": [1, 2]}}, ensure_ascii=False)[1:]
    return (
        "\ufeff: a comment\x1cdata: injected\x1d\x1e\r\n"  # \x1c-\x1e: not line ends
        "id: e-1\r"  # a lone CR
        "retry: 50\r\n"
        f"data: {head},\n"  # JSON over two data lines
        f"data: {tail}\r\n"
        "\r\n"
    ).encode()


def split_at_tricky_places(raw: bytes) -> list[bytes]:
    """Pieces cut inside a CRLF, inside the bytes of U+2028 and €, and inside the BOM."""
    cuts = {
        2,
        raw.index(b"retry: 50\r\n") + len(b"retry: 50\r"),
        raw.index("\u2028".encode()) + 1,
        raw.index("€".encode()) + 2,
        raw.rindex(b"\r\n\r\n") + 3,
    }
    edges = [0, *sorted(cuts), len(raw)]
    return [raw[a:b] for a, b in itertools.pairwise(edges)]


def expected_result():
    return {"text": TRICKY, "n": [1, 2]}


async def test_a_message_split_at_tricky_places_arrives_intact():
    def answer(request):
        raw = tricky_stream(request.message["id"])
        return 200, SSE, _pieces(split_at_tricky_places(raw))

    async with bytes_server(answer) as server, http_transport(server.url) as (transport, got):
        await transport.send(jsonrpc.request(7, "tasks/get", {"taskId": "t"}))
        await got.until(lambda: got.messages or got.failures)
        assert got.messages == [jsonrpc.Response(7, expected_result())]
        assert got.noise == [] and got.failures == {}


async def test_through_the_client_too():
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        server.brain.script["tasks/get"] = lambda m: Raw(200, tricky_stream(m["id"]), "text/event-stream")
        result = await asyncio.wait_for(client.session.request("tasks/get", {"taskId": "t"}), 20)
        assert result == expected_result()


async def test_an_endless_sse_line_is_refused_and_the_stream_closed():
    cap = MAX_EVENT_BYTES + 16 * 1024 * 1024

    async def endless():
        yield b"id: 1\ndata: "
        piece = b"x" * (1024 * 1024)
        for _ in range(cap // len(piece)):
            yield piece

    async with (
        bytes_server(lambda r: (200, SSE, endless()), pause=0) as server,
        http_transport(server.url) as (transport, got),
    ):
        await transport.send(jsonrpc.request(1, "tasks/get", {"taskId": "t"}))
        await got.until(lambda: got.failures or got.messages, timeout=60)
        failure = got.failures[1]
        assert isinstance(failure, mtj.InvalidMessage) and "larger than 64 MiB" in str(failure)
        assert server.url in str(failure)  # names the server
        # It stopped reading (and hung up) soon after the bound, instead of reading it all.
        assert server.sent < MAX_EVENT_BYTES + 8 * 1024 * 1024
        assert [r.method for r in server.requests] == ["POST"]  # not resumed: it would come again


async def test_an_endless_line_on_the_get_stream_is_noise_and_the_stream_closed():
    async def endless():
        yield b"data: "
        piece = b"y" * (1024 * 1024)
        for _ in range((MAX_EVENT_BYTES + 16 * 1024 * 1024) // len(piece)):
            yield piece

    async with (
        bytes_server(lambda r: (200, SSE, endless()), pause=0) as server,
        http_transport(server.url) as (transport, got),
    ):
        await transport.open_listener()
        await got.until(lambda: got.noise, timeout=60)
        assert "larger than 64 MiB" in str(got.noise[0])
        assert server.sent < MAX_EVENT_BYTES + 8 * 1024 * 1024


async def _pieces(parts):
    for part in parts:
        yield part
