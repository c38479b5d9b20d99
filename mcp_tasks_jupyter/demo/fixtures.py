"""The fixture tools of the official conformance suite's ``tasks-*`` server scenarios (``--conformance``).

The suite (``@modelcontextprotocol/conformance``, ``--suite pending``) checks an ext (SEP-2663)
server against these tools; with ``--conformance`` the demo lists them to ext clients, after its
own tools:

``greet {name}`` (no tasks)
    "Hello, <name>!" at once.
``protocol_error_job {}`` (tasks optional)
    Fails after a moment with the JSON-RPC error -32603: a ``failed`` task.
``confirm_delete {filename}`` (tasks optional)
    Asks for a confirmation (``confirm``: boolean) and reports what it "did".
``multi_input {}`` (tasks optional)
    Asks two questions at once (``name`` and ``confirm``), then greets.
``test_tool_with_task {}`` (tasks required, starts inline)
    Asks for a name first (as a multi round-trip request, before any task exists), then becomes
    a task that greets by that name.

The suite's ``slow_compute {seconds, label}`` is the demo's own ``slow_compute`` (same argument
names). Its ``failing_job {}`` is the demo's ``failing_job`` (a tool error after 0.5 s), whose task
support becomes "required" with ``--conformance``, as the suite's -32021 check demands.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

from .jsonrpc import INTERNAL_ERROR, RpcError
from .tools import FAILING_JOB, Tool, ToolContext, build_tools, text_result

_NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string", "description": "Your name"}},
                "required": ["name"]}
_CONFIRM_SCHEMA = {"type": "object", "properties": {"confirm": {"type": "boolean", "description": "Go ahead?"}},
                   "required": ["confirm"]}


def _accepted(answer: dict[str, Any]) -> dict[str, Any] | None:
    content = answer.get("content")
    return content if answer.get("action") == "accept" and isinstance(content, dict) else None


async def greet(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return text_result(f"Hello, {args['name']}!")


async def protocol_error_job(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    ctx.report("working; about to fail with a protocol error", 0, 1)
    await asyncio.sleep(float(args["seconds"]))
    raise RpcError(INTERNAL_ERROR, "protocol_error_job failed on purpose", {"reason": "demo"})


async def confirm_delete(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    filename = args["filename"]
    answer = await ctx.elicit(f"Delete {filename}?", _CONFIRM_SCHEMA)
    content = _accepted(answer)
    if content is not None and content.get("confirm") is True:
        return text_result(f"Deleted {filename}", structured={"filename": filename, "deleted": True})
    return text_result(f"Kept {filename}", structured={"filename": filename, "deleted": False})


async def multi_input(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    name_answer, confirm_answer = await asyncio.gather(
        ctx.elicit("What is your name?", _NAME_SCHEMA),
        ctx.elicit("Shall I greet you?", _CONFIRM_SCHEMA),
    )
    name = (_accepted(name_answer) or {}).get("name", "stranger")
    confirmed = (_accepted(confirm_answer) or {}).get("confirm") is True
    return text_result(f"Hello, {name}!" if confirmed else f"Not greeting {name}.")


async def ask_then_run(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    answer = await ctx.elicit("What is your name?", _NAME_SCHEMA)
    name = (_accepted(answer) or {}).get("name", "stranger")
    await ctx.background()
    ctx.report(f"greeting {name}", 0, 1)
    await asyncio.sleep(float(args["seconds"]))
    return text_result(f"Hello, {name}! (from a task)")


_SECONDS = {"type": "number", "minimum": 0, "maximum": 3600, "description": "Seconds to work."}

GREET = Tool(
    name="greet",
    title="Greet",
    description="Returns 'Hello, <name>!' at once. Never runs as a task.",
    input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
    body=greet,
)
PROTOCOL_ERROR_JOB = Tool(
    name="protocol_error_job",
    title="Protocol error job",
    description="Fails after a moment with a JSON-RPC error (-32603).",
    input_schema={"type": "object", "properties": {"seconds": {**_SECONDS, "default": 0.3}}},
    body=protocol_error_job,
    task_support="optional",
)
CONFIRM_DELETE = Tool(
    name="confirm_delete",
    title="Confirm a deletion",
    description="Asks whether to delete the file (nothing is deleted) and says what it did.",
    input_schema={"type": "object", "properties": {"filename": {"type": "string"}}, "required": ["filename"]},
    body=confirm_delete,
    task_support="optional",
)
MULTI_INPUT = Tool(
    name="multi_input",
    title="Two questions at once",
    description="Asks for a name and a confirmation at the same time, then greets.",
    input_schema={"type": "object", "properties": {}},
    body=multi_input,
    task_support="optional",
)
TEST_TOOL_WITH_TASK = Tool(
    name="test_tool_with_task",
    title="Ask, then run as a task",
    description="Asks for a name before starting, then runs as a task that greets by that name.",
    input_schema={"type": "object", "properties": {"seconds": {**_SECONDS, "default": 0.3}}},
    body=ask_then_run,
    task_support="required",
    starts_inline=True,
)

FIXTURES = (GREET, PROTOCOL_ERROR_JOB, CONFIRM_DELETE, MULTI_INPUT, TEST_TOOL_WITH_TASK)


def build_ext_tools(*, faults: bool = False, conformance: bool = False) -> dict[str, Tool]:
    """What ext clients see: the demo's tools, plus the fixtures with ``conformance``."""
    tools = build_tools(faults=faults)
    if conformance:
        tools["failing_job"] = dataclasses.replace(FAILING_JOB, task_support="required")
        tools.update((tool.name, tool) for tool in FIXTURES)
    return tools
