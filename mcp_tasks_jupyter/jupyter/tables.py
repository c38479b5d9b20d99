"""The tables ``%mcp_servers`` and ``%mcp_tools`` show: HTML and plain text of the same rows.

Every cell is text from a server or the user; HTML escapes all of it. Header and env values never
reach a table, only their names.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..protocol.types import Tool

MAX_CELL = 80


@dataclass
class Table:
    """Rows of text under a title; shows as an HTML table and as aligned plain text."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __repr__(self) -> str:
        return self.text()

    def text(self) -> str:
        """Aligned columns; long cells are cut with an ellipsis."""
        cells = [[_clip(c) for c in row] for row in [self.columns, *self.rows]]
        widths = [max(len(row[i]) for row in cells) for i in range(len(self.columns))]
        lines = [self.title]
        for n, row in enumerate(cells):
            lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
            if n == 0:
                lines.append("  ".join("-" * w for w in widths))
        if not self.rows:
            lines.append("(none)")
        lines.extend(self.notes)
        return "\n".join(lines)

    def html(self) -> str:
        """A plain ``<table>``; everything escaped."""
        head = "".join(f"<th style='text-align:left'>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>" + "".join(f"<td style='text-align:left'>{_cell_html(c)}</td>" for c in row) + "</tr>"
            for row in self.rows
        )
        if not self.rows:
            body = f"<tr><td colspan='{len(self.columns)}'>(none)</td></tr>"
        notes = "".join(f"<div><small>{html.escape(n)}</small></div>" for n in self.notes)
        return (
            f"<div class='mtj-table'><strong>{html.escape(self.title)}</strong>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}</div>"
        )


def _clip(text: str) -> str:
    text = " ".join(_INLINE_CODE.sub(r"\1", str(text)).split())
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


#: ```name``` in a server's text (a description): code, drawn as such in HTML, without backticks as text.
_INLINE_CODE = re.compile(r"`([^`\n]+)`")


def _cell_html(text: str) -> str:
    """A cell escaped, then its ```code``` spans (already escaped) drawn as ``<code>``."""
    return _INLINE_CODE.sub(r"<code>\1</code>", html.escape(text))


# -- %mcp_servers --------------------------------------------------------------------------------


def servers_table(connections: Iterable[Any], redact: Any = str) -> Table:
    """One row per runtime Connection: what it is, how tasks work on it; never secret values."""
    rows = []
    for connection in connections:
        client = connection.client
        info = client.describe()
        state = "connected"
        closed = client.session.closed_error
        if closed is not None:
            state = "lost: " + (closed.detail.splitlines() or [""])[0]
        settings = []
        if connection.header_names:
            settings.append("headers: " + ", ".join(connection.header_names))
        if connection.env_names:
            settings.append("env: " + ", ".join(connection.env_names))
        protocol = str(info.get("protocol", "?")) + (" (stateless)" if info.get("stateless") else "")
        rows.append(
            [
                connection.name,
                info.get("transport", "?"),
                redact(connection.target),
                f"{info.get('server', '?')} {info.get('version', '')}".strip(),
                protocol,
                f"{info.get('dialect', '?')} ({info.get('dialect_reason', '')})",
                task_capabilities(getattr(client, "capabilities", None)),
                str(info.get("open_tasks", 0)),
                redact(state),
                "; ".join(settings) or "-",
                connection.source,
            ]
        )
    columns = [
        "name",
        "transport",
        "target",
        "server",
        "protocol",
        "dialect (why)",
        "task capabilities",
        "open tasks",
        "state",
        "settings",
        "from",
    ]
    return Table("MCP servers", columns, rows)


def task_capabilities(capabilities: Any) -> str:
    """What the server declared about tasks, short: ``list, cancel, tools/call`` (2025-11-25 and the
    draft: ``capabilities.tasks``), or ``extension io.modelcontextprotocol/tasks`` (stateless wire)."""
    if not isinstance(capabilities, dict):
        return "none"
    parts: list[str] = []
    tasks = capabilities.get("tasks")
    if isinstance(tasks, dict) and tasks:
        parts.extend(_leaves(tasks))
    extensions = capabilities.get("extensions")
    if isinstance(extensions, dict):
        for name, value in extensions.items():
            if "tasks" in str(name):
                parts.append(
                    f"extension {name}"
                    + (f" ({', '.join(_leaves(value))})" if isinstance(value, dict) and value else "")
                )
    experimental = capabilities.get("experimental")
    if isinstance(experimental, dict):
        parts.extend(f"experimental {name}" for name in experimental if "tasks" in str(name))
    return ", ".join(parts) or "none"


