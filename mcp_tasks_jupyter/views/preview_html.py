"""A result preview (``preview.result_preview``'s dict) drawn as self-contained HTML: text preformatted,
rendered markdown, allowed images inline, resource links, structured content as a table or a collapsible
tree, notes saying what was left out. The live widget draws the same dict in the browser
(``labextension/src/widgets/preview.ts``).

Inline styles, no scripts. Every string in a preview is a server's (tool output, keys, values, mime types,
URIs) and goes through ``html.escape`` here; an image's ``data:`` URI is built only from an allowed mime
type and checked base64, and a link is live only for an http(s) URI (``preview.py`` made sure of both).
``preview.py`` measures what each piece costs from this markup.
"""

from __future__ import annotations

import html
from typing import Any

from ..tasks.status import DECLINED
from .colours import FAILURE_TEXT
from .markdown import tree_html
from .plain import json_text
from .styles import BOX, CELL, MUTED, PRE

#: The inline style fragment that colours a tool error's text.
ERROR_COLOUR = f";color:{FAILURE_TEXT}"

_esc = html.escape


def preview_html(preview: dict[str, Any], *, boxed: bool = True, status: str | None = None) -> str:
    """HTML for a ``preview.result_preview`` dict. ``status``: the task's, which says how a tool
    error reads (:func:`error_title`)."""
    parts: list[str] = []
    if preview["is_error"]:
        # Words, not a second badge: the box the preview sits in has the status badge already.
        parts.append(f'<div style="font-weight:600;color:{FAILURE_TEXT}">{error_title(status)}</div>')
    colour = ERROR_COLOUR if preview["is_error"] else ""
    parts.extend(block_html(block, colour) for block in preview["blocks"])
    structured = preview["structured"]
    if structured is not None:
        parts.append(structured_html(structured))
    body = "".join(parts) or f'<div style="{MUTED}">(no content)</div>'
    return f'<div class="mtj-result" style="{BOX}">{body}</div>' if boxed else body


def error_title(status: str | None) -> str:
    """What heads a result that is a tool error: a declined question is no malfunction (the widget's
    ``errorTitle`` in ``preview.ts`` says the same)."""
    if status == DECLINED:
        return "the question was declined, and the tool stopped"
    return "the tool reported an error"


def block_html(block: dict[str, Any], colour: str) -> str:
    """One block of a preview; ``colour`` is :data:`ERROR_COLOUR` in a tool error's, else ""."""
    kind = block["kind"]
    if kind == "text":
        return f'<pre style="{PRE}{colour}">{_esc(block["text"])}</pre>{cut_note(block["cut"])}'
    if kind == "markdown":
        return f'<div class="mtj-md">{tree_html(block["tree"])}</div>{cut_note(block["cut"])}'
    if kind == "image":  # an allowed mime type and valid base64: nothing to escape in the URI
        return (
            f'<div><img alt="{_esc(block["mime"])} image" style="max-width:100%" '
            f'src="data:{block["mime"]};base64,{block["data"]}"></div>'
        )
    if kind == "link":
        label, uri = _esc(block["label"]), _esc(block["uri"])
        if block["href"]:
            return (
                f'<div>link: <a href="{_esc(block["href"])}" target="_blank" '
                f'rel="noopener noreferrer">{label}</a> <code>{uri}</code></div>'
            )
        return f"<div>link: {label} <code>{uri}</code></div>"
    if kind == "resource":
        head = f"<div>resource <code>{_esc(block['uri'])}</code></div>"
        if block["text"] is None:
            return head
        return f'{head}<pre style="{PRE}">{_esc(block["text"])}</pre>{cut_note(block["cut"])}'
    return f'<div style="{MUTED}">{_esc(block["text"])}</div>'


def structured_html(structured: dict[str, Any]) -> str:
    """A preview's structured content: a table (with its caption and the fields beside it) or a tree."""
    if structured["kind"] == "table":
        head = "".join(f'<th style="{CELL}">{_esc(c)}</th>' for c in structured["columns"])
        rows = "".join(
            "<tr>" + "".join(f'<td style="{CELL}">{_esc(v)}</td>' for v in row) + "</tr>"
            for row in structured["rows"]
        )
        notes = []
        if structured["more_rows"]:
            notes.append(f"{structured['more_rows']:,} more rows not shown")
        if structured["more_columns"]:
            notes.append(f"{structured['more_columns']:,} more columns not shown")
        note = f'<div style="{MUTED}">{"; ".join(notes)}</div>' if notes else ""
        above = ""
        if structured.get("fields"):
            above = "".join(
                f'<span style="margin-right:1em"><b>{_esc(k)}</b>: {_esc(v)}</span>'
                for k, v in structured["fields"]
            )
            above = f'<div style="font-size:12px">{above}</div>'
        caption = structured.get("caption")
        title = f'<caption style="text-align:left;font-weight:600">{_esc(caption)}</caption>' if caption else ""
        return (
            f'{above}<div style="overflow:auto;max-height:30em"><table style="border-collapse:collapse;'
            f'font-size:12px;margin:4px 0">{title}<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
            f"</div>{note}"
        )
    return (
        f'<details open><summary style="cursor:pointer">structured content</summary>'
        f'<div style="margin-left:1em;font-size:12px">{node_html(structured["node"])}</div></details>'
    )


def node_html(node: dict[str, Any], key: str | None = None) -> str:
    """One node of a preview's tree, labelled ``key``, with its children."""
    name = f"<b>{_esc(key)}</b>: " if key is not None else ""
    kind = node["t"]
    if kind == "v":
        return f"<div>{name}<code>{_esc(json_text(node['v']))}</code>{cut_note(node['cut'])}</div>"
    if kind == "cut":
        return f'<div>{name}<span style="{MUTED}">{_size(node["kind"], node["n"])} (too deep to show)</span></div>'
    if kind == "o":
        children = "".join(node_html(child, k) for k, child in node["items"])
        size = _size("object", len(node["items"]) + node["more"])
    else:
        children = "".join(node_html(child, f"[{i}]") for i, child in enumerate(node["items"]))
        size = _size("array", len(node["items"]) + node["more"])
    more = f'<div style="{MUTED}">… {node["more"]:,} more not shown</div>' if node["more"] else ""
    return (
        f'<details><summary style="cursor:pointer">{name}<span style="{MUTED}">{size}</span></summary>'
        f'<div style="margin-left:1.2em">{children}{more}</div></details>'
    )


def cut_note(cut: int) -> str:
    """The note under a text cut short: how many characters were left out ("" for none)."""
    return f'<div style="{MUTED}">… {cut:,} more characters not shown</div>' if cut else ""


def _size(kind: str, n: int) -> str:
    return f"{{{n} keys}}" if kind == "object" else f"[{n} items]"


__all__ = ["ERROR_COLOUR", "block_html", "cut_note", "error_title", "node_html", "preview_html", "structured_html"]
