"""A SEP-2663 (``io.modelcontextprotocol/tasks``) server built on ``fastmcp-tasks`` 4.1.4 from PyPI.

A real peer for tests/interop: nobody in this project wrote its task runtime (docket, in memory).
It needs fastmcp 4.x, which needs ``mcp`` 2.x, so it runs in its own venv
(``tests/peers/fastmcp-venv``, made by ``make peers``), never in the project's.

    python tests/interop/fastmcp_tasks_server.py                 # stdio
    python tests/interop/fastmcp_tasks_server.py --http --port N # Streamable HTTP on 127.0.0.1:N/mcp

With --http the first stdout line is `fastmcp-tasks server listening on http://127.0.0.1:PORT/mcp`
(--port 0 picks a free port). Tasks advertise pollIntervalMs = $FASTMCP_PEER_POLL_MS (default 200).

Tools:
  greet {name}                  no task: "Hello, NAME!" at once.
  slow_compute {seconds, label} task optional: sleeps in 0.1 s steps reporting progress
                                messages; "LABEL done after S s".
  failing_job {}                task required: completes with isError (a tool error).
  protocol_error_job {}         task required: raises a JSON-RPC error, so the task ends `failed`.
  confirm_delete {filename}     task required: asks {confirm: boolean} through inputRequests;
                                "Deleted 'F'" or "Kept 'F' (ACTION)".
  multi_input {}                task required: asks two questions at once (name, color).
  route {region, count}         no task; region carries x-mcp-header "Region": "routed to REGION".
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from datetime import timedelta
from typing import Annotated, Any

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp.shared.exceptions import MCPError
from pydantic import Field

mcp = FastMCP("fastmcp-tasks-peer", version="1.0.0")
mcp.add_extension(TasksExtension(url="memory://"))
POLL = timedelta(milliseconds=int(os.environ.get("FASTMCP_PEER_POLL_MS", "200")))
OPTIONAL = TaskConfig(mode="optional", poll_interval=POLL)
REQUIRED = TaskConfig(mode="required", poll_interval=POLL)


def _elicit(message: str, properties: dict[str, Any], required: list[str]) -> mcp_types.ElicitRequest:
    return mcp_types.ElicitRequest(
        params=mcp_types.ElicitRequestFormParams(
            message=message, requested_schema={"type": "object", "properties": properties, "required": required}
        )
    )


@mcp.tool
def greet(name: str) -> str:
    return f"Hello, {name}!"


@mcp.tool(task=OPTIONAL)
async def slow_compute(seconds: float, label: str, ctx: Context) -> str:
    steps = max(1, int(seconds / 0.1))
    for step in range(steps):
        await ctx.report_progress(step + 1, steps, f"{label}: step {step + 1}/{steps}")
        await asyncio.sleep(seconds / steps)
    return f"{label} done after {seconds:g} s"


@mcp.tool(task=REQUIRED)
async def failing_job() -> str:
    raise ToolError("the job failed on purpose")


@mcp.tool(task=REQUIRED)
async def protocol_error_job() -> str:
    raise MCPError(code=-32603, message="the backend is unreachable")


@mcp.tool(task=REQUIRED)
async def confirm_delete(filename: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
    answers = ctx.input_responses
    if not answers or "confirm" not in answers:
        return mcp_types.InputRequiredResult(
            input_requests={
                "confirm": _elicit(
                    f"Delete '{filename}'?", {"confirm": {"type": "boolean", "title": "Delete it"}}, ["confirm"]
                )
            }
        )
    answer = answers["confirm"]
    action = getattr(answer, "action", None) or answer.get("action")  # type: ignore[union-attr]
    content = getattr(answer, "content", None) if not isinstance(answer, dict) else answer.get("content")
    if action == "accept" and (content or {}).get("confirm") is True:
        return f"Deleted '{filename}'"
    return f"Kept '{filename}' ({action})"


@mcp.tool(task=REQUIRED)
async def multi_input(ctx: Context) -> str | mcp_types.InputRequiredResult:
    answers = ctx.input_responses or {}
    missing = {
        key: request
        for key, request in {
            "name": _elicit("Your name?", {"name": {"type": "string"}}, ["name"]),
            "color": _elicit(
                "Favourite colour?", {"color": {"type": "string", "enum": ["red", "blue"]}}, ["color"]
            ),
        }.items()
        if key not in answers
    }
    if missing:
        return mcp_types.InputRequiredResult(input_requests=missing)

    def content(key: str) -> dict[str, Any]:
        answer = answers[key]
        value = answer.get("content") if isinstance(answer, dict) else getattr(answer, "content", None)
        return value or {}

    return f"{content('name').get('name')} likes {content('color').get('color')}"


@mcp.tool
def route(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], count: int) -> str:
    return f"routed to {region} x{count}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    if not args.http:
        mcp.run("stdio", show_banner=False)
        return
    # Listen before saying so: a client may connect as soon as the line is out.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # so asyncio sets TCP_NODELAY
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    print(f"fastmcp-tasks server listening on http://127.0.0.1:{sock.getsockname()[1]}/mcp", flush=True)
    sys.stdout.flush()
    mcp.run("http", show_banner=False, host="127.0.0.1", path="/mcp", log_level="warning", sockets=[sock])


if __name__ == "__main__":
    main()
