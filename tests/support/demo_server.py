"""The demo server plus tools that only tests need: ``python tests/support/demo_server.py [FLAGS] [DEMO FLAGS]``.

The package's demo (``python -m mcp_tasks_jupyter.demo``) ships no test scaffolding; this script runs it
with more tools, chosen by two flags of its own (every other flag goes to the demo):

``--faults``
    Adds ``exit_process {after_seconds=0.5, code=3}`` (tasks optional), which writes "demo server
    exiting on purpose" to stderr and ends the process with ``code``: a server dying mid-task.
``--conformance``
    Shows ext clients the official conformance suite's fixture tools for its ``tasks-*`` server
    scenarios (``@modelcontextprotocol/conformance``, ``--suite pending``), after the demo's own:

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
    support becomes "required" for ext clients, as the suite's -32021 check demands.
``--count-calls PATH``
    Appends the tool's name to PATH (one line) each time a tool runs: how a test counts, on the server's
    side, the calls that reached it.
``--count-arguments PATH``
    The same with the call's arguments: ``NAME<TAB>ARGUMENTS`` (canonical JSON), one line per call, so that
    a test counts the calls of each item of a sweep.
``--sweeps``
    Adds ``signed_job {label, api_key, seconds=0}`` (tasks optional): a job whose argument is a secret
    (its name looks like one), which answers with its label only.
``--advertise-device-endpoint URL``
    With ``--auth``: the authorization server's metadata names URL as its device authorization endpoint
    (e.g. a plain-http one elsewhere, which a client must refuse).

It is run as a script (by path), so it imports nothing from ``tests``: :func:`demo_argv` is how tests
get its command line.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp_tasks_jupyter.demo.__main__ import main as demo_main
from mcp_tasks_jupyter.demo.auth_server import DemoAuthorizationServer
from mcp_tasks_jupyter.demo.options import DemoConfig
from mcp_tasks_jupyter.demo.rpc import INTERNAL_ERROR, RpcError
from mcp_tasks_jupyter.demo.server import DemoServer
from mcp_tasks_jupyter.demo.tools import FAILING_JOB, Tool, ToolContext, build_tools, text_result

SCRIPT = Path(__file__).resolve()
#: The flags of this script; a demo command line with one of them needs this script.
TEST_FLAGS = (
    "--faults",
    "--conformance",
    "--count-calls",
    "--count-arguments",
    "--sweeps",
    "--advertise-device-endpoint",
)


def demo_argv(*args: str, python: str = sys.executable) -> list[str]:
    """The command line of a demo server with ``args``: the package's demo, or this script when a
    test-only flag (``--faults``, ``--conformance``) is among them."""
    if any(flag in args for flag in TEST_FLAGS):
        return [python, str(SCRIPT), *args]
    return [python, "-m", "mcp_tasks_jupyter.demo", *args]


# -- exit_process (--faults) ---------------------------------------------------------------------

EXIT_MESSAGE = "demo server exiting on purpose"


async def exit_process(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Kill the whole server process after a delay (to test clients against a dying server)."""
    ctx.report(f"the server will exit with code {args['code']} in {args['after_seconds']:g}s", 0, 1)
    await asyncio.sleep(float(args["after_seconds"]))
    sys.stderr.write(EXIT_MESSAGE + "\n")
    sys.stderr.flush()
    os._exit(args["code"])


EXIT_PROCESS = Tool(
    name="exit_process",
    title="Exit the server process",
    description="Fault injection: after a delay the server process exits at once with the given code.",
    input_schema={
        "type": "object",
        "properties": {
            "after_seconds": {
                "type": "number",
                "minimum": 0,
                "maximum": 3600,
                "default": 0.5,
                "description": "Seconds before exiting.",
            },
            "code": {"type": "integer", "minimum": 0, "maximum": 255, "default": 3, "description": "Exit code."},
        },
    },
    body=exit_process,
    task_support="optional",
)


# -- the conformance suite's fixtures (--conformance) ---------------------------------------------

_NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Your name"}},
    "required": ["name"],
}
_CONFIRM_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "description": "Go ahead?"}},
    "required": ["confirm"],
}
_SECONDS = {"type": "number", "minimum": 0, "maximum": 3600, "description": "Seconds to work."}


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


