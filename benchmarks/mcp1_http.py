"""The tests' ``mcp`` 1.x task server over Streamable HTTP, served the way the SDK serves it.

    python benchmarks/mcp1_http.py     # first stdout line: "mcp1 task server listening on http://127.0.0.1:PORT/mcp"

The server (tools, task store) is ``tests/interop/mcp1_task_server.py``; only the listening socket
differs: uvicorn binds it itself, as ``FastMCP.run("streamable-http")`` does, so asyncio sets
``TCP_NODELAY`` on every connection. (The test launcher binds a socket made with ``proto`` 0, which
asyncio leaves without ``TCP_NODELAY``: each answer then waits about 40 ms for the client's delayed
ACK, and a throughput anchor would measure that stall rather than the SDK.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "interop"))

from mcp1_task_server import server


async def serve() -> None:
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.responses import PlainTextResponse

    manager = StreamableHTTPSessionManager(app=server)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == "/mcp":
            await manager.handle_request(scope, receive, send)
        elif scope["type"] == "http":
            await PlainTextResponse("not found", status_code=404)(scope, receive, send)

    uv = uvicorn.Server(
        uvicorn.Config(
            app, host="127.0.0.1", port=0, log_level="warning", lifespan="off", timeout_graceful_shutdown=2
        )
    )
    async with manager.run(), anyio.create_task_group() as group:
        group.start_soon(uv.serve)
        while not uv.started:
            await anyio.sleep(0.01)
        port = uv.servers[0].sockets[0].getsockname()[1]
        print(f"mcp1 task server listening on http://127.0.0.1:{port}/mcp", flush=True)


if __name__ == "__main__":
    anyio.run(serve)
