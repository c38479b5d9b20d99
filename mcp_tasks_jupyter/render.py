"""How tasks and results look as text and as static HTML. Pure: no IPython, no widgets, no I/O.

Three views share this module: the ``__repr__`` / ``_repr_mimebundle_`` of ``ToolResult`` and
``TaskHandle``, the static summary a notebook keeps after saving, and the live widget (which sends
:func:`result_preview` as data and draws it in the browser).

* Text forms (:func:`task_text`, :func:`result_text`, :func:`summary_line` with ``timing=False``)
  are deterministic: no task ids, no times, no durations, no memory addresses, so nbval can compare
  them. Control characters from the server are escaped.
* HTML forms are self-contained (inline styles, no scripts). Every string that came from a server
  (tool names, messages, text, keys, values, mime types, URIs) goes through ``html.escape``.
  Images become ``data:`` URIs only for PNG, JPEG, GIF and WebP with valid base64; links are live
  only for http(s) URIs. Huge text and structures are cut, with a note saying how much.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import math
import reprlib
from typing import TYPE_CHECKING, Any

from .errors import MCPError, TaskError, TaskFailed
from .protocol.types import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextContent

if TYPE_CHECKING:
    from .results import ToolResult
    from .tasks import TaskHandle

#: Characters of result text in the one-line text forms.
TEXT_REPR_CHARS = 200
#: Characters of result text kept in a preview (HTML and widget), over all text blocks.
PREVIEW_TEXT_CHARS = 20_000
#: Longest base64 image (characters) shown inline; bigger ones get a note.
MAX_IMAGE_B64 = 8_000_000
IMAGE_MIMES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
#: Bounds on a structured-content preview.
TREE_ITEMS = 50        # entries shown per object or array
TREE_DEPTH = 6         # nesting levels shown
TREE_STRING = 1_000    # characters per string value
TABLE_ROWS = 200
TABLE_COLUMNS = 30

#: Badge colours (background, text) per status; anything else looks like "unknown".
STATUS_COLOURS: dict[str, tuple[str, str]] = {
    "working": ("#0969da", "#ffffff"),
    "submitted": ("#54aeff", "#0b1f33"),
    "input_required": ("#d4a72c", "#1f1600"),
    "completed": ("#1a7f37", "#ffffff"),
    "failed": ("#cf222e", "#ffffff"),
    "cancelled": ("#6e7781", "#ffffff"),
    "expired": ("#8250df", "#ffffff"),
    "lost": ("#bc4c00", "#ffffff"),
    "unknown": ("#8c959f", "#1f2328"),
}
RUNNING_LABEL = "running…"

_esc = html.escape
_short_repr = reprlib.Repr()
_short_repr.maxlevel, _short_repr.maxdict, _short_repr.maxlist = 3, 8, 8
_short_repr.maxstring, _short_repr.maxother = 60, 60


# -- plain text ------------------------------------------------------------------------------

def task_text(handle: "TaskHandle") -> str:
    """``<TaskHandle research on demo: completed>``: stable, one line (no id, no times)."""
    return f"<TaskHandle {_label(handle)}: {_plain(handle.status)}>"


def result_text(result: "ToolResult") -> str:
    """``ToolResult(text='…', structured={…}, is_error=False)``, text cut to 200 characters.

    ``content=[…]`` lists the block kinds when there is more than text. Deterministic for a result.
    """
    text, cut = _cut(result.text, TEXT_REPR_CHARS)
    parts = [f"text={text!r}{'…' if cut else ''}"]
    kinds = [_kind(b) for b in result.content]
    if any(k != "text" for k in kinds):
        parts.append(f"content=[{', '.join(_plain(k) for k in kinds)}]")
    if result.structured is not None:
        structured, cut = _cut(_plain(_short_repr.repr(result.structured)), TEXT_REPR_CHARS)
        parts.append(f"structured={structured}{'…' if cut else ''}")
    parts.append(f"is_error={result.is_error}")
    return f"ToolResult({', '.join(parts)})"


def summary_line(handle: "TaskHandle", *, timing: bool = True) -> str:
    """One line: ``research on demo: completed in 2.3 s — <first line of the result>``.

    With ``timing=False`` the duration is left out, so the line is stable for the same outcome.
    While the task runs the last part is its status message.
    """
    line = f"{_label(handle)}: {_plain(status_label(handle))}"
    if timing and handle.done():
        line += f" in {format_duration(handle.elapsed)}"
    first = _first_line(_headline(handle))
    return f"{line} — {first}" if first else line


def status_label(handle: "TaskHandle") -> str:
    """The status, marked when a dialect reports a tool error as ``completed`` (ext does)."""
    if handle.status == "completed" and handle.done() and handle.exception() is None \
            and handle.result().is_error:
        return "completed with a tool error"
    if getattr(handle, "cached", False):
        return f"{handle.status} (cached)"
    if handle.reconnecting:
        return f"{handle.status}, reconnecting…"
    return handle.status


#: What a task's views say in place of its status message while its server is being reconnected.
RECONNECTING = "reconnecting to the server…"


def status_message(handle: "TaskHandle") -> str | None:
    """The task's status message as shown: ``RECONNECTING`` while its server is being reconnected."""
    return RECONNECTING if handle.reconnecting else handle.status_message


