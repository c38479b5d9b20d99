"""An answer that cannot be decoded but still shows which request it answers fails that request at once.

``"pollInterval": 1e400`` is valid JSON text that no double holds: the message is refused, and the
request it answered must fail with InvalidMessage now, not wait for its 30 s timeout. The short
``wait_for`` below is the hang guard (well under the request timeout); nothing here times anything.
"""

import asyncio

import pytest

import mcp_tasks_jupyter as mtj

from .conftest import stdio_argv
from .server import Raw, http_fault_server

pytestmark = pytest.mark.anyio

GUARD_S = 8.0  # the request timeout is 30 s


def overflow(message):
    body = b'{"jsonrpc": "2.0", "id": %d, "result": {"pollInterval": 1e400}}' % message["id"]
    return Raw(200, body, "application/json")


def overflow_event(message):
    event = b'data: {"jsonrpc": "2.0", "id": %d, "result": {"pollInterval": 1e400}}\n\n' % message["id"]
    return Raw(200, event, "text/event-stream")


@pytest.mark.parametrize("method", ["tools/call", "tasks/get"])
async def test_over_stdio_the_request_fails_at_once(method):
    async with mtj.connect(stdio_argv("overflowing_answers")) as client:
        params = {"name": "job", "arguments": {}} if method == "tools/call" else {"taskId": "t-1"}
        with pytest.raises(mtj.InvalidMessage, match=r"too large for a double"):
            await asyncio.wait_for(client.session.request(method, params), GUARD_S)


@pytest.mark.parametrize("answer", [overflow, overflow_event], ids=["json", "sse"])
@pytest.mark.parametrize("method", ["tools/call", "tasks/get"])
async def test_over_http_the_request_fails_at_once(method, answer):
    async with http_fault_server() as server, mtj.connect(server.url) as client:
        server.brain.script[method] = answer
        params = {"name": "job", "arguments": {}} if method == "tools/call" else {"taskId": "t-1"}
        with pytest.raises(mtj.InvalidMessage, match=r"too large for a double"):
            await asyncio.wait_for(client.session.request(method, params), GUARD_S)