def _leaves(tree: dict[str, Any]) -> list[str]:
    found: list[str] = []

    def walk(node: Any, path: list[str]) -> None:
        if isinstance(node, dict) and node:
            for key, value in node.items():
                walk(value, [*path, str(key)])
        elif path and node is not False:
            found.append("/".join(path[1:]) if path[0] == "requests" and len(path) > 1 else "/".join(path))

    walk(tree, [])
    return found


# -- %mcp_tools ----------------------------------------------------------------------------------


def tools_table(server: str, tools: Sequence[Tool], dialect: Any = None) -> Table:
    """One row per tool: its task support and how a call runs on this connection, its arguments
    (``*`` = required) and the first line of its description."""
    rows = []
    apps = any(tool.ui is not None for tool in tools)
    for tool in tools:
        row = [
            tool.name,
            task_support(tool, dialect),
            argument_summary(tool.input_schema),
            _first_line(tool.description or tool.title or ""),
        ]
        if apps:
            row.insert(2, app_column(tool))
        rows.append(row)
    columns = ["tool", "task support", "arguments", "description"]
    notes = ["* required argument"]
    if apps:
        columns.insert(2, "app")
        notes.append("app: the tool's own view (MCP Apps); app-only: hidden from models, its view calls it")
    return Table(f"Tools on {server}", columns, rows, notes=notes)


def app_column(tool: Tool) -> str:
    """MCP Apps: ``view ui://...`` for a tool with a view, ``app-only`` when its visibility leaves out the
    model (still listed: a notebook's user is not a model), ``model-only`` when its views may not call it."""
    ui = tool.ui
    if ui is None:
        return ""
    words = [f"view {ui.resource_uri}"] if ui.resource_uri else []
    if ui.app_only:
        words.append("app-only")
    elif not ui.app_callable:
        words.append("model-only")
    return ", ".join(words)


def task_support(tool: Tool, dialect: Any = None) -> str:
    """The tool's declared task support and, given the connection's dialect, how a call runs."""
    if tool.task_support is None:
        description = tool.description or ""
        if _DESCRIBED_AS_NO_TASK.search(description):
            return "server decides per call (described as never a task)"
        if _DESCRIBED_AS_TASK.search(description):
            return "server decides per call (described as a task)"
        return "server decides per call"
    if dialect is None:
        return tool.task_support
    if getattr(dialect, "server_decides", False):
        return f"{tool.task_support} (server decides per call)"
    how = "runs as a task" if dialect.runs_as_task(tool) else "plain call"
    return f"{tool.task_support} ({how})"


#: A description saying the tool runs as a task ("must be called as a task", "always runs as a task").
_DESCRIBED_AS_TASK = re.compile(
    r"\b(?:must|always|only|should)\b[^.\n]{0,40}\b(?:as|be) an? (?:long-running )?task\b", re.IGNORECASE
)

_DESCRIBED_AS_NO_TASK = re.compile(
    r"\b(?:cannot|can't|never|must not)\b[^.\n]{0,40}\bas an? task\b", re.IGNORECASE
)


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else ""


def argument_summary(schema: dict[str, Any]) -> str:
    """``topic*: string, depth: integer = 1`` from a JSON Schema (required ones first)."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict) or not props:
        return "-"
    listed = schema.get("required")
    required = listed if isinstance(listed, list) else []
    names = [n for n in props if n in required] + [n for n in props if n not in required]
    parts = []
    for name in names:
        spec = props[name] if isinstance(props[name], dict) else {}
        kind = spec.get("type", "any")
        if isinstance(kind, list):
            kind = "|".join(str(k) for k in kind)
        if isinstance(spec.get("enum"), list):
            kind = "|".join(json.dumps(v) for v in spec["enum"])
        part = f"{name}{'*' if name in required else ''}: {kind}"
        if "default" in spec:
            part += f" = {json.dumps(spec['default'])}"
        parts.append(part)
    return ", ".join(parts)


__all__ = [
    "Table",
    "app_column",
    "argument_summary",
    "servers_table",
    "task_capabilities",
    "task_support",
    "tools_table",
]