def running_line(handle: "TaskHandle") -> str:
    """The static summary's text before the task ends: ``slow_compute on demo: running…``."""
    return f"{_label(handle)}: {RUNNING_LABEL}"


def failure_message(handle: "TaskHandle") -> str | None:
    """The server's words for why a finished task did not produce a result (None if it did)."""
    exc = handle.exception()
    if exc is None:
        return None
    if isinstance(exc, TaskFailed):
        # The task's last status message, and the JSON-RPC error's own message when it says more.
        words = [exc.status_message] if exc.status_message else []
        error_message = (exc.error or {}).get("message")
        if isinstance(error_message, str) and error_message and error_message not in words:
            words.append(error_message)
        if words:
            return "\n".join(words)
    if isinstance(exc, TaskError):
        return _without_task_label(exc)
    if isinstance(exc, MCPError):
        return exc.detail  # without the "[server]" prefix
    return f"{type(exc).__name__}: {exc}"


def format_duration(seconds: float) -> str:
    """``0.4 s``, ``12.3 s``, ``4 min 05 s``, ``2 h 03 min``."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


# -- a JSON-able preview of a result (the HTML below and the widget both draw it) -------------

def result_preview(result: "ToolResult") -> dict[str, Any]:
    """A bounded, JSON-able description of ``result`` for display.

    ``{"is_error", "blocks": [...], "structured": None | {"kind": "table"|"tree", ...}}``; a block is
    ``{"kind": "text", "text", "cut"}``, ``{"kind": "image", "mime", "data"}`` (allowed mime, valid
    base64), ``{"kind": "link", "label", "uri", "href"}`` (href only for http(s)),
    ``{"kind": "resource", "uri", "text", "cut"}`` or ``{"kind": "note", "text"}``.
    Values are the server's own strings: whoever draws them must escape them.
    """
    budget = PREVIEW_TEXT_CHARS
    blocks: list[dict[str, Any]] = []
    for block in result.content:
        if isinstance(block, TextContent):
            text, cut = _cut(block.text, budget)
            budget -= len(text)
            blocks.append({"kind": "text", "text": text, "cut": cut})
        elif isinstance(block, ImageContent):
            blocks.append(_image(block.mime_type, block.data))
        elif isinstance(block, AudioContent):
            blocks.append(_note(f"audio ({block.mime_type}) not shown"))
        elif isinstance(block, ResourceLink):
            blocks.append({"kind": "link", "label": block.title or block.name, "uri": block.uri,
                           "href": block.uri if _is_http(block.uri) else None})
        elif isinstance(block, EmbeddedResource):
            res = block.resource
            text, cut = _cut(res.text or "", budget)
            budget -= len(text)
            blocks.append({"kind": "resource", "uri": res.uri, "text": text if res.text else None,
                           "cut": cut, "mime": res.mime_type})
        else:
            blocks.append(_note(f"content of type {block.type} not shown"))
    return {"is_error": result.is_error, "blocks": blocks,
            "structured": structured_preview(result.structured)}


def structured_preview(value: Any) -> dict[str, Any] | None:
    """A table for a list of flat objects, else a bounded tree (see :func:`tree_node`)."""
    if value is None:
        return None
    if _is_flat_table(value):
        columns: list[str] = []
        for row in value:
            columns.extend(k for k in row if k not in columns)
        shown = columns[:TABLE_COLUMNS]
        rows = [[_cell(row.get(c)) for c in shown] for row in value[:TABLE_ROWS]]
        return {"kind": "table", "columns": shown, "rows": rows,
                "more_rows": max(0, len(value) - TABLE_ROWS),
                "more_columns": max(0, len(columns) - TABLE_COLUMNS)}
    return {"kind": "tree", "node": tree_node(value)}


def tree_node(value: Any, depth: int = 0) -> dict[str, Any]:
    """A bounded tree of JSON ``value``: ``{"t": "o"|"a", "items", "more"}`` for objects (items are
    ``[key, node]``) and arrays, ``{"t": "v", "v", "cut"}`` for scalars, ``{"t": "cut", "n"}`` past
    the depth limit."""
    if isinstance(value, dict):
        if depth >= TREE_DEPTH:
            return {"t": "cut", "kind": "object", "n": len(value)}
        items = [[str(k), tree_node(v, depth + 1)] for k, v in list(value.items())[:TREE_ITEMS]]
        return {"t": "o", "items": items, "more": max(0, len(value) - TREE_ITEMS)}
    if isinstance(value, (list, tuple)):
        if depth >= TREE_DEPTH:
            return {"t": "cut", "kind": "array", "n": len(value)}
        items = [tree_node(v, depth + 1) for v in value[:TREE_ITEMS]]
        return {"t": "a", "items": items, "more": max(0, len(value) - TREE_ITEMS)}
    scalar = _scalar(value)
    if isinstance(scalar, str):
        text, cut = _cut(scalar, TREE_STRING)
        return {"t": "v", "v": text, "cut": cut}
    return {"t": "v", "v": scalar, "cut": 0}


# -- HTML --------------------------------------------------------------------------------------

_BOX = ("font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;line-height:1.4;"
        "border:1px solid #d0d7de;border-radius:6px;padding:6px 10px;margin:2px 0;max-width:100%")
_PRE = ("white-space:pre-wrap;word-break:break-word;margin:4px 0;padding:4px 6px;background:#f6f8fa;"
        "border-radius:4px;max-height:24em;overflow:auto;font-size:12px")
_MUTED = "color:#57606a"
_CELL = "border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top"


def status_badge_html(status: str) -> str:
    """A coloured pill with the status name."""
    bg, fg = STATUS_COLOURS.get(status, STATUS_COLOURS["unknown"])
    return (f'<span class="mtj-badge" style="background:{bg};color:{fg};border-radius:10px;'
            f'padding:1px 8px;font-size:12px;font-weight:600">{_esc(status)}</span>')


def task_html(handle: "TaskHandle") -> str:
    """A self-contained box: status badge, tool and server, duration, status message, progress
    (while running), and the result preview or the failure message (when done)."""
    done = handle.done()
    head = f"{status_badge_html(handle.status)} {_label_html(handle)}"
    took = format_duration(handle.elapsed)
    head += (f' <span style="{_MUTED}">· <span class="mtj-duration">'
             f'{"took " if done else "running for "}{took}</span></span>')
    parts = [f"<div>{head}</div>"]
    if handle.status_message:
        parts.append(f'<div style="{_MUTED}">{_esc(handle.status_message)}</div>')
    if not done and handle.progress is not None:
        parts.append(_progress_html(handle))
    if handle.pending_input:
        for question in pending_questions(handle):
            parts.append(f"<div>waiting for input: {_esc(question)}</div>")
    if done:
        failure = failure_message(handle)
        if failure is not None:
            colour = "#57606a" if handle.status == "cancelled" else "#cf222e"
            text, cut = _cut(failure, PREVIEW_TEXT_CHARS)
            parts.append(f'<pre style="{_PRE};color:{colour}">{_esc(text)}</pre>{_cut_note(cut)}')
        else:
            parts.append(result_html(handle.result(), boxed=False))
    return f'<div class="mtj-task" style="{_BOX}">{"".join(parts)}</div>'


def running_html(handle: "TaskHandle") -> str:
    """The static summary before the task ends."""
    return (f'<div class="mtj-task" style="{_BOX}"><span style="{_MUTED}">{RUNNING_LABEL}</span> '
            f"{_label_html(handle)}</div>")


def summary_html(handle: "TaskHandle") -> str:
    """The static summary of a task as one box: badge, tool and server, duration, and the first line
    of the result (or the failure message, whole up to a limit). Compact: the live widget above it
    shows the full result."""
    done = handle.done()
    took = (f' <span style="{_MUTED}">· <span class="mtj-duration">{format_duration(handle.elapsed)}'
            f'</span></span>') if done else ""
    parts = [f"<div>{status_badge_html(handle.status)} {_label_html(handle)}{took}</div>"]
    failure = failure_message(handle) if done else None
    if failure is not None:
        text, cut = _cut(failure, 2_000)
        colour = "#57606a" if handle.status == "cancelled" else "#cf222e"
        parts.append(f'<pre style="{_PRE};color:{colour}">{_esc(text)}</pre>{_cut_note(cut)}')
    else:
        first = _first_line(_headline(handle))
        if first:
            parts.append(f'<div style="{_MUTED}">{_esc(first)}</div>')
    return f'<div class="mtj-summary" style="{_BOX}">{"".join(parts)}</div>'


def result_html(result: "ToolResult", *, boxed: bool = True) -> str:
    """The result preview as HTML: text preformatted, allowed images inline, resource links,
    structured content as a table (list of flat objects) or a collapsible tree."""
    return preview_html(result_preview(result), boxed=boxed)


def preview_html(preview: dict[str, Any], *, boxed: bool = True) -> str:
    """HTML for a :func:`result_preview` dict."""
    parts: list[str] = []
    if preview["is_error"]:
        parts.append(f"<div>{status_badge_html('failed')} the tool reported an error</div>")
    colour = ";color:#cf222e" if preview["is_error"] else ""
    for block in preview["blocks"]:
        kind = block["kind"]
        if kind == "text":
            parts.append(f'<pre style="{_PRE}{colour}">{_esc(block["text"])}</pre>{_cut_note(block["cut"])}')
        elif kind == "image":
            parts.append(f'<div><img alt="{_esc(block["mime"])} image" style="max-width:100%" '
                         f'src="data:{block["mime"]};base64,{block["data"]}"></div>')
        elif kind == "link":
            label, uri = _esc(block["label"]), _esc(block["uri"])
            if block["href"]:
                parts.append(f'<div>link: <a href="{_esc(block["href"])}" target="_blank" '
                             f'rel="noopener noreferrer">{label}</a> <code>{uri}</code></div>')
            else:
                parts.append(f"<div>link: {label} <code>{uri}</code></div>")
        elif kind == "resource":
            parts.append(f"<div>resource <code>{_esc(block['uri'])}</code></div>")
            if block["text"] is not None:
                parts.append(f'<pre style="{_PRE}">{_esc(block["text"])}</pre>{_cut_note(block["cut"])}')
        else:
            parts.append(f'<div style="{_MUTED}">{_esc(block["text"])}</div>')
    structured = preview["structured"]
    if structured is not None:
        parts.append(_structured_html(structured))
    body = "".join(parts) or f'<div style="{_MUTED}">(no content)</div>'
    return f'<div class="mtj-result" style="{_BOX}">{body}</div>' if boxed else body


def pending_questions(handle: "TaskHandle") -> list[str]:
    """What each pending server request asks, as text (elicitation message or the method)."""
    questions = []
    for request in handle.pending_input.values():
        params = request.get("params") if isinstance(request, dict) else None
        message = params.get("message") if isinstance(params, dict) else None
        questions.append(message if isinstance(message, str) else str(request.get("method", "a request")))
    return questions


# -- helpers -----------------------------------------------------------------------------------

def _without_task_label(exc: TaskError) -> str:
    """A task error's own words, without the "tool task <id>: " its message starts with."""
    label = f"task {exc.task_id}" if exc.task_id else "task"
    if exc.tool:
        label = f"{exc.tool} {label}"
    return exc.detail.removeprefix(f"{label}: ")


