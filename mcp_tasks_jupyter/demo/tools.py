"""The demo tools: their definitions (schemas, task support) and their async bodies.

A body is ``async def body(args, ctx) -> CallToolResult`` where ``args`` are already checked
against the input schema (defaults filled in) and ``ctx`` is a :class:`ToolContext` supplied by
the protocol layer. Bodies know nothing about the wire: they report progress, log, and ask the
user questions through ``ctx``, and return a ``CallToolResult`` dict (``isError: true`` for a
tool-level failure) or raise :class:`~.jsonrpc.RpcError` for a protocol-level failure.

A body may be run more than once for one call: a dialect whose questions are answered by the
client retrying the request (multi round-trip requests, 2026-07-28) runs the body again from the
start with the answers it has so far, so a body must not do anything before a question that it
cannot safely repeat.
"""

from __future__ import annotations

import asyncio
import base64
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .chart import render_bar_chart
from .rpc import INTERNAL_ERROR, RpcError

TaskSupport = Literal["forbidden", "optional", "required"]
ToolBody = Callable[[dict[str, Any], "ToolContext"], Awaitable[dict[str, Any]]]


class ElicitationFailed(Exception):
    """The client could not answer a question (error response, or the session ended)."""


class ToolContext(Protocol):
    """What a running tool body may do besides computing its result."""

    @property
    def can_elicit(self) -> bool:
        """True if the client declared it can answer form questions (``elicitation``)."""
        ...

    def report(self, message: str, progress: float | None = None, total: float | None = None) -> None:
        """Say what the tool is doing now (the task's status message) and how far it got."""
        ...

    def log(self, text: str) -> None:
        """Send an info-level log line to the client."""
        ...

    async def elicit(self, message: str, requested_schema: dict[str, Any]) -> dict[str, Any]:
        """Ask the user; returns the ElicitResult (``action`` and, on accept, ``content``).
        Raises :class:`ElicitationFailed` if the client cannot answer."""
        ...

    async def background(self) -> None:
        """Say that the rest of the work may take long. A dialect where the server decides on
        its own whether a call becomes a task (ext) makes the task here, for a tool that starts
        inline (``Tool.starts_inline``); elsewhere this does nothing."""
        ...


@dataclass(frozen=True)
class Tool:
    """One tool: what ``tools/list`` says about it and the body that runs it.

    ``task_support`` None means the tool has no ``execution`` field (tasks forbidden).
    ``starts_inline``: where the server decides when a call becomes a task (ext), the body starts
    as an ordinary request (its questions answered by retries) and becomes a task only when it
    calls ``ctx.background()``; other task-capable tools become tasks before their body starts.
    """

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    body: ToolBody
    task_support: TaskSupport | None = None
    output_schema: dict[str, Any] | None = None
    starts_inline: bool = False
    #: The tools/list entry's ``_meta`` (MCP Apps: ``{"ui": {"resourceUri": ..., "visibility": ...}}``).
    meta: dict[str, Any] | None = None

    def definition(self) -> dict[str, Any]:
        """The dialect-neutral part of the tool's ``tools/list`` entry."""
        entry: dict[str, Any] = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
        }
        if self.output_schema is not None:
            entry["outputSchema"] = self.output_schema
        if self.meta is not None:
            entry["_meta"] = self.meta
        return entry

    @property
    def allows_task(self) -> bool:
        """Whether a call may be task-augmented."""
        return self.task_support in ("optional", "required")


def text_result(text: str, *, structured: dict[str, Any] | None = None, is_error: bool = False) -> dict[str, Any]:
    """A CallToolResult with one text block."""
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": is_error}
    if structured is not None:
        result["structuredContent"] = structured
    return result


# -- slow_compute ----------------------------------------------------------------------------