FIXTURES = (
    Tool(
        name="greet",
        title="Greet",
        description="Returns 'Hello, <name>!' at once. Never runs as a task.",
        input_schema={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        body=greet,
    ),
    Tool(
        name="protocol_error_job",
        title="Protocol error job",
        description="Fails after a moment with a JSON-RPC error (-32603).",
        input_schema={"type": "object", "properties": {"seconds": {**_SECONDS, "default": 0.3}}},
        body=protocol_error_job,
        task_support="optional",
    ),
    Tool(
        name="confirm_delete",
        title="Confirm a deletion",
        description="Asks whether to delete the file (nothing is deleted) and says what it did.",
        input_schema={"type": "object", "properties": {"filename": {"type": "string"}}, "required": ["filename"]},
        body=confirm_delete,
        task_support="optional",
    ),
    Tool(
        name="multi_input",
        title="Two questions at once",
        description="Asks for a name and a confirmation at the same time, then greets.",
        input_schema={"type": "object", "properties": {}},
        body=multi_input,
        task_support="optional",
    ),
    Tool(
        name="test_tool_with_task",
        title="Ask, then run as a task",
        description="Asks for a name before starting, then runs as a task that greets by that name.",
        input_schema={"type": "object", "properties": {"seconds": {**_SECONDS, "default": 0.3}}},
        body=ask_then_run,
        task_support="required",
        starts_inline=True,
    ),
)


# -- signed_job (--sweeps) -----------------------------------------------------------------------


async def signed_job(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    await asyncio.sleep(float(args.get("seconds", 0)))
    return text_result(f"signed {args['label']}", structured={"label": args["label"]})


SIGNED_JOB = Tool(
    name="signed_job",
    title="Signed job",
    description="Waits, then answers with its label; its api_key is a secret (test only).",
    input_schema={
        "type": "object",
        "properties": {
            "label": {"type": "string"},
            "api_key": {"type": "string"},
            "seconds": {"type": "number", "minimum": 0, "maximum": 60},
        },
        "required": ["label", "api_key"],
    },
    body=signed_job,
    task_support="optional",
)


def counted(tools: dict[str, Tool], path: Path, *, arguments: bool = False) -> dict[str, Tool]:
    """``tools``, each writing its name to ``path`` (one line; with ``arguments``, a tab and the arguments as
    canonical JSON) every time it runs (--count-calls, --count-arguments)."""

    def counting(tool: Tool) -> Tool:
        body = tool.body

        async def run(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
            line = tool.name
            if arguments:
                line += "\t" + json.dumps(args, sort_keys=True, separators=(",", ":"))
            with path.open("a", encoding="utf-8") as calls:
                calls.write(line + "\n")
            return await body(args, ctx)

        return dataclasses.replace(tool, body=run)

    return {name: counting(tool) for name, tool in tools.items()}


def tool_sets(*, faults: bool, conformance: bool, sweeps: bool = False) -> tuple[dict[str, Tool], dict[str, Tool]]:
    """(what legacy clients see, what ext clients see): the demo's tools plus the asked-for ones."""
    legacy = build_tools()
    if faults:
        legacy[EXIT_PROCESS.name] = EXIT_PROCESS
    if sweeps:
        legacy[SIGNED_JOB.name] = SIGNED_JOB
    ext = dict(legacy)
    if conformance:
        ext[FAILING_JOB.name] = dataclasses.replace(FAILING_JOB, task_support="required")
        ext.update((tool.name, tool) for tool in FIXTURES)
    return legacy, ext


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    for flag in ("--faults", "--conformance", "--sweeps"):
        parser.add_argument(flag, action="store_true")
    parser.add_argument("--count-calls", type=Path)
    parser.add_argument("--count-arguments", type=Path)
    parser.add_argument("--advertise-device-endpoint")
    ours, rest = parser.parse_known_args(argv)
    if ours.advertise_device_endpoint is not None:
        advertised = ours.advertise_device_endpoint
        DemoAuthorizationServer.device_authorization_endpoint = property(lambda self: advertised)  # type: ignore[method-assign,assignment]
    legacy, ext = tool_sets(faults=ours.faults, conformance=ours.conformance, sweeps=ours.sweeps)
    if ours.count_calls is not None:
        legacy, ext = counted(legacy, ours.count_calls), counted(ext, ours.count_calls)
    if ours.count_arguments is not None:
        legacy = counted(legacy, ours.count_arguments, arguments=True)
        ext = counted(ext, ours.count_arguments, arguments=True)

    def make_server(config: DemoConfig) -> DemoServer:
        return DemoServer(config, tools=legacy, ext_tools=ext)

    return demo_main(rest, make_server=make_server)


if __name__ == "__main__":
    sys.exit(main())