def _label(handle: "TaskHandle") -> str:
    return f"{_plain(handle.tool or '(unknown tool)')} on {_plain(handle.server)}"


def _label_html(handle: "TaskHandle") -> str:
    return (f'<b class="mtj-tool">{_esc(handle.tool or "(unknown tool)")}</b> '
            f'<span style="{_MUTED}">on</span> <span class="mtj-server">{_esc(handle.server)}</span>')


def _progress_html(handle: "TaskHandle") -> str:
    progress = handle.progress
    assert progress is not None
    fraction = progress.fraction
    total = f"/{progress.total:g}" if progress.total else ""
    text = f"{progress.progress:g}{total}" + (f" ({fraction:.0%})" if fraction is not None else "")
    if progress.message:
        text += f" {progress.message}"
    bar = ""
    if fraction is not None:
        bar = (f'<div style="display:inline-block;width:160px;height:8px;background:#eaeef2;'
               f'border-radius:4px;vertical-align:middle;margin-right:6px"><div style="width:'
               f'{fraction * 100:.1f}%;height:8px;background:#0969da;border-radius:4px"></div></div>')
    return f"<div>{bar}<span>{_esc(text)}</span></div>"


def _structured_html(structured: dict[str, Any]) -> str:
    if structured["kind"] == "table":
        head = "".join(f'<th style="{_CELL}">{_esc(c)}</th>' for c in structured["columns"])
        rows = "".join("<tr>" + "".join(f'<td style="{_CELL}">{_esc(v)}</td>' for v in row) + "</tr>"
                       for row in structured["rows"])
        notes = []
        if structured["more_rows"]:
            notes.append(f"{structured['more_rows']:,} more rows not shown")
        if structured["more_columns"]:
            notes.append(f"{structured['more_columns']:,} more columns not shown")
        note = f'<div style="{_MUTED}">{"; ".join(notes)}</div>' if notes else ""
        return (f'<div style="overflow:auto;max-height:30em"><table style="border-collapse:collapse;'
                f'font-size:12px"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>{note}')
    return (f'<details open><summary style="cursor:pointer">structured content</summary>'
            f'<div style="margin-left:1em;font-size:12px">{_tree_html(structured["node"])}</div></details>')