async def slow_compute(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Advance in equal steps over the given time; value = sum of squares of 1..steps."""
    seconds, steps, label = float(args["seconds"]), args["steps"], args["label"]
    delay = seconds / steps
    value = 0
    ctx.report(f"step 0/{steps}: starting {label}", 0, steps)
    ctx.log(f"{label}: starting, {steps} steps over {seconds:g}s")
    for step in range(1, steps + 1):
        await asyncio.sleep(delay)
        value += step * step
        ctx.report(f"step {step}/{steps}: {label} value={value}", step, steps)
        ctx.log(f"{label}: step {step}/{steps} done")
    return text_result(
        f"{label}: done in {steps} steps, value={value}",
        structured={"label": label, "steps": steps, "seconds": seconds, "value": value},
    )


SLOW_COMPUTE = Tool(
    name="slow_compute",
    title="Slow computation",
    description=(
        "Computes the sum of the squares of 1..steps, slowly: it advances in `steps` equal steps "
        "spread over `seconds`, reporting progress and a status message at each step."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "seconds": {
                "type": "number",
                "minimum": 0,
                "maximum": 3600,
                "default": 5,
                "description": "Total running time in seconds.",
            },
            "steps": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1000,
                "default": 10,
                "description": "Number of equal steps.",
            },
            "label": {
                "type": "string",
                "maxLength": 200,
                "default": "job",
                "description": "A name for this job, echoed in messages and the result.",
            },
        },
    },
    output_schema={
        "type": "object",
        "properties": {
            "label": {"type": "string"},
            "steps": {"type": "integer"},
            "seconds": {"type": "number"},
            "value": {"type": "integer", "description": "Sum of squares of 1..steps."},
        },
        "required": ["label", "steps", "seconds", "value"],
    },
    body=slow_compute,
    task_support="optional",
)


# -- research --------------------------------------------------------------------------------


def interpretations(topic: str) -> list[tuple[str, str]]:
    """The readings of an ambiguous topic offered to the user, as (value, title) pairs."""
    return [
        (f"{topic} (history)", f"The history of {topic}"),
        (f"{topic} (technology)", f"{topic} as a technology"),
        (f"{topic} (economics)", f"The economics of {topic}"),
    ]


def research_question(topic: str) -> dict[str, Any]:
    """The ``requestedSchema`` of the question research asks about an ambiguous topic."""
    return {
        "type": "object",
        "properties": {
            "interpretation": {
                "type": "string",
                "title": "Interpretation",
                "description": f"Which reading of '{topic}' should the research follow?",
                "oneOf": [{"const": value, "title": title} for value, title in interpretations(topic)],
            },
            "depth": {
                "type": "integer",
                "title": "Depth",
                "description": "How deep to dig: 1 = skim, 5 = thorough.",
                "minimum": 1,
                "maximum": 5,
                "default": 2,
            },
        },
        "required": ["interpretation"],
    }


def _sources(interpretation: str, depth: int) -> list[dict[str, str]]:
    slug = "".join(ch if ch.isalnum() else "-" for ch in interpretation.lower()).strip("-") or "topic"
    kinds = ["overview", "survey", "case-study", "dataset", "critique", "timeline"]
    return [
        {"title": f"{interpretation}: {kind.replace('-', ' ')}", "url": f"https://example.org/{slug}/{kind}"}
        for kind in kinds[: depth + 1]
    ]


async def research(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Three stages (searching, reading, synthesizing); asks which reading of the topic is meant
    when ``ambiguous`` and the client can answer questions."""
    topic, ambiguous, pause = args["topic"], args["ambiguous"], float(args["stage_seconds"])
    ctx.report(f"searching: looking for sources on '{topic}'", 0, 3)
    ctx.log(f"research '{topic}': searching")
    await asyncio.sleep(pause)

    interpretation, depth, note = topic, 2, None
    if ambiguous:
        options = [value for value, _ in interpretations(topic)]
        if not ctx.can_elicit:
            interpretation = options[0]
            note = (
                "The topic is ambiguous but the client cannot answer questions (no elicitation "
                f"capability), so the default reading '{interpretation}' was used."
            )
            ctx.log(f"research '{topic}': no elicitation support, using '{interpretation}'")
        else:
            ctx.log(f"research '{topic}': ambiguous, asking the user")
            try:
                answer = await ctx.elicit(
                    f"'{topic}' can be read several ways. Which one should the research follow?",
                    research_question(topic),
                )
            except ElicitationFailed as exc:
                return text_result(f"The client could not answer the question: {exc}", is_error=True)
            action = answer.get("action")
            if action != "accept":
                verb = "cancelled" if action == "cancel" else "declined"
                return text_result(
                    f"The user declined to choose a reading of '{topic}' ({verb}), so the research stopped.",
                    is_error=True,
                )
            given = answer.get("content")
            content = given if isinstance(given, dict) else {}
            chosen, wanted_depth = content.get("interpretation"), content.get("depth", 2)
            if chosen not in options:
                return text_result(f"The answer {chosen!r} is not one of the offered readings.", is_error=True)
            if isinstance(wanted_depth, float) and wanted_depth.is_integer():
                wanted_depth = int(wanted_depth)
            if isinstance(wanted_depth, bool) or not isinstance(wanted_depth, int) or not 1 <= wanted_depth <= 5:
                return text_result(f"The depth {wanted_depth!r} is not an integer from 1 to 5.", is_error=True)
            interpretation, depth = chosen, wanted_depth
            ctx.log(f"research '{topic}': the user chose '{interpretation}' at depth {depth}")

    sources = _sources(interpretation, depth)
    ctx.report(f"reading: {len(sources)} sources on '{interpretation}'", 1, 3)
    ctx.log(f"research '{topic}': reading {len(sources)} sources")
    await asyncio.sleep(pause)
    ctx.report(f"synthesizing: writing the report on '{interpretation}'", 2, 3)
    ctx.log(f"research '{topic}': synthesizing")
    await asyncio.sleep(pause)
    ctx.report("report ready", 3, 3)

    lines = [
        f"# Research report: {topic}",
        "",
        f"- **Interpretation:** {interpretation}",
        f"- **Depth:** {depth}",
        "",
        "## Findings",
        f"- {interpretation} is a well-studied subject; {len(sources)} sources agree on the basics.",
        "- The sources differ on details; see the list below.",
        "",
        "## Sources",
        *(f"{i}. [{source['title']}]({source['url']})" for i, source in enumerate(sources, 1)),
    ]
    if note:
        lines += ["", f"_Note: {note}_"]
    return text_result(
        "\n".join(lines),
        structured={"topic": topic, "interpretation": interpretation, "depth": depth, "sources": sources},
    )


RESEARCH = Tool(
    name="research",
    title="Research a topic",
    description=(
        "Simulated research in three stages (searching, reading, synthesizing) that ends with a "
        "short markdown report. Must be called as a task. With `ambiguous`, it pauses after the "
        "first stage (status input_required) to ask which reading of the topic is meant."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "topic": {"type": "string", "minLength": 1, "maxLength": 500, "description": "What to research."},
            "ambiguous": {
                "type": "boolean",
                "default": False,
                "description": "Treat the topic as ambiguous and ask the user which reading is meant.",
            },
            "stage_seconds": {
                "type": "number",
                "minimum": 0,
                "maximum": 600,
                "default": 0.5,
                "description": "Seconds each of the three stages takes.",
            },
        },
        "required": ["topic"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "topic": {"type": "string"},
            "interpretation": {"type": "string"},
            "depth": {"type": "integer"},
            "sources": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"title": {"type": "string"}, "url": {"type": "string"}},
                    "required": ["title", "url"],
                },
            },
        },
        "required": ["topic", "interpretation", "depth", "sources"],
    },
    body=research,
    task_support="required",
)


