"""Server-to-client requests (sampling, elicitation, ping) over a real pipe to a scripted server."""

import asyncio
import json
import sys
import textwrap

import pytest

import mcp_tasks_jupyter as mtj

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]

# Answers initialize (and server/discover with method-not-found, as a legacy server does, so the client's
# probe does not wait), then on tools/call sends the request named by the tool to the client (ids 1000,
# ...), and returns the client's answer (or error) as the tool's text.
SCRIPT = textwrap.dedent("""
    import json, sys
    def send(obj):
        print(json.dumps(obj), flush=True)
    pending = {}
    for line in sys.stdin:
        msg = json.loads(line)
        method = msg.get("method")
        if method == "server/discover":
            send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})
        elif method == "initialize":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-11-25",
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "asker"},
                  "clientCaps": msg["params"]["capabilities"]}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [
                {"name": "ask", "inputSchema": {"type": "object"}}]}})
        elif method == "tools/call":
            ask = msg["params"]["arguments"]
            asked = len(pending) + 1000  # request ids are never reused in a session
            pending[asked] = msg["id"]
            send({"jsonrpc": "2.0", "id": asked, "method": ask["method"], "params": ask["params"]})
        elif "id" in msg and msg["id"] in pending and method is None:
            answer = msg.get("result", msg.get("error"))
            send({"jsonrpc": "2.0", "id": pending[msg["id"]], "result": {
                  "content": [{"type": "text", "text": json.dumps(answer)}]}})
""")

SAMPLING = {
    "method": "sampling/createMessage",
    "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 10},
}
ELICIT = {
    "method": "elicitation/create",
    "params": {
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
    },
}


def server():
    return [sys.executable, "-c", SCRIPT]


async def ask(client, request):
    result = await asyncio.wait_for(client.call_tool("ask", request), 10)
    return json.loads(result.text)


async def test_sampling_goes_to_the_handler():
    seen = []

    async def model(params):
        seen.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "tiny"}

    async with mtj.connect(server(), sampling_handler=model) as client:
        assert client.session.capabilities.get("sampling") == {}
        assert (await ask(client, SAMPLING))["content"]["text"] == "4"
        assert seen[0]["maxTokens"] == 10


async def test_without_a_sampling_handler_the_server_gets_a_clear_refusal():
    async with mtj.connect(server()) as client:
        assert "sampling" not in client.session.capabilities
        error = await ask(client, SAMPLING)
        assert "no sampling_handler" in error["message"]


async def test_invalid_requests_and_bad_handler_answers_get_errors():
    async def broken(params):
        return {"action": "maybe"}

    async with mtj.connect(server(), elicitation_handler=broken, sampling_handler=broken) as client:
        assert client.session.capabilities["elicitation"] == {"form": {}}
        error = await ask(client, {"method": "sampling/createMessage", "params": {"messages": "nope"}})
        assert error["code"] == -32602 and "sampling/createMessage params" in error["message"]
        error = await ask(client, ELICIT)
        assert "no valid answer" in error["message"]
        assert await ask(client, {"method": "ping", "params": {}}) == {}
        error = await ask(client, {"method": "roots/list", "params": {}})
        assert error["code"] == -32601


async def test_elicitation_without_a_handler_is_declined():
    async with mtj.connect(server()) as client:
        assert await ask(client, ELICIT) == {"action": "decline"}