def _tree_html(node: dict[str, Any], key: str | None = None) -> str:
    name = f"<b>{_esc(key)}</b>: " if key is not None else ""
    kind = node["t"]
    if kind == "v":
        return f"<div>{name}<code>{_esc(_json_text(node['v']))}</code>{_cut_note(node['cut'])}</div>"
    if kind == "cut":
        return f'<div>{name}<span style="{_MUTED}">{_size(node["kind"], node["n"])} (too deep to show)</span></div>'
    if kind == "o":
        children = "".join(_tree_html(child, k) for k, child in node["items"])
        size = _size("object", len(node["items"]) + node["more"])
    else:
        children = "".join(_tree_html(child, f"[{i}]") for i, child in enumerate(node["items"]))
        size = _size("array", len(node["items"]) + node["more"])
    more = f'<div style="{_MUTED}">… {node["more"]:,} more not shown</div>' if node["more"] else ""
    return (f'<details><summary style="cursor:pointer">{name}<span style="{_MUTED}">{size}</span></summary>'
            f'<div style="margin-left:1.2em">{children}{more}</div></details>')


def _size(kind: str, n: int) -> str:
    return f"{{{n} keys}}" if kind == "object" else f"[{n} items]"


def _cut_note(cut: int) -> str:
    return f'<div style="{_MUTED}">… {cut:,} more characters not shown</div>' if cut else ""


