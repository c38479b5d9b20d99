"""A misbehaving MCP server over a real loopback socket, for faults a real server won't make on demand.

Each route misbehaves in one way once ``initialize`` has been answered normally:
``/malformed`` answers requests with text that is not JSON, ``/nonsense`` with JSON-RPC results of the
wrong shape, ``/status/<code>`` with that HTTP status, ``/cut`` cuts SSE answers without event ids,
``/resume`` cuts SSE answers after a primed event id and serves the answer on a GET with Last-Event-ID,
``/silent`` never answers ``tools/list``, ``/expire`` forgets the session (404) after initialize,
``/wrongtype`` answers with text/html. Before that, ``server/discover`` gets method-not-found, as from
a legacy server (the client's probe then falls back to ``initialize`` at once).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

INIT_RESULT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}},
    "serverInfo": {"name": "fault-server", "version": "0"},
}
TOOLS = {"tools": [{"name": "job", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}}]}


class State:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict]] = []  # (http method, mode, headers)
        self.messages: list[dict] = []  # every JSON-RPC message POSTed, in order
        #: Set when a ``notifications/cancelled`` arrives (a test waits for it instead of sleeping).
        self.cancelled = asyncio.Event()
        self.resume_payload: dict[str, str] = {}


def _result(msg: dict, result: dict) -> dict:
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


def make_app(state: State) -> Starlette:
    async def endpoint(request: Request) -> Response:
        mode = request.path_params["mode"]
        state.requests.append((request.method, mode, dict(request.headers)))
        if request.method == "DELETE":
            return Response(status_code=200)
        if request.method == "GET":
            last = request.headers.get("last-event-id")
            if mode == "resume" and last in state.resume_payload:
                body = state.resume_payload.pop(last)
                return StreamingResponse(iter([f"id: {last}-r\ndata: {body}\n\n"]), media_type="text/event-stream")
            return Response(status_code=405)
        msg = json.loads(await request.body())
        state.messages.append(msg)
        if msg.get("method") == "notifications/cancelled":
            state.cancelled.set()
        if "id" not in msg or "method" not in msg:
            return Response(status_code=202)
        if msg["method"] == "server/discover":
            return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})
        if msg["method"] == "initialize":
            return JSONResponse(_result(msg, INIT_RESULT), headers={"Mcp-Session-Id": "s1"})
        if mode == "expire":
            return Response(status_code=404)
        if msg["method"] == "tools/list" and mode not in ("silent", "nonsense"):
            return JSONResponse(_result(msg, TOOLS))
        if mode == "malformed":
            return Response(b"{this is not json", media_type="application/json")
        if mode == "nonsense":
            if msg["method"] == "tools/list":
                return JSONResponse(_result(msg, {"tools": "all of them"}))
            if msg["method"] == "tools/call":
                return JSONResponse(_result(msg, {"task": {"taskId": 7, "status": "sleeping"}}))
            return JSONResponse(_result(msg, {"status": "fine"}))
        if mode.startswith("status"):
            code = int(request.query_params.get("code", "500"))
            return Response(f"server says {code}".encode(), status_code=code)
        if mode == "wrongtype":
            return Response(b"<html>hello</html>", media_type="text/html")
        if mode == "silent":
            await asyncio.sleep(3600)
        if mode == "cut":
            return StreamingResponse(iter(["data: \n\n"]), media_type="text/event-stream")
        if mode == "resume":
            event_id = f"e{msg['id']}"
            state.resume_payload[event_id] = json.dumps(
                _result(
                    msg,
                    {"content": [{"type": "text", "text": "resumed"}]} if msg["method"] == "tools/call" else TOOLS,
                )
            )
            return StreamingResponse(
                iter([f"id: {event_id}\nretry: 50\ndata: \n\n"]), media_type="text/event-stream"
            )
        return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no"}})

    return Starlette(routes=[Route("/{mode}", endpoint, methods=["GET", "POST", "DELETE"])])


@contextlib.asynccontextmanager
async def serve_faults() -> AsyncIterator[tuple[str, State]]:
    """Run the fault server on 127.0.0.1 in this event loop; yields its base URL and its record."""
    state = State()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(make_app(state), log_level="error", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}", state
    finally:
        server.should_exit = True
        server.force_exit = True
        await asyncio.wait_for(task, 5)
        sock.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
