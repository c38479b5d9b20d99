"""A 2025-11-25 task server written with the official Python SDK (`mcp` 1.30, experimental tasks).

A real peer for tests/interop: nobody in this project wrote its task runtime.

    python tests/interop/mcp1_task_server.py                 # stdio
    python tests/interop/mcp1_task_server.py --http --port N # Streamable HTTP on 127.0.0.1:N/mcp

With --http the first stdout line is `mcp1 task server listening on http://127.0.0.1:PORT/mcp`
(--port 0 picks a free port).

Tools:
  long_job {seconds, steps?}     taskSupport "required": sleeps in steps, a status message per step,
                                 stops early when cancelled; result text "long_job finished after S s".
  confirm_delete {filename}      taskSupport "required": elicits {confirm: boolean} inside the task
                                 (status input_required; the request arrives on the tasks/result stream);
                                 result text "Deleted 'F'" or "Deletion of 'F' cancelled (ACTION)".
  failing_job {message?}         taskSupport "required": the task ends `failed` with that status message;
                                 the SDK stores no result, so tasks/result answers only `{_meta}`.
  slow_echo {text, seconds?}     taskSupport "optional": a task if the client asks for one, else a plain call.
  echo {text}                    no task support: "echo: TEXT" at once.
"""

from __future__ import annotations

import argparse
import socket
import sys
import warnings
from typing import Any

import anyio
import mcp.types as types
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server

# mcp 1.30 marks its task API deprecated (tasks move to an extension); it is exactly the dialect we need.
warnings.filterwarnings("ignore", message="The experimental tasks API is deprecated", category=DeprecationWarning)

server: Server[Any, Any] = Server("mcp1-task-server", version="1.0.0")
TASKS = server.experimental.enable_tasks()  # in-memory store; tasks/get, result, list, cancel handlers


def _text(text: str, *, is_error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=is_error)


TOOLS = [
    types.Tool(
        name="long_job",
        description="Sleeps for `seconds`, reporting a status message per step.",
        inputSchema={
            "type": "object",
            "properties": {
                "seconds": {"type": "number", "minimum": 0},
                "steps": {"type": "integer", "minimum": 1},
            },
            "required": ["seconds"],
        },
        execution=types.ToolExecution(taskSupport=types.TASK_REQUIRED),
    ),
    types.Tool(
        name="confirm_delete",
        description="Asks for confirmation (elicitation inside the task) before 'deleting' a file.",
        inputSchema={
            "type": "object",
            "properties": {"filename": {"type": "string"}},
            "required": ["filename"],
        },
        execution=types.ToolExecution(taskSupport=types.TASK_REQUIRED),
    ),
    types.Tool(
        name="failing_job",
        description="A task that fails.",
        inputSchema={"type": "object", "properties": {"message": {"type": "string"}}},
        execution=types.ToolExecution(taskSupport=types.TASK_REQUIRED),
    ),
    types.Tool(
        name="slow_echo",
        description="Echoes `text` after `seconds`; runs as a task only if the client asks.",
        inputSchema={
            "type": "object",
            "properties": {"text": {"type": "string"}, "seconds": {"type": "number", "minimum": 0}},
            "required": ["text"],
        },
        execution=types.ToolExecution(taskSupport=types.TASK_OPTIONAL),
    ),
    types.Tool(
        name="echo",
        description="Echoes `text` at once (no task support).",
        inputSchema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
]
TASK_MODES = {tool.name: tool.execution.taskSupport if tool.execution else None for tool in TOOLS}


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    return TOOLS


async def _cancelled(task: ServerTaskContext) -> bool:
    """Whether tasks/cancel has marked the task cancelled.

    The SDK's default tasks/cancel only marks the task in the store; the work must look for itself.
    The SDK's runner then completes the task unless its own copy of the task is terminal, and a
    completion after a cancel raises in the store and takes the session down, so sync that copy.
    """
    current = await TASKS.store.get_task(task.task_id)
    if current is None or current.status != types.TASK_STATUS_CANCELLED:
        return False
    task._ctx._task = current
    return True


async def _long_job(task: ServerTaskContext, seconds: float, steps: int) -> types.CallToolResult:
    for step in range(1, steps + 1):
        if await _cancelled(task):
            return _text("long_job cancelled")  # never stored: the task is terminal already
        await task.update_status(f"step {step}/{steps}")
        await anyio.sleep(seconds / steps)
    return _text(f"long_job finished after {seconds:g} s")


async def _confirm_delete(task: ServerTaskContext, filename: str) -> types.CallToolResult:
    await task.update_status(f"waiting for confirmation to delete {filename!r}")
    answer = await task.elicit(
        message=f"Delete {filename!r}?",
        requestedSchema={
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "description": "Really delete?"}},
            "required": ["confirm"],
        },
    )
    if answer.action == "accept" and answer.content and answer.content.get("confirm") is True:
        return _text(f"Deleted {filename!r}")
    return _text(f"Deletion of {filename!r} cancelled ({answer.action})")


async def _failing_job(task: ServerTaskContext, message: str) -> types.CallToolResult:
    await task.update_status("about to fail")
    await anyio.sleep(0.2)
    raise RuntimeError(message)


@server.call_tool()
async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult | types.CreateTaskResult:
    ctx = server.request_context
    if name not in TASK_MODES:
        return _text(f"Unknown tool: {name}", is_error=True)
    ctx.experimental.validate_task_mode(TASK_MODES[name])  # -32601 on a mismatch, as the SDK does

    if name == "echo":
        return _text(f"echo: {arguments['text']}")
    if name == "slow_echo":
        text, seconds = arguments["text"], float(arguments.get("seconds", 0.5))

        async def slow_echo(task: ServerTaskContext | None = None) -> types.CallToolResult:
            await anyio.sleep(seconds)
            return _text(f"echo: {text}")

        return await ctx.experimental.run_task(slow_echo) if ctx.experimental.is_task else await slow_echo()
    if name == "long_job":
        seconds = float(arguments["seconds"])
        steps = int(arguments.get("steps", max(1, round(seconds * 2))))
        return await ctx.experimental.run_task(lambda task: _long_job(task, seconds, steps))
    if name == "confirm_delete":
        return await ctx.experimental.run_task(lambda task: _confirm_delete(task, arguments["filename"]))
    message = str(arguments.get("message", "failing_job failed on purpose"))
    return await ctx.experimental.run_task(lambda task: _failing_job(task, message))


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_http(port: int) -> None:
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.responses import PlainTextResponse

    manager = StreamableHTTPSessionManager(app=server)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        # Exactly /mcp, no redirect to /mcp/ (a Starlette Mount would answer 307 first).
        if scope["type"] == "http" and scope["path"] == "/mcp":
            await manager.handle_request(scope, receive, send)
        elif scope["type"] == "http":
            await PlainTextResponse("not found", status_code=404)(scope, receive, send)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # so asyncio sets TCP_NODELAY
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    uv_server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2)
    )
    async with manager.run():
        # Bound and listening already: a client that connects now waits in the backlog.
        print(f"mcp1 task server listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
        await uv_server.serve(sockets=[sock])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP instead of stdio")
    parser.add_argument("--port", type=int, default=0, help="HTTP port on 127.0.0.1 (0: any free port)")
    args = parser.parse_args(argv)
    if args.http:
        anyio.run(serve_http, args.port)
    else:
        anyio.run(serve_stdio)


if __name__ == "__main__":
    sys.exit(main())