def _image(mime: str, data: str) -> dict[str, Any]:
    if mime not in IMAGE_MIMES:
        return _note(f"image ({mime}) not shown")
    if len(data) > MAX_IMAGE_B64:
        return _note(f"image ({mime}, {len(data) * 3 // 4:,} bytes) too large to show")
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return _note(f"image ({mime}) with invalid base64 data not shown")
    return {"kind": "image", "mime": mime, "data": data}


def _note(text: str) -> dict[str, Any]:
    return {"kind": "note", "text": text}


def _kind(block: Any) -> str:
    mime = getattr(block, "mime_type", None)
    return mime if block.type in ("image", "audio") and isinstance(mime, str) else block.type


def _is_http(uri: str) -> bool:
    return uri.lower().startswith(("http://", "https://"))


def _is_flat_table(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(row, dict) and all(not isinstance(v, (dict, list)) for v in row.values())
                    for row in value))


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return str(value)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else _json_text(_scalar(value))
    return _cut(text, TREE_STRING)[0]


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _cut(text: str, limit: int) -> tuple[str, int]:
    limit = max(0, limit)
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


def _plain(text: str) -> str:
    """Escape control characters (newlines, ANSI escapes) so a one-line form stays one line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _first_line(text: str | None) -> str:
    if not text:
        return ""
    for line in text.splitlines():
        if line.strip():
            line, cut = _cut(line.strip(), 120)
            return _plain(line) + ("…" if cut else "")
    return ""


def _headline(handle: "TaskHandle") -> str | None:
    if not handle.done():
        return handle.status_message
    failure = failure_message(handle)
    if failure is not None:
        return failure
    result = handle.result()
    if result.text:
        return result.text
    kinds = [_kind(b) for b in result.content]
    return f"[{', '.join(kinds)}]" if kinds else None