# -- failing_job -----------------------------------------------------------------------------


async def failing_job(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Wait, then fail as a tool error (``isError``) or as a JSON-RPC protocol error."""
    seconds, mode, message = float(args["seconds"]), args["mode"], args["message"]
    ctx.report(f"working; will fail in {seconds:g}s ({mode})", 0, 1)
    ctx.log(f"failing_job: will fail in {seconds:g}s with a {mode}")
    await asyncio.sleep(seconds)
    if mode == "protocol_error":
        raise RpcError(INTERNAL_ERROR, message, {"reason": "demo"})
    return text_result(message, is_error=True)


FAILING_JOB = Tool(
    name="failing_job",
    title="Failing job",
    description=(
        "Waits, then fails on purpose: `tool_error` returns a result with isError true, "
        "`protocol_error` answers with a JSON-RPC error (-32603)."
    ),
    input_schema={
        "type": "object",
        "properties": {
            "seconds": {
                "type": "number",
                "minimum": 0,
                "maximum": 3600,
                "default": 0.5,
                "description": "Seconds to wait before failing.",
            },
            "mode": {
                "type": "string",
                "enum": ["tool_error", "protocol_error"],
                "default": "tool_error",
                "description": "How to fail.",
            },
            "message": {
                "type": "string",
                "maxLength": 1000,
                "default": "The job failed on purpose",
                "description": "The error message.",
            },
        },
    },
    body=failing_job,
    task_support="optional",
)


# -- make_chart ------------------------------------------------------------------------------


async def make_chart(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """A PNG bar chart of the values, a text summary and the statistics as structured content."""
    values, title, seconds = args["values"], args["title"], float(args["seconds"])
    ctx.report(f"drawing '{title}' ({len(values)} values)", 0, 1)
    ctx.log(f"make_chart: drawing {len(values)} values")
    await asyncio.sleep(seconds)
    image = base64.b64encode(render_bar_chart(values)).decode("ascii")
    stats = {
        "title": title,
        "count": len(values),
        "min": min(values),
        "max": max(values),
        "mean": statistics.fmean(values),
    }
    ctx.report(f"drew '{title}'", 1, 1)
    summary = (
        f"{title}: bar chart of {len(values)} values "
        f"(min {stats['min']:g}, max {stats['max']:g}, mean {stats['mean']:g})"
    )
    return {
        "content": [
            {"type": "image", "data": image, "mimeType": "image/png"},
            {"type": "text", "text": summary},
        ],
        "structuredContent": stats,
        "isError": False,
    }


MAKE_CHART = Tool(
    name="make_chart",
    title="Bar chart",
    description="Draws a bar chart of the values as a PNG image (480x270) and summarises them.",
    input_schema={
        "type": "object",
        "properties": {
            "values": {
                "type": "array",
                "items": {"type": "number"},
                "minItems": 1,
                "maxItems": 1000,
                "description": "The numbers to chart, one bar each.",
            },
            "title": {"type": "string", "maxLength": 200, "default": "Chart", "description": "Chart title."},
            "seconds": {
                "type": "number",
                "minimum": 0,
                "maximum": 3600,
                "default": 0.2,
                "description": "Seconds to spend 'drawing'.",
            },
        },
        "required": ["values"],
    },
    output_schema={
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "count": {"type": "integer"},
            "min": {"type": "number"},
            "max": {"type": "number"},
            "mean": {"type": "number"},
        },
        "required": ["title", "count", "min", "max", "mean"],
    },
    body=make_chart,
    task_support="optional",
)


# -- echo ------------------------------------------------------------------------------------


async def echo(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    """Return the text unchanged."""
    return text_result(args["text"])


ECHO = Tool(
    name="echo",
    title="Echo",
    description="Returns the text at once. Cannot be called as a task.",
    input_schema={
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to send back."}},
        "required": ["text"],
    },
    body=echo,
)


def build_tools() -> dict[str, Tool]:
    """The tools this server lists, by name, in listing order."""
    from .app_tools import APP_TOOLS  # the MCP App's tools (app_tools.py imports this module)

    tools = [SLOW_COMPUTE, RESEARCH, FAILING_JOB, MAKE_CHART, ECHO, *APP_TOOLS]
    return {tool.name: tool for tool in tools}
